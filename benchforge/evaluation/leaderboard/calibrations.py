"""Whether the judges behind a leaderboard's judged metrics passed calibration.

A calibration (``benchforge.evaluation.calibration``) stores a report per run and a marker per
judge model (``calibration/markers/<fingerprint>.json``, naming its report); the report records
the version of every judge prompt it ran with and, per judge model, the kinds of case it was
calibrated on and the promotion gate's decision. The link to a leaderboard's judge:

    a judge (kind, model, prompt version) is *calibrated* by a stored report that ran the same
    model with the same prompt version for that kind of judge, on cases of that kind (rubric
    items for the rubric and architecture judges, GSB pairs for the GSB judge). The latest
    such report decides: *passed* when its gate accepted the model, *failed* otherwise. With no
    such report the judge was *never calibrated*.

Rubric versions are not part of the link: calibration cases are labelled once, from whichever
runs were exported, and a judge calibrated on them is trusted on other rubrics of its kind.

The keys and JSON fields read here are those :mod:`benchforge.evaluation.calibration.store`
writes; they are read as plain JSON so a leaderboard does not import the statistics stack.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from datetime import datetime

from pydantic import BaseModel, ConfigDict, ValidationError

from benchforge.core.artifacts import ArtifactStore
from benchforge.core.errors import ArtifactNotFound
from benchforge.core.records import TrialScore
from benchforge.evaluation.judges.breakdown import judge_record_of
from benchforge.evaluation.leaderboard.models import JudgeCalibrationStatus

MARKERS = "calibration/markers"
# a judge kind -> the prefix of the calibration case kinds that calibrate it
CASE_KINDS = {"rubric": "rubric", "architecture": "rubric", "gsb": "gsb"}


class CalibrationEntry(BaseModel):
    """One judge model in one stored calibration report, as far as a leaderboard needs it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    model: str
    prompt_versions: dict[str, str]
    kinds: list[str]  # the case kinds it was calibrated on (rubric_item, gsb_pair, ...)
    accepted: bool
    reasons: list[str]
    report: str  # the report's artifact key
    created_at: datetime

    def calibrates(self, judge: str, model: str, prompt_version: str) -> bool:
        prefix = CASE_KINDS.get(judge, judge)
        return (
            self.model == model
            and self.prompt_versions.get(judge) == prompt_version
            and any(k.startswith(prefix) for k in self.kinds)
        )


class _Loose(BaseModel):
    model_config = ConfigDict(extra="ignore")


class _Marker(_Loose):
    model: str
    report: str


class _Gate(_Loose):
    accepted: bool
    reasons: list[str] = []


class _Kind(_Loose):
    kind: str


class _Judge(_Loose):
    model: str
    kinds: list[_Kind] = []
    gate: _Gate


class _Report(_Loose):
    created_at: datetime
    prompt_versions: dict[str, str] = {}
    judges: list[_Judge]


def judge_models(scores: Iterable[TrialScore]) -> set[str]:
    """The judge models that judged ``scores`` (whose calibrations a leaderboard reads)."""
    return {j.model for s in scores if (r := judge_record_of(s)) is not None for j in r.judges}


def read_calibrations(
    store: ArtifactStore, models: Iterable[str] | None = None
) -> list[CalibrationEntry]:
    """Every judge model of every calibration report the store's markers name (only
    ``models``, when given), oldest first. Unreadable markers and reports are skipped: they
    say nothing about a judge."""
    wanted = set(models) if models is not None else None
    if wanted is not None and not wanted:
        return []
    reports: set[str] = set()
    for info in store.list(MARKERS):
        try:
            marker = _Marker.model_validate_json(store.get_bytes(info.key))
        except (ArtifactNotFound, ValidationError, ValueError):
            continue
        if wanted is None or marker.model in wanted:
            reports.add(marker.report)
    entries: list[CalibrationEntry] = []
    for key in sorted(reports):
        try:
            report = _Report.model_validate(json.loads(store.get_bytes(key)))
        except (ArtifactNotFound, ValidationError, ValueError):
            continue
        entries += [
            CalibrationEntry(
                model=j.model,
                prompt_versions=report.prompt_versions,
                kinds=[k.kind for k in j.kinds],
                accepted=j.gate.accepted,
                reasons=j.gate.reasons,
                report=key,
                created_at=report.created_at,
            )
            for j in report.judges
            if wanted is None or j.model in wanted
        ]
    return sorted(entries, key=lambda e: (e.created_at, e.report))


def calibration_status(
    entries: Sequence[CalibrationEntry] | None, judge: str, model: str, prompt_version: str
) -> JudgeCalibrationStatus:
    """The judge's status by the latest entry that calibrates it (see the module docstring);
    ``entries`` None: not looked up."""
    if entries is None:
        return JudgeCalibrationStatus(state="unchecked")
    found = [e for e in entries if e.calibrates(judge, model, prompt_version)]
    if not found:
        return JudgeCalibrationStatus(state="never")
    latest = max(found, key=lambda e: (e.created_at, e.report))
    return JudgeCalibrationStatus(
        state="passed" if latest.accepted else "failed",
        report=latest.report,
        calibrated_at=latest.created_at,
        reasons=[] if latest.accepted else latest.reasons,
    )
