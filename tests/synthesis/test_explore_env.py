"""Exploration environments on a tiny dataset with known numbers: each noise kind bites (the
naive aggregate over the written files is wrong: totals counted twice, units not converted,
one entity under several names, subsets added to their table, ...) and the clean reading
(``read_clean_table`` / ``read_clean_derived``, the steps of ``clean_reading``) gives the
dataset's answer exactly or within the recorded rounding; the same seed gives byte-identical
environments, another seed other noise; a malformed spec names its file and field."""

from __future__ import annotations

import csv
import hashlib
from pathlib import Path
from typing import Any

import duckdb
import pytest
import yaml

from benchforge.synthesis.explore_env import (
    ENVIRONMENT_DIR,
    RECORD_FILE,
    EnvironmentRecord,
    EnvironmentSpecError,
    Frame,
    build_environment,
    clean_reading,
    load_environment_spec,
    parse_environment_spec,
    read_clean_derived,
    read_clean_table,
    read_dataset_table,
    read_environment_record,
)
from tests.support.explore_env import (
    CAPITAL,
    COMPANIES,
    EMPLOYEES,
    REGION_COMPANIES,
    REGIONS,
    SALES,
    SALES_2022,
    SALES_ROWS,
    explore_dataset,
)

FOLDERS = {"main": ["companies", "sales", "regions"], "policy": ["policies"]}


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return explore_dataset(tmp_path_factory.mktemp("explore") / "tiny")


def build(dataset: Path, out: Path, seed: int = 1, **spec: Any) -> EnvironmentRecord:
    data = {"folders": FOLDERS, **spec}
    return build_environment(dataset, parse_environment_spec(data), out, seed)


def rows(out: Path, path: str) -> list[dict[str, str]]:
    with (out / ENVIRONMENT_DIR / path).open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


def dataset_frame(dataset: Path, table: str) -> Frame:
    with duckdb.connect(str(dataset / "warehouse.duckdb"), read_only=True) as con:
        return read_dataset_table(con, table)


def total(frame: Frame, column: str) -> float:
    return sum(v for v in frame.values(column) if v is not None)


def test_known_numbers(dataset: Path) -> None:
    companies, sales = dataset_frame(dataset, "companies"), dataset_frame(dataset, "sales")
    assert len(companies.rows) == COMPANIES and total(companies, "capital") == CAPITAL
    assert total(companies, "employees") == EMPLOYEES
    assert len(sales.rows) == SALES_ROWS and total(sales, "value") == SALES


def test_no_noise_reads_back_the_dataset_exactly(dataset: Path, tmp_path: Path) -> None:
    record = build(dataset, tmp_path)
    for table in ("companies", "sales", "regions", "policies"):
        assert read_clean_table(tmp_path, record, table) == dataset_frame(dataset, table)


def test_total_rows_are_counted_twice_by_a_naive_sum(dataset: Path, tmp_path: Path) -> None:
    totals = {"label_column": "company_id", "label": "合计", "group_by": ["period"]}
    record = build(
        dataset, tmp_path, noise={"sales": {"total_rows": {**totals, "measures": ["value"]}}}
    )
    written = rows(tmp_path, "database/main/sales.csv")
    assert len(written) == SALES_ROWS + 8  # one total per quarter, among the detail rows
    assert sum(float(r["value"]) for r in written) == 2 * SALES  # the naive sum
    applied = record.table("sales").totals
    assert applied is not None and len(applied.rows) == 8
    assert {written[i]["company_id"] for i in applied.rows} == {"合计"}
    assert applied.rows != list(range(SALES_ROWS, SALES_ROWS + 8))  # mixed in, not at the end
    clean = read_clean_table(tmp_path, record, "sales")
    assert clean == dataset_frame(dataset, "sales") and total(clean, "value") == SALES
    assert "drop the rows whose company_id is '合计'" in " ".join(
        clean_reading(record)["sales"].steps
    )


def test_mixed_units_per_row_in_a_unit_column(dataset: Path, tmp_path: Path) -> None:
    units = {"column": "value", "units": {"元": 1, "千元": 1000}, "unit_column": "unit"}
    record = build(dataset, tmp_path, noise={"sales": {"mixed_units": [units]}})
    written = rows(tmp_path, "database/main/sales.csv")
    assert {r["unit"] for r in written} == {"元", "千元"}
    naive = sum(float(r["value"]) for r in written)
    assert naive < SALES * 0.9  # thousands added to units
    applied = record.table("sales").units[0]
    assert sum(applied.rows_per_unit.values()) == SALES_ROWS and len(applied.rows_per_unit) == 2
    clean = read_clean_table(tmp_path, record, "sales")
    assert clean.columns == ["company_id", "period", "value"]
    assert total(clean, "value") == pytest.approx(SALES, rel=1e-12)


def test_mixed_units_per_entity_as_a_suffix(dataset: Path, tmp_path: Path) -> None:
    units = {
        "column": "employees",
        "units": {"people": 1, "hundreds": 100},
        "per": "entity",
        "entity": "region",
        "decimals": 2,
    }
    record = build(dataset, tmp_path, seed=1, noise={"companies": {"mixed_units": [units]}})
    written = rows(tmp_path, "database/main/companies.csv")
    applied = record.table("companies").units[0]
    assert set(applied.entity_units) == set(REGIONS)
    assert len(set(applied.entity_units.values())) == 2  # both units in use for this seed
    for row in written:  # one unit per region
        assert row["employees"].endswith(" " + applied.entity_units[row["region"]])
    with pytest.raises(ValueError):
        sum(float(r["employees"]) for r in written)  # the naive read fails
    clean = read_clean_table(tmp_path, record, "companies")
    assert total(clean, "employees") == pytest.approx(EMPLOYEES, rel=1e-12)


def test_name_variants_split_an_entity(dataset: Path, tmp_path: Path) -> None:
    variants = [
        {
            "column": "region",
            "rate": 0.5,
            "alternates": [{"table": "regions", "key": "region", "to": "region_cn"}],
        },
        {"column": "company_name", "rate": 0.5, "strip_suffixes": ["有限公司"]},
    ]
    record = build(dataset, tmp_path, noise={"companies": {"name_variants": variants}})
    written = rows(tmp_path, "database/main/companies.csv")
    naive = {r["region"] for r in written}
    assert naive > set(REGIONS) and naive <= set(REGIONS) | set(REGIONS.values())
    assert min(sum(r["region"] == region for r in written) for region in REGIONS) < 10
    region, names = record.table("companies").variants
    assert region.variants == {cn: en for en, cn in REGIONS.items()}
    assert 5 < names.rows_changed < 35 and all(not v.endswith("有限公司") for v in names.variants)
    clean = read_clean_table(tmp_path, record, "companies")
    assert clean == dataset_frame(dataset, "companies")
    counts = {r: clean.values("region").count(r) for r in REGIONS}
    assert counts == dict.fromkeys(REGIONS, REGION_COMPANIES)


def test_a_variant_that_is_another_name_is_never_written(tmp_path: Path) -> None:
    folder = tmp_path / "clash"
    from tests.support.datasets import write_dataset

    write_dataset(
        folder,
        {"firms": "SELECT * FROM (VALUES ('甲有限公司'), ('甲'), ('乙有限公司')) t(name)"},
    )
    spec = {
        "folders": {"main": ["firms"]},
        "noise": {
            "firms": {
                "name_variants": [{"column": "name", "rate": 1, "strip_suffixes": ["有限公司"]}]
            }
        },
    }
    record = build_environment(folder, parse_environment_spec(spec), tmp_path / "env", 1)
    assert record.table("firms").variants[0].variants == {"乙": "乙有限公司"}


def test_rounding_differences_stay_within_the_record(dataset: Path, tmp_path: Path) -> None:
    rounding = {"column": "capital", "decimals": [0, 1]}
    record = build(dataset, tmp_path, noise={"companies": {"rounding": [rounding]}})
    applied = record.table("companies").rounding[0]
    assert set(applied.rows_per_decimals) == {"0", "1"} and 0 < applied.max_abs_error <= 0.5
    clean = read_clean_table(tmp_path, record, "companies")
    assert total(clean, "capital") != CAPITAL  # not exact any more
    source = dataset_frame(dataset, "companies").values("capital")
    for read, true in zip(clean.values("capital"), source, strict=True):
        assert abs(read - true) <= applied.max_abs_error
    assert abs(total(clean, "capital") - CAPITAL) <= COMPANIES * applied.max_abs_error


def test_missing_values_markers(dataset: Path, tmp_path: Path) -> None:
    missing = {"columns": ["value"], "rate": 0.1}
    record = build(dataset, tmp_path, noise={"sales": {"missing_values": missing}})
    cells = record.table("sales").missing[0].cells
    assert 10 < len(cells) < 60
    written = rows(tmp_path, "database/main/sales.csv")
    markers = {written[i]["value"] for i, _ in cells}
    assert len(markers) > 1 and {text for _, text in cells} == {"100.0", "110.0"}
    with pytest.raises(ValueError):
        sum(float(r["value"]) for r in written)
    clean = read_clean_table(tmp_path, record, "sales")
    assert sum(v is None for v in clean.values("value")) == len(cells)
    restored = read_clean_table(tmp_path, record, "sales", restore_missing=True)
    assert restored == dataset_frame(dataset, "sales")


def test_regional_subsets_are_not_more_rows(dataset: Path, tmp_path: Path) -> None:
    record = build(dataset, tmp_path, subsets=[{"table": "companies", "by": "region"}])
    folder = tmp_path / ENVIRONMENT_DIR / "database" / "main"
    files = sorted(p.name for p in folder.glob("companies*.csv"))
    assert files == ["companies.csv"] + [f"companies_{r.lower()}.csv" for r in sorted(REGIONS)]
    union = [row for name in files for row in rows(tmp_path, f"database/main/{name}")]
    assert len(union) == 2 * COMPANIES  # the naive union of the family
    for name in files[1:]:
        written = rows(tmp_path, f"database/main/{name}")
        assert list(written[0]) == list(rows(tmp_path, "database/main/companies.csv")[0])
        assert len(written) == REGION_COMPANIES
    assert len(read_clean_table(tmp_path, record, "companies").rows) == COMPANIES


def test_wide_annual_and_year_over_year(dataset: Path, tmp_path: Path) -> None:
    common = {"table": "sales", "keys": ["company_id"], "period": "period", "value": "value"}
    record = build(
        dataset,
        tmp_path,
        wide_annual=[{**common, "name": "sales_annual"}],
        year_over_year=[{**common, "name": "sales_yoy", "years": [2023, 2023]}],
    )
    wide = rows(tmp_path, "database/main/sales_annual.csv")
    assert list(wide[0]) == ["company_id", "2022", "2023"] and len(wide) == COMPANIES
    assert wide[0]["2022"] == "400.0"  # a year, not the quarter's 100
    long = read_clean_derived(tmp_path, record, "sales_annual")
    assert long.columns == ["company_id", "year", "value"] and len(long.rows) == 2 * COMPANIES
    assert sum(v for _, y, v in long.rows if y == 2022) == SALES_2022
    assert total(long, "value") == SALES
    yoy = read_clean_derived(tmp_path, record, "sales_yoy")
    assert len(yoy.rows) == COMPANIES and set(yoy.values("year")) == {2023}
    assert set(yoy.values("yoy_pct")) == {10.0}


def test_national_and_regional_aggregates(dataset: Path, tmp_path: Path) -> None:
    agg = {
        "table": "companies",
        "name": "capital_by_region",
        "region": "region",
        "measures": ["capital"],
    }
    record = build(dataset, tmp_path, aggregates=[agg])
    written = rows(tmp_path, "database/main/capital_by_region.csv")
    assert sum(float(r["capital"]) for r in written) == 2 * CAPITAL  # both levels summed
    clean = read_clean_derived(tmp_path, record, "capital_by_region")
    regional = [r for r in clean.rows if r[0] == "regional"]
    national = [r for r in clean.rows if r[0] == "national"]
    assert sum(r[3] for r in regional) == CAPITAL and [r[3] for r in national] == [CAPITAL]
    assert {r[1]: r[2] for r in regional} == dict.fromkeys(REGIONS, REGION_COMPANIES)
    assert national[0][1] == "National"


def test_distractor_tables_look_relevant_and_are_not(dataset: Path, tmp_path: Path) -> None:
    fake = {"table": "sales", "name": "sales_forecast", "columns": ["value"], "sample_rate": 0.5}
    record = build(dataset, tmp_path, distractors=[fake])
    written = rows(tmp_path, "database/main/sales_forecast.csv")
    assert list(written[0]) == ["company_id", "period", "value"]
    assert 100 < len(written) < 220
    assert sum(float(r["value"]) for r in written) != pytest.approx(SALES / 2, rel=0.01)
    assert clean_reading(record)["sales_forecast"].steps[0].startswith("ignore")


def test_policy_texts_as_documents(dataset: Path, tmp_path: Path) -> None:
    docs = {
        "table": "policies",
        "folder": "database/policy/texts",
        "id_column": "policy_id",
        "title_column": "title",
        "body_column": "body",
        "fields": ["issuer"],
    }
    record = build(dataset, tmp_path, documents=[docs], drop_columns={"policies": ["body"]})
    texts = sorted((tmp_path / ENVIRONMENT_DIR / "database/policy/texts").glob("*.md"))
    assert [p.name for p in texts] == [f"P{i}.md" for i in range(1, 6)]
    assert (
        texts[0]
        .read_text(encoding="utf-8")
        .startswith("# 关于支持第1号产业的意见\n\n- issuer: Ministry 1\n\nArticle 1.\n")
    )
    assert "body" not in rows(tmp_path, "database/policy/policies.csv")[0]
    parsed = read_clean_derived(tmp_path, record, "database/policy/texts")
    source = dataset_frame(dataset, "policies")
    assert parsed.columns == ["policy_id", "title", "issuer", "body"]
    assert sorted(parsed.rows) == sorted([[r[0], r[1], r[2], r[3]] for r in source.rows])


FULL_SPEC: dict[str, Any] = {
    "noise": {
        "sales": {
            "total_rows": {
                "label_column": "company_id",
                "group_by": ["period"],
                "measures": ["value"],
            },
            "mixed_units": [
                {"column": "value", "units": {"元": 1, "千元": 1000}, "unit_column": "unit"}
            ],
            "missing_values": {"columns": ["value"], "rate": 0.05},
        },
        "companies": {
            "name_variants": [
                {
                    "column": "region",
                    "rate": 0.3,
                    "alternates": [{"table": "regions", "key": "region", "to": "region_cn"}],
                }
            ],
            "rounding": [{"column": "capital", "decimals": [0, 1, 2]}],
        },
    },
    "subsets": [{"table": "companies", "by": "region"}],
    "distractors": [{"table": "sales", "name": "sales_forecast", "columns": ["value"]}],
}


def _tree(out: Path) -> dict[str, bytes]:
    return {str(p.relative_to(out)): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}


def test_same_seed_same_bytes_other_seed_other_noise(dataset: Path, tmp_path: Path) -> None:
    first = build(dataset, tmp_path / "a", **FULL_SPEC)
    build(dataset, tmp_path / "b", **FULL_SPEC)
    other = build(dataset, tmp_path / "c", seed=2, **FULL_SPEC)
    a, b, c = (_tree(tmp_path / n) for n in "abc")
    assert a == b
    assert a[RECORD_FILE] != c[RECORD_FILE]
    changed = {name for name in a if name != RECORD_FILE and a[name] != c.get(name)}
    assert "environment/database/main/sales.csv" in changed
    assert "environment/database/main/companies.csv" in changed
    assert first.table("sales").missing != other.table("sales").missing
    assert first.files == {
        name.removeprefix("environment/"): hashlib.sha256(data).hexdigest()
        for name, data in a.items()
        if name.startswith("environment/")
    }
    assert read_environment_record(tmp_path / "a") == first


def test_the_environment_holds_no_documentation_and_no_record(
    dataset: Path, tmp_path: Path
) -> None:
    build(dataset, tmp_path, **FULL_SPEC)
    inside = [p for p in (tmp_path / ENVIRONMENT_DIR).rglob("*") if p.is_file()]
    assert inside and all(p.suffix == ".csv" for p in inside)
    assert (tmp_path / RECORD_FILE).is_file()


def test_full_spec_reads_back_clean(dataset: Path, tmp_path: Path) -> None:
    record = build(dataset, tmp_path, **FULL_SPEC)
    sales = read_clean_table(tmp_path, record, "sales", restore_missing=True)
    assert total(sales, "value") == pytest.approx(SALES, rel=1e-12)
    assert len(sales.rows) == SALES_ROWS
    companies = read_clean_table(tmp_path, record, "companies")
    assert companies.values("region") == dataset_frame(dataset, "companies").values("region")
    steps = clean_reading(record)
    assert any("markers" in s for s in steps["sales"].steps)
    assert any("companies_east.csv" in s for s in steps["companies"].steps)


def _problems(tmp_path: Path, data: dict[str, Any], dataset: Path | None = None) -> str:
    spec_file = tmp_path / "environment.yaml"
    spec_file.write_text(yaml.safe_dump({"folders": FOLDERS, **data}, allow_unicode=True))
    with pytest.raises(EnvironmentSpecError) as err:
        if dataset is None:
            load_environment_spec(spec_file)
        else:
            build_environment(dataset, spec_file, tmp_path / "out", 1)
    assert not (tmp_path / "out").exists()
    return str(err.value)


def test_malformed_specs_name_the_file_and_field(dataset: Path, tmp_path: Path) -> None:
    one_unit = {"noise": {"sales": {"mixed_units": [{"column": "value", "units": {"元": 1}}]}}}
    message = _problems(tmp_path, one_unit)
    assert f"{tmp_path / 'environment.yaml'}: noise.sales.mixed_units.0.units:" in message
    typo = {"noise": {"sales": {"mixed_unit": []}}}
    assert "noise.sales.mixed_unit: Extra inputs are not permitted" in _problems(tmp_path, typo)
    no_entity = {
        "noise": {
            "sales": {
                "mixed_units": [{"column": "value", "units": {"a": 1, "b": 2}, "per": "entity"}]
            }
        }
    }
    assert "noise.sales.mixed_units.0: entity: give it exactly" in _problems(tmp_path, no_entity)


def test_specs_that_do_not_fit_the_dataset_name_the_field(dataset: Path, tmp_path: Path) -> None:
    data = {
        "noise": {
            "sales": {"rounding": [{"column": "valu", "decimals": [0, 1]}]},
            "companies": {"rounding": [{"column": "region", "decimals": [0, 1]}]},
            "regions": {"total_rows": {"label_column": "region", "measures": ["region_cn"]}},
        },
        "subsets": [{"table": "customers", "by": "region"}],
        "drop_columns": {"sales": ["period"]},
    }
    data["noise"]["sales"]["missing_values"] = {"columns": ["period"], "rate": 0.1}
    message = _problems(tmp_path, data, dataset)
    assert "noise.sales.rounding.0.column: no column 'valu' in table 'sales'" in message
    assert "noise.companies.rounding.0.column: companies.region is VARCHAR, not a number" in message
    assert "noise.regions.total_rows.measures.0: regions.region_cn is VARCHAR" in message
    assert "subsets.0.table: no table 'customers' in the dataset" in message
    assert "drop_columns.sales.0: 'period' has noise: noise.sales.missing_values" in message


def test_a_total_label_that_is_already_a_value_is_refused(dataset: Path, tmp_path: Path) -> None:
    totals = {"label_column": "region", "label": "East", "measures": ["capital"]}
    with pytest.raises(EnvironmentSpecError) as err:
        build(dataset, tmp_path, noise={"companies": {"total_rows": totals}})
    assert "noise.companies.total_rows.label: 'East' is already a value" in str(err.value)
    assert list(tmp_path.iterdir()) == []  # nothing left: not even a partial environment


def test_a_file_written_twice_is_refused(dataset: Path, tmp_path: Path) -> None:
    fake = {"table": "sales", "name": "companies", "columns": ["value"]}
    with pytest.raises(EnvironmentSpecError) as err:
        build(dataset, tmp_path, distractors=[fake])
    assert "database/main/companies.csv would be written twice" in str(err.value)
    assert list(tmp_path.iterdir()) == []


def test_markers_that_are_values_are_not_used(tmp_path: Path) -> None:
    from tests.support.datasets import write_dataset

    folder = write_dataset(
        tmp_path / "dashes",
        {
            "codes": "SELECT CASE WHEN i % 2 = 0 THEN '-' ELSE 'x' || i END AS code "
            "FROM range(40) t(i)"
        },
    )
    spec = {
        "folders": {"main": ["codes"]},
        "noise": {
            "codes": {"missing_values": {"columns": ["code"], "rate": 0.5, "markers": ["-", "NA"]}}
        },
    }
    out = tmp_path / "env"
    record = build_environment(folder, parse_environment_spec(spec), out, 1)
    applied = record.table("codes").missing[0]
    assert applied.markers == ["NA"] and applied.cells
    clean = read_clean_table(out, record, "codes", restore_missing=True)
    assert clean == dataset_frame(folder, "codes")
