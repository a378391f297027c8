"""What tasks hand to agents and scorers, derived from gold repositories.

- ``make_skeleton``: the de_impl starting point (project file, macros, sources; no models);
- ``data_contract``: the de_impl contract from a gold build's manifest and catalog plus the
  task's authored metadata (metrics, rules, notes); its header says what the build actually
  does (schemas and materializations per layer, the layer mapping) and which repository
  version it was generated from, so ``task validate`` can tell a stale contract;
- ``apply_overlay``: gold v2 of a de_evol task (the repository with the task's overlay folder
  copied over it and its removed files deleted).
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
from pathlib import Path
from typing import Any

import yaml

from benchforge.core.digest import folder_digest
from benchforge.core.errors import BenchforgeError
from benchforge.core.scratch import content_key
from benchforge.core.yamlio import read_yaml
from benchforge.evaluation.dbt.manifest import DbtManifest, assign_layers, load_manifest
from benchforge.evaluation.dbt.packages import add_packages, install_path, vendored_packages
from benchforge.evaluation.gold import load_gold, repo_version
from benchforge.evaluation.tasks.models import LayerRule

_IGNORE = shutil.ignore_patterns("target", "logs", "dbt_packages", "__pycache__")


def copy_repo(repo: Path, dest: Path) -> Path:
    """A copy of the project without build outputs, its dbt packages the vendored ones."""
    if dest.exists():
        shutil.rmtree(dest)
    shutil.copytree(repo, dest, ignore=_IGNORE)
    add_packages(repo, dest)
    return dest


MODEL_LAYERS = ("staging", "intermediate", "marts")
# Files of the project root an agent gets: dbt's own configuration, the package list and lint
# settings.
ROOT_FILES = (
    "dbt_project.yml",
    "profiles.yml",
    "packages.yml",
    "dependencies.yml",
    "package-lock.yml",
    "selectors.yml",
    ".sqlfluff",
    ".sqlfluffignore",
)
MACRO_SUFFIXES = (".sql", ".yml", ".yaml", ".md")
SEED_SUFFIXES = (".csv", ".yml", ".yaml")
# Never shipped, even when a task lists them: version control (a checkout of the gold) and
# notebooks (cells that write the models).
NEVER_SHIPPED_DIRS = (".git", ".hg", ".svn", ".ipynb_checkpoints")
NEVER_SHIPPED_SUFFIXES = (".ipynb",)
MIN_MODEL_TOKENS = 16  # a model shorter than this is not searched for in other files
_TOKEN = re.compile(r"[A-Za-z0-9_]+|[^\sA-Za-z0-9_]")
_ESCAPES = re.compile(r"\\[ntr]")


def _project_paths(repo: Path, key: str, default: str) -> list[str]:
    project = read_yaml((repo / "dbt_project.yml").read_text()) or {}
    paths = project.get(key) if isinstance(project, dict) else None
    if isinstance(paths, list) and all(isinstance(p, str) for p in paths) and paths:
        return [p.strip("/") for p in paths]
    return [default]


def _tokens(text: str) -> str:
    """The text as a space-separated token string (escaped newlines and tabs of a JSON or
    Python string read as spaces), so SQL is found whatever its layout or quoting."""
    return " " + " ".join(_TOKEN.findall(_ESCAPES.sub(" ", text).replace('\\"', '"'))) + " "


def _answer_files(repo: Path, model_paths: list[str], macro_paths: list[str]) -> list[str]:
    """Token strings of every gold model (and model-layer macro) long enough to search for."""
    sources: list[Path] = []
    for folder in model_paths:
        sources += sorted((repo / folder).rglob("*.sql"))
    for folder in macro_paths:
        for layer in MODEL_LAYERS:
            sources += sorted((repo / folder / layer).rglob("*.sql"))
    found = []
    for path in sources:
        tokens = _tokens(path.read_text(errors="replace"))
        if tokens.count(" ") > MIN_MODEL_TOKENS:
            found.append(tokens)
    return found


def _is_under(rel: Path, folders: list[str]) -> bool:
    return any(rel.parts[: len(Path(f).parts)] == Path(f).parts for f in folders)


def _never_shipped(rel: Path) -> bool:
    return any(part in NEVER_SHIPPED_DIRS for part in rel.parts) or (
        rel.suffix.lower() in NEVER_SHIPPED_SUFFIXES
    )


def skeleton_files(repo: Path, include: list[str] | tuple[str, ...] = ()) -> list[Path]:
    """The files of ``repo`` (relative paths) a de_impl agent receives: an allow-list.

    - the project's configuration (:data:`ROOT_FILES`);
    - macros under the project's macro paths, except ``<macro path>/<layer>/`` (staging,
      intermediate, marts), which hold models' bodies;
    - seeds under the seed paths (inputs, as the dataset is);
    - YAML files under the model paths that define sources (rewritten to their sources);
    - files matching the task's ``include`` globs.

    Version-control folders and notebooks are never shipped, nor any file whose text contains
    a gold model's SQL (compared token by token, so a notebook cell or a Python string that
    writes a model is found whatever its layout)."""
    model_paths = _project_paths(repo, "model-paths", "models")
    macro_paths = _project_paths(repo, "macro-paths", "macros")
    seed_paths = _project_paths(repo, "seed-paths", "seeds")
    wanted: set[Path] = {Path(name) for name in ROOT_FILES if (repo / name).is_file()}

    def under(folders: list[str], suffixes: tuple[str, ...]) -> set[Path]:
        return {
            p.relative_to(repo)
            for folder in folders
            for p in (repo / folder).rglob("*")
            if p.is_file() and p.suffix.lower() in suffixes
        }

    layer_macros = [f"{m}/{layer}" for m in macro_paths for layer in MODEL_LAYERS]
    wanted |= {r for r in under(macro_paths, MACRO_SUFFIXES) if not _is_under(r, layer_macros)}
    wanted |= under(seed_paths, SEED_SUFFIXES)
    wanted |= under(model_paths, (".yml", ".yaml"))
    for pattern in include:
        wanted |= {p.relative_to(repo) for p in repo.glob(pattern) if p.is_file()}
    answers = _answer_files(repo, model_paths, macro_paths)
    shipped = []
    for rel in sorted(wanted):
        if _never_shipped(rel) or rel.parts[0] in ("target", "logs", "dbt_packages"):
            continue
        if _is_under(rel, model_paths) and rel.suffix == ".sql":
            continue
        text = _tokens((repo / rel).read_text(errors="replace"))
        if any(answer in text for answer in answers):
            continue
        shipped.append(rel)
    return shipped


def skeleton_key(repo: Path, include: list[str] | tuple[str, ...] = ()) -> str:
    """A key of everything :func:`make_skeleton` and :func:`gold_as_received` make from
    ``repo``: its version, the shipped files' contents and its vendored packages."""
    h = hashlib.sha256()
    for rel in skeleton_files(repo, include):
        h.update(rel.as_posix().encode() + b"\0" + (repo / rel).read_bytes() + b"\0")
    return content_key(repo_version(repo), h.hexdigest(), _packages_key(repo))


def overlay_key(repo: Path, overlay: Path, removed: list[str]) -> str:
    """A key of what :func:`apply_overlay` makes."""
    return content_key(
        repo_version(repo), _packages_key(repo), folder_digest(overlay), sorted(removed)
    )


def _packages_key(repo: Path) -> str:
    vendored = vendored_packages(repo)
    return vendored.name if vendored is not None else ""


def make_skeleton(repo: Path, dest: Path, include: list[str] | tuple[str, ...] = ()) -> Path:
    """The gold project without its models (:func:`skeleton_files`): source definitions keep
    their sources only (model entries removed), an empty folder per model layer, and the
    project's dbt packages installed (vendored: the agent builds offline)."""
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    model_paths = _project_paths(repo, "model-paths", "models")
    for rel in skeleton_files(repo, include):
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(repo / rel, target)
        is_properties = _is_under(rel, model_paths) and rel.suffix in (".yml", ".yaml")
        if is_properties and not _keep_sources(target):
            target.unlink()
    for folder in MODEL_LAYERS:
        (dest / model_paths[0] / folder).mkdir(parents=True, exist_ok=True)
    add_packages(repo, dest)
    _refuse_answering_packages(repo, dest, model_paths)
    return dest


def gold_as_received(repo: Path, skeleton: Path, dest: Path) -> Path:
    """The gold as an agent with the perfect answer submits it: the workspace's skeleton plus
    what it withholds that an agent writes (files under the model, snapshot and test paths,
    layer macros), never
    version control or notebooks. Scoring this, not the maintainer's folder, shows the gold
    builds from what agents are given (its packages, its configuration)."""
    if dest.exists():
        shutil.rmtree(dest)
    shutil.copytree(skeleton, dest)
    model_paths = _project_paths(repo, "model-paths", "models")
    macro_paths = _project_paths(repo, "macro-paths", "macros")
    written = [
        *model_paths,
        *_project_paths(repo, "snapshot-paths", "snapshots"),
        *_project_paths(repo, "test-paths", "tests"),
        *(f"{m}/{layer}" for m in macro_paths for layer in MODEL_LAYERS),
    ]
    for folder in written:
        for path in sorted((repo / folder).rglob("*")):
            rel = path.relative_to(repo)
            if path.is_file() and not _never_shipped(rel):
                (dest / rel).parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(path, dest / rel)
    return dest


class AnsweringPackageError(BenchforgeError):
    """A dbt package the workspace must ship holds a gold model's SQL."""


def _refuse_answering_packages(repo: Path, dest: Path, model_paths: list[str]) -> None:
    """A package is shipped whole (the build needs it), so one holding a gold model's SQL is
    an error, never a silent leak."""
    macro_paths = _project_paths(repo, "macro-paths", "macros")
    answers = _answer_files(repo, model_paths, macro_paths)
    folder = dest / install_path(repo)
    if not answers or not folder.is_dir():
        return
    for path in sorted(folder.rglob("*")):
        if not path.is_file() or path.suffix.lower() not in (".sql", ".py", ".yml", ".md"):
            continue
        text = _tokens(path.read_text(errors="replace"))
        if any(answer in text for answer in answers):
            raise AnsweringPackageError(
                f"the dbt package file {path.relative_to(dest)} contains a gold model's SQL: "
                f"the de_impl workspace would ship the answer. Remove the package from "
                f"{repo}/packages.yml or the model from the package"
            )


def _keep_sources(path: Path) -> bool:
    """Whether a file of ``models/`` stays in the skeleton: a YAML file defining sources,
    rewritten to its sources alone when it also describes models (their columns and tests are
    the contract's to give, in its own words)."""
    if path.suffix not in (".yml", ".yaml"):
        return False
    try:
        data = read_yaml(path.read_text())
    except Exception:  # not YAML dbt could read either: nothing to keep
        return False
    if not isinstance(data, dict) or not data.get("sources"):
        return False
    if set(data) - {"version", "sources"}:
        kept = {"version": data.get("version", 2), "sources": data["sources"]}
        path.write_text(yaml.safe_dump(kept, sort_keys=False, allow_unicode=True))
    return True


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


CONTRACT_VERSION = 2


def data_contract(
    gold_folder: Path,
    metadata_path: Path | None,
    domain: str,
    layers: list[LayerRule] | None = None,
) -> dict[str, Any]:
    """The de_impl contract: model inventory and lineage, schemas, materializations, grains,
    keys, tests, plus the task's authored metric definitions and data-quality rules.
    ``layers``: the task's layer mapping (``scoring.layers``)."""
    rules = list(layers or [])
    manifest = assign_layers(load_manifest(gold_folder / "manifest.json"), rules)
    raw_manifest = json.loads((gold_folder / "manifest.json").read_text())
    catalog = json.loads((gold_folder / "catalog.json").read_text())
    types = {
        uid: {c["name"].lower(): c["type"] for c in node["columns"].values()}
        for uid, node in {**catalog["nodes"], **catalog.get("sources", {})}.items()
    }
    tests = _tests_by_node(gold_folder / "manifest.json")
    metadata = read_yaml(metadata_path.read_text()) if metadata_path else {}
    notes = (metadata or {}).get("models", {}) or {}
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
            "materialized": node.materialized,
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
        "contract_version": CONTRACT_VERSION,
        "domain": domain,
        "generated_from": generated_from(
            load_gold(gold_folder).repo_version, len(models), rules, metadata_path
        ),
        "build": build_summary(manifest, raw_manifest, rules),
        "sources": sources,
        "models": models,
        **({"inlined_ephemeral": manifest.inlined} if manifest.inlined else {}),
        "metrics": (metadata or {}).get("metrics", []),
        "data_quality": (metadata or {}).get("data_quality", []),
    }


def build_summary(
    manifest: DbtManifest, raw_manifest: dict[str, Any], rules: list[LayerRule]
) -> dict[str, Any]:
    """What the gold build does, read from its manifest: the adapter, the schemas its sources
    are read from, and per layer the schemas and materializations its models use; the layer
    mapping that put each model in its layer."""
    layers: dict[str, dict[str, Any]] = {}
    for name in manifest.topological():
        node = manifest.models[name]
        layer = layers.setdefault(node.layer, {"models": 0, "schemas": [], "materialized": []})
        layer["models"] += 1
        for key, value in (("schemas", node.schema_), ("materialized", node.materialized)):
            if value not in layer[key]:
                layer[key].append(value)
    source_schemas = sorted(
        {str(s.get("schema")) for s in raw_manifest.get("sources", {}).values()}
    )
    mapping: Any = [r.model_dump(exclude_none=True) for r in rules] + [
        "otherwise: the first folder under the model path ('other' at its root)"
    ]
    return {
        "adapter": raw_manifest.get("metadata", {}).get("adapter_type") or "unknown",
        "source_schemas": source_schemas,
        "layers": {k: {**v, "schemas": sorted(v["schemas"])} for k, v in layers.items()},
        "layer_mapping": mapping,
    }


def generated_from(
    version: str, models: int, rules: list[LayerRule], metadata_path: Path | None
) -> dict[str, Any]:
    """What a contract was generated from: the repository version (and its model count), the
    layer rules and a digest of the authored metadata. A contract whose record differs from
    the task's inputs today is stale."""
    metadata = None
    if metadata_path is not None:
        metadata = hashlib.sha256(metadata_path.read_bytes()).hexdigest()[:16]
    return {
        "repo_version": version,
        "models": models,
        "layer_rules": [r.model_dump(exclude_none=True) for r in rules],
        "contract_metadata": metadata,
    }


def contract_problems(
    contract_path: Path,
    repo: Path,
    current_version: str,
    rules: list[LayerRule],
    metadata_path: Path | None,
) -> list[str]:
    """Why the contract at ``contract_path`` cannot be handed to agents for ``repo`` at
    ``current_version`` with these layer ``rules`` and metadata: it lists no model, it was
    generated from other inputs (or before contracts recorded theirs), or its models are not
    the repository's."""
    try:
        contract = read_yaml(contract_path.read_text()) or {}
    except Exception as err:  # yaml errors carry their own line numbers
        return [f"{contract_path.name} is not YAML: {str(err).splitlines()[0]}"]
    if not isinstance(contract, dict):
        return [f"{contract_path.name} is not a mapping"]
    names = [
        str(m["name"])
        for m in contract.get("models") or []
        if isinstance(m, dict) and m.get("name")
    ]
    if not names:
        return [f"{contract_path.name} lists no models"]
    recorded = contract.get("generated_from")
    if not isinstance(recorded, dict) or "repo_version" not in recorded:
        return [f"{contract_path.name} does not say which repository version it describes"]
    if recorded["repo_version"] != current_version:
        return [
            f"{contract_path.name} is stale: generated from repository version "
            f"{recorded['repo_version']}, the repository is now {current_version}"
        ]
    now = generated_from(current_version, len(names), rules, metadata_path)
    for key, what in (("layer_rules", "scoring.layers"), ("contract_metadata", "its metadata")):
        if recorded.get(key) != now[key]:
            return [f"{contract_path.name} is stale: {what} changed since it was generated"]
    inlined = contract.get("inlined_ephemeral") or []
    files = repo_model_names(repo) - {str(n) for n in inlined}
    missing, extra = sorted(files - set(names)), sorted(set(names) - files)
    if missing or extra:
        said = [f"not in the contract: {', '.join(missing)}"] if missing else []
        said += [f"not in the repository: {', '.join(extra)}"] if extra else []
        return [f"{contract_path.name} and the repository's models differ ({'; '.join(said)})"]
    return []


def repo_model_names(repo: Path) -> set[str]:
    """The model names of a dbt project by its files (``*.sql`` and ``*.py`` under its model
    paths): what a parse would list, without running dbt."""
    project = read_yaml((repo / "dbt_project.yml").read_text()) or {}
    paths = project.get("model-paths") or project.get("source-paths") or ["models"]
    return {
        p.stem
        for folder in paths
        for p in (repo / folder).rglob("*")
        if p.is_file() and p.suffix in (".sql", ".py")
    }


def write_contract(contract: dict[str, Any], path: Path) -> None:
    header = "# Generated by `benchforge task contract` from the gold build; do not edit by hand.\n"
    path.write_text(
        header + yaml.safe_dump(contract, sort_keys=False, width=100, allow_unicode=True)
    )
