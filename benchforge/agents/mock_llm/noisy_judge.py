"""Noisy mock judges: a judge whose errors are known, to test calibration against.

    mock-judge-noisy:sigma=0.1,bias=0.2,seed=1

answers judge requests (the judges' prompt format, :mod:`benchforge.evaluation.judges.prompts`)
from a *truth file* (``MockServerConfig.judge_labels_file``, JSON lines ``{case_id, label,
...}``, see :mod:`benchforge.evaluation.calibration.labels`), looked up by the request header
``x-benchforge-case`` (and ``x-benchforge-repeat``, default 0):

- rubric and architecture items: ``awarded = clip(label + N(0, sigma * |points|))`` to the
  item's range, with a verbatim unit of the output as evidence (one that states the item's
  anchor when it has one), so the code checks keep the award; no fitting unit, no award;
- GSB pairs (the header carries the pair id; each dimension answers from its own case): the
  candidate's raw score is 6 / 0 / -6 for good / same / bad plus ``N(0, 10 * sigma)``, and
  with probability ``bias`` (drawn once per pair, dimension and repeat, so both orders share
  it) the report shown *first* wins by 6 whichever it is: a position-biased pair, inconsistent
  across the two orders. The candidate is told from the baseline by its material tag.
  With ``length`` (default 0), report A's raw score also gains ``length * 10`` per doubling of
  its words over report B's, in both orders: a judge that rewards the longer report, for the
  calibration's length-bias figure to catch;
- milestones (the header carries the trial's call id; each milestone answers from its own
  case, by ``call`` and ``milestone_key``): achieved as its label says (``yes`` / ``no``),
  except that with probability ``flip`` (drawn per call, milestone and repeat) the verdict is
  the opposite: a judge that gets about ``flip`` of the milestones wrong.

Every draw is deterministic from ``seed``, the case, the repeat and what is drawn, so a rerun
answers the same and another repeat answers differently. Parameters default to sigma 0.1,
bias 0, length 0, flip 0, seed 0; an unknown parameter is an error.

``benchforge calibrate`` starts the mock with its truth file and registers these models as
custom policies (``noisy_policies``); ``reply(request, params, truth)`` answers one request
for a server that routes ``mock-judge-noisy:<params>`` itself.
"""

from __future__ import annotations

import functools
import hashlib
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from benchforge.agents.mock_llm.policies import (
    PolicyError,
    PolicyReply,
    PolicyRequest,
    message_text,
)
from benchforge.evaluation.calibration.labels import (
    GSB_LABELS,
    MILESTONE_LABELS,
    TruthRecord,
    read_truth,
)
from benchforge.evaluation.explore.milestone_judge import MilestonesReply
from benchforge.evaluation.explore.models import JudgedMilestone
from benchforge.evaluation.judges.evidence import copies_rubric, is_hedge, states_anchor, text_units
from benchforge.evaluation.judges.models import AnchorValue
from benchforge.evaluation.judges.prompts import extract_material, extract_request, material_tag
from benchforge.evaluation.judges.replies import (
    DimensionJudgement,
    GsbReply,
    ItemAward,
    ItemsReply,
)

MODEL_PREFIX = "mock-judge-noisy"
CASE_HEADER = "x-benchforge-case"
REPEAT_HEADER = "x-benchforge-repeat"
GSB_CENTRE = 6.0
GSB_SPREAD = 10.0


class NoisyParams(BaseModel):
    """``sigma``: noise sd as a share of an item's points (GSB: of 10 raw points); ``bias``:
    probability a GSB comparison favours the report shown first; ``length``: GSB raw points
    (of 10) toward the longer report per doubling of its length; ``flip``: probability a
    milestone verdict is the opposite of its label; ``seed``: of every draw."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    sigma: float = Field(default=0.1, ge=0)
    bias: float = Field(default=0.0, ge=0, le=1)
    length: float = Field(default=0.0, ge=0)
    flip: float = Field(default=0.0, ge=0, le=1)
    seed: int = 0


def parse_params(params: str) -> NoisyParams:
    """``"sigma=0.1,bias=0.2,seed=1"`` (any subset, any order)."""
    fields: dict[str, str] = {}
    for part in (p.strip() for p in params.split(",")):
        if not part:
            continue
        key, sep, value = part.partition("=")
        if not sep:
            raise PolicyError(f"{MODEL_PREFIX}: expected key=value, got {part!r}")
        fields[key.strip()] = value.strip()
    try:
        return NoisyParams.model_validate(fields)
    except ValidationError as exc:
        raise PolicyError(f"{MODEL_PREFIX}: bad parameters {params!r}: {exc}") from None


class TruthIndex:
    """Truth records by case id, and GSB ones by (pair, dimension)."""

    def __init__(self, records: list[TruthRecord]) -> None:
        self.by_case = {r.case_id: r for r in records}
        self.by_pair = {
            (r.pair, r.dimension): r for r in records if r.pair is not None and r.dimension
        }
        self.by_call = {
            (r.call, r.milestone_key): r
            for r in records
            if r.call is not None and r.milestone_key is not None
        }

    @classmethod
    def load(cls, path: Path) -> TruthIndex:
        return _load_index(str(Path(path).resolve()), Path(path).stat().st_mtime_ns)


@functools.lru_cache(maxsize=8)
def _load_index(path: str, mtime_ns: int) -> TruthIndex:
    return TruthIndex(read_truth(Path(path)))


def _draw(params: NoisyParams, *parts: object) -> np.random.Generator:
    key = "|".join(str(p) for p in (params.seed, *parts))
    seed = int.from_bytes(hashlib.sha256(key.encode()).digest()[:8], "big")
    return np.random.default_rng(seed)


def _header(request: PolicyRequest, name: str) -> str | None:
    headers: Mapping[str, str] = getattr(request, "headers", None) or {}
    for key, value in headers.items():
        if key.lower() == name:
            return value
    return None


def _prompt(request: PolicyRequest) -> str:
    users = [message_text(m) for m in request.messages if m.get("role") == "user"]
    if not users:
        raise PolicyError(f"{MODEL_PREFIX}: the request has no user message")
    return users[0]  # the judge request; later user turns are retries about the reply


def _evidence(output: str, criterion: str, anchor: AnchorValue | None, points: float) -> str | None:
    """A unit of ``output`` that can back an award: not a copy of the criterion and, for a
    positive item with an anchor, stating it without hedging."""
    for unit in text_units(output):
        if copies_rubric(unit, [criterion]):
            continue
        needs_anchor = anchor is not None and points > 0
        if needs_anchor and not _states(unit, anchor, output):
            continue
        return unit
    return None


def _states(unit: str, anchor: AnchorValue | None, output: str) -> bool:
    return (
        anchor is not None
        and states_anchor(unit, anchor)
        and not is_hedge(unit, anchor, context=output)
    )


def _anchor(payload: Mapping[str, Any]) -> AnchorValue | None:
    anchor = payload.get("anchor")
    if not isinstance(anchor, Mapping):
        return None
    return AnchorValue(
        name=str(anchor.get("name", "anchor")),
        value=anchor["value"],
        text=str(anchor.get("text", anchor["value"])),
        tolerance=float(anchor.get("tolerance", 0.01)),
        unit=anchor.get("unit"),
        kind=anchor.get("kind"),
    )


def _doublings(a: str, b: str) -> float:
    """log2 of ``a``'s words over ``b``'s."""
    return math.log2(max(1, len(a.split())) / max(1, len(b.split())))


class NoisyJudgePolicy:
    """A ``mock-judge-noisy:<params>`` model over one truth index (see the module doc)."""

    name = "noisy_judge"

    def __init__(self, params: NoisyParams | str, truth: TruthIndex) -> None:
        self.params = parse_params(params) if isinstance(params, str) else params
        self.truth = truth

    def reply(self, request: PolicyRequest) -> PolicyReply:
        case = _header(request, CASE_HEADER)
        if not case:
            raise PolicyError(
                f"{MODEL_PREFIX} needs the header {CASE_HEADER} naming a case of its truth file",
                code="unknown_case",
            )
        repeat = _header(request, REPEAT_HEADER) or "0"
        prompt = _prompt(request)
        payload = extract_request(prompt)
        if payload is None:
            raise PolicyError(f"{MODEL_PREFIX}: no judge request in the prompt")
        task = payload.get("task")
        if task in {"rubric_items", "architecture_items"}:
            material = extract_material(prompt, "REPORT" if task == "rubric_items" else "BLUEPRINT")
            reply: BaseModel = self._items(payload, material or "", case, repeat)
        elif task == "gsb_pair":
            reply = self._gsb(prompt, case, repeat)
        elif task == "milestones":
            reply = self._milestones(payload, case, repeat)
        else:
            raise PolicyError(f"{MODEL_PREFIX} does not answer {task!r} requests")
        return PolicyReply(content=reply.model_dump_json())

    def _record(self, case: str) -> TruthRecord:
        record = self.truth.by_case.get(case)
        if record is None:
            raise PolicyError(
                f"{MODEL_PREFIX}: no truth label for case {case!r}",
                status=404,
                code="unknown_case",
            )
        return record

    def _items(self, payload: Mapping[str, Any], output: str, case: str, repeat: str) -> ItemsReply:
        record = self._record(case)
        items = payload.get("items") or []
        if len(items) != 1 or record.item_id not in {None, items[0].get("id")}:
            asked = ", ".join(str(i.get("id")) for i in items)
            raise PolicyError(
                f"{MODEL_PREFIX}: case {case} is item {record.item_id}, the request asks for "
                f"{asked or 'nothing'} (calibration judges one item per call)",
                code="unknown_case",
            )
        item = items[0]
        points = float(item["points"])
        low, high = min(points, 0.0), max(points, 0.0)
        try:
            label = float(record.label)
        except ValueError:
            raise PolicyError(f"{MODEL_PREFIX}: case {case} has a non-numeric label") from None
        noise = _draw(self.params, case, repeat, "item").normal(
            0.0, self.params.sigma * abs(points)
        )
        awarded = round(min(max(label + noise, low), high), 3)
        quote = _evidence(output, str(item.get("criterion", "")), _anchor(item), points)
        if awarded == 0 or quote is None:
            award = ItemAward(item_id=str(item["id"]), awarded=0.0, reason="not shown")
        else:
            award = ItemAward(
                item_id=str(item["id"]), awarded=awarded, evidence=[quote], reason="noisy"
            )
        return ItemsReply(items=[award])

    def _gsb(self, prompt: str, pair: str, repeat: str) -> GsbReply:
        report_a = extract_material(prompt, "REPORT_A")
        report_b = extract_material(prompt, "REPORT_B")
        if report_a is None or report_b is None:
            raise PolicyError(f"{MODEL_PREFIX}: the GSB request lacks REPORT_A or REPORT_B")
        scores: dict[str, DimensionJudgement] = {}
        for dimension in ("readability", "depth"):
            record = self.truth.by_pair.get((pair, dimension)) or self.truth.by_case.get(pair)
            if record is None or record.candidate_tag is None:
                raise PolicyError(
                    f"{MODEL_PREFIX}: no GSB truth for pair {pair!r}, {dimension}",
                    status=404,
                    code="unknown_case",
                )
            if material_tag(report_a) == record.candidate_tag:
                sign = 1.0  # the candidate is A, shown first
            elif material_tag(report_b) == record.candidate_tag:
                sign = -1.0
            else:
                raise PolicyError(
                    f"{MODEL_PREFIX}: neither report of the request is case {record.case_id}'s "
                    "output (its candidate_tag matches no material tag)",
                    code="unknown_case",
                )
            label = GSB_LABELS.get(str(record.label).strip().lower())
            if label is None:
                raise PolicyError(f"{MODEL_PREFIX}: case {record.case_id} has no GSB label")
            biased = _draw(self.params, pair, dimension, repeat, "bias").random() < self.params.bias
            order = "first" if sign > 0 else "second"
            noise = _draw(self.params, pair, dimension, repeat, order).normal(
                0.0, self.params.sigma * GSB_SPREAD
            )
            # biased: the report shown first (A) wins, whichever it is
            raw = GSB_CENTRE + abs(noise) if biased else sign * (GSB_CENTRE * label + noise)
            raw += self.params.length * GSB_SPREAD * _doublings(report_a, report_b)
            score_a = float(min(max(raw, -GSB_SPREAD), GSB_SPREAD))
            scores[dimension] = DimensionJudgement(score=round(score_a, 3), reason="noisy")
        return GsbReply(readability=scores["readability"], depth=scores["depth"])

    def _milestones(self, payload: Mapping[str, Any], call: str, repeat: str) -> MilestonesReply:
        verdicts = []
        for milestone in payload.get("milestones") or []:
            key = str(milestone.get("key"))
            record = self.truth.by_call.get((call, key))
            if record is None:
                raise PolicyError(
                    f"{MODEL_PREFIX}: no milestone truth for call {call!r}, milestone {key!r}",
                    status=404,
                    code="unknown_case",
                )
            label = MILESTONE_LABELS.get(str(record.label).strip().lower())
            if label is None:
                raise PolicyError(f"{MODEL_PREFIX}: case {record.case_id} has no yes/no label")
            flipped = _draw(self.params, call, key, repeat, "flip").random() < self.params.flip
            achieved = bool(label) != flipped
            verdicts.append(
                JudgedMilestone(
                    key=key,
                    achieved=achieved,
                    evidence="inferred" if achieved else None,
                    reason="noisy, flipped" if flipped else "noisy",
                )
            )
        return MilestonesReply(milestones=verdicts)


def reply(
    request: PolicyRequest, params: str, truth: TruthIndex | Path | None = None
) -> PolicyReply:
    """One answer of ``mock-judge-noisy:<params>`` from ``truth`` (an index, or the truth file:
    the server's ``MockServerConfig.judge_labels_file``); without one, a PolicyError saying
    how to give it."""
    if truth is None:
        raise PolicyError(
            f"{MODEL_PREFIX} needs a truth file: start the mock server with judge_labels_file "
            "(benchforge calibrate does, from --truth or the labels' consensus)",
            code="no_truth",
        )
    index = truth if isinstance(truth, TruthIndex) else TruthIndex.load(truth)
    return NoisyJudgePolicy(params, index).reply(request)


def noisy_policies(models: list[str], truth_file: Path) -> dict[str, NoisyJudgePolicy]:
    """Custom policies (``run_server(policies=...)``) for the ``mock-judge-noisy:*`` models of
    ``models``, answering from ``truth_file``."""
    wanted = [m for m in models if m.startswith(MODEL_PREFIX + ":") or m == MODEL_PREFIX]
    if not wanted:
        return {}
    index = TruthIndex.load(truth_file)
    return {m: NoisyJudgePolicy(m.partition(":")[2], index) for m in wanted}
