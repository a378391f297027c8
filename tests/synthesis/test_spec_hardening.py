"""A spec that validates is a spec that generates: the hospital-spec defects of issue 13.

``spec validate`` compiles expressions and derived SQL and resolves Faker arguments; dates take an
upper bound (``not_after``, across a foreign key too); stressors that cannot change a column are
rejected; error paths name tables and columns and suggest the nearest field; and ``synth`` of a
spec file works through Prefect.
"""

from __future__ import annotations

from datetime import date
from pathlib import Path
from typing import Any

import duckdb
import pytest

from benchforge.cli.main import main
from benchforge.synthesis.engine import generate_dataset
from benchforge.synthesis.spec import SpecError, load_spec
from benchforge.synthesis.validation import stats
from tests.synthesis.hospital import column, hospital, table, write_spec


def validate_cli(path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = main(["spec", "validate", str(path)])
    captured = capsys.readouterr()
    return code, captured.out + captured.err


def spec_error(tmp_path: Path, data: dict[str, Any]) -> str:
    path = write_spec(tmp_path, data)
    with pytest.raises(SpecError) as info:
        load_spec(path)
    text = str(info.value)
    assert str(path) in text
    return text


def generate(tmp_path: Path, data: dict[str, Any], name: str) -> duckdb.DuckDBPyConnection:
    spec = load_spec(write_spec(tmp_path, data, f"{name}.yaml"))
    out = tmp_path / name
    generate_dataset(spec, scale=1, seed=11, out=out)
    con = duckdb.connect()
    con.execute(f"ATTACH '{out / 'warehouse.duckdb'}' AS wh (READ_ONLY); USE wh")
    con.execute(f"CREATE TEMP VIEW anomalies AS SELECT * FROM '{out / 'anomalies.parquet'}'")
    return con


def scalar(con: duckdb.DuckDBPyConnection, sql: str) -> Any:
    row = con.execute(sql).fetchone()
    assert row is not None
    return row[0]


# ---------------------------------------------------------------- validate compiles everything


def test_validate_accepts_the_hospital_spec(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, text = validate_cli(write_spec(tmp_path, hospital()), capsys)
    assert code == 0, text
    assert "ok" in text


def test_validate_compiles_expressions_naming_table_and_column(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = hospital()
    column(data, "appointments", "fee_label")["generator"]["sql"] = "'EUR ' || CAST(feee AS TEXT)"
    path = write_spec(tmp_path, data)
    code, text = validate_cli(path, capsys)
    assert code == 2
    assert str(path) in text
    assert "tables.appointments.columns.fee_label" in text
    assert "feee" in text


def test_validate_compiles_derived_sql(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = hospital()
    data["tables"].append(
        {
            "name": "doctor_load",
            "primary_key": "doctor_id",
            "derived_sql": "SELECT doctor_id, count(*) AS slots FROM slot GROUP BY 1",
            "columns": [
                {"name": "doctor_id", "generator": {"kind": "derived"}},
                {"name": "slots", "type": "bigint", "generator": {"kind": "derived"}},
            ],
        }
    )
    code, text = validate_cli(write_spec(tmp_path, data), capsys)
    assert code == 2
    assert "tables.doctor_load.derived_sql" in text
    assert "slot" in text


@pytest.mark.parametrize(
    ("edit", "expected"),
    [
        ({"args": {"minimum_age": 0, "maximum_agee": 95}}, "did you mean 'maximum_age'?"),
        ({"provider": "date_of_brith"}, "did you mean 'date_of_birth'?"),
        ({"provider": "name", "args": {}}, "cannot be read as date"),
        ({"args": {"minimum_age": "zero"}}, "date_of_birth"),
    ],
)
def test_validate_resolves_faker_arguments(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], edit: dict[str, Any], expected: str
) -> None:
    data = hospital()
    column(data, "patients", "birth_date")["generator"].update(edit)
    code, text = validate_cli(write_spec(tmp_path, data), capsys)
    assert code == 2, text
    assert "tables.patients.columns.birth_date" in text
    assert expected in text


def test_yaml_dates_reach_faker_as_dates(tmp_path: Path) -> None:
    """``start_date: 1990-01-01`` (a YAML date) and its quoted form both generate."""
    data = hospital()
    quoted = dict(column(data, "patients", "registered_on"))
    quoted["name"] = "registered_quoted"
    quoted["generator"] = {**quoted["generator"], "args": {"start_date": "Q1990-01-01"}}
    table(data, "patients")["columns"].append(quoted)
    path = write_spec(tmp_path, data)
    text = path.read_text()
    assert "start_date: 1990-01-01" in text
    path.write_text(text.replace("Q1990-01-01", "'1990-01-01'"))
    spec = load_spec(path)
    out = tmp_path / "out"
    generate_dataset(spec, scale=0.2, seed=3, out=out)
    lo, hi, lo_q = duckdb.sql(
        "SELECT min(registered_on), max(registered_on), min(registered_quoted) "
        f"FROM '{out / 'parquet' / 'patients.parquet'}'"
    ).fetchone() or (None, None, None)
    assert date(1990, 1, 1) <= lo <= hi <= date(2021, 12, 31)
    assert lo_q >= date(1990, 1, 1)


# ---------------------------------------------------------------- not_after


def _late_bookings(con: duckdb.DuckDBPyConnection) -> int:
    return int(
        scalar(
            con,
            "SELECT count(*) FROM raw.appointments a JOIN raw.slots s USING (slot_id) "
            "WHERE a.booked_at > s.starts_at",
        )
    )


def test_not_after_bounds_every_row_across_a_foreign_key(tmp_path: Path) -> None:
    unbounded = generate(tmp_path, hospital(), "unbounded")
    assert _late_bookings(unbounded) > 100

    data = hospital()
    column(data, "appointments", "booked_at")["generator"]["not_after"] = "slot_id.starts_at"
    table(data, "appointments")["columns"].append(
        {
            "name": "confirmed_on",
            "type": "date",
            "generator": {
                "kind": "date",
                "calendar": "booking",
                "not_before": "booked_at",
                "not_after": "slot_id.starts_at",
            },
        }
    )
    bounded = generate(tmp_path, data, "bounded")
    assert _late_bookings(bounded) == 0
    assert scalar(bounded, "SELECT count(*) FROM raw.appointments WHERE booked_at IS NULL") == 0
    wrong = scalar(
        bounded,
        "SELECT count(*) FROM raw.appointments a JOIN raw.slots s USING (slot_id) "
        "WHERE a.confirmed_on > CAST(s.starts_at AS DATE) "
        "OR a.confirmed_on < CAST(a.booked_at AS DATE)",
    )
    assert wrong == 0
    # The bound keeps the calendar's spread: bookings are not all piled on the slot's start.
    distinct_gaps = scalar(
        bounded,
        "SELECT count(DISTINCT date_diff('day', a.booked_at, s.starts_at)) "
        "FROM raw.appointments a JOIN raw.slots s USING (slot_id)",
    )
    assert distinct_gaps > 50


def test_not_after_is_checked_by_the_validation_suite(tmp_path: Path) -> None:
    from benchforge.synthesis.validation import validate_dataset

    data = hospital()
    column(data, "appointments", "booked_at")["generator"]["not_after"] = "slot_id.starts_at"
    spec = load_spec(write_spec(tmp_path, data))
    out = tmp_path / "out"
    generate_dataset(spec, scale=0.3, seed=5, out=out)
    report = validate_dataset(spec, out)
    checks = [r for r in report.results if r.check == "date_not_after"]
    assert checks and all(r.success for r in checks), checks
    assert report.success


def test_not_after_reference_typo_suggests_the_column(tmp_path: Path) -> None:
    data = hospital()
    column(data, "appointments", "booked_at")["generator"]["not_after"] = "slot_id.start_at"
    text = spec_error(tmp_path, data)
    assert "tables.appointments.columns.booked_at.generator" in text
    assert "did you mean 'starts_at'?" in text


# ---------------------------------------------------------------- stressors


def test_key_drift_applies_to_lower_case_keys(tmp_path: Path) -> None:
    con = generate(tmp_path, hospital(), "drift")
    applied = scalar(
        con,
        "SELECT count(*) FROM anomalies WHERE kind = 'key_drift' "
        "AND table_name = 'appointments' AND column_name = 'patient_id'",
    )
    lo, hi = stats.binomial_count_bounds(1500, 1500, 0.05)
    assert lo <= applied <= hi, (applied, lo, hi)
    orphans = scalar(
        con,
        "SELECT count(*) FROM raw.appointments a ANTI JOIN raw.patients p USING (patient_id)",
    )
    assert orphans == applied
    kinds = {r[0] for r in con.execute("SELECT DISTINCT detail FROM anomalies").fetchall()}
    assert "trailing space" in kinds


@pytest.mark.parametrize(
    ("stressor", "names"),
    [
        ({"kind": "outliers", "column": "fee_label"}, "outliers on appointments.fee_label"),
        (
            {"kind": "type_coercion", "column": "fee_label"},
            "type_coercion on appointments.fee_label",
        ),
        ({"kind": "outliers", "column": "zero_fee"}, "outliers on appointments.zero_fee"),
        (
            {"kind": "currency_conflict", "column": "fee", "codes": ["EUR", "USD"]},
            "currency_conflict on appointments.fee",
        ),
        ({"kind": "key_drift", "column": "fee_label"}, "key_drift on appointments.fee_label"),
    ],
)
def test_stressors_that_cannot_apply_are_rejected(
    tmp_path: Path, stressor: dict[str, Any], names: str
) -> None:
    data = hospital()
    table(data, "appointments")["columns"].append(
        {
            "name": "zero_fee",
            "type": "double",
            "generator": {"kind": "uniform", "low": 0, "high": 0},
        }
    )
    data["stressors"].append({"table": "appointments", "rate": 0.01, **stressor})
    text = spec_error(tmp_path, data)
    assert names in text


def test_duplicate_current_needs_a_second_version(tmp_path: Path) -> None:
    data = hospital()
    data["tables"].append(
        {
            "name": "doctor_history",
            "primary_key": "doctor_history_id",
            "scd": {
                "entity": "doctors",
                "entity_key": "doctor_id",
                "start_from": "hired_at",
                "versions": {"mean": 1, "max": 1},
            },
            "columns": [
                {"name": "doctor_history_id", "type": "bigint", "generator": {"kind": "sequence"}},
                {"name": "specialty", "generator": {"kind": "categorical", "values": ["a", "b"]}},
            ],
        }
    )
    table(data, "doctors")["columns"].append(
        {"name": "hired_at", "type": "date", "generator": {"kind": "date"}}
    )
    data["stressors"].append({"kind": "duplicate_current", "table": "doctor_history", "rate": 0.1})
    text = spec_error(tmp_path, data)
    assert "duplicate_current on doctor_history" in text
    assert "at most one version" in text


def test_timezone_mismatch_needs_a_non_zero_offset(tmp_path: Path) -> None:
    data = hospital()
    data["lookups"] = {
        "sites": {"columns": ["site", "utc_offset_hours"], "rows": [["north", 0], ["south", 0]]}
    }
    table(data, "slots")["columns"].append(
        {"name": "site", "generator": {"kind": "lookup_key", "lookup": "sites"}}
    )
    data["stressors"].append(
        {
            "kind": "timezone_mismatch",
            "table": "slots",
            "column": "starts_at",
            "rate": 0.05,
            "offset_lookup": "sites",
            "offset_via": "site",
        }
    )
    text = spec_error(tmp_path, data)
    assert "timezone_mismatch on slots.starts_at" in text
    assert "zero" in text


# ---------------------------------------------------------------- error paths


def test_field_typo_names_table_column_and_suggests(tmp_path: Path) -> None:
    data = hospital()
    column(data, "appointments", "booked_at")["generator"]["not_befor"] = "slot_id.starts_at"
    text = spec_error(tmp_path, data)
    assert "tables.appointments.columns.booked_at.generator.not_befor" in text
    assert "did you mean 'not_before'?" in text
    assert "tables[3]" not in text


def test_reference_errors_name_tables_and_suggest(tmp_path: Path) -> None:
    data = hospital()
    column(data, "appointments", "patient_id")["generator"]["table"] = "patient"
    text = spec_error(tmp_path, data)
    assert "tables.appointments.columns.patient_id.generator" in text
    assert "did you mean 'patients'?" in text


def test_unknown_generator_kind_suggests_the_nearest(tmp_path: Path) -> None:
    data = hospital()
    column(data, "slots", "starts_at")["generator"]["kind"] = "dat"
    text = spec_error(tmp_path, data)
    assert "tables.slots.columns.starts_at.generator: unknown kind 'dat'" in text
    assert "did you mean 'date'?" in text


# ---------------------------------------------------------------- synth of a spec file


def test_synth_of_a_spec_path_publishes_through_prefect(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The CLI, as a user runs it (Prefect flow, the default), on a spec file whose name is no
    valid Prefect artifact key (upper case, space, dots)."""
    spec = write_spec(tmp_path, hospital(), "Hospital Spec.v2.yaml")
    out = tmp_path / "published"
    argv = ["synth", str(spec), "--scale", "0.05", "--out", str(out), "--no-progress"]
    code = main([*argv, "--no-validate"])
    captured = capsys.readouterr()
    assert code == 0, captured.out + captured.err
    assert (out / "dataset.json").is_file()
    assert "dataset hospital" in captured.out
