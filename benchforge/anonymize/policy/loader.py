"""Loading an anonymization policy from YAML, with errors a person can act on.

A policy is written by hand and read by a flow that refuses to publish anything it cannot
trust, so every problem names the file, the field path as the author wrote it
(``tables.accounts.columns.email.rule``), the line, and, for a misspelt rule, key or value, the
closest valid word. Duplicate keys are errors: YAML would otherwise keep the last one silently,
and a column listed twice with two rules is exactly the mistake a reviewer misses.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import re
import types
from collections.abc import Hashable
from importlib import resources
from pathlib import Path
from typing import Any, Union, get_args, get_origin

import yaml
from pydantic import BaseModel, ConfigDict, ValidationError
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from benchforge.anonymize.policy.models import (
    RULE_NAMES,
    Derive,
    Fake,
    FrequencyFloor,
    Generalize,
    Keep,
    Perturb,
    Policy,
    PolicyError,
    Pseudonymize,
    Scrub,
    ShiftDates,
    Suppress,
    Swap,
)

POLICIES_PACKAGE = "benchforge.anonymize.policies"
SCHEMA_FILENAME = "policy.schema.json"
SCHEMA_PATH = Path(__file__).with_name(SCHEMA_FILENAME)

RULE_MODELS: dict[str, type[BaseModel]] = {
    "keep": Keep,
    "pseudonymize": Pseudonymize,
    "fake": Fake,
    "perturb": Perturb,
    "shift_dates": ShiftDates,
    "frequency_floor": FrequencyFloor,
    "swap": Swap,
    "generalize": Generalize,
    "scrub": Scrub,
    "derive": Derive,
    "suppress": Suppress,
}

Path_ = tuple[str | int, ...]


class LoadedPolicy(BaseModel):
    """A validated policy and where it came from: ``source`` names the file in every later error
    (check, secret, transform) and ``sha256`` of its bytes goes into the release report, so a
    release can be traced to the exact policy text that produced it."""

    model_config = ConfigDict(frozen=True)

    policy: Policy
    source: str
    sha256: str


# ---------------------------------------------------------------- YAML with lines


class _PolicyYamlLoader(yaml.SafeLoader):
    """Safe YAML where only true/false are booleans (a column named ``on`` or a value ``no``
    stays a string) and duplicate mapping keys are errors."""

    def construct_mapping(self, node: MappingNode, deep: bool = False) -> dict[Hashable, Any]:
        seen: dict[Any, int] = {}
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)
            if isinstance(key, Hashable) and key in seen:
                raise yaml.constructor.ConstructorError(
                    None,
                    None,
                    f"duplicate key {key!r} (first on line {seen[key]})",
                    key_node.start_mark,
                )
            if isinstance(key, Hashable):
                seen[key] = key_node.start_mark.line + 1
        return super().construct_mapping(node, deep=deep)


_PolicyYamlLoader.yaml_implicit_resolvers = {
    ch: [(tag, rx) for tag, rx in resolvers if tag != "tag:yaml.org,2002:bool"]
    for ch, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
_PolicyYamlLoader.add_implicit_resolver(
    "tag:yaml.org,2002:bool", re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF")
)


def _line_map(node: Node | None, path: Path_ = (), out: dict[Path_, int] | None = None) -> dict:
    """The 1-based line of every key (mappings) and item (sequences) of the document."""
    out = {} if out is None else out
    if node is None:
        return out
    out.setdefault(path, node.start_mark.line + 1)
    if isinstance(node, MappingNode):
        for key_node, value_node in node.value:
            if isinstance(key_node, ScalarNode):
                sub = (*path, key_node.value)
                out[sub] = key_node.start_mark.line + 1
                _line_map(value_node, sub, out)
    elif isinstance(node, SequenceNode):
        for i, item in enumerate(node.value):
            _line_map(item, (*path, i), out)
    return out


def parse_yaml(text: str, source: str) -> tuple[Any, dict[Path_, int]]:
    """The YAML document and the line of every path in it; malformed YAML -> PolicyError."""
    loader = _PolicyYamlLoader(text)
    try:
        node = loader.get_single_node()
        data = loader.construct_document(node) if node is not None else None
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        where = f"line {mark.line + 1}" if mark is not None else "(yaml)"
        problem = getattr(err, "problem", None) or str(err)
        raise PolicyError(source, [(where, f"not valid YAML: {problem}")]) from None
    finally:
        loader.dispose()
    return data, _line_map(node)


# ---------------------------------------------------------------- validation errors


def did_you_mean(word: object, options: list[str] | tuple[str, ...]) -> str:
    """'; did you mean 'x'?' for the closest option, or '' when nothing is close."""
    if not isinstance(word, str):
        return ""
    close = difflib.get_close_matches(word, list(options), n=1, cutoff=0.6)
    if not close:  # an abbreviation: min_ks for min_ks_complement
        close = [o for o in options if len(word) >= 3 and o.startswith(word)][:1]
    return f"; did you mean '{close[0]}'?" if close else ""


def _model_fields_at(loc: Path_) -> list[str] | None:
    """The keys allowed at ``loc`` (a pydantic loc to a model), by walking Policy's
    annotations; None when the loc does not end at a model."""
    current: Any = Policy
    parts = list(loc)
    while parts:
        part = parts.pop(0)
        if isinstance(current, type) and issubclass(current, BaseModel):
            field = current.model_fields.get(str(part))
            if field is None:
                return None
            current = field.annotation
        else:
            return None
        # unwrap containers / optionals / the rule union until a model or a leaf remains
        while True:
            origin = get_origin(current)
            args = get_args(current)
            if origin is dict and parts:
                parts.pop(0)
                current = args[1]
            elif origin is list and parts and isinstance(parts[0], int):
                parts.pop(0)
                current = args[0]
            elif origin in (Union, types.UnionType):
                models = [a for a in args if isinstance(a, type) and issubclass(a, BaseModel)]
                if len(models) == 1:
                    current = models[0]
                elif parts and str(parts[0]) in RULE_MODELS:
                    current = RULE_MODELS[str(parts.pop(0))]
                else:
                    return None
            else:
                break
    if isinstance(current, type) and issubclass(current, BaseModel):
        return list(current.model_fields)
    return None


def _raw_at(data: Any, path: Path_) -> Any:
    for part in path:
        in_dict = isinstance(data, dict) and part in data
        in_list = isinstance(data, list) and isinstance(part, int) and part < len(data)
        if not (in_dict or in_list):
            return None
        data = data[part]
    return data


def _written_path(loc: Path_, data: Any) -> tuple[Path_, Path_]:
    """(path as shown, path in the YAML document) for a pydantic loc.

    A column's rule can be written three ways; the shown path follows what the author wrote:
    ``email: scrub`` -> ``...email.rule``; ``email: {rule: fake, provider: x}`` ->
    ``...email.provider``; ``email: {rule: {rule: fake, provider: x}}`` ->
    ``...email.rule.provider``.
    """
    shown: list[str | int] = []
    doc: list[str | int] = []
    parts = list(loc)
    i = 0
    while i < len(parts):
        part = parts[i]
        is_column = len(doc) >= 4 and doc[-2] == "columns" and doc[0] == "tables"
        if is_column and part == "rule":
            raw = _raw_at(data, tuple(doc))
            tag_follows = i + 1 < len(parts) and parts[i + 1] in RULE_MODELS
            if isinstance(raw, str):  # bare shorthand: the value itself is the rule
                return (*shown, "rule"), tuple(doc)
            nested = isinstance(raw, dict) and isinstance(raw.get("rule"), dict)
            # nested form: `rule.provider`; flat form: `provider`, or `rule` for the name itself
            if nested or not tag_follows:
                shown.append("rule")
                doc.append("rule")
            i += 2 if tag_follows else 1
            continue
        shown.append(part)
        doc.append(part)
        i += 1
    return tuple(shown), tuple(doc)


def _render(path: Path_) -> str:
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out or "(root)"


def _message(err: Any, loc: Path_) -> str:
    kind = err["type"]
    given = err.get("input")
    ctx = err.get("ctx") or {}
    if kind == "union_tag_invalid":
        tag = ctx.get("tag")
        return (
            f"unknown rule '{tag}'{did_you_mean(tag, RULE_NAMES)} (rules: {', '.join(RULE_NAMES)})"
        )
    if kind == "extra_forbidden":
        key = loc[-1]
        allowed = _model_fields_at(loc[:-1]) or []
        if len(loc) >= 5 and loc[0] == "tables" and loc[2] == "columns" and "pii" not in allowed:
            allowed = [*allowed, "pii"]  # a flat rule mapping also takes the column's pii tag
        return f"unknown key '{key}'{did_you_mean(str(key), allowed)}"
    if kind == "literal_error":
        options = re.findall(r"'([^']*)'", str(ctx.get("expected", "")))
        return f"{given!r} is not one of {', '.join(options)}{did_you_mean(given, options)}"
    if kind == "model_type" and err.get("ctx", {}).get("class_name") == "Column":
        return (
            f"expected a rule name ({', '.join(_parameterless_rules())}) or a mapping with 'rule'"
        )
    if kind == "missing":
        return f"required key '{loc[-1]}' is missing"
    return str(err["msg"]).removeprefix("Value error, ")


def validation_problems(err: ValidationError, data: Any, lines: dict[Path_, int]) -> list:
    """(field path, message) pairs for a pydantic error on a policy document."""
    problems: list[tuple[str, str]] = []
    for e in err.errors():
        loc: Path_ = tuple(p for p in e["loc"] if not str(p).startswith("function-"))
        shown, doc = _written_path(loc, data)
        line = None
        for cut in range(len(doc), -1, -1):
            line = lines.get(doc[:cut])
            if line is not None:
                break
        message = _message(e, loc)
        if line is not None:
            message += f" (line {line})"
        problems.append((_render(shown), message))
    return problems


# ---------------------------------------------------------------- public API


def parse_policy(text: str, source: str) -> Policy:
    """Validates a policy document given as text; ``source`` names it in errors."""
    data, lines = parse_yaml(text, source)
    if not isinstance(data, dict):
        raise PolicyError(source, [("(root)", "expected a mapping at the top level")])
    try:
        return Policy.model_validate(data)
    except ValidationError as err:
        raise PolicyError(source, validation_problems(err, data, lines)) from None


def shipped_policies() -> list[str]:
    """Names of the policies shipped with benchforge (``crm``, ...)."""
    root = resources.files(POLICIES_PACKAGE)
    return sorted(p.name.removesuffix(".yaml") for p in root.iterdir() if p.name.endswith(".yaml"))


def policy_path(ref: str | Path) -> Path:
    """A shipped policy's file, or the path given."""
    if isinstance(ref, Path) or ref.endswith((".yaml", ".yml")) or "/" in ref:
        return Path(ref)
    if ref not in shipped_policies():
        shipped = ", ".join(shipped_policies())
        raise PolicyError(
            ref,
            [
                (
                    "(policy)",
                    f"no shipped policy '{ref}'{did_you_mean(ref, shipped_policies())} "
                    f"(shipped: {shipped}); give a path to a YAML file otherwise",
                )
            ],
        )
    return Path(str(resources.files(POLICIES_PACKAGE) / f"{ref}.yaml"))


def load_policy(ref: str | Path) -> LoadedPolicy:
    """Reads and validates a policy: a shipped name (``"crm"``) or a path to a YAML file."""
    path = policy_path(ref)
    try:
        raw = path.read_bytes()
    except OSError as err:
        raise PolicyError(str(path), [("(file)", err.strerror or str(err))]) from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as err:
        raise PolicyError(str(path), [("(file)", f"not UTF-8 text: {err}")]) from None
    policy = parse_policy(text, str(path))
    return LoadedPolicy(policy=policy, source=str(path), sha256=hashlib.sha256(raw).hexdigest())


# ---------------------------------------------------------------- JSON schema


def _parameterless_rules() -> list[str]:
    return [
        name
        for name, model in RULE_MODELS.items()
        if all(not f.is_required() for key, f in model.model_fields.items() if key != "rule")
    ]


def policy_json_schema() -> str:
    """The JSON schema of policy files, for editors. Pydantic's own schema describes only the
    nested column form; this one also accepts what authors write: a bare rule name
    (``email: scrub``), a flat rule mapping with ``pii`` beside its parameters, and a single
    primary key column given as a string."""
    schema = Policy.model_json_schema()
    defs: dict[str, Any] = schema["$defs"]
    column = defs["Column"]
    pii = column["properties"]["pii"]
    flat: list[dict[str, str]] = []
    for model in RULE_MODELS.values():
        name = model.__name__
        flat_def = json.loads(json.dumps(defs[name]))
        flat_def["properties"]["pii"] = pii
        flat_def["required"] = sorted({*flat_def.get("required", []), "rule"})
        flat_def["title"] = f"{name} (column shorthand)"
        defs[f"{name}Column"] = flat_def
        flat.append({"$ref": f"#/$defs/{name}Column"})
    nested = {k: v for k, v in column.items() if k not in ("description", "title")}
    defs["Column"] = {
        "title": column.get("title", "Column"),
        "description": column.get("description", ""),
        "anyOf": [
            {"type": "string", "enum": _parameterless_rules(), "description": "A bare rule name."},
            *flat,
            nested,
        ],
    }
    pk = defs["Table"]["properties"]["primary_key"]
    defs["Table"]["properties"]["primary_key"] = {
        "title": pk.get("title", "Primary Key"),
        "anyOf": [{"type": "string"}, {k: v for k, v in pk.items() if k != "title"}],
    }
    return json.dumps(schema, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def write_policy_json_schema(path: Path = SCHEMA_PATH) -> Path:
    """Regenerates anonymize/policy/policy.schema.json (a test checks it is up to date)."""
    path.write_text(policy_json_schema())
    return path
