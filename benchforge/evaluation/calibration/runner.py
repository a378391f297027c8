"""``calibrate_judge``: judge every labelled case with each judge model, ``repeats`` times, and
compare with the humans.

Each judgment goes through the judges' own entry points (``judge_item`` for a hierarchical
rubric item, ``judge_architecture`` on one flat item, ``judge_pair`` for a GSB comparison,
``judge_milestones`` for a trial's milestones), so
what is calibrated is the judge as it scores runs: prompt, retries, code checks and all. Every
request carries ``x-benchforge-case`` (the case id; for GSB the pair id, for milestones the
trial's call id) and
``x-benchforge-repeat`` headers (the mock's noisy judges answer by them; headers are not part of
the response cache key), and repeat ``k`` is sent as ``epoch=k``, which *is* part of the cache
key: repeats are fresh samples even with the cache on, and a rerun of a calibration replays
them.

Only labelled cases are judged (an unlabelled case costs money and says nothing).
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Callable, Coroutine, Sequence
from datetime import UTC, datetime
from typing import Any

import numpy as np

from benchforge.evaluation.calibration.cases import (
    CASE_KINDS,
    CalibrationCase,
    CaseKind,
    CaseSet,
)
from benchforge.evaluation.calibration.gate import GateSettings, decide
from benchforge.evaluation.calibration.labels import GSB_LABELS, LabelSet
from benchforge.evaluation.calibration.models import (
    CalibrationReport,
    JudgeCalibration,
    Judgment,
    is_mock_model,
)
from benchforge.evaluation.calibration.stats import (
    BootstrapSettings,
    KindData,
    KindStats,
    Level,
    kind_stats,
)
from benchforge.evaluation.calibration.store import judge_fingerprint
from benchforge.evaluation.explore.milestone_judge import (
    MILESTONE_PROMPT_VERSION,
    judge_milestones_async,
)
from benchforge.evaluation.judges.architecture import judge_architecture_async
from benchforge.evaluation.judges.client import Judge
from benchforge.evaluation.judges.gsb import judge_pair_async, verdict_of
from benchforge.evaluation.judges.models import ItemVerdict, PairVerdict, content_hash
from benchforge.evaluation.judges.prompts import (
    ARCHITECTURE_PROMPT_VERSION,
    GSB_PROMPT_VERSION,
    RUBRIC_PROMPT_VERSION,
)
from benchforge.evaluation.judges.rubric import judge_item_async

CASE_HEADER = "x-benchforge-case"
REPEAT_HEADER = "x-benchforge-repeat"
JudgeFactory = Callable[[str], Judge]


def prompt_versions() -> dict[str, str]:
    """The version of every judge prompt (part of each judge's fingerprint)."""
    return {
        "rubric": RUBRIC_PROMPT_VERSION,
        "gsb": GSB_PROMPT_VERSION,
        "architecture": ARCHITECTURE_PROMPT_VERSION,
        "milestone": MILESTONE_PROMPT_VERSION,
    }


def data_version(cases: CaseSet, labels: LabelSet) -> str:
    return content_hash([cases.version, labels.version])


def fingerprint_for(model: str, cases: CaseSet, labels: LabelSet) -> str:
    """The fingerprint a calibration of ``model`` on these cases and labels leaves its marker
    under (today's prompt versions): the nightly asks ``calibration_needed`` with it."""
    return judge_fingerprint(
        model, prompt_versions(), cases.rubric_versions(), data=data_version(cases, labels)
    )


def _for_case(judge: Judge, tag: str, repeat: int) -> Judge:
    """The judge (its ledger) sending every call with ``epoch=repeat`` (a fresh sample per
    repeat, cached apart) and the case's headers."""
    return judge.at_epoch(repeat).with_headers({CASE_HEADER: tag, REPEAT_HEADER: str(repeat)})


def _item_judgment(case: CalibrationCase, repeat: int, verdict: ItemVerdict) -> Judgment:
    if verdict.status != "scored" or verdict.earned is None:
        return Judgment(
            case_id=case.case_id,
            repeat=repeat,
            status="unscored",
            value=None,
            raw="unscored",
            judge_awarded=verdict.judge_awarded,
            flags=[*verdict.flags, verdict.reason][:5],
        )
    return Judgment(
        case_id=case.case_id,
        repeat=repeat,
        status="scored",
        value=verdict.earned / abs(verdict.points),
        raw=f"{verdict.earned:g}",
        judge_awarded=verdict.judge_awarded,
        flags=verdict.flags,
    )


async def judge_rubric_case(
    judge: Judge, cases: CaseSet, case: CalibrationCase, repeat: int
) -> Judgment:
    """One rubric item case, judged as a run's scoring judges it."""
    mine = _for_case(judge, case.case_id, repeat)
    assert case.rubric is not None and case.item_id is not None
    if case.rubric in cases.rubrics:
        verdict = await judge_item_async(
            mine, cases.rubrics[case.rubric], case.item_id, case.output, question=case.question
        )
    else:
        flat = cases.flat_rubrics[case.rubric]
        item = next(i for i in flat.items if i.id == case.item_id)
        score = await judge_architecture_async(
            mine, [item], case.output, requirement=flat.requirement, rubric_version=flat.version
        )
        verdict = score.items[0]
    return _item_judgment(case, repeat, verdict)


async def judge_pair_cases(
    judge: Judge, pair: Sequence[CalibrationCase], repeat: int
) -> list[Judgment]:
    """The GSB cases of one comparison (its dimensions), from one ``judge_pair`` call (both
    orders). An order-dependent verdict counts as a tie (0), flagged ``inconsistent``."""
    first = pair[0]
    assert first.pair is not None and first.baseline is not None and first.baseline_id
    verdicts = await judge_pair_async(
        _for_case(judge, first.pair, repeat),
        first.output,
        first.baseline,
        baseline_id=first.baseline_id,
        question=first.question,
    )
    by_dimension = {v.dimension: v for v in verdicts}
    out = []
    for case in pair:
        verdict = by_dimension.get(case.dimension) if case.dimension else None
        if verdict is None or verdict.status != "scored":
            out.append(
                Judgment(
                    case_id=case.case_id,
                    repeat=repeat,
                    status="unscored",
                    value=None,
                    raw="unscored",
                )
            )
            continue
        value = GSB_LABELS[verdict.verdict] if verdict.verdict is not None else 0
        out.append(
            Judgment(
                case_id=case.case_id,
                repeat=repeat,
                status="scored",
                value=float(value),
                raw=verdict.verdict or "inconsistent",
                consistent=verdict.consistent,
                orders=_orders(verdict),
                flags=[] if verdict.consistent else ["inconsistent"],
            )
        )
    return out


async def judge_milestone_cases(
    judge: Judge, call: Sequence[CalibrationCase], repeat: int
) -> list[Judgment]:
    """The milestone cases of one trial, from one ``judge_milestones`` call on the trial's
    material: each case takes the judge's ``achieved`` for its milestone (1 / 0), the verdict
    a person labels, before the code rule that decides what counts for GPR."""
    first = call[0]
    assert first.call is not None and first.milestones is not None
    material = first.milestones
    reply = await judge_milestones_async(
        _for_case(judge, first.call, repeat),
        question=first.question,
        gold=material.gold,
        excerpts=material.excerpts,
        steps=material.steps,
    )
    verdicts = {m.key: m for m in reply.value.milestones} if reply.value is not None else {}
    out = []
    for case in call:
        verdict = verdicts.get(case.milestone_key or "")
        if verdict is None:
            out.append(
                Judgment(
                    case_id=case.case_id,
                    repeat=repeat,
                    status="unscored",
                    value=None,
                    raw="unscored",
                    flags=[reply.error][:1] if reply.error else [],
                )
            )
            continue
        out.append(
            Judgment(
                case_id=case.case_id,
                repeat=repeat,
                status="scored",
                value=1.0 if verdict.achieved else 0.0,
                raw="yes" if verdict.achieved else "no",
                flags=[f"evidence {verdict.evidence}"] if verdict.evidence else [],
            )
        )
    return out


def _orders(verdict: PairVerdict) -> tuple[int, int] | None:
    """The candidate's verdict (1 / 0 / -1) shown first and shown second."""
    if verdict.raw_first is None or verdict.raw_second is None:
        return None
    return GSB_LABELS[verdict_of(verdict.raw_first)], GSB_LABELS[verdict_of(verdict.raw_second)]


async def _one_item(
    judge: Judge, cases: CaseSet, case: CalibrationCase, repeat: int
) -> list[Judgment]:
    return [await judge_rubric_case(judge, cases, case, repeat)]


def run_judgments(
    judge: Judge, cases: CaseSet, repeats: int, concurrency: int = 8
) -> list[Judgment]:
    """Every case of ``cases`` judged ``repeats`` times (concurrently on the LLM loop,
    ``concurrency`` cases at once; the shared client keeps to the model's own limits)."""
    pairs: dict[str, list[CalibrationCase]] = {}
    calls: dict[str, list[CalibrationCase]] = {}
    jobs: list[Coroutine[Any, Any, list[Judgment]]] = []
    for case in cases.cases:
        if case.kind == "gsb_pair" and case.pair is not None:
            pairs.setdefault(case.pair, []).append(case)
        elif case.kind == "milestone" and case.call is not None:
            calls.setdefault(case.call, []).append(case)
    for repeat in range(repeats):
        for case in cases.of_kind("rubric_item"):
            jobs.append(_one_item(judge, cases, case, repeat))
        for group in pairs.values():
            jobs.append(judge_pair_cases(judge, group, repeat))
        for group in calls.values():
            jobs.append(judge_milestone_cases(judge, group, repeat))
    results = judge.run(_bounded(jobs, max(1, concurrency)))
    return [j for part in results for j in part]


async def _bounded(
    jobs: Sequence[Coroutine[Any, Any, list[Judgment]]], concurrency: int
) -> list[list[Judgment]]:
    """``jobs`` run at most ``concurrency`` at once, their results in order."""
    slots = asyncio.Semaphore(concurrency)

    async def one(job: Coroutine[Any, Any, list[Judgment]]) -> list[Judgment]:
        async with slots:
            return await job

    return await asyncio.gather(*(one(job) for job in jobs))


def _words(text: str | None) -> int:
    return max(1, len((text or "").split()))


def _length(case: CalibrationCase) -> float:
    """log2 of the judged output's words; GSB: of the candidate's words over the baseline's
    (0: as long as the baseline)."""
    if case.kind == "gsb_pair":
        return math.log2(_words(case.output) / _words(case.baseline))
    return math.log2(_words(case.output))


LEVELS: dict[CaseKind, Level] = {
    "rubric_item": "interval",
    "gsb_pair": "ordinal",
    "milestone": "binary",
}
LENGTH_MEASURES = {
    "rubric_item": "log2 of the output's words",
    "gsb_pair": "log2 of the candidate's words over the baseline's",
}


def kind_data(
    cases: CaseSet, labels: LabelSet, judgments: Sequence[Judgment], kind: CaseKind, repeats: int
) -> KindData | None:
    """The matrices of one kind of case (labelled cases only), or None when there is none."""
    labelled = labels.case_ids()
    chosen = [c for c in cases.of_kind(kind) if c.case_id in labelled]
    if not chosen:
        return None
    column = {c.case_id: j for j, c in enumerate(chosen)}
    judge = np.full((repeats, len(chosen)), np.nan)
    inconsistent = np.full((repeats, len(chosen)), np.nan)
    orders = np.full((repeats, len(chosen), 2), np.nan)
    for judgment in judgments:
        j = column.get(judgment.case_id)
        if j is None or judgment.value is None or judgment.repeat >= repeats:
            continue
        judge[judgment.repeat, j] = judgment.value
        if judgment.consistent is not None:
            inconsistent[judgment.repeat, j] = 0.0 if judgment.consistent else 1.0
        if judgment.orders is not None:
            orders[judgment.repeat, j] = judgment.orders
    gsb = kind == "gsb_pair"
    lengths = kind != "milestone"  # a milestone's verdict is read off excerpts, not the answer
    return KindData(
        kind=kind,
        level=LEVELS[kind],
        agents=[c.contestant for c in chosen],
        humans=labels.matrix(chosen),
        judge=judge,
        inconsistent=inconsistent if gsb else None,
        trials=[f"{c.run_id}/{c.trial}" for c in chosen],
        item_types=[cases.item_type(c) for c in chosen],
        tasks=[c.task for c in chosen],
        orders=orders if gsb else None,
        lengths=np.array([_length(c) for c in chosen]) if lengths else None,
        length_measure=LENGTH_MEASURES.get(kind),
    )


def _percentile(values: list[float], q: float) -> float | None:
    return float(np.percentile(values, q)) if values else None


def calibrate_one(
    judge: Judge,
    cases: CaseSet,
    labels: LabelSet,
    repeats: int,
    gate: GateSettings,
    bootstrap: BootstrapSettings,
    *,
    concurrency: int = 8,
) -> JudgeCalibration:
    """One judge model on the labelled cases: judgments, figures, cost, latency, decision."""
    labelled = cases.subset(labels.case_ids())
    judgments = run_judgments(judge, labelled, repeats, concurrency)
    kinds: list[KindStats] = []
    for kind in CASE_KINDS:
        data = kind_data(labelled, labels, judgments, kind, repeats)
        if data is not None:
            kinds.append(kind_stats(data, bootstrap))
    records = judge.ledger.records()
    totals = judge.totals()
    latencies = [r.latency_s for r in records if r.status == "ok" and not r.cache_hit]
    n = len(judgments)
    cost = totals.known_cost_usd
    return JudgeCalibration(
        model=judge.model,
        fingerprint=fingerprint_for(judge.model, cases, labels),
        judgments=n,
        unscored=sum(1 for j in judgments if j.status == "unscored"),
        requests=totals.attempts,
        cost_usd=cost,
        cost_per_1000=cost / n * 1000 if cost is not None and n else None,
        latency_p50_s=_percentile(latencies, 50),
        latency_p95_s=_percentile(latencies, 95),
        kinds=kinds,
        gate=decide(kinds, gate),
        mock=judge.ledger.used_mock() or is_mock_model(judge.model),
        details=sorted(judgments, key=lambda j: (j.case_id, j.repeat)),
    )


def calibrate_judge(
    judge_models: list[str],
    cases: CaseSet,
    labels: LabelSet,
    repeats: int,
    gate: GateSettings,
    *,
    judge_for: JudgeFactory,
    bootstrap: BootstrapSettings | None = None,
    concurrency: int = 8,
) -> CalibrationReport:
    """Each of ``judge_models`` (a ``Judge`` from ``judge_for(model)``, its ledger fresh) on
    every labelled case ``repeats`` times, compared with the humans and gated."""
    if repeats < 1:
        raise ValueError("repeats must be >= 1")
    if not judge_models:
        raise ValueError("no judge model to calibrate")
    bootstrap = bootstrap or BootstrapSettings()
    judges = [
        calibrate_one(
            judge_for(model), cases, labels, repeats, gate, bootstrap, concurrency=concurrency
        )
        for model in judge_models
    ]
    return CalibrationReport(
        created_at=datetime.now(UTC),
        cases_version=cases.version,
        cases=len(labels.case_ids()),
        labels=len(labels.labels),
        raters=labels.raters(),
        repeats=repeats,
        gate_settings=gate,
        bootstrap=bootstrap,
        prompt_versions=prompt_versions(),
        judges=judges,
    )
