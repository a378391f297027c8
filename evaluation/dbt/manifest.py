"""The parts of dbt's ``manifest.json`` that scoring and task generation need."""

from __future__ import annotations

import json
from functools import cached_property
from pathlib import Path

from pydantic import BaseModel

LAYERS = ("staging", "intermediate", "marts")


class ColumnDoc(BaseModel):
    name: str
    description: str = ""
    data_type: str | None = None


class ModelNode(BaseModel):
    unique_id: str
    name: str
    layer: str  # staging | intermediate | marts | other (from the folder under models/)
    database: str
    schema_: str
    alias: str
    relation: str  # as dbt renders it: "db"."schema"."alias"
    depends_on: list[str]  # unique ids of model parents
    sources: list[str]  # unique ids of source parents
    compiled_code: str | None
    raw_code: str
    original_file_path: str
    description: str = ""
    columns: list[ColumnDoc] = []
    checksum: str = ""


class DbtManifest(BaseModel):
    project_name: str
    models: dict[str, ModelNode]  # by model name
    sources: dict[str, str]  # source unique id -> relation

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


def _layer(fqn: list[str]) -> str:
    folders = fqn[1:-1]
    return folders[0] if folders and folders[0] in LAYERS else (folders[0] if folders else "other")


def load_manifest(path: Path) -> DbtManifest:
    data = json.loads(path.read_text())
    models: dict[str, ModelNode] = {}
    for uid, node in data["nodes"].items():
        if node.get("resource_type") != "model":
            continue
        depends = node.get("depends_on", {}).get("nodes", [])
        models[node["name"]] = ModelNode(
            unique_id=uid,
            name=node["name"],
            layer=_layer(node.get("fqn", [])),
            database=node.get("database") or "",
            schema_=node.get("schema") or "",
            alias=node.get("alias") or node["name"],
            relation=node.get("relation_name") or "",
            depends_on=[d for d in depends if d.startswith("model.")],
            sources=[d for d in depends if d.startswith("source.")],
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
        )
    sources = {uid: s.get("relation_name") or "" for uid, s in data.get("sources", {}).items()}
    return DbtManifest(
        project_name=data.get("metadata", {}).get("project_name", ""),
        models=models,
        sources=sources,
    )
