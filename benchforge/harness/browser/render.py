"""View models -> HTML pages: the run's index (leaderboard + filterable trial list) and a page
per trial (score, the family's detail, trajectory, sandbox, errors), rendered from the
templates beside this module on the shared base template (:mod:`benchforge.core.pages`).

Every page is self-contained: styles and the index's small filter script are inline, nothing
is fetched, so a site opens from disk (``file://``) or any static server. Every value that
came from an agent, a model or a sandbox (task ids, replies, tool output, example rows) is
escaped by the templates: it may hold anything, ``<script>`` included.

A trial's score detail is its family's partial (``TaskFamily.detail_template``): the per-node
diff of DE tasks, the judged items of judged ones; this module names no family.

The index's filters live in the URL fragment (``index.html#status=failure&agent=react-de``;
a query string works too), so a filtered view is a link: the leaderboard's cells are such
links, or point straight at the trials they summarize.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from benchforge.core.pages import Page
from benchforge.evaluation.families.pages import detail_template, template_folders
from benchforge.evaluation.leaderboard import formatting as fmt
from benchforge.harness.browser.load import STATUSES, RunView, StepView, TrialStatus, TrialView
from benchforge.harness.matrix import NO_MODEL

TEMPLATES = Path(__file__).parent / "templates"
INLINE_ARGUMENT_CHARS = 100  # a one-line argument up to this long reads inline
FOLDED_ARGUMENTS_CHARS = 400  # a tool step's arguments longer than this start folded
FILTER_KEYS = ("task", "agent", "model", "status")
STATUS_LABELS: dict[TrialStatus, str] = {
    "success": "success",
    "failure": "failure",
    "infra_error": "infra error",
    "unscored": "unscored",
    "scoring_error": "scoring error",
    "not_scored": "not scored yet",
}
NOT_SCORED_REASONS = {
    "infra_error": "Not scored: an infrastructure error is not a result.",
    "unscored": "Not scored: its task has no scorer yet.",
    "scoring_error": "Not scored: scoring it raised (a scorer fault, not a 0).",
    "not_scored": "Not scored yet.",
}
NO_MODEL_TEXT = "none"
NO_MODEL_TIP = "not an LLM agent: it calls no model"


def _filter_href(prefix: str = "", **filters: str) -> str:
    return f"{prefix}index.html#" + urlencode({k: v for k, v in filters.items() if v})


def _score_text(metrics: dict[str, float], primary: str | None) -> str:
    names = [m for m in metrics if not m.endswith("_visible")]
    if primary in names:
        names.insert(0, names.pop(names.index(primary)))
    return " · ".join(f"{m.upper()} {fmt.score(metrics[m])}" for m in names) or fmt.MISSING


def _step_meta(step: StepView) -> str:
    meta = [f"+{step.offset_s:.2f} s", f"took {step.seconds:.2f} s"]
    if step.prompt_tokens is not None or step.completion_tokens is not None:
        meta.append(f"tokens {step.prompt_tokens or 0:,} in / {step.completion_tokens or 0:,} out")
    if step.cost_usd is not None:
        meta.append(f"{step.cost_usd:.4f} USD")
    if step.attempts and step.attempts > 1:
        meta.append(f"{step.attempts} attempts")
    if step.cache_hit:
        meta.append("cache hit")
    if step.exit_code is not None:
        meta.append(f"exit {step.exit_code}")
    if step.timed_out:
        meta.append("timed out")
    return " · ".join(meta)


def _run_facts(view: RunView) -> list[tuple[str, object]]:
    counts = ", ".join(f"{STATUS_LABELS[s]} {n}" for s, n in view.counts().items())
    items: list[tuple[str, object]] = [
        ("Stored at", view.uri),
        ("Trials", f"{len(view.trials)} ({counts})"),
    ]
    spec = view.spec
    if spec is not None:
        items += [
            ("Created", spec.created_at.isoformat(timespec="seconds")),
            ("Suites", ", ".join(spec.suites)),
            ("Agents", ", ".join(spec.agents)),
            ("Models", _run_models(view)),
            ("Epochs", spec.epochs),
            ("Limits", ", ".join(f"{k} {v}" for k, v in spec.limits.model_dump().items())),
        ]
    return items


def _run_models(view: RunView) -> str:
    """The models the run's trials called: a run of agents that call none (oracle, null) says
    so, whatever models its request listed for model-calling agents it did not run."""
    called = sorted({t.key.model for t in view.trials} - {NO_MODEL})
    if called:
        return ", ".join(called)
    if not view.trials and view.spec is not None and view.spec.models:
        return ", ".join(view.spec.models)
    return f"{NO_MODEL_TEXT} (no agent of this run calls a model)"


def _filters(view: RunView) -> list[tuple[str, str, list[tuple[str, str]]]]:
    """(key, label, [(value, text)]) of the index's filter selects."""
    trials = view.trials

    def options(values: list[str], labels: dict[str, str]) -> list[tuple[str, str]]:
        return [(v, labels.get(v, v)) for v in values]

    present = {t.status for t in trials}
    status_labels = {str(k): v for k, v in STATUS_LABELS.items()}
    return [
        ("task", "Task", options(sorted({t.key.task_id for t in trials}), {})),
        ("agent", "Agent", options(sorted({t.key.agent for t in trials}), {})),
        (
            "model",
            "Model",
            options(
                sorted({t.key.model for t in trials}),
                {NO_MODEL: f"{NO_MODEL_TEXT} ({NO_MODEL_TIP})"},
            ),
        ),
        (
            "status",
            "Status",
            options([s for s in STATUSES if s in present], status_labels),
        ),
    ]


# What every page of the site calls (templates/*.html.j2); the family partials come from the
# registered families' template folders, looked up when a page is rendered.
_SITE_HELPERS: dict[str, Any] = {
    "fmt": fmt,
    "status_labels": STATUS_LABELS,
    "no_model": NO_MODEL,
    "no_model_text": NO_MODEL_TEXT,
    "no_model_tip": NO_MODEL_TIP,
    "filter_href": _filter_href,
    "score_text": _score_text,
}
INDEX_PAGE = Page("run_index.html.j2", (TEMPLATES,), "run", _SITE_HELPERS, template_folders)
TRIAL_PAGE = Page(
    "trial.html.j2",
    (TEMPLATES,),
    "run",
    {
        **_SITE_HELPERS,
        "not_scored_reasons": NOT_SCORED_REASONS,
        "step_meta": _step_meta,
        "inline_argument_chars": INLINE_ARGUMENT_CHARS,
        "folded_arguments_chars": FOLDED_ARGUMENTS_CHARS,
    },
    template_folders,
)


def index_page(view: RunView) -> str:
    """The run's front page: leaderboard, infra errors, and the filterable trial index."""
    heading = f"Run {view.run_id}"
    prefix = "[MOCK LLM] " if view.mock_llm_used else ""
    facts, filters = _run_facts(view), _filters(view)
    return INDEX_PAGE.render(
        prefix + heading, heading=heading, view=view, run_facts=facts, filters=filters
    )


def trial_page_html(view: TrialView, run_id: str) -> str:
    """A trial's page: why it scored what it did. Links are relative to ``trials/``."""
    row, key = view.row, view.row.key
    heading = f"{key.task_id} · {key.agent} · {key.model} · epoch {key.epoch}"
    prefix = "[MOCK LLM] " if row.used_mock_llm else ""
    back, partial = _filter_href("../", task=key.task_id), detail_template(row.family)
    return TRIAL_PAGE.render(
        prefix + heading,
        heading=heading,
        view=view,
        run_id=run_id,
        back=back,
        detail_template=partial,
    )
