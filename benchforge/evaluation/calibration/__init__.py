"""Judge calibration: how far an LLM judge can be trusted, measured against human labels.

- :mod:`.cases`: self-contained judging problems (rubric items, GSB pairs, milestones) in
  ``cases.jsonl``;
- :mod:`.labels`: human labels (CSV / JSON lines, checked before any judge call) and the truth
  file the mock's noisy judges answer from;
- :mod:`.sheets`: a stratified sample of cases and the labelling sheet / page for raters;
- :mod:`.stats`: agreement figures (leave one out, per item type and task, position and length
  bias) with bootstrap intervals;
- :mod:`.runner`: ``calibrate_judge`` runs judge models on the labelled cases, repeatedly;
- :mod:`.gate`: the promotion gate; :mod:`.render`: markdown / HTML; :mod:`.store`: where
  reports and fingerprint markers live (``calibration_needed``).

See ``docs/calibration.md``. The statistics and judge modules are imported on first use (the
mock server imports :mod:`.labels` and should not pay for scipy and scikit-learn).
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "CalibrationCase": "cases",
    "CaseSet": "cases",
    "CasesError": "cases",
    "read_cases": "cases",
    "write_cases": "cases",
    "LabelSet": "labels",
    "LabelsError": "labels",
    "load_labels": "labels",
    "read_truth": "labels",
    "truth_records": "labels",
    "write_truth": "labels",
    "sample_cases": "sheets",
    "write_labelling": "sheets",
    "BootstrapSettings": "stats",
    "Figure": "stats",
    "GroupStats": "stats",
    "KindStats": "stats",
    "GateDecision": "gate",
    "GateSettings": "gate",
    "CalibrationReport": "models",
    "JudgeCalibration": "models",
    "calibrate_judge": "runner",
    "fingerprint_for": "runner",
    "prompt_versions": "runner",
    "calibration_needed": "store",
    "judge_fingerprint": "store",
    "save_report": "store",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{module}"), name)
