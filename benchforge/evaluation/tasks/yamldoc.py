"""A spec model written as YAML with every field explained above it.

The explanations come from the pydantic models themselves (each field's ``description``, else
the docstring of the model it holds, plus its constraints and default), so a scaffolded
``task.yaml`` cannot drift from what the loader accepts. Fields the model was not given
explicitly are written commented out with their default: uncommenting one is how a maintainer
changes it, and the file still validates to exactly the model it was written from.
"""

from __future__ import annotations

import inspect
import textwrap
from typing import Any, get_args

import yaml
from annotated_types import Ge, Gt, Le, Lt, MinLen
from pydantic import BaseModel
from pydantic.fields import FieldInfo

from benchforge.core.yamlio import read_yaml

WIDTH = 96


class _Dumper(yaml.SafeDumper):
    """YAML as authors write it: keys in the model's order, block style."""


def commented_yaml(model: BaseModel, header: str = "", first: tuple[str, ...] = ()) -> str:
    """``model`` as YAML: each field preceded by its explanation; unset fields commented out
    with their default value. ``header``: comment lines for the top of the file; ``first``:
    fields written before the others (a discriminator such as ``family``)."""
    lines = [f"# {line}".rstrip() for line in header.splitlines()]
    body = _fields(model, indent=0, off=False, first=first)
    text = "\n".join([*lines, *body]).rstrip() + "\n"
    written = read_yaml(text)
    expected = model.model_dump(mode="json", exclude_unset=True)
    if written != expected:  # a value this writer cannot spell: a bug here, not bad input
        raise ValueError(f"commented_yaml does not round-trip: {written!r} != {expected!r}")
    return text


def explanation(info: FieldInfo, value: Any = None, written_default: bool = False) -> str:
    """What a field means (its description, else the docstring of the model it holds) and
    what it accepts (constraints, choices, whether it is required or its default, unless the
    line below shows the default: ``written_default``): the text written above it."""
    text = info.description or _model_doc(info, value)
    notes = _constraints(info)
    if info.is_required():
        notes.append("required")
    elif not written_default:
        default = info.get_default(call_default_factory=True)
        if default is None:
            notes.append("optional")
        elif not isinstance(default, BaseModel):
            notes.append(f"default {_inline(default)}")
    text = text.strip().rstrip(".")
    if not notes:
        return f"{text}." if text else ""
    return f"{text}. ({'; '.join(notes)})" if text else f"({'; '.join(notes)})"


def _model_doc(info: FieldInfo, value: Any) -> str:
    """The first paragraph of the docstring of the model the field holds (a nested spec)."""
    candidates: list[Any] = [type(value)] if isinstance(value, BaseModel) else []
    if isinstance(value, list) and value and isinstance(value[0], BaseModel):
        candidates.append(type(value[0]))
    candidates += [a for a in (info.annotation, *get_args(info.annotation)) if isinstance(a, type)]
    for candidate in candidates:
        if issubclass(candidate, BaseModel) and candidate.__dict__.get("__doc__"):
            doc = inspect.cleandoc(candidate.__dict__["__doc__"])
            return " ".join(doc.split("\n\n")[0].split())
    return ""


def _constraints(info: FieldInfo) -> list[str]:
    notes = []
    choices = get_args(info.annotation)
    if choices and all(isinstance(c, str) for c in choices):  # a Literal
        notes.append("one of " + ", ".join(choices))
    for meta in info.metadata:
        if isinstance(meta, Gt):
            notes.append(f"> {meta.gt}")
        elif isinstance(meta, Ge):
            notes.append(f">= {meta.ge}")
        elif isinstance(meta, Lt):
            notes.append(f"< {meta.lt}")
        elif isinstance(meta, Le):
            notes.append(f"<= {meta.le}")
        elif isinstance(meta, MinLen) and meta.min_length > 0:
            notes.append(f"at least {meta.min_length} {'items' if _is_list(info) else 'chars'}")
        elif getattr(meta, "pattern", None):
            notes.append(f"pattern {meta.pattern}")
    return notes


def _is_list(info: FieldInfo) -> bool:
    return getattr(info.annotation, "__origin__", None) is list


def _inline(value: Any) -> str:
    dumped = yaml.dump(
        _plain(value), Dumper=_Dumper, default_flow_style=True, sort_keys=False, width=10_000
    )
    return dumped.strip().removesuffix("...").strip()


def _comment(text: str, indent: int) -> list[str]:
    pad = " " * indent
    width = max(WIDTH - indent - 2, 40)
    return [f"{pad}# {line}" for line in textwrap.wrap(text, width=width)]


def _fields(model: BaseModel, indent: int, off: bool, first: tuple[str, ...] = ()) -> list[str]:
    """The model's fields (``first`` ones first, then in declaration order); ``off``: the
    whole block is commented out."""
    names = list(type(model).model_fields)
    names = [n for n in first if n in names] + [n for n in names if n not in first]
    lines: list[str] = []
    for name in names:
        info = type(model).model_fields[name]
        value = getattr(model, name)
        unset = off or name not in model.model_fields_set
        if indent == 0 and lines:
            lines.append("")
        lines += _comment(explanation(info, value, written_default=unset), indent)
        lines += _entry(info.alias or name, value, indent, unset)
    return lines


def _entry(key: str, value: Any, indent: int, off: bool) -> list[str]:
    pad = " " * indent
    mark = "# " if off else ""
    if isinstance(value, BaseModel):
        return [f"{pad}{mark}{key}:", *_fields(value, indent + 2, off)]
    if (
        not off
        and isinstance(value, list)
        and value
        and all(isinstance(v, BaseModel) for v in value)
    ):
        lines = [f"{pad}{key}:"]
        for i, item in enumerate(value):
            item_lines = _fields(item, indent + 4, off=False)
            if i:  # the first item's comments explain every item's fields
                item_lines = [x for x in item_lines if not x.lstrip().startswith("# ")]
            lines += _list_item(item_lines, indent + 2)
        return lines
    if isinstance(value, str) and _folded(value):
        return [f"{pad}{mark}{key}: >-", *_fold(value, pad + mark + "  ")]
    if isinstance(value, list | dict):
        value = _plain(value)
    dumped = yaml.dump(
        {key: value}, Dumper=_Dumper, sort_keys=False, width=WIDTH - indent, allow_unicode=True
    )
    return [f"{pad}{mark}{line}".rstrip() for line in dumped.rstrip("\n").splitlines()]


def _folded(value: str) -> bool:
    """Long prose (instructions) reads best as a folded block; not strings whose spaces or
    line ends a block would change."""
    lines = value.split("\n")
    prose = all(line == line.strip() and "  " not in line for line in lines)
    return prose and not value.endswith("\n") and ("\n" in value or len(value) > WIDTH - 20)


def _fold(value: str, prefix: str) -> list[str]:
    """``value`` as the lines of a ``>-`` block, each after ``prefix`` (indentation, and the
    comment mark of a commented-out field): each line break of the value is a blank line of
    the block, each line is wrapped at the width (a folded block joins them with spaces)."""
    out: list[str] = []
    for i, line in enumerate(value.split("\n")):
        if i:
            out.append("")
        out += textwrap.wrap(
            line, width=WIDTH - len(prefix), break_long_words=False, break_on_hyphens=False
        )
    return [f"{prefix}{line}" if line else prefix.rstrip() for line in out]


def _plain(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json", exclude_unset=True)
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


def _list_item(lines: list[str], indent: int) -> list[str]:
    """A nested model's lines (written at ``indent + 2``) as one YAML list item: comment lines
    stay above its first key, which gets the ``- ``."""
    pad, inner = " " * indent, " " * (indent + 2)
    out, started = [], False
    for line in lines:
        body = line[len(inner) :]
        if not started and not body.startswith("#"):
            out.append(f"{pad}- {body}")
            started = True
        else:
            out.append(line)
    return out
