"""Typed answer validators: what a free-text answer must state to pass, and the verdict it gets.

Four kinds, one pydantic model each, told apart by ``kind`` (``AnswerValidator``):

- ``ExactValue`` (``exact``): one text value, as a whole word or phrase, or one integer;
- ``NumberWithin`` (``number``): one number within a tolerance, optionally in a unit;
- ``ValueSet`` (``set``): every gold value, in any order, and few extra values;
- ``OrderedList`` (``ordered``): every gold value, in the gold order, and few extra values.

Every kind reads the answer as a reader sees it (``judges.visible.visible_text``: Markdown
rendered, then only the visible text: no HTML comments, hidden elements or invisible Unicode),
so a value hidden from readers earns nothing (version 2 on; version 1 read the raw text).

Every kind has a ``VERSION``; every ``Verdict`` records it, so a score keeps the version of the
rules that gave it. **Any change to what a kind accepts bumps its VERSION** (the test pins each
kind's verdicts on a fixed probe set to its version). The rules: ``docs/answer-validators.md``.
"""

from __future__ import annotations

from typing import Annotated, Any, ClassVar, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictInt,
    StrictStr,
    TypeAdapter,
    model_validator,
)

from benchforge.evaluation.dab.normalize import normalize_text, phrase_tokens, tokenize
from benchforge.evaluation.dab.number_match import NumberRule, check_number
from benchforge.evaluation.dab.quantities import UNIT_NAMES
from benchforge.evaluation.dab.text_match import Value, check_many, check_one
from benchforge.evaluation.judges.visible import visible_text

MAX_ANSWER_CHARS = 20_000
Unit = Literal[UNIT_NAMES]  # type: ignore[valid-type]


class Verdict(BaseModel):
    """One answer judged by one validator: the outcome, which rules gave it (kind and version),
    why, and what in the answer matched the gold (as normalized)."""

    model_config = ConfigDict(frozen=True)

    passed: bool
    kind: str
    version: int
    reason: str
    matched: list[str] = Field(default_factory=list)


class _Validator(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    VERSION: ClassVar[int]
    kind: str
    max_chars: int = Field(default=MAX_ANSWER_CHARS, gt=0)
    decimal_comma: bool = False  # "1,5" is 1.5 and "1.234" is 1234

    # BaseModel.validate is pydantic's deprecated classmethod; this is the validator's verdict.
    def validate(self, answer: str) -> Verdict:  # type: ignore[override]
        if len(answer) > self.max_chars:
            return self._verdict(
                False, f"answer too long: {len(answer)} characters (limit {self.max_chars})"
            )
        text = normalize_text(visible_text(answer).text, decimal_comma=self.decimal_comma)
        if not tokenize(text):
            return self._verdict(False, "empty answer")
        passed, reason, matched = self._check(text)
        return self._verdict(passed, reason, matched)

    def _check(self, text: str) -> tuple[bool, str, list[str]]:
        raise NotImplementedError

    def _verdict(self, passed: bool, reason: str, matched: list[str] | None = None) -> Verdict:
        return Verdict(
            passed=passed,
            kind=self.kind,
            version=self.VERSION,
            reason=reason,
            matched=matched or [],
        )

    def _value(self, name: str, aliases: list[str]) -> Value:
        written = (phrase_tokens(s, decimal_comma=self.decimal_comma) for s in [name, *aliases])
        spellings = tuple(tokens for tokens in written if tokens)
        return Value(name, spellings)


class ExactValue(_Validator):
    """One value. Text: named as a whole word or phrase (or one of ``aliases``), case- and
    accent-insensitive, and no hedge (``text_match``). An integer: an equal number in the
    answer, no unit, and no rival number beside it (``number_match``); numbers the question
    states go in ``ignore_numbers``."""

    VERSION: ClassVar[int] = 2
    kind: Literal["exact"] = "exact"
    value: StrictStr | StrictInt
    aliases: list[StrictStr] = Field(default_factory=list)
    other_values: list[StrictStr] = Field(default_factory=list)
    ignore_numbers: list[float] = Field(default_factory=list)

    @model_validator(mode="after")
    def _value_has_tokens(self) -> ExactValue:
        if isinstance(self.value, str) and not phrase_tokens(self.value):
            raise ValueError(f"value {self.value!r} has no word or number to match")
        return self

    def _check(self, text: str) -> tuple[bool, str, list[str]]:
        if isinstance(self.value, int):
            rule = NumberRule(float(self.value), 0.0, None, ignore=tuple(self.ignore_numbers))
            return check_number(text, rule)
        others = [self._value(o, []) for o in self.other_values]
        return check_one(text, self._value(self.value, self.aliases), others)


class NumberWithin(_Validator):
    """One number within ``max(abs_tol, rel_tol * |value|)`` of ``value``, and no rival number
    beside it. With ``unit``, the number must be written in that unit or bare (bare refused
    when ``unit_required``); a number in another unit never matches ("12 million" is not
    "12%"). Without ``unit``, only bare numbers match. ``accept_fraction`` (percent only): a
    bare 0.12 also reads as 12%."""

    VERSION: ClassVar[int] = 2
    kind: Literal["number"] = "number"
    value: float
    rel_tol: float = Field(default=0.0, ge=0)
    abs_tol: float = Field(default=0.0, ge=0)
    unit: Unit | None = None
    unit_required: bool = False
    accept_fraction: bool = False
    ignore_numbers: list[float] = Field(default_factory=list)

    @model_validator(mode="after")
    def _consistent(self) -> NumberWithin:
        if self.rel_tol == 0 and self.abs_tol == 0:
            raise ValueError("give rel_tol or abs_tol (an exact integer is an ExactValue)")
        if self.accept_fraction and self.unit != "percent":
            raise ValueError("accept_fraction needs unit: percent")
        if self.unit_required and self.unit is None:
            raise ValueError("unit_required needs a unit")
        return self

    def _check(self, text: str) -> tuple[bool, str, list[str]]:
        rule = NumberRule(
            target=self.value,
            tolerance=max(self.abs_tol, self.rel_tol * abs(self.value)),
            unit=self.unit,
            unit_required=self.unit_required,
            accept_fraction=self.accept_fraction,
            ignore=tuple(self.ignore_numbers),
        )
        return check_number(text, rule)


class _ManyValues(_Validator):
    values: list[StrictStr] = Field(min_length=1)
    aliases: dict[str, list[StrictStr]] = Field(default_factory=dict)
    other_values: list[StrictStr] = Field(default_factory=list)
    max_extra: int = Field(default=1, ge=0)

    @model_validator(mode="after")
    def _aliases_name_values(self) -> _ManyValues:
        unknown = sorted(set(self.aliases) - set(self.values))
        if unknown:
            raise ValueError(f"aliases for values not in values: {unknown}")
        empty = [v for v in self.values if not phrase_tokens(v)]
        if empty:
            raise ValueError(f"values with no word or number to match: {empty}")
        return self

    def _check_many(self, text: str, *, ordered: bool) -> tuple[bool, str, list[str]]:
        golds = [self._value(v, self.aliases.get(v, [])) for v in self.values]
        others = [self._value(o, []) for o in self.other_values]
        return check_many(text, golds, others, ordered=ordered, max_extra=self.max_extra)


class ValueSet(_ManyValues):
    """Every value named (in any order), none of ``other_values`` (known wrong values) named,
    and at most ``max_extra`` other listed items that hold no gold value and are not prose.
    The default allowance of 1 tolerates a closing remark; a list holding the gold among many
    wrong values fails."""

    VERSION: ClassVar[int] = 2
    kind: Literal["set"] = "set"

    def _check(self, text: str) -> tuple[bool, str, list[str]]:
        return self._check_many(text, ordered=False)


class OrderedList(_ManyValues):
    """Every value named, first mentions in the gold order, and extra values counted as for
    ``ValueSet`` (a ranking with one extra item passes under the default ``max_extra`` of 1;
    set it to 0 for a strict top-k)."""

    VERSION: ClassVar[int] = 2
    kind: Literal["ordered"] = "ordered"

    def _check(self, text: str) -> tuple[bool, str, list[str]]:
        return self._check_many(text, ordered=True)


AnswerValidator = Annotated[
    ExactValue | NumberWithin | ValueSet | OrderedList, Field(discriminator="kind")
]
_ADAPTER: TypeAdapter[Any] = TypeAdapter(AnswerValidator)


def parse_validator(data: Any) -> ExactValue | NumberWithin | ValueSet | OrderedList:
    """A validator from its stored form (a mapping with ``kind``)."""
    return _ADAPTER.validate_python(data)


def validator_version(spec: ExactValue | NumberWithin | ValueSet | OrderedList) -> int:
    """The version of the rules ``spec``'s kind applies (recorded in each of its verdicts)."""
    return type(spec).VERSION
