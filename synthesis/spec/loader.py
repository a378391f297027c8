"""Loading domain specs from YAML, with errors that name the file and the field path."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from benchforge.core.yamlio import read_yaml
from benchforge.synthesis.spec.models import DomainSpec, SpecError

DOMAINS_PACKAGE = "benchforge.synthesis.domains"
SPEC_FILENAME = "domain.yaml"


def _field_path(loc: tuple[int | str, ...]) -> str:
    path = ""
    for part in loc:
        if isinstance(part, int):
            path += f"[{part}]"
        elif part.startswith(("function-", "tagged-union")) or part in _UNION_TAGS:
            continue
        else:
            path += f".{part}" if path else str(part)
    return path or "(root)"


_UNION_TAGS = {
    "sequence",
    "faker",
    "uniform",
    "normal",
    "lognormal",
    "zipf",
    "poisson",
    "categorical",
    "boolean",
    "lookup_key",
    "lookup",
    "foreign_key",
    "parent",
    "date",
    "expression",
    "conditional",
    "missing_values",
    "outliers",
    "type_coercion",
    "duplicate_current",
    "currency_conflict",
    "timezone_mismatch",
    "key_drift",
}


def _problems(err: ValidationError) -> list[tuple[str, str]]:
    problems: list[tuple[str, str]] = []
    for e in err.errors():
        msg = str(e["msg"]).removeprefix("Value error, ")
        where = _field_path(e["loc"])
        if msg.startswith("@"):  # cross-reference problems carry their own paths
            for line in msg.splitlines():
                path, _, text = line[1:].partition(": ")
                problems.append((path, text))
        else:
            problems.append((where, msg))
    return problems


def parse_spec(data: Any, source: str) -> DomainSpec:
    """Validates an already-parsed YAML document; ``source`` names it in errors."""
    if not isinstance(data, dict):
        raise SpecError(source, [("(root)", "expected a mapping at the top level")])
    try:
        return DomainSpec.model_validate(data)
    except ValidationError as err:
        raise SpecError(source, _problems(err)) from None


def load_spec(path: Path | str) -> DomainSpec:
    path = Path(path)
    try:
        text = path.read_text()
    except OSError as err:
        raise SpecError(str(path), [("(file)", err.strerror or str(err))]) from None
    try:
        data = read_yaml(text)
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        where = f"line {mark.line + 1}" if mark else "(yaml)"
        raise SpecError(str(path), [(where, f"not valid YAML: {err}")]) from None
    return parse_spec(data, str(path))


def shipped_domains() -> list[str]:
    root = resources.files(DOMAINS_PACKAGE)
    return sorted(p.name for p in root.iterdir() if p.is_dir() and (p / SPEC_FILENAME).is_file())


def domain_spec_path(domain: str) -> Path:
    """The spec file of a shipped domain, or a path to a spec file given directly."""
    candidate = Path(domain)
    if candidate.suffix in (".yaml", ".yml"):
        return candidate
    if domain not in shipped_domains():
        known = ", ".join(shipped_domains())
        raise SpecError(domain, [("domain", f"unknown domain '{domain}' (shipped: {known})")])
    return Path(str(resources.files(DOMAINS_PACKAGE) / domain / SPEC_FILENAME))


def load_domain(domain: str) -> DomainSpec:
    return load_spec(domain_spec_path(domain))


def json_schema() -> str:
    return json.dumps(DomainSpec.model_json_schema(), indent=2, sort_keys=True) + "\n"
