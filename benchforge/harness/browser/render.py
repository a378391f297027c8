"""View models -> HTML pages: the run's index (leaderboard + filterable trial list) and a page
per trial (score, per-node diff, trajectory, sandbox, errors).

Every page is self-contained: styles and the index's small filter script are inline, nothing
is fetched, so a site opens from disk (``file://``) or any static server. Every value that
came from an agent, a model or a sandbox (task ids, replies, tool output, example rows) is
escaped: it may hold anything, ``<script>`` included.

The index's filters live in the URL fragment (``index.html#status=failure&agent=react-de``;
a query string works too), so a filtered view is a link: the leaderboard's cells are such
links, or point straight at the trials they summarize.
"""

from __future__ import annotations

from collections.abc import Iterable
from urllib.parse import urlencode

from benchforge.evaluation.de.breakdown import NodeCheck, NodeDetail, nodes_of
from benchforge.evaluation.leaderboard import formatting as fmt
from benchforge.evaluation.leaderboard.models import Leaderboard
from benchforge.harness.browser.html import badge as _badge
from benchforge.harness.browser.html import facts as _facts
from benchforge.harness.browser.html import h as _h
from benchforge.harness.browser.html import pre as _pre
from benchforge.harness.browser.html import table as _table
from benchforge.harness.browser.judged_html import JUDGED_CSS, judged_section
from benchforge.harness.browser.load import (
    STATUSES,
    Argument,
    MetricView,
    RunView,
    StepView,
    TrialStatus,
    TrialView,
)
from benchforge.harness.matrix import NO_MODEL

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
CHECK_LABELS = {
    "cs": "CS: the model run alone, on its gold parents",
    "cfs": "CFS: the end-to-end build",
}

CSS = """
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; margin: 1.5rem 2rem;
       color: #1f2328; max-width: 1500px; line-height: 1.4; }
a { color: #0b5cad; }
h1 { margin: 0.2rem 0 0.4rem; font-size: 1.6rem; }
h2 { margin-top: 2rem; border-bottom: 1px solid #ddd; padding-bottom: 0.2rem; }
h3 { margin: 1.2rem 0 0.4rem; }
.crumbs { font-size: 0.9rem; color: #555; }
.note { color: #555; font-size: 0.9rem; }
.mock { border: 3px solid #b71c1c; background: #ffebee; color: #b71c1c; padding: 0.7rem 1rem;
        margin: 1rem 0; }
.mock strong { display: block; font-size: 1.15rem; }
table { border-collapse: collapse; font-size: 0.88rem; margin: 0.4rem 0; }
.scroll { max-width: 100%; overflow-x: auto; }
th, td { border: 1px solid #d8dee4; padding: 0.25rem 0.5rem; text-align: left;
         vertical-align: top; }
th { background: #f3f5f7; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
tbody tr:nth-child(even) { background: #fafbfc; }
dl.facts { display: grid; grid-template-columns: max-content auto; gap: 0.15rem 1rem;
           font-size: 0.9rem; margin: 0.5rem 0; }
header dl.facts { grid-template-columns: max-content minmax(0, 1fr) max-content minmax(0, 1fr); }
.verdict { font-size: 1.02rem; margin: 0.6rem 0; padding: 0.45rem 0.7rem; background: #f6f8fa;
           border: 1px solid #e1e4e8; }
dl.facts dt { color: #555; }
dl.facts dd { margin: 0; }
pre { background: #f6f8fa; border: 1px solid #e1e4e8; padding: 0.5rem 0.7rem; margin: 0.3rem 0;
      white-space: pre-wrap; overflow-wrap: anywhere; font-size: 0.82rem; max-height: 28rem;
      overflow-y: auto; }
pre.error, .errorbox { background: #fff1f0; border-color: #f5c2c0; color: #8a1c13; }
.errorbox { border: 1px solid #f5c2c0; padding: 0.6rem 0.8rem; margin: 0.6rem 0; }
.badge { display: inline-block; padding: 0.05rem 0.45rem; border-radius: 0.7rem;
         font-size: 0.78rem; font-weight: 600; border: 1px solid transparent;
         white-space: nowrap; }
.s-success, .c-match { background: #dafbe1; color: #116329; border-color: #aceebb; }
.s-failure, .c-data_mismatch, .c-schema_mismatch { background: #ffebe9; color: #a40e26;
         border-color: #ffcecb; }
.s-infra_error, .s-scoring_error, .c-build_error { background: #fff1e5; color: #953800;
         border-color: #ffd8b5; }
.s-unscored, .s-not_scored, .c-missing, .b-plain { background: #eef1f4; color: #424a53;
         border-color: #d0d7de; }
.b-mock { background: #b71c1c; color: #fff; }
.b-term { background: #ddf4ff; color: #0a3069; border-color: #b6e3ff; }
.b-stop { background: #fff8c5; color: #7d4e00; border-color: #f2e199; }
.filters { display: flex; flex-wrap: wrap; gap: 0.8rem; align-items: center; margin: 0.5rem 0;
           padding: 0.5rem 0.7rem; background: #f6f8fa; border: 1px solid #e1e4e8; }
.filters label { font-size: 0.88rem; }
.filters select { margin-left: 0.3rem; }
tr.trial[hidden] { display: none; }
.epochs a { margin-right: 0.3rem; text-decoration: none; }
td.diff { background: #fff3bf; font-weight: 600; }
th.diff { background: #ffe58f; }
.node { border-left: 4px solid #ffcecb; padding: 0.1rem 0 0.4rem 0.8rem; margin: 0.8rem 0; }
.node.weightless { border-left-color: #d0d7de; }
.check h5 { margin: 0.6rem 0 0.2rem; font-size: 0.92rem; }
.examples { display: flex; flex-wrap: wrap; gap: 1.2rem; }
.examples > div { min-width: 20rem; }
ol.steps { list-style: none; padding: 0; }
li.step { border: 1px solid #d8dee4; border-left: 4px solid #0969da; margin: 0.5rem 0;
          padding: 0.4rem 0.7rem; }
li.step.step-tool { border-left-color: #8250df; }
li.step.failed { border-left-color: #cf222e; }
.stephead { font-size: 0.88rem; display: flex; flex-wrap: wrap; gap: 0.6rem;
            align-items: baseline; }
.stephead .name { font-weight: 600; font-family: ui-monospace, monospace; }
.stephead .meta { color: #57606a; }
.call { margin: 0.3rem 0; }
.arg { margin: 0.2rem 0 0.2rem 1rem; font-size: 0.85rem; }
.arg .argname { color: #57606a; font-family: ui-monospace, monospace; }
.arg pre { margin-top: 0.1rem; }
.call .tool { font-family: ui-monospace, monospace; font-weight: 600; color: #8250df; }
details > summary { cursor: pointer; }
"""

SCRIPT = """
(function () {
  var KEYS = ["task", "agent", "model", "status"];
  var rows = Array.prototype.slice.call(document.querySelectorAll("tr.trial"));
  var count = document.getElementById("shown");
  function wanted() {
    var raw = location.hash.length > 1 ? location.hash.slice(1) : location.search.slice(1);
    var params = new URLSearchParams(raw);
    var want = {};
    KEYS.forEach(function (k) { want[k] = params.get(k) || ""; });
    return want;
  }
  function apply() {
    var want = wanted();
    KEYS.forEach(function (k) {
      var select = document.getElementById("f-" + k);
      if (select) { select.value = want[k]; }
    });
    var shown = 0;
    rows.forEach(function (row) {
      var ok = KEYS.every(function (k) { return !want[k] || row.dataset[k] === want[k]; });
      row.hidden = !ok;
      if (ok) { shown += 1; }
    });
    if (count) { count.textContent = shown + " of " + rows.length + " trials shown"; }
  }
  KEYS.forEach(function (k) {
    var select = document.getElementById("f-" + k);
    if (!select) { return; }
    select.addEventListener("change", function () {
      var params = new URLSearchParams();
      KEYS.forEach(function (key) {
        var s = document.getElementById("f-" + key);
        if (s && s.value) { params.set(key, s.value); }
      });
      history.replaceState(null, "", "#" + params.toString());
      apply();
    });
  });
  function toTrials() {
    var trials = document.getElementById("trials");
    if (trials) { trials.scrollIntoView(); }
  }
  window.addEventListener("hashchange", function () { apply(); toTrials(); });
  apply();
  var want = wanted();
  if (KEYS.some(function (k) { return want[k]; })) { toTrials(); }
})();
"""


def status_badge(status: TrialStatus) -> str:
    return _badge(STATUS_LABELS[status], f"s-{status} status")


def termination_badge(termination: str) -> str:
    cls = "b-term" if termination == "finished" else "b-stop"
    return _badge(termination, f"{cls} termination", "why the agent stopped")


MOCK_TIP = "this trial's model calls were answered by the Benchforge mock LLM server"


def mock_badge() -> str:
    return _badge("mock LLM", "b-mock mock-label", MOCK_TIP)


def _mock_banner() -> str:
    return (
        f'<div class="mock" role="alert"><strong>⚠ {_h(fmt.MOCK_HEADLINE)}</strong>'
        f"{_h(fmt.MOCK_TEXT)} Trials that called it carry a “mock LLM” label.</div>"
    )


def _page(title: str, body: Iterable[str], script: str | None = None) -> str:
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8"/>',
        '<meta name="viewport" content="width=device-width, initial-scale=1"/>',
        f"<title>{_h(title)}</title><style>{CSS}{JUDGED_CSS}</style></head><body>",
        *body,
    ]
    if script:
        parts.append(f"<script>{script}</script>")
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"


def _filter_href(prefix: str = "", **filters: str) -> str:
    return f"{prefix}index.html#" + urlencode({k: v for k, v in filters.items() if v})


def _score_text(metrics: dict[str, float], primary: str | None) -> str:
    names = [m for m in metrics if not m.endswith("_visible")]
    if primary in names:
        names.insert(0, names.pop(names.index(primary)))
    return " · ".join(f"{m.upper()} {fmt.score(metrics[m])}" for m in names) or fmt.MISSING


NO_MODEL_TEXT = "none"
NO_MODEL_TIP = "not an LLM agent: it calls no model"


def _model(model: str) -> str:
    """A model cell: an agent that calls no model (oracle, null) says so, not ``-``."""
    if model == NO_MODEL:
        return f'<span class="no-model" title="{_h(NO_MODEL_TIP)}">{NO_MODEL_TEXT}</span>'
    return _h(model)


def _scroll(html: str) -> str:
    """A wide table scrolls sideways inside the page instead of running off its edge."""
    return f'<div class="scroll">{html}</div>'


# --- the index -----------------------------------------------------------------------------


def _leaderboard(view: RunView, lb: Leaderboard) -> list[str]:
    primary = fmt.primary_name(lb)
    metrics = fmt.extra_metrics(lb)
    headers = [
        "#",
        "Agent",
        "Model",
        f"{_h(primary)} (mean)",
        f"{round(100 * lb.ci_level)}% CI",
        "Success",
        *(_h(m) for m in metrics),
        "Tasks scored",
        "Trials scored",
        "Infra errors",
        "Tokens",
        "Cost (USD)",
        "Wall s (mean)",
        "Terminations",
    ]
    rows = []
    for r in lb.rows:
        trials = _filter_href(agent=r.agent, model=r.model)
        infra = _filter_href(agent=r.agent, model=r.model, status="infra_error")
        rows.append(
            [
                _h(r.rank if r.rank is not None else fmt.MISSING),
                f'<a href="{_h(trials)}">{_h(r.agent)}</a>',
                _model(r.model),
                _h(fmt.score(r.primary_mean)),
                _h(fmt.ci(r.primary_ci)),
                _h(fmt.rate(r.success_rate)),
                *(_h(fmt.score(r.metrics.get(m))) for m in metrics),
                _h(f"{r.tasks_scored}/{r.tasks_attempted}"),
                f'<a href="{_h(trials)}">{r.trials_scored}/{r.trials}</a>',
                f'<a href="{_h(infra)}">{r.infra_errors}</a>' if r.infra_errors else "0",
                _h(fmt.count(r.total_tokens)),
                _h(fmt.cost(r)),
                _h(fmt.seconds(r.mean_agent_wall_s)),
                _h(fmt.terminations(r.terminations)),
            ]
        )
    numeric = {0, 3, 4, 5, *range(6, 6 + len(metrics) + 6)}
    out = [
        '<section id="leaderboard"><h2>Leaderboard</h2>',
        f'<p class="note">{_h(fmt.summary(lb))}</p>',
        _scroll(_table(headers, rows, numeric, cls="leaderboard")),
    ]
    warning = fmt.coverage_warning(lb)
    if warning:
        out.append(f'<p class="note"><strong>Note.</strong> {_h(warning)}</p>')
    judges = fmt.judges_line(lb)
    if judges:
        out.append(f'<p class="note judges">{_h(judges)}</p>')
    unproven = fmt.calibration_warning(lb)
    if unproven:
        out.append(f'<p class="note calibration"><strong>Note.</strong> {_h(unproven)}</p>')
    task_rows = []
    for t in lb.tasks:
        for c in t.cells:
            links = " ".join(
                f'<a class="s-{link.status} badge" href="{_h(link.page)}" '
                f'title="{_h(STATUS_LABELS[link.status])}">epoch {link.epoch}</a>'
                for link in view.cell(t.task_id, c.agent, c.model)
            )
            task_rows.append(
                [
                    f'<a href="{_h(_filter_href(task=t.task_id))}">{_h(t.task_id)}</a>',
                    _h(t.family),
                    _h(c.agent),
                    _model(c.model),
                    _h(fmt.score(c.primary_mean)),
                    *(_h(fmt.score(c.metrics.get(m))) for m in metrics),
                    _h(f"{c.n_scored}/{c.n_epochs}"),
                    f'<span class="epochs">{links}</span>',
                ]
            )
    out += [
        "<h3>Per task</h3>",
        '<p class="note">Means over the scored epochs; each epoch links to its trial.</p>',
        _scroll(
            _table(
                [
                    "Task",
                    "Family",
                    "Agent",
                    "Model",
                    f"{_h(primary)} (mean)",
                    *(_h(m) for m in metrics),
                    "Scored / epochs",
                    "Trials",
                ],
                task_rows,
                set(range(4, 5 + len(metrics) + 1)),
                cls="per-task",
            )
        ),
        "</section>",
    ]
    return out


def _infra(view: RunView) -> list[str]:
    rows = [t for t in view.trials if t.status == "infra_error"]
    out = ['<section id="infra-errors"><h2>Infra errors</h2>']
    if not rows:
        out.append('<p class="note">None: every trial ran.</p></section>')
        return out
    out.append(
        '<p class="note">Trials that could not be run fairly: excluded from every score, run '
        "again by the next <code>benchforge run</code> of this run id.</p>"
    )
    out.append(
        _scroll(
            _table(
                ["Trial", "Agent", "Model", "Task", "Epoch", "Error"],
                (
                    [
                        f'<a href="{_h(t.page)}">{_h(t.key.slug)}</a>',
                        _h(t.key.agent),
                        _model(t.key.model),
                        _h(t.key.task_id),
                        _h(t.key.epoch),
                        f'<span class="infra-error">{_h(t.error or "")}</span>',
                    ]
                    for t in rows
                ),
                cls="infra",
            )
        )
    )
    out.append("</section>")
    return out


def _select(
    key: str, label: str, values: Iterable[str], labels: dict[str, str] | None = None
) -> str:
    options = ['<option value="">all</option>'] + [
        f'<option value="{_h(v)}">{_h((labels or {}).get(v, v))}</option>' for v in values
    ]
    select = f'<select id="f-{key}" data-key="{key}">{"".join(options)}</select>'
    return f"<label>{_h(label)}{select}</label>"


def _trial_index(view: RunView) -> list[str]:
    trials = view.trials
    present = {t.status for t in trials}
    labels = {str(k): v for k, v in STATUS_LABELS.items()}
    filters = [
        _select("task", "Task", sorted({t.key.task_id for t in trials})),
        _select("agent", "Agent", sorted({t.key.agent for t in trials})),
        _select(
            "model",
            "Model",
            sorted({t.key.model for t in trials}),
            {NO_MODEL: f"{NO_MODEL_TEXT} ({NO_MODEL_TIP})"},
        ),
        _select("status", "Status", [s for s in STATUSES if s in present], labels),
        f'<span id="shown" class="note">{len(trials)} trials</span>',
    ]
    rows, attrs = [], []
    for t in trials:
        attrs.append(
            f' class="trial" data-task="{_h(t.key.task_id)}" data-agent="{_h(t.key.agent)}" '
            f'data-model="{_h(t.key.model)}" data-status="{t.status}"'
        )
        rows.append(
            [
                f'<a href="{_h(t.page)}">{_h(t.key.task_id)}</a>',
                _h(t.key.agent),
                _model(t.key.model) + (" " + mock_badge() if t.used_mock_llm else ""),
                _h(t.key.epoch),
                status_badge(t.status),
                termination_badge(t.termination),
                _h(_score_text(t.metrics, t.primary)),
                _h(f"{t.wall_s:.1f}"),
                _h(fmt.count(t.tokens)),
                _h(t.error or ""),
            ]
        )
    return [
        '<section id="trials"><h2>Trials</h2>',
        f'<form class="filters" onsubmit="return false">{"".join(filters)}</form>',
        _scroll(
            _table(
                [
                    "Task",
                    "Agent",
                    "Model",
                    "Epoch",
                    "Status",
                    "Termination",
                    "Score",
                    "Wall s",
                    "Tokens",
                    "Error",
                ],
                rows,
                {3, 7, 8},
                cls="trials",
                row_attrs=attrs,
            )
        ),
        "</section>",
    ]


def _run_facts(view: RunView) -> str:
    counts = ", ".join(f"{STATUS_LABELS[s]} {n}" for s, n in view.counts().items())
    items = [("Stored at", _h(view.uri)), ("Trials", _h(f"{len(view.trials)} ({counts})"))]
    spec = view.spec
    if spec is not None:
        items += [
            ("Created", _h(spec.created_at.isoformat(timespec="seconds"))),
            ("Suites", _h(", ".join(spec.suites))),
            ("Agents", _h(", ".join(spec.agents))),
            ("Models", _run_models(view)),
            ("Epochs", _h(spec.epochs)),
            ("Limits", _h(", ".join(f"{k} {v}" for k, v in spec.limits.model_dump().items()))),
        ]
    return _facts(items)


def _run_models(view: RunView) -> str:
    """The models the run's trials called: a run of agents that call none (oracle, null) says
    so, whatever models its request listed for model-calling agents it did not run."""
    called = sorted({t.key.model for t in view.trials} - {NO_MODEL})
    if called:
        return _h(", ".join(called))
    if not view.trials and view.spec is not None and view.spec.models:
        return _h(", ".join(view.spec.models))
    return f"{NO_MODEL_TEXT} (no agent of this run calls a model)"


def index_page(view: RunView) -> str:
    """The run's front page: leaderboard, infra errors, and the filterable trial index."""
    title = f"Run {view.run_id}"
    body = [
        f'<header><h1>{_h(title)}</h1><p class="crumbs">Benchforge run browser · '
        '<a href="#leaderboard">leaderboard</a> · <a href="#infra-errors">infra errors</a> · '
        '<a href="#trials">trials</a></p>'
    ]
    if view.mock_llm_used:
        body.append(_mock_banner())
    body += [_run_facts(view), "</header>"]
    if view.leaderboard is not None:
        body += _leaderboard(view, view.leaderboard)
    else:
        body.append(
            '<section id="leaderboard"><h2>Leaderboard</h2>'
            f'<p class="note">{_h(view.leaderboard_note or "")}</p></section>'
        )
    body += _infra(view)
    body += _trial_index(view)
    prefix = "[MOCK LLM] " if view.mock_llm_used else ""
    return _page(prefix + title, body, SCRIPT)


# --- a trial -------------------------------------------------------------------------------


def _metrics(view: TrialView) -> str:
    score = view.score
    if score is None:
        return '<p class="note">Not scored yet: <code>benchforge score-run</code> scores it.</p>'
    if score.status == "infra_error":
        return '<p class="note">Not scored: an infrastructure error is not a result.</p>'
    if score.status == "unscored":
        return f'<p class="note">Unscored: {_h(score.detail or "")}</p>'
    if score.status == "scoring_error":
        return (
            '<p class="note">Not scored: scoring raised (not a 0; <code>benchforge '
            f"score-run</code> scores it again): {_h(score.detail or '')}</p>"
        )
    heldout = score.scored_on == "heldout"
    headers = ["Metric", "held-out seed" if heldout else "score"]
    if heldout:
        headers.append("visible seed")

    def row(m: MetricView) -> list[str]:
        name = _h(m.name.upper()) + (" (primary)" if m.name == score.primary else "")
        cells = [name, _h(fmt.score(m.value))]
        return [*cells, _h(fmt.score(m.visible))] if heldout else cells

    table = _table(headers, (row(m) for m in view.metrics), {1, 2}, cls="metrics")
    facts = [
        ("Success", _h("yes (full marks)" if score.success else "no")),
        ("Scored on", _h(score.scored_on or fmt.MISSING)),
        ("Scoring sandbox", _h(score.scoring_sandbox or fmt.MISSING)),
    ]
    if score.scored_at is not None:
        facts.append(("Scored at", _h(score.scored_at.isoformat(timespec="seconds"))))
    out = [table, _facts(facts)]
    if score.detail:
        out.append("<h4>Scoring notes (the candidate's build errors)</h4>" + _pre(score.detail))
    return "\n".join(out)


def _examples(title: str, rows: list[dict[str, str]], differing: set[str], cls: str) -> str:
    if not rows:
        return ""
    columns = list(dict.fromkeys(k for row in rows for k in row))
    head = "".join(
        f'<th class="diff">{_h(c)}</th>' if c in differing else f"<th>{_h(c)}</th>" for c in columns
    )
    body = "".join(
        "<tr>"
        + "".join(
            f'<td class="diff">{_h(row.get(c, ""))}</td>'
            if c in differing
            else f"<td>{_h(row.get(c, ''))}</td>"
            for c in columns
        )
        + "</tr>"
        for row in rows
    )
    return (
        f'<div><h5>{_h(title)}</h5><table class="rows {cls}"><thead><tr>{head}</tr></thead>'
        f"<tbody>{body}</tbody></table></div>"
    )


def _check(label: str, check: NodeCheck) -> str:
    out = [f'<div class="check"><h5>{_h(label)} ', _badge(check.status, f"c-{check.status}")]
    out.append("</h5>")
    # A schema mismatch's reason repeats the missing / extra columns and type mismatches
    # listed below it: shown only when nothing below says it.
    listed = check.missing_columns or check.extra_columns or check.type_mismatches
    if check.reason and not (check.status == "schema_mismatch" and listed):
        out.append(f'<p class="reason">{_h(check.reason)}</p>')
    counts = [
        (name, value)
        for name, value in (
            ("gold rows", check.gold_rows),
            ("candidate rows", check.candidate_rows),
            ("unpaired rows", check.differing_rows),
        )
        if value is not None
    ]
    if counts:
        out.append('<p class="note">' + " · ".join(f"{n} {v:,}" for n, v in counts) + "</p>")
    if check.missing_columns:
        out.append(f"<p>Missing columns: <code>{_h(', '.join(check.missing_columns))}</code></p>")
    if check.extra_columns:
        out.append(f"<p>Extra columns: <code>{_h(', '.join(check.extra_columns))}</code></p>")
    if check.type_mismatches:
        out.append(
            _table(
                ["Column", "gold type", "candidate type"],
                ([_h(c), _h(g), _h(k)] for c, (g, k) in check.type_mismatches.items()),
                cls="types",
            )
        )
    if check.column_mismatches:
        how = (
            f"rows paired on the key <code>{_h(check.mismatch_key)}</code>"
            if check.mismatch_key
            else "rows that differ in this one column only"
        )
        out.append(f'<p class="note">Differing columns ({how}):</p>')
        out.append(
            _table(
                ["Column", "Rows that differ"],
                (
                    [f'<code class="column">{_h(c)}</code>', _h(f"{n:,}")]
                    for c, n in check.column_mismatches.items()
                ),
                {1},
                cls="diffcols",
            )
        )
    differing = set(check.column_mismatches)
    examples = [
        _examples("Gold rows missing from the candidate", check.examples_gold, differing, "gold"),
        _examples("Candidate rows not in the gold", check.examples_candidate, differing, "cand"),
    ]
    if any(examples):
        out.append('<div class="examples">' + "".join(examples) + "</div>")
        if check.omitted_columns:
            out.append(f'<p class="note">{check.omitted_columns} more columns not shown.</p>')
    if check.examples_withheld:
        out.append(
            '<p class="note withheld">Example rows withheld: this score is on the held-out '
            "dataset, whose rows stay held out (rescore with "
            "<code>--show-heldout-examples</code> to keep them).</p>"
        )
    out.append("</div>")
    return "".join(out)


def _node(node: NodeDetail) -> str:
    weightless = node.weight <= 0
    cls = "node weightless" if weightless else "node"
    head = f'<h4><code>{_h(node.name)}</code> <span class="note">{_h(node.layer)}'
    head += " · weight 0: not scored" if weightless else f" · weight {node.weight:g}"
    out = [f'<div class="{cls}" id="node-{_h(node.name)}">{head}</span></h4>']
    if node.cs == node.cfs:
        if not node.cs.matched:
            out.append(_check("CS and CFS (the same comparison)", node.cs))
    else:
        for name, check in (("cs", node.cs), ("cfs", node.cfs)):
            if not check.matched:
                out.append(_check(CHECK_LABELS[name], check))
    if node.cfs_blocked_by:
        out.append(
            "<p>CFS is 0 here because these gold ancestors failed: "
            f"<code>{_h(', '.join(node.cfs_blocked_by))}</code></p>"
        )
    out.append("</div>")
    return "".join(out)


def _nodes(nodes: list[NodeDetail]) -> str:
    if not nodes:
        return '<p class="note">No per-node detail stored (scored before it was kept).</p>'

    def verdict(check: NodeCheck, counted: bool) -> str:
        badge = _badge(check.status, f"c-{check.status}")
        return badge if counted or not check.matched else badge + " (blocked)"

    summary = _table(
        ["Node", "Layer", "Weight", "CS", "CFS"],
        (
            [
                f'<a href="#node-{_h(n.name)}">{_h(n.name)}</a>'
                if not (n.cs_matched and n.cfs_matched)
                else _h(n.name),
                _h(n.layer),
                _h(f"{n.weight:g}"),
                verdict(n.cs, n.cs_matched),
                verdict(n.cfs, n.cfs_matched),
            ]
            for n in nodes
        ),
        {2},
        cls="nodes",
    )
    failing = [n for n in nodes if not (n.cs_matched and n.cfs_matched)]
    details = "".join(_node(n) for n in failing) or '<p class="note">Every node matched.</p>'
    return summary + details


def _step(step: StepView) -> str:
    cls = f"step step-{step.kind}" + ("" if step.ok else " failed")
    cls += " interrupted" if step.interrupted else ""
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
    head = [
        f'<span class="badge b-plain">#{step.index} {_h(step.kind)}</span>',
        f'<span class="name">{_h(step.name)}</span>',
        f'<span class="meta">{_h(" · ".join(meta))}</span>',
    ]
    if step.used_mock:
        head.append(mock_badge())
    if step.interrupted:
        head.append(_badge("interrupted", "s-infra_error"))
    elif not step.ok:
        head.append(_badge("failed", "s-failure"))
    body = [f'<div class="stephead">{"".join(head)}</div>']
    if step.kind == "model":
        if step.text:
            body.append(_pre(step.text, "reply"))
        for call in step.tool_calls:
            body.append(
                f'<div class="call">→ calls <span class="tool">{_h(call.name)}</span>'
                f"{_arguments(call.arguments)}</div>"
            )
    else:
        if step.arguments:
            shown = _arguments(step.arguments)
            if sum(len(a.value) for a in step.arguments) > FOLDED_ARGUMENTS_CHARS:
                shown = f"<details><summary>arguments</summary>{shown}</details>"
            body.append(shown)
        if step.text:
            body.append("<details open><summary>output</summary>" + _pre(step.text, "output"))
            body.append("</details>")
    if step.error:
        body.append(_pre(step.error, "error"))
    return f'<li class="{cls}" id="step-{step.index}">{"".join(body)}</li>'


def _arguments(arguments: list[Argument]) -> str:
    """Each argument by name: short one-liners inline, text (a file's content) as a block."""
    out = []
    for a in arguments:
        name = f'<span class="argname">{_h(a.name)}</span>' if a.name else ""
        if "\n" not in a.value and len(a.value) <= INLINE_ARGUMENT_CHARS:
            out.append(f'<div class="arg">{name} <code>{_h(a.value)}</code></div>')
        else:
            out.append(f'<div class="arg">{name}{_pre(a.value, "args")}</div>')
    return "".join(out)


def _trajectory(view: TrialView) -> str:
    if not view.steps:
        return '<p class="note">No steps recorded (the agent made no model or tool call).</p>'
    models = sum(s.kind == "model" for s in view.steps)
    tools = len(view.steps) - models
    head = (
        f'<p class="note">{models} model calls, {tools} tool calls; times from the trial start.</p>'
    )
    return head + '<ol class="steps">' + "".join(_step(s) for s in view.steps) + "</ol>"


def _isolation(view: TrialView) -> str:
    iso = view.result.isolation
    if iso is None:
        return '<p class="note">No sandbox recorded.</p>'
    items = [
        ("Backend", _h(iso.backend)),
        ("Network", _h(iso.network)),
        ("Filesystem", _h(iso.filesystem)),
        ("Process tree", _h(iso.process_tree)),
        ("Memory", _h(iso.memory)),
        ("Processes", _h(iso.processes)),
    ]
    items += [("Note", _h(note)) for note in iso.notes]
    return f'<div class="isolation">{_facts(items)}</div>'


def _outputs(view: TrialView) -> str:
    result = view.result
    if not (result.output_files or result.deleted_files):
        return '<p class="note">The agent changed no file.</p>'
    out = []
    if result.output_files:
        out.append("<p>Changed or created:</p><ul>")
        for path in result.output_files:
            content = result.outputs.get(path)
            if content is None:
                out.append(f"<li><code>{_h(path)}</code> (in the submission archive)</li>")
            else:
                out.append(
                    f"<li><details><summary><code>{_h(path)}</code></summary>"
                    f"{_pre(content)}</details></li>"
                )
        out.append("</ul>")
    if result.deleted_files:
        out.append(f"<p>Deleted: <code>{_h(', '.join(result.deleted_files))}</code></p>")
    return "".join(out)


def _error(view: TrialView) -> str:
    result = view.result
    if not result.error:
        return ""
    if result.status == "infra_error":
        title = "Infrastructure error: excluded from every score, run again on a rerun"
    elif result.termination == "wall_clock":
        title = "Stopped by the trial's wall clock: scored on what it left"
    else:
        title = f"Why it stopped ({result.termination})"
    return (
        f'<div class="errorbox" id="error"><strong>{_h(title)}</strong>'
        f"{_pre(result.error, 'error trial-error')}</div>"
    )


def _trial_facts(view: TrialView) -> str:
    result, row, key = view.result, view.row, view.row.key
    llm = result.llm
    cost = fmt.MISSING if llm.unpriced_calls else f"{llm.cost_usd:.4f}"
    items = [
        ("Trial", f"<code>{_h(key.slug)}</code>"),
        ("Task", _h(f"{key.suite}/{key.task_id} version {key.task_version} ({row.family})")),
        ("Agent", _h(f"{key.agent} (config {key.agent_config_hash})")),
        ("Model", _h(key.model)),
        ("Epoch", _h(key.epoch)),
        ("Started", _h(result.started_at.isoformat(timespec="seconds"))),
        ("Wall clock", _h(f"{result.wall_s:.2f} s")),
        ("Attempt", _h(result.attempt)),
        (
            "LLM",
            _h(
                f"{llm.calls} calls ({llm.errors} failed, {llm.attempts} attempts), "
                f"{llm.prompt_tokens:,} prompt + {llm.completion_tokens:,} completion tokens, "
                f"cost {cost} USD"
            ),
        ),
    ]
    if result.answer:
        items.append(("Answer", _pre(result.answer)))
    return _facts(items)


def _verdict(view: TrialView) -> str:
    """One line up front: what the trial scored and, for a failure, the nodes that cost it."""
    row, score = view.row, view.score
    if score is None or score.status != "scored":
        reasons = {
            "infra_error": "Not scored: an infrastructure error is not a result.",
            "unscored": "Not scored: its task has no scorer yet.",
            "scoring_error": "Not scored: scoring it raised (a scorer fault, not a 0).",
            "not_scored": "Not scored yet.",
        }
        return f'<p class="verdict">{_h(reasons.get(row.status, ""))}</p>'
    parts = [_h(_score_text(score.metrics, score.primary))]
    failing = [n for n in nodes_of(score) if n.weight > 0 and not (n.cs_matched and n.cfs_matched)]
    if failing:
        names = []
        for n in failing:
            check = n.cs if not n.cs_matched else n.cfs
            columns = ", ".join(check.column_mismatches) or ", ".join(check.missing_columns)
            what = check.status + (f" in {columns}" if columns else "")
            if n.cs_matched and n.cfs_blocked_by:
                what = "blocked by " + ", ".join(n.cfs_blocked_by)
            names.append(f'<a href="#node-{_h(n.name)}"><code>{_h(n.name)}</code></a> ({_h(what)})')
        weighted = sum(n.weight > 0 for n in nodes_of(score))
        parts.append(f"{len(failing)} of {weighted} scored nodes failed: " + "; ".join(names))
    elif nodes_of(score):
        parts.append("every scored node matched")
    if view.judged is not None and view.judged.items:
        items = [r.item for r in view.judged.items]
        earned = sum(i.earned is not None and i.earned > 0 for i in items)
        flagged = sum(bool(i.flags) for i in items)
        text = f"{earned} of {len(items)} rubric items earned points, {flagged} flagged"
        if view.judged.record.injection_flags:
            text += f", {len(view.judged.record.injection_flags)} injection flags"
        parts.append(f'<a href="#judged">{_h(text)}</a>')
    return f'<p class="verdict">{" — ".join(parts)}</p>'


def trial_page_html(view: TrialView, run_id: str) -> str:
    """A trial's page: why it scored what it did. Links are relative to ``trials/``."""
    row, score, key = view.row, view.score, view.row.key
    title = f"{key.task_id} · {key.agent} · {key.model} · epoch {key.epoch}"
    badges = [status_badge(row.status), termination_badge(row.termination)]
    if row.used_mock_llm:
        badges.append(mock_badge())
    back = _filter_href("../", task=key.task_id)
    body = [
        f'<header><p class="crumbs"><a href="../index.html">run {_h(run_id)}</a> · '
        f'<a href="{_h(back)}">trials of {_h(key.task_id)}</a></p>',
        f"<h1>{_h(title)}</h1>",
        f'<p class="badges">{" ".join(badges)}</p>',
        _verdict(view),
        _trial_facts(view),
        "</header>",
        _error(view),
        f'<section id="score"><h2>Score</h2>{_metrics(view)}</section>',
    ]
    if view.judged is not None:
        body.append(judged_section(view.judged))
    if score is not None and score.status == "scored" and (nodes_of(score) or view.judged is None):
        heldout = score.scored_on == "heldout"
        label = " (held-out seed)" if heldout else ""
        body.append(f'<section id="nodes"><h2>Per-node diff{label}</h2>{_nodes(nodes_of(score))}')
        if nodes_of(score.visible.breakdown if score.visible else None):
            body.append(
                "<details><summary>The same on the visible seed</summary>"
                f"{_nodes(nodes_of(score.visible.breakdown if score.visible else None))}</details>"
            )
        body.append("</section>")
    body += [
        f'<section id="trajectory"><h2>Trajectory</h2>{_trajectory(view)}</section>',
        f'<section id="outputs"><h2>Files</h2>{_outputs(view)}</section>',
        f'<section id="sandbox"><h2>Sandbox</h2>{_isolation(view)}</section>',
    ]
    prefix = "[MOCK LLM] " if row.used_mock_llm else ""
    return _page(prefix + title, body)
