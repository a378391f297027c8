"""Malformed specs fail before any data is written, naming the file and the field path."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from benchforge.synthesis.spec import SpecError, json_schema, load_domain, load_spec
from benchforge.synthesis.spec.loader import shipped_domains
from tests.paths import FIXTURES, REPO_ROOT

MINI = FIXTURES / "mini_domain.yaml"
SCHEMA_FILE = REPO_ROOT / "synthesis" / "spec" / "domain_spec.schema.json"


def mini() -> dict[str, Any]:
    return copy.deepcopy(yaml.safe_load(MINI.read_text().replace(" on: ", " 'on': ")))


def write(tmp_path: Path, data: dict[str, Any]) -> Path:
    path = tmp_path / "broken.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def problems(tmp_path: Path, data: dict[str, Any]) -> list[tuple[str, str]]:
    path = write(tmp_path, data)
    with pytest.raises(SpecError) as info:
        load_spec(path)
    assert str(path) in str(info.value)
    return info.value.problems


def table(data: dict[str, Any], name: str) -> dict[str, Any]:
    return next(t for t in data["tables"] if t["name"] == name)


def test_mini_fixture_is_valid() -> None:
    spec = load_spec(MINI)
    assert [t.name for t in spec.generation_order()][:2] == ["users", "accounts"]


def test_unknown_generator_names_the_field(tmp_path: Path) -> None:
    data = mini()
    table(data, "contacts")["columns"][2]["generator"] = {"kind": "gaussian_blob"}
    found = problems(tmp_path, data)
    assert found[0][0] == "tables.contacts.columns.first_name.generator"
    assert "gaussian_blob" in found[0][1]


def test_unknown_field_is_rejected(tmp_path: Path) -> None:
    data = mini()
    table(data, "users")["columns"][0]["generator"]["stride"] = 3
    paths = [p for p, _ in problems(tmp_path, data)]
    assert "tables.users.columns.user_id.generator.stride" in paths


def test_foreign_key_to_missing_table(tmp_path: Path) -> None:
    data = mini()
    table(data, "contacts")["columns"][1]["generator"]["table"] = "companies"
    assert (
        "tables.contacts.columns.account_id.generator",
        "foreign key to unknown table 'companies'",
    ) in problems(tmp_path, data)


def test_foreign_key_cycle(tmp_path: Path) -> None:
    data = mini()
    users = table(data, "users")
    users["columns"].append(
        {"name": "home_account", "generator": {"kind": "foreign_key", "table": "accounts"}}
    )
    found = problems(tmp_path, data)
    assert any(p == "tables" and "cycle" in m and "users" in m for p, m in found)


def test_column_cycle(tmp_path: Path) -> None:
    data = mini()
    cols = table(data, "opportunities")["columns"]
    cols.append({"name": "a", "generator": {"kind": "expression", "sql": "b + 1"}})
    cols.append({"name": "b", "generator": {"kind": "expression", "sql": "a + 1"}})
    assert any("column dependency cycle" in m for _, m in problems(tmp_path, data))


@pytest.mark.parametrize("rate", [0, -0.1, 0.9, "often"])
def test_bad_stressor_rate(tmp_path: Path, rate: object) -> None:
    data = mini()
    data["stressors"][0]["rate"] = rate
    where = "stressors[0] (missing_values on contacts.last_name).rate"
    assert any(p == where for p, _ in problems(tmp_path, data))


def test_stressor_on_unknown_column_and_budget(tmp_path: Path) -> None:
    data = mini()
    data["stressors"][0]["column"] = "nickname"
    data["stressors"].append(
        {"kind": "outliers", "table": "opportunities", "column": "amount", "rate": 0.49}
    )
    found = problems(tmp_path, data)
    assert (
        "stressors[0] (missing_values on contacts.nickname).column",
        "'nickname' is not a column of contacts",
    ) in found
    assert any(p == "stressors" and "add up to" in m for p, m in found)


def test_bad_yaml_and_missing_file(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text("domain: x\ntables: [\n")
    with pytest.raises(SpecError, match=r"bad\.yaml: line"):
        load_spec(path)
    with pytest.raises(SpecError, match=r"nope\.yaml"):
        load_spec(tmp_path / "nope.yaml")


def test_unknown_domain_lists_shipped_ones() -> None:
    with pytest.raises(SpecError, match="unknown domain 'erp'"):
        load_domain("erp")


def test_yaml_on_is_a_word_not_a_boolean() -> None:
    spec = load_spec(MINI)
    revenue = spec.table_map["accounts"].column_map["annual_revenue"].generator
    assert getattr(revenue, "on", None) == "industry"


def test_exported_json_schema_is_current() -> None:
    schema = json.loads(json_schema())
    assert "DomainSpec" in schema["title"]
    assert SCHEMA_FILE.read_text() == json_schema(), "run: benchforge spec schema --write"


def test_shipped_domains_are_valid() -> None:
    assert {"crm", "ads", "enterprise"} <= set(shipped_domains())
    crm = load_domain("crm")
    assert len(crm.tables) >= 20
    declared = sum(len(t.columns) for t in crm.tables)
    engine_added = sum(4 for t in crm.tables if t.scd)
    assert declared + engine_added >= 250
    for name in ("ads", "enterprise"):
        assert load_domain(name).tables
