"""How numbers and banners read, shared by the markdown and HTML renderings so they agree.

Scores are on a 0-100 scale and shown with one decimal; rates are fractions shown as
percentages; a missing value is an em dash, never 0. Costs are written without a dollar sign
(``$...$`` pairs turn into math on some markdown renderers); the column header says USD.
"""

from __future__ import annotations

from benchforge.evaluation.leaderboard.models import JudgeLine, Leaderboard, LeaderboardRow

MISSING = "—"
MOCK_HEADLINE = "MOCK LLM: these scores do not measure a real model"
MOCK_JUDGE_HEADLINE = "MOCK JUDGE: judged scores come from scripted judging"
MOCK_JUDGE_TEXT = (
    "The judged scores below (analysis reports, blueprints) were given by the Benchforge mock "
    "server's rule-based judge, not by a real LLM judge: they test the harness, the rubrics "
    "and the code checks, not any model's ability to judge."
)
MOCK_TEXT = (
    "This run used the Benchforge mock LLM server (scripted replies, not a real model). "
    "The numbers below test the harness and the scorers, not any model's ability."
)


def score(value: float | None) -> str:
    return MISSING if value is None else f"{value:.1f}"


def rate(value: float | None) -> str:
    return MISSING if value is None else f"{100 * value:.1f}%"


def ci(bounds: tuple[float, float] | None) -> str:
    return MISSING if bounds is None else f"[{bounds[0]:.1f}, {bounds[1]:.1f}]"


def usd(value: float) -> str:
    return f"{value:,.2f}" if value >= 100 else f"{value:.4f}"


def cost(row: LeaderboardRow) -> str:
    if row.cost_partial:
        return f"partial (≥ {usd(row.cost_usd_known)})"
    return MISSING if row.cost_usd is None else usd(row.cost_usd)


def seconds(value: float | None) -> str:
    return MISSING if value is None else f"{value:.1f}"


def count(value: int) -> str:
    return f"{value:,}"


def terminations(counts: dict[str, int]) -> str:
    return ", ".join(f"{reason} {n}" for reason, n in counts.items()) or MISSING


def primary_name(lb: Leaderboard) -> str:
    """The primary metric's name when the run has one, else a generic label."""
    return lb.primary_metrics[0] if len(lb.primary_metrics) == 1 else "primary"


def extra_metrics(lb: Leaderboard) -> list[str]:
    """The metric columns shown next to the primary one (which is not repeated)."""
    if len(lb.primary_metrics) == 1:
        return [m for m in lb.metric_names if m != lb.primary_metrics[0]]
    return lb.metric_names


def coverage_warning(lb: Leaderboard) -> str | None:
    """A warning when the ranked rows were scored on different sets of tasks.

    Infra errors, unscored trials and scoring errors leave tasks out of a row's means; rows
    scored on different tasks are then not compared like for like, and the reader should know.
    """
    scored: dict[tuple[str, str], set[str]] = {(r.agent, r.model): set() for r in lb.rows}
    for task in lb.tasks:
        for c in task.cells:
            if c.n_scored:
                scored[(c.agent, c.model)].add(task.task_id)
    ranked = [frozenset(scored[(r.agent, r.model)]) for r in lb.rows if r.rank is not None]
    if len(set(ranked)) <= 1:
        return None
    return (
        "The agents were not scored on the same tasks (see Tasks scored, Infra errors, "
        "Unscored and Scoring errors): their means cover different task sets, so compare them "
        "with care."
    )


def summary(lb: Leaderboard) -> str:
    """One line saying what the table is and how it was computed."""
    suites = ", ".join(lb.suites)
    return (
        f"Run {lb.run_id} · suite(s) {suites} · {lb.n_trials} trials · {len(lb.tasks)} tasks · "
        f"{len(lb.rows)} agent/model pairs. Ranked by the mean {primary_name(lb)} score over "
        f"tasks (epochs averaged within a task first); ties by success rate, then name. "
        f"{round(100 * lb.ci_level)}% CI: percentile bootstrap over tasks "
        f"({lb.bootstrap_resamples} resamples, seed {lb.bootstrap_seed}). "
        f"Infra-error, unscored and scoring-error trials are left out of every mean (never "
        f"counted as 0) and listed below."
    )


def truncate(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def judge_name(line: JudgeLine) -> str:
    """``rubric judge gpt-4o (prompt 1a2b, rubric 3c4d)``: what judged, on which versions."""
    versions = [f"prompt {line.prompt_version}"]
    if line.rubric_versions:
        label = "rubric" if len(line.rubric_versions) == 1 else "rubrics"
        versions.append(f"{label} {', '.join(line.rubric_versions)}")
    return f"{line.judge} judge {line.model} ({'; '.join(versions)})"


def calibration(line: JudgeLine) -> str:
    """``calibrated and passed (2026-01-02)``; a failure with the gate's first reason."""
    status = line.calibration
    text = status.label
    if status.calibrated_at is not None:
        text += f" ({status.calibrated_at.date().isoformat()})"
    if status.reasons:
        more = f" (+{len(status.reasons) - 1} more)" if len(status.reasons) > 1 else ""
        text += f": {status.reasons[0]}{more}"
    return text


def judges_line(lb: Leaderboard) -> str | None:
    """Who judged the judged metrics, and whether each judge passed calibration."""
    if not lb.judges:
        return None
    metrics = ", ".join(lb.judged_metrics) or "the judged metrics"
    judges = "; ".join(f"{judge_name(j)} — {calibration(j)}" for j in lb.judges)
    return f"Judged metrics ({metrics}) come from these judges: {judges}."


def calibration_warning(lb: Leaderboard) -> str | None:
    """A warning when a judge behind the judged metrics has not passed calibration."""
    unproven = [j for j in lb.judges if j.calibration.state != "passed"]
    if not unproven:
        return None
    names = "; ".join(f"{j.judge} judge {j.model}: {j.calibration.label}" for j in unproven)
    return (
        f"Not every judge has passed calibration against human labels ({names}). The judged "
        "metrics such a judge gave are not validated: compare them with care "
        "(`benchforge calibrate` calibrates a judge)."
    )
