"""Loading domain specs from YAML, with errors that name the file and the field path (tables and
columns by name) and suggest the nearest valid name on a typo."""

from __future__ import annotations

import json
import re
from importlib import resources
from pathlib import Path
from types import UnionType
from typing import Annotated, Any, Union, get_args, get_origin

import yaml
from pydantic import BaseModel, ValidationError

from benchforge.core.yamlio import read_yaml
from benchforge.synthesis.spec.models import DomainSpec, SpecError
from benchforge.synthesis.spec.suggest import did_you_mean

DOMAINS_PACKAGE = "benchforge.synthesis.domains"
SPEC_FILENAME = "domain.yaml"


def _field_path(loc: tuple[int | str, ...], data: Any) -> str:
    """A pydantic error location as a path by name: ``tables.appointments.columns.booked_at``
    instead of ``tables[3].columns[8]`` (list items named by their ``name``, stressors by what
    they touch); union tags and validator steps are left out."""
    path = ""
    node: Any = data
    key: str | None = None
    tag_seen: set[int] = set()
    for part in loc:
        if isinstance(part, int):
            item = node[part] if isinstance(node, list) and 0 <= part < len(node) else None
            path += _item_label(key, part, item)
            node = item
            continue
        if part.startswith(("function-", "tagged-union")):
            continue
        if isinstance(node, dict) and part == node.get("kind") and id(node) not in tag_seen:
            tag_seen.add(id(node))  # the discriminated union's tag, not a field
            continue
        path += f".{part}" if path else part
        node = node.get(part) if isinstance(node, dict) else None
        key = part
    return path or "(root)"


def _item_label(key: str | None, index: int, item: Any) -> str:
    if isinstance(item, dict):
        name = item.get("name")
        if key in ("tables", "columns") and isinstance(name, str) and name:
            return f".{name}"
        if key == "stressors":
            target = ".".join(str(item[k]) for k in ("table", "column") if k in item)
            return f"[{index}] ({item.get('kind', '?')} on {target})"
    return f"[{index}]"


def _strip(tp: Any) -> Any:
    while get_origin(tp) is Annotated:
        tp = get_args(tp)[0]
    return tp


def _members(tp: Any) -> list[Any]:
    tp = _strip(tp)
    if get_origin(tp) in (Union, UnionType):
        return [m for a in get_args(tp) for m in _members(a)]
    return [tp]


def _kind_of(model: type[BaseModel]) -> str | None:
    field = model.model_fields.get("kind")
    args = get_args(field.annotation) if field else ()
    return str(args[0]) if len(args) == 1 else None


def _is_model(tp: Any) -> bool:
    return isinstance(tp, type) and issubclass(tp, BaseModel)


def _models_at(loc: tuple[int | str, ...]) -> list[type[BaseModel]]:
    """The model classes an error location points into (several for an untagged union)."""
    current = _members(DomainSpec)
    for part in loc:
        if isinstance(part, str) and part.startswith(("function-", "tagged-union")):
            continue
        tagged = [m for m in current if _is_model(m) and _kind_of(m) == part]
        if tagged and len(current) > 1:  # the discriminated union's tag
            current = tagged
            continue
        nxt: list[Any] = []
        for tp in current:
            origin = get_origin(tp)
            if origin is list and isinstance(part, int):
                nxt += _members(get_args(tp)[0])
            elif origin is dict and isinstance(part, str):
                nxt += _members(get_args(tp)[1])
            elif _is_model(tp) and isinstance(part, str) and part in tp.model_fields:
                nxt += _members(tp.model_fields[part].annotation)
        current = nxt
    return [m for m in current if _is_model(m)]


def _hint(err: Any) -> str:
    """ "did you mean" for a misspelt field name or union tag."""
    loc = tuple(err["loc"])
    if err["type"] == "extra_forbidden" and loc and isinstance(loc[-1], str):
        fields = {f for m in _models_at(loc[:-1]) for f in m.model_fields}
        return did_you_mean(loc[-1], fields)
    if err["type"] == "union_tag_invalid":
        ctx = err.get("ctx") or {}
        expected = re.findall(r"'([^']+)'", str(ctx.get("expected_tags", "")))
        return did_you_mean(str(ctx.get("tag", "")), expected)
    return ""


def _problems(err: ValidationError, data: Any) -> list[tuple[str, str]]:
    problems: list[tuple[str, str]] = []
    for e in err.errors():
        msg = str(e["msg"]).removeprefix("Value error, ")
        if msg.startswith("@"):  # cross-reference problems carry their own paths
            for line in msg.splitlines():
                path, _, text = line[1:].partition(": ")
                problems.append((path, text))
        else:
            problems.append((_field_path(e["loc"], data), _describe(e, msg)))
    return problems


def _describe(err: Any, msg: str) -> str:
    """The error's message, shorter for an unknown union tag, with a "did you mean" hint."""
    if err["type"] == "union_tag_invalid":
        ctx = err.get("ctx") or {}
        field = str(ctx.get("discriminator", "kind")).strip("'")
        expected = ctx.get("expected_tags", "")
        return f"unknown {field} '{ctx.get('tag', '')}'{_hint(err)}; expected one of: {expected}"
    return msg + _hint(err)


def parse_spec(data: Any, source: str) -> DomainSpec:
    """Validates an already-parsed YAML document; ``source`` names it in errors."""
    if not isinstance(data, dict):
        raise SpecError(source, [("(root)", "expected a mapping at the top level")])
    try:
        return DomainSpec.model_validate(data)
    except ValidationError as err:
        raise SpecError(source, _problems(err, data)) from None


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
