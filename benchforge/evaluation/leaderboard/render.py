"""Leaderboard -> markdown, a self-contained HTML page, or JSON.

The tables are built once, as plain text cells (``_tables``), and then written out as markdown
or HTML, so both renderings show the same numbers. Every cell is raw text until the writer
escapes it for its format: task ids, trial keys and error details come from agents and
sandboxes and may contain anything (``<script>``, pipes, newlines).

The HTML page (``templates/leaderboard.html.j2`` on the shared base template, escaped by
the templates) has no scripts and no external assets (styles inline, plots inline SVG drawn
with matplotlib), so it can be archived as one file and opened offline; it is also
well-formed XML, which the tests use to check it. When the run used the mock LLM, every
rendering opens with a banner saying so.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from html import escape
from pathlib import Path

from benchforge.core.pages import Page
from benchforge.evaluation.families.pages import detail_template, template_folders
from benchforge.evaluation.leaderboard import formatting as fmt
from benchforge.evaluation.leaderboard import plots
from benchforge.evaluation.leaderboard.models import Leaderboard, TrialIssue

TEMPLATES = Path(__file__).parent / "templates"
MD_DETAIL_CHARS = 500  # markdown tables truncate long details; HTML and JSON keep them whole
ISSUE_TABLES = ("infra", "unscored", "scoring")  # trials without a score, with the reason


@dataclass(frozen=True)
class _Table:
    key: str
    headers: list[str]
    rows: list[list[str]]
    numeric: frozenset[int]  # column indexes that hold numbers (right-aligned)
    empty: str  # what to say when there are no rows


def to_json(lb: Leaderboard) -> str:
    """The full leaderboard as JSON; ``Leaderboard.model_validate_json`` reads it back."""
    return lb.model_dump_json(indent=2)


def _tables(lb: Leaderboard) -> dict[str, _Table]:
    primary = fmt.primary_name(lb)
    metrics = fmt.extra_metrics(lb)

    board_headers = [
        "#",
        "Agent",
        "Model",
        f"{primary} (mean)",
        f"{round(100 * lb.ci_level)}% CI",
        "Success",
        *metrics,
        "Tasks scored",
        "Trials scored",
        "Infra errors",
        "Unscored",
        "Scoring errors",
        "Tokens",
        "Cost (USD)",
        "Wall s (mean)",
        "Terminations",
    ]
    board_rows = [
        [
            str(r.rank) if r.rank is not None else fmt.MISSING,
            r.agent,
            r.model,
            fmt.score(r.primary_mean),
            fmt.ci(r.primary_ci),
            fmt.rate(r.success_rate),
            *(fmt.score(r.metrics.get(m)) for m in metrics),
            f"{r.tasks_scored}/{r.tasks_attempted}",
            f"{r.trials_scored}/{r.trials}",
            str(r.infra_errors),
            str(r.unscored),
            str(r.scoring_errors),
            fmt.count(r.total_tokens),
            fmt.cost(r),
            fmt.seconds(r.mean_agent_wall_s),
            fmt.terminations(r.terminations),
        ]
        for r in lb.rows
    ]
    summary_headers = [
        "#",
        "Agent",
        "Model",
        f"{primary} (mean)",
        "Success",
        "Trials scored",
        "Cost (USD)",
    ]
    summary_rows = [
        [row[0], row[1], row[2], row[3], row[5], f"{r.trials_scored}/{r.trials}", fmt.cost(r)]
        for row, r in zip(board_rows, lb.rows, strict=True)
    ]
    n_metrics = len(metrics)
    board_numeric = frozenset({0, 3, 4, 5, *range(6, 6 + n_metrics + 8)})

    ks = list(range(1, lb.max_epochs + 1))
    pass_rows = [
        [
            str(r.rank) if r.rank is not None else fmt.MISSING,
            r.agent,
            r.model,
            *(fmt.rate(r.pass_at_k.get(k)) for k in ks),
        ]
        for r in lb.rows
    ]

    task_headers = [
        "Task",
        "Family",
        "Agent",
        "Model",
        f"{primary} (mean)",
        *metrics,
        "Scored / epochs",
        "Successes",
        "Infra errors",
        "Unscored",
        "Scoring errors",
    ]
    task_rows = [
        [
            t.task_id,
            t.family,
            c.agent,
            c.model,
            fmt.score(c.primary_mean),
            *(fmt.score(c.metrics.get(m)) for m in metrics),
            f"{c.n_scored}/{c.n_epochs}",
            f"{c.successes}/{c.n_success_known}" if c.n_success_known else fmt.MISSING,
            str(c.n_infra_error),
            str(c.n_unscored),
            str(c.n_scoring_error),
        ]
        for t in lb.tasks
        for c in t.cells
    ]

    def issues(items: list[TrialIssue]) -> list[list[str]]:
        return [
            [
                i.trial,
                i.agent,
                i.model,
                i.task_id,
                str(i.epoch),
                i.termination,
                i.detail or fmt.MISSING,
            ]
            for i in items
        ]

    issue_headers = ["Trial", "Agent", "Model", "Task", "Epoch", "Termination"]
    judged_headers = [
        "Task",
        "Agent",
        "Model",
        "Trials",
        "Judge requests",
        "Cache hits",
        "Judge cost (USD)",
        "Unscored items",
        "Inconsistent pairs",
        "Judge-code disagreements",
        "Injections caught",
    ]
    judged_rows = [
        [
            j.task_id,
            j.agent,
            j.model,
            str(j.trials),
            str(j.judge_requests),
            str(j.judge_cache_hits),
            fmt.MISSING if j.judge_cost_usd is None else fmt.usd(j.judge_cost_usd),
            str(j.unscored_items),
            f"{j.inconsistent_pairs}/{j.pairs}",
            str(j.disagreements),
            str(j.injection_flags),
        ]
        for j in lb.judged
    ]
    judges_headers = [
        "Judge",
        "Model",
        "Prompt version",
        "Rubric versions",
        "Mode",
        "Tasks",
        "Trials",
        "Calibration",
    ]
    judges_rows = [
        [
            j.judge,
            j.model,
            j.prompt_version,
            ", ".join(j.rubric_versions) or fmt.MISSING,
            ", ".join(j.modes) or fmt.MISSING,
            str(len(j.tasks)),
            str(j.trials),
            fmt.calibration(j) + (f" [{j.calibration.report}]" if j.calibration.report else ""),
        ]
        for j in lb.judges
    ]
    return {
        "judges": _Table(
            "judges", judges_headers, judges_rows, frozenset({5, 6}), "No judged trials."
        ),
        "judged": _Table(
            "judged",
            judged_headers,
            judged_rows,
            frozenset(range(3, len(judged_headers))),
            "No judged trials.",
        ),
        "summary": _Table(
            "summary", summary_headers, summary_rows, frozenset({0, 3, 4, 5, 6}), "No trials."
        ),
        "board": _Table("board", board_headers, board_rows, board_numeric, "No trials."),
        "pass": _Table(
            "pass",
            ["#", "Agent", "Model", *(f"pass@{k}" for k in ks)],
            pass_rows,
            frozenset({0, *range(3, 3 + len(ks))}),
            "No trials.",
        ),
        "tasks": _Table(
            "tasks",
            task_headers,
            task_rows,
            frozenset(range(4, len(task_headers))),
            "No tasks.",
        ),
        "infra": _Table(
            "infra",
            [*issue_headers, "Detail"],
            issues(lb.infra_errors),
            frozenset({4}),
            "None: every trial ran.",
        ),
        "unscored": _Table(
            "unscored",
            [*issue_headers, "Reason"],
            issues(lb.unscored),
            frozenset({4}),
            "None: every task has a scorer.",
        ),
        "scoring": _Table(
            "scoring",
            [*issue_headers, "Error"],
            issues(lb.scoring_errors),
            frozenset({4}),
            "None: every trial's scoring ran.",
        ),
    }


PASS_NOTE = (
    "Unbiased estimator 1 - C(n-c, k)/C(n, k) per task (n graded epochs, c successes), averaged "
    "over the tasks with at least k graded epochs; "
    f"{fmt.MISSING} means no task had k graded epochs (not 0)."
)
TASK_NOTE = (
    "Means over the scored epochs of each task; a task with no scored epoch shows "
    f"{fmt.MISSING} and is left out of the agent's means (it is not counted as 0)."
)
JUDGED_NOTE = (
    "Judged trials (analysis reports, blueprints): per-dimension scores are the metric columns "
    "above (completeness, accuracy, insightfulness, readability, depth, gsb; business "
    "alignment, technical feasibility, design quality). Unscored items are left out of both "
    "sums, never counted as 0; a GSB pair whose two orders disagree is inconsistent and "
    "excluded from G/S/B."
)
JUDGES_NOTE = (
    "Each judge by kind, model and prompt version, with the rubric versions it judged on. "
    "Calibration: the latest stored calibration of the same model and prompt version on cases "
    "of its kind (rubric items, GSB pairs) decides whether it passed the promotion gate "
    "against human labels (its report's key in brackets)."
)
DETAILS_NOTE = "Every figure per agent and model: confidence interval, each metric, tokens, time."
SECTIONS = [
    ("summary", "Leaderboard", None),
    ("board", "Details", DETAILS_NOTE),
    ("pass", "pass@k", PASS_NOTE),
    ("tasks", "Per task", TASK_NOTE),
    ("judges", "Judges", JUDGES_NOTE),
    ("judged", "Judging", JUDGED_NOTE),
    ("infra", "Infra errors", "Trials that could not be run fairly; excluded from every score."),
    ("unscored", "Unscored", "Trials of tasks without a scorer; excluded from every score."),
    (
        "scoring",
        "Scoring errors",
        "Trials whose scoring raised (a fault of the scorer or the harness, not the agent's "
        "answer): excluded from every score, never counted as 0; `benchforge score-run` scores "
        "them again.",
    ),
]


# --- markdown ------------------------------------------------------------------------------


def _md(text: str, limit: int | None = None) -> str:
    """Text safe in a markdown table cell: one line, no raw HTML, pipes escaped."""
    text = re.sub(r"\s+", " ", text).strip()
    if limit is not None:
        text = fmt.truncate(text, limit)
    text = escape(text, quote=False).replace("\\", "&#92;").replace("|", "\\|")
    return text or " "


def _md_table(table: _Table) -> str:
    if not table.rows:
        return f"_{table.empty}_"
    limit = MD_DETAIL_CHARS if table.key in ISSUE_TABLES else None
    align = ["---:" if i in table.numeric else "---" for i in range(len(table.headers))]
    lines = [
        "| " + " | ".join(_md(h) for h in table.headers) + " |",
        "|" + "|".join(align) + "|",
    ]
    lines += ["| " + " | ".join(_md(c, limit) for c in row) + " |" for row in table.rows]
    return "\n".join(lines)


def to_markdown(lb: Leaderboard) -> str:
    """The leaderboard as GitHub-flavoured markdown."""
    out = [f"# {_md(lb.title)}", ""]
    if lb.mock_llm_used:
        out += [f"> **⚠️ {fmt.MOCK_HEADLINE}.** {fmt.MOCK_TEXT}", ""]
    if lb.mock_judge_used:
        out += [f"> **⚠️ {fmt.MOCK_JUDGE_HEADLINE}.** {fmt.MOCK_JUDGE_TEXT}", ""]
    out += [_md(fmt.summary(lb)), ""]
    warning = fmt.coverage_warning(lb)
    if warning:
        out += [f"> **Note.** {_md(warning)}", ""]
    judges = fmt.judges_line(lb)
    if judges:
        out += [_md(judges), ""]
    unproven = fmt.calibration_warning(lb)
    if unproven:
        out += [f"> **Note.** {_md(unproven)}", ""]
    tables = _tables(lb)
    for key, heading, note in SECTIONS:
        if key in ("judged", "judges") and not getattr(lb, key):
            continue
        out += [f"## {heading}", ""]
        if note:
            out += [_md(note), ""]
        out += [_md_table(tables[key]), ""]
    return "\n".join(out)


# --- HTML ----------------------------------------------------------------------------------


# Family partials (a family's ``leaderboard(lb, tasks)`` macro, where its partial has one) come
# from the registered families' template folders.
LEADERBOARD_PAGE = Page(
    "leaderboard.html.j2",
    (TEMPLATES,),
    "leaderboard",
    {"fmt": fmt, "issue_tables": ISSUE_TABLES},
    template_folders,
)


def to_html(lb: Leaderboard) -> str:
    """One self-contained HTML page: banner, plots (inline SVG) and the tables."""
    plots_for = {
        "summary": [plots.score_bars(lb), plots.status_bars(lb)],
        "tasks": [plots.task_heatmap(lb)],
        "judged": [svg for svg in [plots.dimension_bars(lb)] if svg is not None],
    }
    sections = [s for s in SECTIONS if s[0] not in ("judged", "judges") or getattr(lb, s[0])]
    title = ("[MOCK LLM] " if lb.mock_llm_used else "") + lb.title
    partials = [(f, detail_template(f)) for f in sorted({t.family for t in lb.tasks})]
    return LEADERBOARD_PAGE.render(
        title, lb=lb, tables=_tables(lb), sections=sections, plots=plots_for, partials=partials
    )
