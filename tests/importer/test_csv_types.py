"""A CSV file is read with the types its whole file takes, in one pass when the sniffer's sample
proves them (:func:`~benchforge.synthesis.importer.sources.load_csv`): the oracle is DuckDB's
sniffer over the whole file (``sample_size = -1``)."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from benchforge.synthesis.importer.sources import CSV_BUFFER_BYTES, load_csv

ROWS = 60_000  # three times DuckDB's default sample


def _types(con: duckdb.DuckDBPyConnection, table: str) -> dict[str, str]:
    return {
        name: type_
        for name, type_ in con.execute(
            "SELECT column_name, data_type FROM duckdb_columns() WHERE table_name = ?", [table]
        ).fetchall()
    }


def _whole_file_types(path: Path) -> dict[str, str]:
    row = duckdb.execute(f"SELECT Columns FROM sniff_csv('{path}', sample_size = -1)").fetchone()
    assert row is not None
    return {c["name"]: c["type"] for c in row[0]}


def _write(path: Path, late: dict[str, str], early: dict[str, str]) -> Path:
    """``ROWS`` rows; column ``id`` counts, every other column holds ``early[c]`` in each row
    but the last, which holds ``late[c]``."""
    names = ["id", *early]
    lines = [",".join(names)]
    for i in range(ROWS):
        row = late if i == ROWS - 1 else early
        lines.append(",".join([str(i), *(row[c] for c in early)]))
    path.write_text("\n".join(lines) + "\n")
    return path


CASES = {
    # a wider value after the sample: the sample's type fails the read, the whole file decides
    "late decimal": ({"v": "1"}, {"v": "1.5"}, "DOUBLE"),
    "late text": ({"v": "17"}, {"v": "n/a"}, "VARCHAR"),
    "late timestamp": ({"v": "2024-01-02"}, {"v": "2024-01-02 10:11:12"}, "TIMESTAMP"),
    # a column the sample holds no value of: VARCHAR by default, narrower over the whole file
    "empty until the end": ({"v": ""}, {"v": "42"}, "BIGINT"),
    # codes with leading zeros stay text, however many rows
    "leading zeros": ({"v": "007"}, {"v": "012"}, "VARCHAR"),
    "plain text": ({"v": "Ann"}, {"v": "Bob"}, "VARCHAR"),
    "plain integers": ({"v": "3"}, {"v": "4"}, "BIGINT"),
    "late leading zero": ({"v": "3"}, {"v": "04"}, "VARCHAR"),
    "late exponent": ({"v": "3"}, {"v": "1e5"}, "DOUBLE"),
    "booleans": ({"v": "true"}, {"v": "false"}, "BOOLEAN"),
}


@pytest.mark.parametrize("case", CASES)
def test_a_csv_column_takes_the_whole_files_type(tmp_path: Path, case: str) -> None:
    early, late, expected = CASES[case]
    path = _write(tmp_path / "t.csv", late, early)
    assert _whole_file_types(path)["v"] == expected  # the oracle agrees with the case
    with duckdb.connect() as con:
        load_csv(con, path, "t")
        assert _types(con, "t") == _whole_file_types(path)
        assert con.execute("SELECT count(*) FROM t").fetchone() == (ROWS,)
        # every value as the whole-file read gives it (no 1.5 read as 2)
        whole = f"read_csv('{path}', sample_size = -1)"
        differ = con.execute(f"SELECT count(*) FROM (FROM t EXCEPT ALL FROM {whole})").fetchone()
    assert differ == (0,)


class _Recording:
    """A connection that remembers the statements it ran."""

    def __init__(self, con: duckdb.DuckDBPyConnection) -> None:
        self.con, self.statements = con, []

    def execute(self, sql: str, *args: object) -> duckdb.DuckDBPyConnection:
        self.statements.append(sql)
        return self.con.execute(sql, *args)


@pytest.mark.parametrize(("case", "passes"), [("plain text", 1), ("empty until the end", 2)])
def test_the_whole_file_is_sniffed_only_when_the_sample_cannot_tell(
    tmp_path: Path, case: str, passes: int
) -> None:
    early, late, _ = CASES[case]
    path = _write(tmp_path / "t.csv", late, early)
    with duckdb.connect() as con:
        recording = _Recording(con)
        load_csv(recording, path, "t")  # type: ignore[arg-type]
    reads = [s for s in recording.statements if "read_csv(" in s]
    whole = [s for s in recording.statements if "sample_size = -1" in s]
    assert (len(reads), len(whole)) == (passes, passes - 1)


@pytest.mark.parametrize("case", ["plain text", "empty until the end"])
def test_a_line_as_long_as_duckdb_reads_by_default_still_reads(tmp_path: Path, case: str) -> None:
    """The read uses small buffers (:data:`CSV_BUFFER_BYTES`, for memory); a line near DuckDB's
    default ``max_line_size`` (2 MB, which its sniffer holds to) still reads, on the one-pass
    path and on the whole-file one."""
    early, late, _ = CASES[case]
    path = _write(tmp_path / "t.csv", late, early)
    long_value = "x" * 2_000_000
    assert len(long_value) > CSV_BUFFER_BYTES // 4
    with path.open("a") as fh:
        fh.write(f"{ROWS},{long_value}\n")
    with duckdb.connect() as con:
        load_csv(con, path, "t")
        row = con.execute("SELECT count(*), max(length(v::VARCHAR)) FROM t").fetchone()
    assert row == (ROWS + 1, len(long_value))
