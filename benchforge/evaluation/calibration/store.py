"""Where calibrations live in the artifact store, and whether a judge needs one.

A judge's *fingerprint* covers what its verdicts depend on: the model, every judge prompt's
version, the rubric versions of the cases and (optionally) the labelled data. A calibration
leaves one marker per judge model under its fingerprint, so the nightly skips calibration when
none of them changed::

    calibration/reports/<report id>/report.json     CalibrationReport
    calibration/reports/<report id>/report.html     the same, as a page with plots
    calibration/markers/<fingerprint>.json          CalibrationMarker: which report, accepted?

(Keys of this package, not of ``core.artifacts.LAYOUT``.)
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime

from pydantic import BaseModel, ConfigDict

from benchforge.core.artifacts import ArtifactStore
from benchforge.core.errors import ArtifactNotFound
from benchforge.evaluation.calibration.models import CalibrationReport
from benchforge.evaluation.calibration.render import to_html
from benchforge.evaluation.judges.models import content_hash

CALIBRATION_PREFIX = "calibration"


def report_key(report_id: str, name: str) -> str:
    return f"{CALIBRATION_PREFIX}/reports/{report_id}/{name}"


def marker_key(fingerprint: str) -> str:
    return f"{CALIBRATION_PREFIX}/markers/{fingerprint}.json"


class CalibrationMarker(BaseModel):
    """A judge fingerprint was calibrated: by which report, with which decision."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    fingerprint: str
    model: str
    report: str
    accepted: bool
    created_at: datetime


def judge_fingerprint(
    model: str,
    prompt_versions: Mapping[str, str],
    rubric_versions: Iterable[str],
    *,
    data: str | None = None,
) -> str:
    """12 hex digits over the model, the judge prompts' versions, the rubric versions (order
    does not matter) and ``data`` (e.g. the cases' and labels' versions)."""
    return content_hash(
        {
            "model": model,
            "prompts": dict(sorted(prompt_versions.items())),
            "rubrics": sorted(set(rubric_versions)),
            "data": data,
        }
    )


def calibration_needed(store: ArtifactStore, fingerprint: str) -> bool:
    """True unless a calibration of this fingerprint is stored (accepted or not: the same
    judge on the same data would decide the same)."""
    return not store.exists(marker_key(fingerprint))


def read_marker(store: ArtifactStore, fingerprint: str) -> CalibrationMarker | None:
    try:
        return CalibrationMarker.model_validate_json(store.get_bytes(marker_key(fingerprint)))
    except ArtifactNotFound:
        return None


def report_id(report: CalibrationReport) -> str:
    stamp = report.created_at.strftime("%Y%m%d-%H%M%S")
    return f"{stamp}-{content_hash([j.fingerprint for j in report.judges])}"


def save_report(store: ArtifactStore, report: CalibrationReport) -> dict[str, str]:
    """Writes the report (JSON, HTML), then one marker per judge (last: a marker means its
    report is complete); returns name -> URI."""
    rid = report_id(report)
    uris: dict[str, str] = {}
    for name, payload in (
        ("report.json", report.model_dump_json(indent=1)),
        ("report.html", to_html(report)),
    ):
        key = report_key(rid, name)
        store.put_bytes(key, payload.encode())
        uris[name] = store.uri(key)
    for judge in report.judges:
        marker = CalibrationMarker(
            fingerprint=judge.fingerprint,
            model=judge.model,
            report=report_key(rid, "report.json"),
            accepted=judge.gate.accepted,
            created_at=report.created_at,
        )
        store.put_bytes(marker_key(judge.fingerprint), marker.model_dump_json(indent=1).encode())
    return uris
