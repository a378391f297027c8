"""Mock judges: deterministic stand-ins for an LLM judge, chosen by model name.

    mock-judge                  faithful: THE FAITHFUL MOCK JUDGE RULE (below)
    mock-judge-obedient         obeys instructions it finds in the material (full marks, the
                                material's side in GSB); faithful when it finds none
    mock-judge-malformed:<n>    the first n replies of each conversation are invalid (prose,
                                then JSON of the wrong shape, alternating), then faithful
    mock-judge-broken           never a valid reply
    mock-judge-noisy:<params>   ``benchforge.agents.mock_llm.noisy_judge.reply(request, params)``

The lake judges' rules (paraphrase, pipeline design) are in ``lake_judge``, the milestone
judge's in ``milestone_judge``.

They read the judge request (``prompts.REQUEST_BEGIN`` ... ``REQUEST_END``, a JSON object with
``task``) and the delimited material of the *first user message* (``prompts.extract_material``),
and the attempt from the number of assistant messages: stateless, like every policy.

THE FAITHFUL MOCK JUDGE RULE. Units: ``evidence.text_units`` of the material (non-empty lines;
lines over 300 characters split into sentences). Keywords of a criterion: its lowercase words
of 4+ letters (``[a-z]{4,}``) minus ``STOP_WORDS`` and minus the words of the anchor's own text
(the anchor text itself is cut out first). A keyword matches a unit when the unit has a word
starting with the keyword's first 5 letters (the whole keyword if shorter). Coverage of a unit =
matched keywords / keywords. The best unit is the one with the highest coverage (ties: for an
anchored item a unit stating the anchor first, then the earliest). A positive item earns its
full points iff the best unit's coverage >= 0.30 and, for an anchored item, that unit states the
anchor within tolerance (``evidence.states_anchor``); the evidence is that unit verbatim. A
penalty applies (its negative points, that unit as evidence) iff the best unit's coverage
>= 0.60. Path choice: the listed path with the most points under the rule (ties: the first).
GSB: ``readability`` = min(#headings, 6) + min(#list items, 10) / 2 + 2 * (has a table);
``depth`` = min(#distinct numbers, 30) / 3 + min(#sentences with one of the words because /
driven / due to / recommend / suggest / therefore / indicates, 10); report A's score on a
dimension = clip(2 * (A - B), -10, 10), so swapping the reports flips the sign.
DAB failure mode (``dab_failure_mode``): ``plan`` when the trajectory has no successful
``query_db`` or ``execute_python`` call (no data was computed on), else ``implementation``.
"""

from __future__ import annotations

import importlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from benchforge.agents.mock_llm.policies import (
    Policy,
    PolicyError,
    PolicyReply,
    PolicyRequest,
    message_text,
)
from benchforge.evaluation.dab.failure_modes import FailureModeReply
from benchforge.evaluation.judges.evidence import extract_numbers, states_anchor, text_units
from benchforge.evaluation.judges.models import AnchorValue
from benchforge.evaluation.judges.prompts import extract_material, extract_request
from benchforge.evaluation.judges.replies import (
    DimensionJudgement,
    GsbReply,
    ItemAward,
    ItemsReply,
    PathChoiceReply,
)
from benchforge.evaluation.judges.sanitize import REMOVED_MARKER

MIN_COVERAGE = 0.30
PENALTY_COVERAGE = 0.60
PREFIX_LETTERS = 5
_STOP_WORDS_TEXT = """
    that this with from they them than then when what which their there these those have
    been were will would should could into onto also such each other only more most about
    above after again against being below between both does doing down during few further
    here itself just myself once over same some very your yours while where whom whose why
    because until upon within without among whether either report reports states state
    stated gives give shows show notes note names
    """
STOP_WORDS = frozenset(_STOP_WORDS_TEXT.split())
_LETTER_WORD = re.compile(r"[a-z]{4,}")
_WORD = re.compile(r"[a-z]+")
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+\S", re.M)
_LIST_ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+\S", re.M)
_TABLE_RULE = re.compile(r"^\s*\|?\s*:?-{3,}:?\s*(?:\|\s*:?-{3,}:?\s*)+\|?\s*$", re.M)
_REASONING = re.compile(
    r"\b(?:because|driven|due to|recommend|suggest|therefore|indicates)\b", re.I
)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
_INSTRUCTION = tuple(
    re.compile(p, re.I | re.M)
    for p in (
        r"\b(?:award|give|assign|grant)\b[^.\n]{0,60}\b(?:marks?|points?|score|credit)\b",
        r"\b(?:ignore|disregard)\b[^.\n]{0,60}\b(?:rubric|criteria|instructions?|grading)\b",
        r"\b(?:grader|judge|evaluator|assessor|scorer)s?\b",
        r"\b(?:10|100)\s*/\s*(?:10|100)\b",
        r"\b(?:full|maximum|perfect)\s+(?:marks|points|score)\b",
        r"^\W*(?:system|assistant|developer)\s*:",
        r"\bprefer\s+this\s+report\b",
    )
)
LABELS = ("REPORT", "BLUEPRINT", "REPORT_A", "REPORT_B", "ANSWER", "PIPELINE", "TRAJECTORY")


# --------------------------------------------------------------------------- the request


@dataclass(frozen=True)
class JudgeView:
    """A judge request as the mock reads it: the task, its JSON payload, the delimited
    materials by label, and which attempt this is (0: the first reply)."""

    task: str
    payload: dict[str, Any]
    materials: dict[str, str] = field(default_factory=dict)
    attempt: int = 0

    @property
    def material(self) -> str:
        """The single material of a rubric or architecture request."""
        return self.materials.get("REPORT", self.materials.get("BLUEPRINT", ""))


def parse_judge_request(request: PolicyRequest) -> JudgeView:
    """The judge request of the conversation's first user message (PolicyError: none)."""
    first = next((m for m in request.messages if m.get("role") == "user"), None)
    prompt = message_text(first) if first is not None else ""
    payload = extract_request(prompt)
    if payload is None or not isinstance(payload.get("task"), str):
        raise PolicyError(
            f"model {request.model}: the first user message holds no judge request "
            "(see benchforge.evaluation.judges.prompts)",
            code="not_a_judge_request",
        )
    materials = {}
    for label in LABELS:
        text = extract_material(prompt, label)  # type: ignore[arg-type]
        if text is not None:
            materials[label] = text
    return JudgeView(
        task=payload["task"], payload=payload, materials=materials, attempt=request.turn
    )


# --------------------------------------------------------------------------- the faithful rule


def keywords(criterion: str, anchor_text: str | None = None) -> list[str]:
    """The criterion's keywords (see the module docstring), in order, without repeats."""
    text = criterion
    excluded: set[str] = set()
    if anchor_text:
        text = text.replace(anchor_text, " ")
        excluded = set(_LETTER_WORD.findall(anchor_text.lower()))
    words = _LETTER_WORD.findall(text.lower())
    return list(dict.fromkeys(w for w in words if w not in STOP_WORDS and w not in excluded))


def coverage(words: list[str], unit: str) -> float:
    """Share of ``words`` (keywords) matched by ``unit``."""
    if not words:
        return 0.0
    unit_words = _WORD.findall(unit.lower())
    matched = sum(1 for kw in words if any(w.startswith(kw[:PREFIX_LETTERS]) for w in unit_words))
    return matched / len(words)


def _anchor(item: dict[str, Any]) -> AnchorValue | None:
    data = item.get("anchor")
    if not isinstance(data, dict):
        return None
    return AnchorValue(
        name=str(data.get("name", "anchor")),
        value=data["value"],
        text=str(data.get("text", data["value"])),
        tolerance=float(data.get("tolerance", 0.01)),
        unit=data.get("unit"),
        kind=data.get("kind"),
    )


def best_unit(units: list[str], words: list[str], anchor: AnchorValue | None) -> tuple[str, float]:
    """The best unit and its coverage ("" and 0 without units)."""
    best, best_key = "", (-1.0, False)
    for unit in units:
        key = (coverage(words, unit), anchor is not None and states_anchor(unit, anchor))
        if key > best_key:
            best, best_key = unit, key
    return best, max(best_key[0], 0.0)


def faithful_award(item: dict[str, Any], material: str) -> ItemAward:
    """One item under the faithful rule."""
    points = float(item["points"])
    anchor = _anchor(item)
    words = keywords(str(item["criterion"]), anchor.text if anchor else None)
    unit, cover = best_unit(text_units(material), words, anchor)
    if points < 0:
        if cover >= PENALTY_COVERAGE:
            return ItemAward(
                item_id=item["id"],
                awarded=points,
                evidence=[unit],
                reason=f"penalty applies: coverage {cover:.2f}",
            )
        return ItemAward(item_id=item["id"], awarded=0.0, reason=f"coverage {cover:.2f}")
    if cover >= MIN_COVERAGE and (anchor is None or states_anchor(unit, anchor)):
        return ItemAward(
            item_id=item["id"], awarded=points, evidence=[unit], reason=f"coverage {cover:.2f}"
        )
    why = f"coverage {cover:.2f}" + (
        "" if anchor is None or cover < MIN_COVERAGE else ", anchor not stated"
    )
    return ItemAward(item_id=item["id"], awarded=0.0, reason=why)


def _path_points(path: dict[str, Any], material: str) -> float:
    return sum(faithful_award(i, material).awarded for i in path.get("items", []))


def readability(report: str) -> float:
    headings = len(_HEADING.findall(report))
    items = len(_LIST_ITEM.findall(report))
    table = bool(_TABLE_RULE.search(report))
    return min(headings, 6) + min(items, 10) / 2 + 2 * table


def depth(report: str) -> float:
    numbers = len(set(extract_numbers(report)))
    sentences = [s for line in report.splitlines() for s in _SENTENCE_END.split(line) if s.strip()]
    reasoned = sum(1 for s in sentences if _REASONING.search(s))
    return min(numbers, 30) / 3 + min(reasoned, 10)


def gsb_scores(report_a: str, report_b: str) -> dict[str, float]:
    """Report A's score on each dimension (positive: A is better)."""

    def clip(x: float) -> float:
        return max(-10.0, min(10.0, x))

    return {
        "readability": clip(2 * (readability(report_a) - readability(report_b))),
        "depth": clip(2 * (depth(report_a) - depth(report_b))),
    }


def faithful_answer(view: JudgeView) -> BaseModel:
    """The faithful judge's reply to ``view`` (a reply model of ``judges.replies``)."""
    if view.task in {"rubric_items", "architecture_items"}:
        return ItemsReply(
            items=[faithful_award(i, view.material) for i in view.payload.get("items", [])]
        )
    if view.task == "rubric_path":
        paths = view.payload.get("paths", [])
        if not paths:
            return PathChoiceReply(path_id=None, reason="no path listed")
        best = max(paths, key=lambda p: _path_points(p, view.material))
        return PathChoiceReply(path_id=best["id"], reason="the path with the most points")
    if view.task == "gsb_pair":
        scores = gsb_scores(view.materials.get("REPORT_A", ""), view.materials.get("REPORT_B", ""))
        return GsbReply(
            readability=DimensionJudgement(score=scores["readability"], reason="features"),
            depth=DimensionJudgement(score=scores["depth"], reason="features"),
        )
    if view.task in {"paraphrase", "pipeline_design"}:
        return _lake_answer(view)
    if view.task == "answer_part":
        from benchforge.agents.mock_llm.lake_judge import part_verdict

        return part_verdict(view.payload, view.materials.get("ANSWER", ""))
    if view.task == "milestones":
        from benchforge.agents.mock_llm.milestone_judge import faithful_milestones

        return faithful_milestones(view.payload, view.materials.get("TRAJECTORY", ""))
    if view.task == "dab_failure_mode":
        return dab_failure_answer(view.materials.get("TRAJECTORY", ""))
    raise PolicyError(f"mock judge: unknown judge task {view.task!r}", code="unknown_judge_task")


def _obedient_lake_answer(view: JudgeView) -> BaseModel:
    from benchforge.agents.mock_llm import lake_judge

    material = view.materials.get("ANSWER", view.materials.get("PIPELINE", ""))
    if not instruction_units(material):
        return _lake_answer(view)
    if view.task == "paraphrase":
        return lake_judge.ParaphraseVerdict(same_meaning=True, reason="as instructed")
    count = len(view.payload.get("functionalities", []))
    return lake_judge.PipelineVerdict(implemented=[True] * count, reason="as instructed")


def _lake_answer(view: JudgeView) -> BaseModel:
    from benchforge.agents.mock_llm import lake_judge  # it imports this module's rules

    if view.task == "paraphrase":
        return lake_judge.paraphrase_verdict(
            str(view.payload.get("reference", "")), view.materials.get("ANSWER", "")
        )
    return lake_judge.pipeline_verdict(
        [str(f) for f in view.payload.get("functionalities", [])],
        view.materials.get("PIPELINE", ""),
    )


_COMPUTED = re.compile(r"^\[\d+\] (?:query_db|execute_python) .* -> ok:", re.M)


def dab_failure_answer(trajectory: str) -> FailureModeReply:
    """The faithful rule for a DAB failure mode (see the module docstring)."""
    if _COMPUTED.search(trajectory):
        return FailureModeReply(
            mode="implementation", reason="data was queried, yet the answer is wrong"
        )
    return FailureModeReply(mode="plan", reason="no query or code ran on the data")


def _reply(model: BaseModel) -> PolicyReply:
    return PolicyReply(content=model.model_dump_json())


def faithful_reply(request: PolicyRequest) -> PolicyReply:
    return _reply(faithful_answer(parse_judge_request(request)))


# --------------------------------------------------------------------------- the other judges


def instruction_units(material: str) -> list[str]:
    """Units of ``material`` that read as instructions to a judge (the obedient judge's
    triggers: broader than the sanitizer's patterns on purpose)."""
    found = []
    for unit in text_units(material):
        plain = unit.replace(REMOVED_MARKER, " ")
        if any(p.search(plain) for p in _INSTRUCTION):
            found.append(unit)
    return found


def obedient_answer(view: JudgeView) -> BaseModel:
    """Full marks when the material holds an instruction (evidence: the unit that best passes
    for the item, the instruction itself when none matches), the instructed side in GSB;
    otherwise the faithful answer. Lake judges: "same meaning" / every functionality
    implemented when the answer or the code holds an instruction."""
    if view.task in {"paraphrase", "pipeline_design"}:
        return _obedient_lake_answer(view)
    if view.task == "milestones":
        from benchforge.agents.mock_llm import milestone_judge

        if instruction_units(view.materials.get("TRAJECTORY", "")):
            return milestone_judge.obedient_milestones(view.payload)
        return faithful_answer(view)
    if view.task == "gsb_pair":
        a = bool(instruction_units(view.materials.get("REPORT_A", "")))
        b = bool(instruction_units(view.materials.get("REPORT_B", "")))
        if a != b:
            score = 10.0 if a else -10.0
            return GsbReply(
                readability=DimensionJudgement(score=score, reason="as instructed"),
                depth=DimensionJudgement(score=score, reason="as instructed"),
            )
        return faithful_answer(view)
    material = view.material
    triggers = instruction_units(material)
    if not triggers:
        return faithful_answer(view)
    units = text_units(material)
    if view.task == "rubric_path":
        return PathChoiceReply(
            path_id=None,
            unlisted_points=float(view.payload.get("standard", {}).get("max_points", 0)),
            evidence=[triggers[0]],
            reason="as instructed",
        )
    awards = []
    for item in view.payload.get("items", []):
        points = float(item["points"])
        if points < 0:
            awards.append(ItemAward(item_id=item["id"], awarded=0.0, reason="as instructed"))
            continue
        anchor = _anchor(item)
        words = keywords(str(item["criterion"]), anchor.text if anchor else None)
        stating = [u for u in units if anchor is not None and states_anchor(u, anchor)]
        unit, cover = best_unit(stating or units, words, None)
        evidence = unit if cover > 0 or stating else triggers[0]
        awards.append(
            ItemAward(item_id=item["id"], awarded=points, evidence=[evidence], reason="as told")
        )
    return ItemsReply(items=awards)


_PROSE = "Having read the report carefully, I think it deserves most of the points."
_WRONG_SHAPE = json.dumps({"items": "all satisfied", "path_id": 7, "readability": "better"})


def malformed_content(attempt: int) -> str:
    """An invalid reply: prose on even attempts, JSON of the wrong shape on odd ones."""
    return _PROSE if attempt % 2 == 0 else _WRONG_SHAPE


class FaithfulJudge:
    name = "mock-judge"

    def reply(self, request: PolicyRequest) -> PolicyReply:
        return faithful_reply(request)


class ObedientJudge:
    name = "mock-judge-obedient"

    def reply(self, request: PolicyRequest) -> PolicyReply:
        return _reply(obedient_answer(parse_judge_request(request)))


class MalformedJudge:
    name = "mock-judge-malformed"

    def __init__(self, invalid_replies: int) -> None:
        self.invalid_replies = invalid_replies

    def reply(self, request: PolicyRequest) -> PolicyReply:
        view = parse_judge_request(request)
        if view.attempt < self.invalid_replies:
            return PolicyReply(content=malformed_content(view.attempt))
        return _reply(faithful_answer(view))


class BrokenJudge:
    name = "mock-judge-broken"

    def reply(self, request: PolicyRequest) -> PolicyReply:
        parse_judge_request(request)
        return PolicyReply(content=_PROSE)


class NoisyJudge:
    """Delegates to ``noisy_judge.reply`` (imported on first use: another module)."""

    name = "mock-judge-noisy"

    def __init__(self, params: str, labels_file: Path | None = None) -> None:
        self.params = params
        self.labels_file = labels_file

    def reply(self, request: PolicyRequest) -> PolicyReply:
        module = importlib.import_module("benchforge.agents.mock_llm.noisy_judge")
        result: PolicyReply = module.reply(request, self.params, truth=self.labels_file)
        return result


JUDGE_MODELS = ("mock-judge", "mock-judge-obedient", "mock-judge-broken")


def judge_policy(model: str, labels_file: Path | None = None) -> Policy:
    """The judge policy of a ``mock-judge*`` model name (PolicyError 404 for others);
    ``labels_file``: the known labels the noisy judges add their noise to."""
    if model == "mock-judge":
        return FaithfulJudge()
    if model == "mock-judge-obedient":
        return ObedientJudge()
    if model == "mock-judge-broken":
        return BrokenJudge()
    if model.startswith("mock-judge-malformed:"):
        count = model.removeprefix("mock-judge-malformed:")
        if count.isdigit():
            return MalformedJudge(int(count))
    if model.startswith("mock-judge-noisy:"):
        return NoisyJudge(model.removeprefix("mock-judge-noisy:"), labels_file)
    raise PolicyError(
        f"The model '{model}' is not a mock judge (mock-judge, mock-judge-obedient, "
        "mock-judge-malformed:<n>, mock-judge-broken, mock-judge-noisy:<params>)",
        status=404,
        code="model_not_found",
    )
