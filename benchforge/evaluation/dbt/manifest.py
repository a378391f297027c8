"""The parts of dbt's ``manifest.json`` that scoring and task generation need."""

from __future__ import annotations

import json
from fnmatch import fnmatchcase
from functools import cached_property
from pathlib import Path, PurePosixPath
from typing import Any

from pydantic import BaseModel

from benchforge.evaluation.tasks.models import LayerRule

LAYERS = ("staging", "intermediate", "marts")  # the default layers (IMPL_WEIGHTS weighs them)
ROOT_LAYER = "other"  # a model at the root of its model path, matched by no layer rule
BUILT_RESOURCES = ("model", "seed", "snapshot")  # nodes dbt materializes as relations


class ColumnDoc(BaseModel):
    name: str
    description: str = ""
    data_type: str | None = None


class ModelNode(BaseModel):
    unique_id: str
    name: str
    layer: str  # the first folder under models/ (or "other"); see assign_layers for a mapping
    database: str
    schema_: str
    alias: str
    relation: str  # as dbt renders it: "db"."schema"."alias"
    depends_on: list[str]  # unique ids of model parents
    sources: list[str]  # unique ids of source parents
    seeds: list[str] = []  # unique ids of seed parents (inputs, like sources)
    compiled_code: str | None
    raw_code: str
    original_file_path: str
    description: str = ""
    columns: list[ColumnDoc] = []
    checksum: str = ""
    tags: list[str] = []
    fqn: list[str] = []
    materialized: str = "table"  # table | view | incremental | ephemeral | ...


class DbtManifest(BaseModel):
    project_name: str
    models: dict[str, ModelNode]  # by model name
    sources: dict[str, str]  # source unique id -> relation
    seeds: dict[str, str] = {}  # seed unique id -> relation
    inlined: list[str] = []  # ephemeral models, dissolved into the models that ref them

    @cached_property
    def by_id(self) -> dict[str, ModelNode]:
        return {m.unique_id: m for m in self.models.values()}

    def parents(self, name: str) -> list[str]:
        return sorted(self.by_id[u].name for u in self.models[name].depends_on if u in self.by_id)

    def ancestors(self, name: str) -> set[str]:
        seen: set[str] = set()
        stack = list(self.parents(name))
        while stack:
            node = stack.pop()
            if node not in seen:
                seen.add(node)
                stack.extend(self.parents(node))
        return seen

    def descendants(self, name: str) -> set[str]:
        return {m for m in self.models if name in self.ancestors(m)}

    def topological(self) -> list[str]:
        order: list[str] = []
        done: set[str] = set()

        def visit(n: str, path: tuple[str, ...]) -> None:
            if n in done or n in path:
                return
            for p in self.parents(n):
                visit(p, (*path, n))
            done.add(n)
            order.append(n)

        for name in sorted(self.models):
            visit(name, ())
        return order


def default_layer(fqn: list[str]) -> str:
    """The first folder of a model under its model path (``fqn`` is project, folders..., name);
    ``other`` for a model at the root."""
    folders = fqn[1:-1]
    return folders[0] if folders else ROOT_LAYER


def rule_matches(rule: LayerRule, node: ModelNode) -> bool:
    """``folder``: a whole-folder prefix of the model's file under the project; ``tag``: one
    of its dbt tags; ``fqn``: a glob over its dotted fqn (``shop.reporting.*``)."""
    if rule.folder is not None:
        prefix = PurePosixPath(rule.folder.strip("/")).parts
        return PurePosixPath(node.original_file_path).parts[: len(prefix)] == prefix
    if rule.tag is not None:
        return rule.tag in node.tags
    return rule.fqn is not None and fnmatchcase(".".join(node.fqn), rule.fqn)


def layer_of(node: ModelNode, rules: list[LayerRule]) -> str:
    """The layer of the first rule matching ``node``; with none, the folder default."""
    for rule in rules:
        if rule_matches(rule, node):
            return rule.layer
    return default_layer(node.fqn) if node.fqn else node.layer


def assign_layers(manifest: DbtManifest, rules: list[LayerRule]) -> DbtManifest:
    """``manifest`` with each model's layer from ``rules`` (a task's ``scoring.layers``, first
    match wins; unmatched models keep the folder default). A new manifest: cached lookups of
    the old one are not carried over."""
    if not rules:
        return manifest
    models = {
        name: node.model_copy(update={"layer": layer_of(node, rules)})
        for name, node in manifest.models.items()
    }
    return DbtManifest(
        project_name=manifest.project_name,
        models=models,
        sources=manifest.sources,
        seeds=manifest.seeds,
        inlined=manifest.inlined,
    )


def unmatched_rules(manifest: DbtManifest, rules: list[LayerRule]) -> list[LayerRule]:
    """Rules no model of ``manifest`` matches (a typo in a folder, tag or glob)."""
    return [r for r in rules if not any(rule_matches(r, m) for m in manifest.models.values())]


def load_manifest(path: Path) -> DbtManifest:
    return parse_manifest(json.loads(path.read_text()))


def dissolve_ephemeral(models: dict[str, ModelNode]) -> dict[str, ModelNode]:
    """The models without the ephemeral ones, each model depending on what its ephemeral
    parents depended on instead (recursively). dbt inlines an ephemeral model into the compiled
    SQL of every model that refs it, so it has no relation to score or to read: it is scored
    through those models, whose component inputs are its parents."""
    ephemeral = {m.unique_id: m for m in models.values() if m.materialized == "ephemeral"}
    if not ephemeral:
        return models

    def expanded(node: ModelNode, seen: frozenset[str]) -> tuple[list[str], list[str], list[str]]:
        deps, sources, seeds = [], list(node.sources), list(node.seeds)
        for parent in node.depends_on:
            inner = ephemeral.get(parent)
            if inner is None:
                deps.append(parent)
            elif parent not in seen:
                d, so, se = expanded(inner, seen | {parent})
                deps, sources, seeds = deps + d, sources + so, seeds + se
        return deps, sources, seeds

    kept: dict[str, ModelNode] = {}
    for name, node in models.items():
        if node.unique_id in ephemeral:
            continue
        deps, sources, seeds = expanded(node, frozenset())
        kept[name] = node.model_copy(
            update={
                "depends_on": list(dict.fromkeys(deps)),
                "sources": list(dict.fromkeys(sources)),
                "seeds": list(dict.fromkeys(seeds)),
            }
        )
    return kept


def parse_manifest(data: dict[str, Any]) -> DbtManifest:
    """The models, sources and seeds of a dbt ``manifest.json`` document."""
    models: dict[str, ModelNode] = {}
    for uid, node in data["nodes"].items():
        if node.get("resource_type") != "model":
            continue
        depends = node.get("depends_on", {}).get("nodes", [])
        models[node["name"]] = ModelNode(
            unique_id=uid,
            name=node["name"],
            layer=default_layer(node.get("fqn", [])),
            database=node.get("database") or "",
            schema_=node.get("schema") or "",
            alias=node.get("alias") or node["name"],
            relation=node.get("relation_name") or "",
            depends_on=[d for d in depends if d.startswith("model.")],
            sources=[d for d in depends if d.startswith("source.")],
            seeds=[d for d in depends if d.startswith("seed.")],
            compiled_code=node.get("compiled_code"),
            raw_code=node.get("raw_code", ""),
            original_file_path=node.get("original_file_path", ""),
            description=node.get("description", ""),
            columns=[
                ColumnDoc(
                    name=c["name"],
                    description=c.get("description", ""),
                    data_type=c.get("data_type"),
                )
                for c in node.get("columns", {}).values()
            ],
            checksum=node.get("checksum", {}).get("checksum", ""),
            tags=[str(t) for t in node.get("tags") or []],
            fqn=[str(p) for p in node.get("fqn") or []],
            materialized=str((node.get("config") or {}).get("materialized") or "table"),
        )
    inlined = sorted(n for n, m in models.items() if m.materialized == "ephemeral")
    models = dissolve_ephemeral(models)
    sources = {uid: s.get("relation_name") or "" for uid, s in data.get("sources", {}).items()}
    seeds = {
        uid: node.get("relation_name") or ""
        for uid, node in data["nodes"].items()
        if node.get("resource_type") == "seed"
    }
    return DbtManifest(
        project_name=data.get("metadata", {}).get("project_name", ""),
        models=models,
        sources=sources,
        seeds=seeds,
        inlined=inlined,
    )


class BuiltNode(BaseModel):
    """A node dbt materializes: where its relation must be once the build is done."""

    unique_id: str
    database: str
    schema_: str
    alias: str

    @property
    def where(self) -> str:
        return f"{self.database}.{self.schema_}.{self.alias}"


def built_nodes(path: Path) -> list[BuiltNode]:
    """The models, seeds and snapshots of ``manifest.json`` that are not ephemeral: each one
    leaves a table or view behind in the warehouse."""
    data = json.loads(path.read_text())
    found = []
    for uid, node in data["nodes"].items():
        if node.get("resource_type") not in BUILT_RESOURCES:
            continue
        if (node.get("config") or {}).get("materialized") == "ephemeral":
            continue
        found.append(
            BuiltNode(
                unique_id=uid,
                database=node.get("database") or "",
                schema_=node.get("schema") or "",
                alias=node.get("alias") or node["name"],
            )
        )
    return sorted(found, key=lambda n: n.unique_id)
