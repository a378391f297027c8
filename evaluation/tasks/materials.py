"""What tasks hand to agents and scorers, derived from gold repositories.

- ``make_skeleton``: the de_impl starting point (project file, macros, sources; no models);
- ``data_contract``: the de_impl contract from a gold build's manifest and catalog plus the
  task's authored metadata (metrics, rules, notes);
- ``apply_overlay``: gold v2 of a de_evol task (the repository with the task's overlay folder
  copied over it and its removed files deleted).
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import yaml

from benchforge.core.yamlio import read_yaml
from benchforge.evaluation.dbt.manifest import load_manifest

_IGNORE = shutil.ignore_patterns("target", "logs", "dbt_packages", "__pycache__")


def copy_repo(repo: Path, dest: Path) -> Path:
    if dest.exists():
        shutil.rmtree(dest)
    shutil.copytree(repo, dest, ignore=_IGNORE)
    return dest


MODEL_LAYERS = ("staging", "intermediate", "marts")


def make_skeleton(repo: Path, dest: Path) -> Path:
    """The gold project without its models: dbt_project.yml, profiles, shared macros, sources.

    Macros under ``macros/<layer>/`` (staging, intermediate, marts) hold the body of models
    (e.g. one cleaning macro behind four regional staging models): they are part of the
    answer, so they are left out like the models themselves."""
    copy_repo(repo, dest)
    for layer in MODEL_LAYERS:
        shutil.rmtree(dest / "macros" / layer, ignore_errors=True)
    for path in sorted((dest / "models").rglob("*"), reverse=True):
        if path.is_file() and path.name != "_sources.yml":
            path.unlink()
        elif path.is_dir() and not any(path.iterdir()):
            path.rmdir()
    for folder in MODEL_LAYERS:
        (dest / "models" / folder).mkdir(parents=True, exist_ok=True)
    for extra in ("README.md", "tests", "seeds", "snapshots", "analyses"):
        target = dest / extra
        if target.is_dir():
            shutil.rmtree(target)
        elif target.is_file():
            target.unlink()
    return dest


def apply_overlay(repo: Path, overlay: Path, removed: list[str], dest: Path) -> Path:
    copy_repo(repo, dest)
    for rel in removed:
        (dest / rel).unlink(missing_ok=True)
    shutil.copytree(overlay, dest, dirs_exist_ok=True, ignore=_IGNORE)
    return dest


_GRAIN = re.compile(r"(One row per[^.]*\.)", re.I)


def _tests_by_node(manifest_path: Path) -> dict[str, dict[str, list[Any]]]:
    """model unique id -> column (or '') -> list of test descriptions."""
    data = json.loads(manifest_path.read_text())
    out: dict[str, dict[str, list[Any]]] = {}
    for node in data["nodes"].values():
        if node.get("resource_type") != "test" or not node.get("test_metadata"):
            continue
        meta = node["test_metadata"]
        kwargs = {
            k: v for k, v in meta.get("kwargs", {}).items() if k not in ("model", "column_name")
        }
        if "to" in kwargs:  # relationships: ref('x') -> x
            kwargs["to"] = re.sub(r"ref\(['\"]([^'\"]+)['\"]\)", r"\1", str(kwargs["to"]))
        test: Any = meta["name"] if not kwargs else {meta["name"]: kwargs}
        attached = node.get("attached_node") or ""
        column = node.get("column_name") or ""
        out.setdefault(attached, {}).setdefault(column, []).append(test)
    return out


def data_contract(gold_folder: Path, metadata_path: Path | None, domain: str) -> dict[str, Any]:
    """The de_impl contract: model inventory and lineage, schemas, grains, keys, tests, plus
    the task's authored metric definitions and data-quality rules."""
    manifest = load_manifest(gold_folder / "manifest.json")
    catalog = json.loads((gold_folder / "catalog.json").read_text())
    types = {
        uid: {c["name"].lower(): c["type"] for c in node["columns"].values()}
        for uid, node in {**catalog["nodes"], **catalog.get("sources", {})}.items()
    }
    tests = _tests_by_node(gold_folder / "manifest.json")
    metadata = read_yaml(metadata_path.read_text()) if metadata_path else {}
    notes = (metadata or {}).get("models", {})
    models = []
    for name in manifest.topological():
        node = manifest.models[name]
        col_tests = tests.get(node.unique_id, {})
        described = {c.name.lower(): c.description for c in node.columns}
        columns = []
        for col, typ in types.get(node.unique_id, {}).items():
            column: dict[str, Any] = {"name": col, "type": typ}
            if described.get(col):
                column["description"] = described[col]
            if col in col_tests:
                column["tests"] = col_tests[col]
            columns.append(column)
        keys = [
            c["name"]
            for c in columns
            if {"unique", "not_null"} <= set(map(str, c.get("tests", [])))
        ]
        grain = _GRAIN.search(node.description or "")
        entry: dict[str, Any] = {
            "name": name,
            "layer": node.layer,
            "schema": node.schema_,
            "description": node.description,
            "grain": grain.group(1) if grain else None,
            "primary_key": keys[0] if len(keys) == 1 else keys or None,
            "depends_on": {
                "models": manifest.parents(name),
                "sources": sorted(s.split(".", 2)[-1] for s in node.sources),
            },
            "columns": columns,
        }
        if "" in col_tests:
            entry["model_tests"] = col_tests[""]
        if name in notes:
            entry["notes"] = notes[name]
        models.append(entry)
    sources = sorted({s.split(".", 2)[-1] for m in manifest.models.values() for s in m.sources})
    return {
        "contract_version": 1,
        "domain": domain,
        "build": (
            "dbt-duckdb; sources in schema raw; one schema per layer (staging, intermediate, "
            "marts); every model materialized as a table"
        ),
        "sources": sources,
        "models": models,
        "metrics": (metadata or {}).get("metrics", []),
        "data_quality": (metadata or {}).get("data_quality", []),
    }


def write_contract(contract: dict[str, Any], path: Path) -> None:
    header = "# Generated by `benchforge task contract` from the gold build; do not edit by hand.\n"
    path.write_text(
        header + yaml.safe_dump(contract, sort_keys=False, width=100, allow_unicode=True)
    )
