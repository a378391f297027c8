"""The catalogue page: one self-contained HTML file (inline CSS, a few lines of inline JS for
the filter box and sorting, no external asset), every authored or stored text escaped.

One row per task; one column per agent that has a stored result on any task, holding the
latest run's score(s), pass count and date; a task an agent never ran says "not run".
"""

from __future__ import annotations

import html
from collections import Counter
from collections.abc import Iterable
from datetime import UTC, datetime

from benchforge.harness.catalogue_page.difficulty import RULE as DIFFICULTY_RULE
from benchforge.harness.catalogue_page.difficulty import TAG_PREFIX
from benchforge.harness.catalogue_page.models import AgentResult, CatalogueEntry

NOT_RUN = "not run"
NO_STORE = "no run store read"

NODES_RULE = (
    "de_impl: every model of the gold repository (model files under the project's "
    "model-paths); de_evol: the models gold v2 adds or whose SQL it changes (overlay files "
    "compared with the repository, as the scorer compares the two builds); models given node "
    "weight 0 are left out. de_arch and da_open are judged: their rubric items are counted. "
    "Counted from the files, without building the gold."
)
RESULTS_RULE = (
    "Per task and agent (agent · model): the latest scored run that holds a trial of it "
    "(by the run's creation time). The big number is the primary metric, a mean over the "
    "run's scored trials; pass = trials with full marks / scored trials. Infra errors and "
    "unscored trials are counted apart, never as 0. 'mock' marks scores made with the scripted "
    "mock LLM; 'scored vN' a run of another task version than the catalogue's."
)

CSS = """
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; margin: 1.4rem 1.8rem;
       color: #1f2328; line-height: 1.35; }
h1 { margin: 0 0 0.3rem; font-size: 1.5rem; }
h2 { margin: 1.8rem 0 0.4rem; font-size: 1.1rem; border-bottom: 1px solid #ddd; }
code, .mono { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace;
              font-size: 0.8rem; }
.note { color: #57606a; font-size: 0.88rem; margin: 0.2rem 0; }
.bar { display: flex; gap: 1rem; align-items: center; margin: 0.8rem 0 0.5rem; }
#filter { font-size: 0.95rem; padding: 0.35rem 0.6rem; width: 26rem; border: 1px solid #afb8c1;
          border-radius: 6px; }
.wrap { overflow-x: auto; }
table { border-collapse: collapse; font-size: 0.86rem; }
th, td { border-bottom: 1px solid #d8dee4; padding: 0.4rem 0.6rem; text-align: left;
         vertical-align: top; }
th { background: #f3f5f7; position: sticky; top: 0; cursor: pointer; white-space: nowrap;
     user-select: none; border-bottom: 2px solid #afb8c1; }
th::after { content: " \\2195"; color: #8c959f; font-size: 0.75rem; }
th[data-dir="asc"]::after { content: " \\25B2"; color: #1f2328; }
th[data-dir="desc"]::after { content: " \\25BC"; color: #1f2328; }
tbody tr:nth-child(even) { background: #fafbfc; }
tbody tr:hover { background: #f0f6ff; }
td.task { min-width: 16rem; max-width: 24rem; }
td.task .title { font-weight: 600; }
td.task .id { color: #57606a; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
.tag { display: inline-block; background: #eef1f4; color: #424a53; border-radius: 0.6rem;
       padding: 0 0.4rem; margin: 0.15rem 0.15rem 0 0; font-size: 0.72rem; }
.badge { display: inline-block; padding: 0.05rem 0.45rem; border-radius: 0.7rem;
         font-size: 0.76rem; font-weight: 600; white-space: nowrap; }
.f-de_impl { background: #ddf4ff; color: #0a3069; }
.f-de_evol { background: #fbefff; color: #6e40c9; }
.f-de_arch { background: #fff8c5; color: #7d4e00; }
.f-da_open { background: #dafbe1; color: #116329; }
.f-other { background: #eef1f4; color: #424a53; }
.d-easy { color: #116329; } .d-medium { color: #9a6700; } .d-hard { color: #a40e26; }
.d-unrated { color: #8c959f; }
.derived { color: #8c959f; font-weight: 400; }
td.res { min-width: 8.5rem; white-space: nowrap; }
td.res .score { font-size: 1.05rem; font-weight: 600; font-variant-numeric: tabular-nums; }
td.res .metric { font-size: 0.72rem; color: #57606a; font-weight: 400; }
td.res .sub { font-size: 0.76rem; color: #424a53; font-variant-numeric: tabular-nums; }
td.res .when { font-size: 0.72rem; color: #8c959f; }
td.res.pass .score { color: #116329; }
.muted { color: #8c959f; font-style: italic; }
.warn { background: #fff1e5; color: #953800; }
.mock { background: #ffebe9; color: #a40e26; }
details summary { cursor: pointer; }
details .names { display: block; max-width: 22rem; white-space: normal; font-size: 0.75rem;
                 color: #57606a; }
dl.rules dt { font-weight: 600; margin-top: 0.5rem; }
dl.rules dd { margin: 0.1rem 0 0 0; color: #424a53; font-size: 0.88rem; max-width: 70rem; }
"""

# Filters rows on their text (the filter starts from the URL's #fragment, so a filtered view
# can be linked); sorts by a column's data-v (numbers numerically, else text). It marks the
# body data-ready last, so a test can tell it ran without error.
SCRIPT = """
const filter = document.getElementById('filter');
const rows = Array.from(document.querySelectorAll('#tasks tbody tr'));
const shown = document.getElementById('shown');
function applyFilter() {
  const q = filter.value.trim().toLowerCase();
  let n = 0;
  for (const row of rows) {
    const hit = !q || row.textContent.toLowerCase().includes(q);
    row.hidden = !hit;
    n += hit ? 1 : 0;
  }
  shown.textContent = n;
}
filter.addEventListener('input', () => {
  applyFilter();
  history.replaceState(null, '', '#' + encodeURIComponent(filter.value.trim()));
});
if (location.hash.length > 1) {
  filter.value = decodeURIComponent(location.hash.slice(1));
  applyFilter();
}
document.querySelectorAll('#tasks th').forEach((th, i) => th.addEventListener('click', () => {
  const asc = th.dataset.dir !== 'asc';
  document.querySelectorAll('#tasks th').forEach(h => delete h.dataset.dir);
  th.dataset.dir = asc ? 'asc' : 'desc';
  const body = document.querySelector('#tasks tbody');
  const value = r => r.cells[i].dataset.v || '';
  const sorted = Array.from(body.rows).sort((a, b) => {
    const x = value(a), y = value(b), nx = parseFloat(x), ny = parseFloat(y);
    const c = !isNaN(nx) && !isNaN(ny) ? nx - ny : x.localeCompare(y);
    return asc ? c : -c;
  });
  sorted.forEach(r => body.appendChild(r));
}));
document.body.dataset.ready = '1';
"""

_FAMILIES = ("de_impl", "de_evol", "de_arch", "da_open")
_LEVEL_ORDER = {"easy": 1, "medium": 2, "hard": 3, "unrated": 0}


def _h(text: object) -> str:
    return html.escape(str(text), quote=True)


def _when(moment: datetime) -> str:
    aware = moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)
    return aware.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")


def _num(value: float) -> str:
    return f"{value:.1f}"


def _td(content: str, sort: object, cls: str = "", title: str = "") -> str:
    attrs = f' class="{cls}"' if cls else ""
    attrs += f' title="{_h(title)}"' if title else ""
    return f'<td data-v="{_h(sort)}"{attrs}>{content}</td>'


def _task_cell(entry: CatalogueEntry) -> str:
    # a difficulty tag is shown in its own column
    shown = [t for t in entry.tags if not t.startswith(TAG_PREFIX)]
    tags = "".join(f'<span class="tag">{_h(t)}</span>' for t in shown)
    content = (
        f'<div class="title">{_h(entry.title)}</div>'
        f'<div class="id mono">{_h(entry.task_id)}@{_h(entry.version)}</div>'
        + (f"<div>{tags}</div>" if tags else "")
    )
    return _td(content, entry.key, "task", title=entry.folder)


def _family_cell(entry: CatalogueEntry) -> str:
    cls = entry.family if entry.family in _FAMILIES else "other"
    return _td(f'<span class="badge f-{cls}">{_h(entry.family)}</span>', entry.family)


def _dataset_cell(entry: CatalogueEntry) -> str:
    data = entry.dataset
    if data.location:
        content = f'<span class="mono">{_h(data.location)}</span>'
        if data.domain:
            content = f"{_h(data.domain)}<br>{content}"
    else:
        content = _h(data.label)
    return _td(content, data.label)


def _difficulty_cell(entry: CatalogueEntry) -> str:
    mark = '<span class="derived" title="derived from size">*</span>'
    content = f'<span class="d-{entry.difficulty}">{_h(entry.difficulty)}</span>'
    if entry.difficulty_source == "derived":
        content += mark
    return _td(content, _LEVEL_ORDER[entry.difficulty], title=entry.difficulty_source)


def _nodes_cell(entry: CatalogueEntry) -> str:
    if entry.nodes_scored is None:
        return _td('<span class="muted">unknown family</span>', -1)
    summary = f"{entry.nodes_scored} {_h(entry.scored_unit or '')}"
    if not entry.scored_names:
        return _td(summary, entry.nodes_scored, "num")
    names = ", ".join(_h(n) for n in entry.scored_names)
    content = f'<details><summary>{summary}</summary><span class="names">{names}</span></details>'
    return _td(content, entry.nodes_scored, "num")


def _result_cell(entry: CatalogueEntry, result: AgentResult | None, runs_read: bool) -> str:
    if result is None:
        text = NOT_RUN if runs_read else NO_STORE
        return _td(f'<span class="muted">{text}</span>', -1, "res")
    lines = []
    score = result.primary_score
    if score is not None:
        head = f'{_num(score)}<span class="metric"> {_h(result.primary)}</span>'
    elif result.infra_errors and not result.scored:
        head = '<span class="badge warn">infra error</span>'
    else:
        head = '<span class="muted">unscored</span>'
    lines.append(f'<div class="score">{head}</div>')
    others = [
        f"{_h(name)} {_num(value)}"
        for name, value in result.metrics.items()
        if name != result.primary
    ]
    if others:
        lines.append(f'<div class="sub">{" · ".join(others)}</div>')
    counts = [f"pass {result.passed}/{result.scored}"] if result.scored else []
    if result.infra_errors:
        counts.append(f"{result.infra_errors} infra error{'s' if result.infra_errors > 1 else ''}")
    if result.unscored:
        counts.append(f"{result.unscored} unscored")
    if counts:
        lines.append(f'<div class="sub">{" · ".join(counts)}</div>')
    flags = []
    if result.mock_llm:
        flags.append('<span class="badge mock">mock</span>')
    if result.task_version != entry.version:
        flags.append(f'<span class="badge warn">scored v{_h(result.task_version)}</span>')
    lines.append(f'<div class="when">{_when(result.run_created_at)[:10]}</div>')
    if flags:
        lines.append(f"<div>{' '.join(flags)}</div>")
    title = f"run {result.run_id} of {_when(result.run_created_at)}, {result.trials} trial(s)"
    if result.last_scored_at is not None:
        title += f", scored {_when(result.last_scored_at)}"
    passed = result.scored > 0 and result.passed == result.scored
    return _td(
        "".join(lines), score if score is not None else -0.5, "res pass" if passed else "res", title
    )


def _agents(entries: Iterable[CatalogueEntry]) -> list[tuple[str, str]]:
    return sorted({(r.agent, r.model) for e in entries for r in e.results})


def _agent_label(agent: str, model: str) -> str:
    return agent if model == "-" else f"{agent} · {model}"


def _summary(entries: list[CatalogueEntry], runs_source: str | None) -> str:
    """Counts by family, and where the results come from."""
    families = Counter(e.family for e in entries)
    parts = [f"{len(entries)} task{'s' if len(entries) != 1 else ''}"]
    parts += [f"{_h(name)} {n}" for name, n in sorted(families.items())]
    runs = f"results from {_h(runs_source)}" if runs_source else "no run store read: no results"
    return f'<p class="note">{" · ".join(parts)} — {runs}</p>'


def render_catalogue(
    entries: list[CatalogueEntry],
    title: str,
    *,
    runs_source: str | None = "stored runs",
    generated_at: datetime | None = None,
) -> str:
    """The page for ``entries``. ``runs_source`` names the run store the results came from
    (None: none was read, and result cells say so instead of "not run")."""
    runs_read = runs_source is not None
    agents = _agents(entries)
    headers = ["Task", "Family", "Suite", "Dataset", "Difficulty", "Nodes scored"]
    headers += [_agent_label(a, m) for a, m in agents] or ["Last results"]
    head = "".join(f"<th>{_h(h)}</th>" for h in headers)
    rows = []
    for entry in entries:
        by_agent = {(r.agent, r.model): r for r in entry.results}
        cells = [
            _task_cell(entry),
            _family_cell(entry),
            _td(_h(entry.suite), entry.suite),
            _dataset_cell(entry),
            _difficulty_cell(entry),
            _nodes_cell(entry),
        ]
        if agents:
            cells += [_result_cell(entry, by_agent.get(k), runs_read) for k in agents]
        else:
            cells.append(_result_cell(entry, None, runs_read))
        rows.append(f'<tr data-task="{_h(entry.key)}">{"".join(cells)}</tr>')
    stamp = _when(generated_at or datetime.now(UTC))
    body = [
        f"<h1>{_h(title)}</h1>",
        _summary(entries, runs_source),
        f'<p class="note">generated {stamp}</p>',
        '<div class="bar"><input id="filter" type="search" '
        'placeholder="Filter: title, id, family, domain, tag, agent…" aria-label="filter tasks">'
        f'<span class="note">showing <span id="shown">{len(entries)}</span> of '
        f"{len(entries)}</span></div>",
        f'<div class="wrap"><table id="tasks"><thead><tr>{head}</tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table></div>",
        "<h2>How to read this page</h2>",
        '<dl class="rules">',
        f"<dt>Difficulty</dt><dd>{DIFFICULTY_RULE}</dd>",
        f"<dt>Nodes scored</dt><dd>{_h(NODES_RULE)}</dd>",
        f"<dt>Results</dt><dd>{_h(RESULTS_RULE)}</dd>",
        "</dl>",
    ]
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{_h(title)}</title><style>{CSS}</style></head><body>\n"
        + "\n".join(body)
        + f"\n<script>{SCRIPT}</script>\n</body></html>\n"
    )
