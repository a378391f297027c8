"""The lake step on a tiny dataset: every file written (CSV in several delimiters and
encodings, JSON, JSON Lines, Parquet, Markdown and text reports) reads back, by pandas, json or
DuckDB, to exactly the rows its provenance names, run on the dataset itself; the gold files
give the known totals and a near duplicate does not; the same seed gives a byte-identical
lake, another seed other splits and distractors; the settings pick what they say; the
obscured lake holds no original identifier or name, and a reference aggregate on it equals the
original's mapped through the recorded mapping; malformed specs name the file and the field."""

from __future__ import annotations

import math
import re
from datetime import datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

import duckdb
import openpyxl
import pytest
import yaml

from benchforge.synthesis.lake import (
    LAKE_DIR,
    MAPPING_FILE,
    RECORD_FILE,
    LakeRecord,
    LakeSpecError,
    UnknownLakeFileError,
    build_lake,
    load_lake_spec,
    obscure,
    parse_lake_spec,
    read_lake_record,
    read_obscure_mapping,
    select_files,
)
from tests.paths import REPO_ROOT
from tests.support.lake import (
    CANCELLED_TOTAL,
    ORDERS_TOTAL,
    TOP_CUSTOMER,
    orders_by_customer,
    read_table_file,
    spec_data,
    tiny_dataset,
)

TABULAR = ("csv", "json", "jsonl", "parquet")


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tiny_dataset(tmp_path_factory.mktemp("lake") / "shop")


@pytest.fixture(scope="module")
def built(dataset: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, LakeRecord]:
    out = tmp_path_factory.mktemp("lake-seed-1")
    return out, build_lake(dataset, parse_lake_spec(spec_data()), out, seed=1)


def _source_types(dataset: Path) -> dict[str, dict[str, str]]:
    with duckdb.connect(str(dataset / "warehouse.duckdb"), read_only=True) as con:
        rows = con.execute(
            "SELECT table_name, column_name, data_type FROM information_schema.columns "
            "WHERE table_schema = 'raw'"
        ).fetchall()
    types: dict[str, dict[str, str]] = {}
    for table, column, kind in rows:
        types.setdefault(table, {})[column] = kind
    return types


def test_every_format_is_written(built: tuple[Path, LakeRecord]) -> None:
    out, record = built
    assert {f.format for f in record.files} == set(TABULAR) | {"markdown", "text", "xlsx"}
    assert {f.distractor for f in record.files if f.role == "distractor"} == {
        "near_duplicate",
        "stale_copy",
        "overlapping_period",
        "unrelated",
    }
    csvs = [f for f in record.files if f.format == "csv"]
    assert {f.encoding for f in csvs} >= {"utf-16", "latin-1"}
    assert len({f.delimiter for f in csvs}) >= 2
    noted = [f for f in csvs if f.skip_rows]
    assert noted and all(f.role == "export" and f.path.startswith("sales/") for f in noted)
    first = noted[0]
    lines = (out / LAKE_DIR / first.path).read_text(encoding="utf-16").splitlines()
    assert lines[:2] == [f"Orders export, {first.part}", f"Rows: {first.rows:,}"]


def test_each_file_reads_back_to_its_provenance_rows(
    built: tuple[Path, LakeRecord], dataset: Path
) -> None:
    out, record = built
    types = _source_types(dataset)
    with duckdb.connect(str(dataset / "warehouse.duckdb"), read_only=True) as con:
        for lake_file in record.files:
            if lake_file.format not in TABULAR:
                continue
            path = out / LAKE_DIR / lake_file.path
            expected = con.execute(lake_file.query).fetchall()
            assert len(expected) == lake_file.rows, lake_file.path
            if lake_file.format == "parquet":
                got = con.execute("SELECT * FROM read_parquet(?)", [str(path)]).fetchall()
            else:
                frame = read_table_file(path, lake_file)
                assert list(frame.columns) == lake_file.columns, lake_file.path
                con.register("back", frame)
                casts = ", ".join(
                    f'CAST("{c}" AS {types[lake_file.table][c]})' for c in lake_file.columns
                )
                got = con.execute(f"SELECT {casts} FROM back").fetchall()
                con.unregister("back")
            assert got == expected, lake_file.path


def test_a_workbook_holds_one_block_per_part_under_its_note(
    built: tuple[Path, LakeRecord], dataset: Path
) -> None:
    out, record = built
    [book] = [f for f in record.files if f.format == "xlsx"]
    assert (book.role, book.path) == ("workbook", "finance/orders_register.xlsx")
    assert [b.part for b in book.blocks] == ["2023", "2024", "undated"]
    sheet = openpyxl.load_workbook(out / LAKE_DIR / book.path, read_only=True)["Orders"]
    cells = [list(row) for row in sheet.iter_rows(values_only=True)]
    assert cells[0][0] == f"Order register ({book.rows} orders)"
    assert cells[1][0] == "Amounts in EUR."

    def plain(value: object) -> object:
        if isinstance(value, datetime) and value.time() == datetime.min.time():
            return value.date()
        return float(value) if isinstance(value, Decimal) else value

    with duckdb.connect(str(dataset / "warehouse.duckdb"), read_only=True) as con:
        for block in book.blocks:
            expected = con.execute(block.query).fetchall()
            assert cells[block.note_row - 1][0] == f"Orders of {block.part}: {len(expected)}"
            assert cells[block.header_row - 1][: len(book.columns)] == book.columns
            rows = cells[block.header_row : block.header_row + block.rows]
            got = [tuple(plain(v) for v in r[: len(book.columns)]) for r in rows]
            assert got == [tuple(plain(v) for v in r) for r in expected], block.part
            after = block.header_row + block.rows  # a blank row, or the sheet's end
            assert after == len(cells) or not any(cells[after])
    assert sum(b.rows for b in book.blocks) == book.rows


def test_reports_state_their_rows_in_prose(built: tuple[Path, LakeRecord], dataset: Path) -> None:
    out, record = built
    cancelled = [f for f in record.files if f.role == "report" and f.table == "orders"]
    assert [f.format for f in cancelled] == ["markdown"]
    text = " ".join((out / LAKE_DIR / cancelled[0].path).read_text("utf-8").split())
    stated = re.findall(r"Order (ORD-\d+) for (CUS-\d+) came to ([\d,]+\.\d\d) EUR\.", text)
    with duckdb.connect(str(dataset / "warehouse.duckdb"), read_only=True) as con:
        rows = con.execute(cancelled[0].query).fetchall()
    assert [(o, c, float(a.replace(",", ""))) for o, c, a in stated] == rows
    assert sum(float(a.replace(",", "")) for _, _, a in stated) == CANCELLED_TOTAL
    accounts = [f for f in record.files if f.role == "report" and f.table == "customers"]
    assert {f.part for f in accounts} == {"SMB", "Enterprise"}
    for report in accounts:
        prose = " ".join((out / LAKE_DIR / report.path).read_text("utf-8").split())
        assert len(re.findall(r"\(CUS-\d{4}\) is a (?:SMB|Enterprise) account\.", prose)) == 20


def test_gold_files_give_the_known_totals_and_a_near_duplicate_does_not(
    built: tuple[Path, LakeRecord],
) -> None:
    out, record = built
    totals = orders_by_customer(out / LAKE_DIR, record)
    assert sum(t for t, _ in totals.values()) == pytest.approx(ORDERS_TOTAL)
    assert sum(n for _, n in totals.values()) == 120
    top = max(totals, key=lambda c: totals[c][0])
    assert (top, totals[top][0]) == TOP_CUSTOMER
    near = [f for f in record.files if f.distractor == "near_duplicate" and f.table == "orders"]
    for lake_file in near:
        assert lake_file.changed, "a revised re-export changes numbers"
        copy = read_table_file(out / LAKE_DIR / lake_file.path, lake_file)
        original = record.file(lake_file.of_file or "")
        base = read_table_file(out / LAKE_DIR / original.path, original)
        assert list(copy["order_id"]) == list(base["order_id"])
        assert any(copy[c].tolist() != base[c].tolist() for c in lake_file.changed if c in copy)


def test_an_overlapping_period_holds_two_gold_files_rows(built: tuple[Path, LakeRecord]) -> None:
    out, record = built
    (overlap,) = [f for f in record.files if f.distractor == "overlapping_period"]
    base = record.file(overlap.of_file or "")
    following = [
        f
        for f in record.files
        if f.role == "export" and f.split == base.split and f.path.startswith("sales/")
        if (f.part or "") > (base.part or "") and f.part != "undated"
    ]
    nxt = min(following, key=lambda f: f.part or "")
    assert overlap.path == base.path.replace(".csv", f"_to_{nxt.part}.csv")
    assert overlap.rows == base.rows + nxt.rows
    ids = list(read_table_file(out / LAKE_DIR / overlap.path, overlap)["order_id"])
    assert ids == [
        *read_table_file(out / LAKE_DIR / base.path, base)["order_id"],
        *read_table_file(out / LAKE_DIR / nxt.path, nxt)["order_id"],
    ]


def test_time_and_region_splits(built: tuple[Path, LakeRecord]) -> None:
    _, record = built
    orders = [f for f in record.files if f.role == "export" and f.path.startswith("sales/")]
    assert "undated" in {f.part for f in orders}  # every twentieth order has no date
    assert sum(f.rows for f in orders) == 120
    regions = {f.part: f.rows for f in record.files if f.path.startswith("crm/customers_")}
    assert sorted(regions.values()) == [13, 13, 14]
    assert set(regions) == {"N_rth", "South", "West"}


def test_same_seed_gives_a_byte_identical_lake(
    built: tuple[Path, LakeRecord], dataset: Path, tmp_path: Path
) -> None:
    out, _ = built
    again = tmp_path / "again"
    build_lake(dataset, parse_lake_spec(spec_data()), again, seed=1)
    assert _tree(again) == _tree(out)


def test_another_seed_gives_other_splits_and_distractors(
    built: tuple[Path, LakeRecord], dataset: Path, tmp_path: Path
) -> None:
    _, first = built
    others = [
        build_lake(dataset, parse_lake_spec(spec_data()), tmp_path / str(seed), seed=seed)
        for seed in (2, 3, 4)
    ]
    assert all(_distractors(other) != _distractors(first) for other in others)
    splits = {f.split for f in first.files}
    assert any({f.split for f in other.files} != splits for other in others)


def test_rebuilding_into_a_lake_replaces_it_and_a_foreign_folder_is_refused(
    dataset: Path, tmp_path: Path
) -> None:
    spec = parse_lake_spec(spec_data())
    build_lake(dataset, spec, tmp_path / "out", seed=1)
    (tmp_path / "out" / LAKE_DIR / "stray.txt").write_text("left over")
    build_lake(dataset, spec, tmp_path / "out", seed=1)
    assert not (tmp_path / "out" / LAKE_DIR / "stray.txt").exists()
    (tmp_path / "foreign" / LAKE_DIR).mkdir(parents=True)
    with pytest.raises(FileExistsError):
        build_lake(dataset, spec, tmp_path / "foreign", seed=1)


def test_settings_pick_what_they_say(built: tuple[Path, LakeRecord]) -> None:
    _, record = built
    everything = sorted(f.path for f in record.files)
    gold = [f.path for f in record.files if f.path.startswith("sales/") and f.role == "export"]
    assert select_files(record, gold, "full") == everything
    assert select_files(record, gold, "obscured") == everything
    assert select_files(record, gold, "oracle") == sorted(gold)
    trimmed = select_files(record, gold, "trimmed", distractors=3, seed=5)
    assert len(trimmed) == len(gold) + 3
    assert set(gold) <= set(trimmed)
    assert trimmed == select_files(record, gold, "trimmed", distractors=3, seed=5)
    others = {tuple(select_files(record, gold, "trimmed", distractors=3, seed=s)) for s in range(6)}
    assert len(others) > 1
    assert select_files(record, gold, "trimmed", distractors=10_000) == everything
    with pytest.raises(UnknownLakeFileError, match=r"sales/nope\.csv"):
        select_files(record, ["sales/nope.csv"], "oracle")


def test_obscured_lake_holds_no_original_identifier_or_name(
    dataset: Path, built: tuple[Path, LakeRecord], tmp_path: Path
) -> None:
    _, record = built
    obscured = obscure(dataset, parse_lake_spec(spec_data()), tmp_path / "obscured", seed=1)
    mapping = obscured.mapping
    assert read_obscure_mapping(tmp_path / "obscured") == mapping
    assert (tmp_path / "obscured" / MAPPING_FILE).exists()
    assert read_lake_record(tmp_path / "obscured").obscured
    assert len(obscured.record.files) == len(record.files)
    # digit-only identifiers (invoice numbers) keep the look of numbers: reordered, so any
    # one of them may be another's replacement
    digits_only = {v: r for v, r in mapping.identifiers.items() if v.isdigit()}
    assert len(digits_only) == 120 and all(r.isdigit() for r in digits_only.values())
    assert sum(v != r for v, r in digits_only.items()) > 100
    originals = [v for v in [*mapping.identifiers, *mapping.names] if v not in digits_only]
    assert any(v.startswith("CUS-") for v in originals)
    assert any(v.startswith("Łukasz") for v in originals)
    lake = tmp_path / "obscured" / LAKE_DIR
    for lake_file in obscured.record.files:
        assert not any(v in lake_file.path for v in originals), lake_file.path
        text = _text_of(lake / lake_file.path, lake_file.format, lake_file.encoding)
        leaked = [v for v in originals if v in text]
        assert not leaked, (lake_file.path, leaked[:3])
    lettered = {v: r for v, r in mapping.identifiers.items() if v not in digits_only}
    assert set(lettered.values()).isdisjoint(lettered)


def test_obscured_aggregate_equals_the_original_mapped(
    dataset: Path, built: tuple[Path, LakeRecord], tmp_path: Path
) -> None:
    out, record = built
    obscured = obscure(dataset, parse_lake_spec(spec_data()), tmp_path / "obscured", seed=1)
    mapping = obscured.mapping
    change = mapping.number_change("orders", "amount")
    assert change is not None and change.shift != 0
    before = orders_by_customer(out / LAKE_DIR, record)
    after = orders_by_customer(tmp_path / "obscured" / LAKE_DIR, obscured.record)
    assert set(after) == {mapping.identifier(c) for c in before}
    for customer, (total, count) in before.items():
        mapped_total, mapped_count = after[mapping.identifier(customer)]
        assert mapped_count == count
        # each amount is rounded to cents once: at most half a cent off per order
        assert math.isclose(
            mapped_total, total * change.factor + count * change.shift, abs_tol=0.005 * count
        )
    top = max(before, key=lambda c: before[c][0])
    assert max(after, key=lambda c: after[c][0]) == mapping.identifier(top)
    # another seed: other replacements
    other = obscure(dataset, parse_lake_spec(spec_data()), tmp_path / "other", seed=2)
    assert other.mapping.identifier(top) != mapping.identifier(top)


def _text_of(path: Path, fmt: str, encoding: str | None) -> str:
    if fmt == "parquet":
        with duckdb.connect() as con:
            rows = con.execute("SELECT * FROM read_parquet(?)", [str(path)]).fetchall()
        return "\n".join(str(v) for row in rows for v in row)
    if fmt == "xlsx":
        book = openpyxl.load_workbook(path, read_only=True)
        cells = [v for ws in book.worksheets for row in ws.iter_rows(values_only=True) for v in row]
        return "\n".join(str(v) for v in cells if v is not None)
    return path.read_text(encoding=encoding or "utf-8")


# -- malformed specs --------------------------------------------------------------------------


def _problems(data: Any) -> str:
    with pytest.raises(LakeSpecError) as caught:
        parse_lake_spec(data, "lake.yaml")
    return str(caught.value)


def test_malformed_specs_name_the_field() -> None:
    bad_every = spec_data()
    bad_every["exports"][0]["splits"][1]["every"] = "week"
    assert "lake.yaml: exports.0.splits.1.every:" in _problems(bad_every)
    bad_by = spec_data()
    bad_by["exports"][0]["splits"][0] = {"by": "weekday", "column": "ordered_at"}
    assert "lake.yaml: exports.0.splits.0.by:" in _problems(bad_by)
    no_part = spec_data()
    no_part["exports"][0]["name"] = "orders"
    assert "lake.yaml: exports.0: name 'orders' has no {part}" in _problems(no_part)
    assert "lake.yaml: exports: " in _problems(spec_data(exports=[]))
    unknown = spec_data()
    unknown["distractors"]["near_dupes"] = 1
    assert "lake.yaml: distractors.near_dupes: Extra inputs" in _problems(unknown)
    bad_format = spec_data()
    bad_format["exports"][1]["formats"] = ["xlsx"]
    assert "lake.yaml: exports.1.formats.0:" in _problems(bad_format)
    bad_note = spec_data()
    bad_note["exports"][0]["csv"]["notes"] = ["Exported on {date}"]
    problems = _problems(bad_note)
    assert "lake.yaml: exports.0.csv.notes: note 'Exported on {date}' names date" in problems
    bad_factor = spec_data()
    bad_factor["obscure"]["numbers"][0]["factor"] = [2.0, 1.0]
    assert "lake.yaml: obscure.numbers.0: Value error" not in _problems(bad_factor)
    assert "factor: [2.0, 1.0] is empty" in _problems(bad_factor)


def test_a_spec_that_does_not_fit_the_dataset_names_the_field(
    dataset: Path, tmp_path: Path
) -> None:
    data = spec_data()
    data["exports"][0]["columns"] = ["order_id", "amout"]
    data["exports"][1]["splits"][0]["lookup"]["value"] = "label"
    data["exports"][2]["splits"] = [{"by": "period", "column": "amount"}]
    data["exports"][2]["name"] = "shipped_{part}"
    data["reports"][0]["sentence"] = "Order {order_id} was {colour}."
    spec_file = tmp_path / "lake.yaml"
    spec_file.write_text(yaml.safe_dump(data), encoding="utf-8")
    with pytest.raises(LakeSpecError) as caught:
        build_lake(dataset, spec_file, tmp_path / "out", seed=1)
    message = str(caught.value)
    assert f"{spec_file}: exports.0.columns.1: no column 'amout' in table 'orders'" in message
    assert "exports.1.splits.0.lookup.value: no column 'label' in table 'regions'" in message
    assert "exports.2.splits.0.column: 'amount' is DOUBLE, not a date" in message
    assert "reports.0.sentence: no column 'colour' in table 'orders'" in message
    assert not (tmp_path / "out").exists()


def test_bad_where_and_sentence_format_name_the_field(dataset: Path, tmp_path: Path) -> None:
    data = spec_data()
    data["exports"][2]["where"] = "status = 'shipped' AND colour = 'red'"
    data["reports"][1]["sentence"] = "{name:,.2f} ({customer_id}) is a {segment} account."
    spec_file = tmp_path / "lake.yaml"
    spec_file.write_text(yaml.safe_dump(data), encoding="utf-8")
    with pytest.raises(LakeSpecError) as caught:
        build_lake(dataset, spec_file, tmp_path / "out", seed=1)
    message = str(caught.value)
    assert f"{spec_file}: exports.2.where: Binder Error" in message and "colour" in message
    assert f"{spec_file}: reports.1.sentence: Unknown format code 'f'" in message
    assert not (tmp_path / "out").exists()


def test_a_split_with_too_many_parts_names_it(dataset: Path, tmp_path: Path) -> None:
    data = spec_data(max_files=25)
    data["exports"][0]["splits"] = [{"by": "value", "column": "order_id"}]
    data["exports"][0]["name"] = "orders_{part}"
    data["exports"].append({"table": "notes", "name": "notes_{part}"})
    data["exports"][-1]["splits"] = [{"by": "value", "column": "note_id"}]
    build_lake(dataset, parse_lake_spec(spec_data()), tmp_path / "out", seed=1)
    before = _tree(tmp_path / "out")
    for exports in (data["exports"], data["exports"][1:]):  # fails first, then after writing
        with pytest.raises(LakeSpecError, match=r"splits\.0: (120|30) parts: more than"):
            build_lake(dataset, parse_lake_spec({**data, "exports": exports}), tmp_path / "out", 1)
        assert _tree(tmp_path / "out") == before  # the lake there is left as it was


def test_missing_and_non_yaml_spec_files(tmp_path: Path) -> None:
    with pytest.raises(LakeSpecError, match=r"nothere.yaml: \(file\)"):
        load_lake_spec(tmp_path / "nothere.yaml")
    (tmp_path / "bad.yaml").write_text("exports: [unclosed", encoding="utf-8")
    with pytest.raises(LakeSpecError, match=r"bad.yaml: \(yaml\)"):
        load_lake_spec(tmp_path / "bad.yaml")


def test_the_shipped_crm_spec_is_valid() -> None:
    spec = load_lake_spec(REPO_ROOT / "task_specs" / "lake-crm" / "lake.yaml")
    assert {e.table for e in spec.exports} >= {"opportunities", "accounts", "cases"}
    assert spec.reports and spec.obscure.identifiers


def _tree(out: Path) -> dict[str, bytes]:
    return {str(p.relative_to(out)): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}


def _distractors(record: LakeRecord) -> set[tuple[str | None, str | None, str]]:
    return {(f.distractor, f.of_file, f.table) for f in record.files if f.role == "distractor"}


def test_record_is_written_beside_the_lake(built: tuple[Path, LakeRecord]) -> None:
    out, record = built
    assert read_lake_record(out) == record
    assert (out / RECORD_FILE).exists() and not (out / LAKE_DIR / RECORD_FILE).exists()
