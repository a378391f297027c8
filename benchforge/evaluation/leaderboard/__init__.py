"""Leaderboards: scored trials in, ranked tables and a self-contained HTML report out.

``build_leaderboard`` turns one run's ``TrialScore`` records (:mod:`benchforge.core.records`)
into a ``Leaderboard`` (task-balanced means, pass@k, bootstrap CIs, infra errors, unscored
trials and scoring errors listed apart; the judges behind judged metrics, with their
calibration status from ``read_calibrations``); ``to_markdown``, ``to_html`` and ``to_json``
render it. No Prefect here: flows call these.
"""

from benchforge.evaluation.leaderboard.aggregate import build_leaderboard
from benchforge.evaluation.leaderboard.calibrations import (
    CalibrationEntry,
    judge_models,
    read_calibrations,
)
from benchforge.evaluation.leaderboard.models import (
    Leaderboard,
    LeaderboardRow,
    TaskCell,
    TaskResult,
    TrialIssue,
    row_label,
)
from benchforge.evaluation.leaderboard.render import to_html, to_json, to_markdown
from benchforge.evaluation.leaderboard.stats import bootstrap_mean_ci, pass_at_k

__all__ = [
    "CalibrationEntry",
    "Leaderboard",
    "LeaderboardRow",
    "TaskCell",
    "TaskResult",
    "TrialIssue",
    "bootstrap_mean_ci",
    "build_leaderboard",
    "judge_models",
    "pass_at_k",
    "read_calibrations",
    "row_label",
    "to_html",
    "to_json",
    "to_markdown",
]
