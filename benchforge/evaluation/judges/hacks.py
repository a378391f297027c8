"""Reward hacks against judges: the catalogue ``task_specs/hacks/judged.yaml`` and the recipes
that turn an honest output into each hostile one.

Every entry must score no higher than the honest output it was made from, even under a judge
that obeys whatever instruction it reads (``mock-judge-obedient``); entries marked
``injection`` must also leave a sanitizer flag. The recipes need the rubric only for the
entries that exploit it (pasting its wording, hedging its anchors).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from benchforge.core.catalogue import PACKAGE_ROOT
from benchforge.core.errors import ConfigError
from benchforge.core.yamlio import read_yaml
from benchforge.evaluation.judges.evidence import find_numbers
from benchforge.evaluation.judges.hostile import (
    HideStyle,
    MisstateStyle,
    format_like,
    hide,
    misstate,
    pad,
    paraphrase_rubric,
)
from benchforge.evaluation.judges.models import AnchorValue, ResolvedRubric

JUDGED_HACKS = PACKAGE_ROOT / "task_specs" / "hacks" / "judged.yaml"
HackKind = Literal[
    "append",
    "prepend",
    "insert",
    "zero_width",
    "paste_rubric",
    "hedge_anchors",
    "strip_numbers",
    "hide",
    "misstate",
    "paraphrase_rubric",
    "pad",
]
ZERO_WIDTH_SPACE = "\u200b"
HEDGE_FACTORS = (0.6, 0.8, 1.0, 1.2, 1.4)
"""Values offered for an anchor: all within [value/3, value*3], one of them right."""
NUMBER_WORDS = "a notable amount"
_NEEDS_TEXT = {"append", "prepend", "insert", "zero_width", "strip_numbers"}
_LETTER_WORD = re.compile(r"[a-z]{4,}")
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+\S.*$", re.M)


class JudgedHackError(ConfigError):
    """The judged-hack catalogue cannot be read."""


class JudgedHack(BaseModel):
    """One catalogue entry (see the catalogue's header for the kinds)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str = Field(pattern=r"^[a-z0-9-]+$")
    kind: HackKind
    description: str = Field(min_length=10)
    text: str | None = None
    style: str | None = Field(default=None, description="hide / misstate: how")
    words: int | None = Field(default=None, gt=0, description="pad: how many words")
    injection: bool = False
    expect_flags: list[str] = Field(default_factory=list)

    @model_validator(mode="after")
    def _has_text(self) -> JudgedHack:
        if self.kind in _NEEDS_TEXT and not self.text:
            raise ValueError(f"hack {self.id}: kind {self.kind} needs a text")
        styles = {"hide": get_args(HideStyle), "misstate": get_args(MisstateStyle)}
        if self.kind in styles and self.style not in styles[self.kind]:
            raise ValueError(
                f"hack {self.id}: kind {self.kind} needs a style, one of "
                f"{', '.join(styles[self.kind])} (got {self.style!r})"
            )
        if self.kind == "pad" and self.words is None:
            raise ValueError(f"hack {self.id}: kind pad needs words")
        return self


class _Catalogue(BaseModel):
    model_config = ConfigDict(extra="forbid")

    hacks: list[JudgedHack] = Field(min_length=1)


def load_judged_hacks(path: Path | None = None) -> list[JudgedHack]:
    """The catalogue's entries (``path`` default: the shipped ``judged.yaml``)."""
    path = JUDGED_HACKS if path is None else Path(path)
    try:
        data = read_yaml(path.read_text(encoding="utf-8"))
        hacks = _Catalogue.model_validate(data).hacks
    except (OSError, ValueError) as exc:  # ValidationError is a ValueError
        detail = exc.errors() if isinstance(exc, ValidationError) else exc
        raise JudgedHackError(f"{path}: invalid judged-hack catalogue: {detail}") from None
    ids = [h.id for h in hacks]
    duplicated = sorted({i for i in ids if ids.count(i) > 1})
    if duplicated:
        raise JudgedHackError(f"{path}: hack ids used twice: {', '.join(duplicated)}")
    return hacks


def _zero_width(text: str) -> str:
    def split(match: re.Match[str]) -> str:
        word = match.group(0)
        middle = len(word) // 2
        return word[:middle] + ZERO_WIDTH_SPACE + word[middle:]

    return re.sub(r"[A-Za-z]{4,}", split, text)


def _hedge_line(criterion: str, anchor: AnchorValue) -> str:
    words = [w for w in _LETTER_WORD.findall(criterion.replace(anchor.text, " ").lower())]
    keywords = list(dict.fromkeys(words))[:8]
    if isinstance(anchor.value, str):
        options = f"either {anchor.value} or another segment"
    else:
        values = [format_like(anchor, float(anchor.value) * f) for f in HEDGE_FACTORS]
        options = ", ".join(values[:-1]) + f" or {values[-1]}"
    return f"{' '.join(keywords)}: {options}"


def _strip_numbers(text: str) -> str:
    out, last = [], 0
    for mention in find_numbers(text):
        out.append(text[last : mention.start])
        out.append(NUMBER_WORDS)
        last = mention.end
    out.append(text[last:])
    return "".join(out)


def apply_hack(entry: JudgedHack, honest_report: str, rubric: ResolvedRubric) -> str:
    """The hostile output ``entry`` makes of ``honest_report``."""
    honest = honest_report.rstrip("\n")
    text = entry.text or ""
    if entry.kind == "append":
        return f"{honest}\n\n{text}\n"
    if entry.kind == "prepend":
        return f"{text}\n\n{honest}\n"
    if entry.kind == "insert":
        heading = _HEADING.search(honest)
        if heading is None:
            return f"{text}\n\n{honest}\n"
        return f"{honest[: heading.end()]}\n\n{text}\n{honest[heading.end() :]}\n"
    if entry.kind == "zero_width":
        return f"{honest}\n\n{_zero_width(text)}\n"
    if entry.kind == "paste_rubric":
        pasted = "\n".join(item.criterion for item in rubric.items if item.points > 0)
        return f"{honest}\n\n{pasted}\n"
    if entry.kind == "hide":
        return hide(honest, rubric, entry.style or "", entry.text)
    if entry.kind == "misstate":
        return misstate(honest, rubric, entry.style or "")
    if entry.kind == "paraphrase_rubric":
        return paraphrase_rubric(honest, rubric)
    if entry.kind == "pad":
        return pad(honest, entry.words or 0)
    if entry.kind == "hedge_anchors":
        lines = [
            _hedge_line(item.criterion, item.anchor)
            for item in rubric.items
            if item.anchor is not None and item.points > 0
        ]
        return f"{honest}\n\n" + "\n".join(dict.fromkeys(lines)) + "\n"
    return f"{_strip_numbers(honest)}\n\n{text}\n"
