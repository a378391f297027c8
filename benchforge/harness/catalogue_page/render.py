"""The catalogue page: one self-contained HTML file (inline CSS, a few lines of inline JS for
the filter box and sorting, no external asset), rendered from ``templates/catalogue.html.j2``
on the shared base template; every authored or stored text is escaped by the templates.

One row per task; one column per agent that has a stored result on any task, holding the
latest run's score(s), pass count and date; a task an agent never ran says "not run".
"""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime
from pathlib import Path

from markupsafe import Markup

from benchforge.core.pages import Page
from benchforge.evaluation.families.pages import detail_template, template_folders
from benchforge.harness.catalogue_page.difficulty import RULE as DIFFICULTY_RULE
from benchforge.harness.catalogue_page.difficulty import TAG_PREFIX
from benchforge.harness.catalogue_page.models import AgentResult, CatalogueEntry

TEMPLATES = Path(__file__).parent / "templates"
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
_LEVEL_ORDER = {"easy": 1, "medium": 2, "hard": 3, "unrated": 0}


def _when(moment: datetime) -> str:
    aware = moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)
    return aware.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")


def _result_counts(result: AgentResult) -> list[str]:
    counts = [f"pass {result.passed}/{result.scored}"] if result.scored else []
    if result.infra_errors:
        counts.append(f"{result.infra_errors} infra error{'s' if result.infra_errors > 1 else ''}")
    if result.unscored:
        counts.append(f"{result.unscored} unscored")
    return counts


def _result_title(result: AgentResult) -> str:
    title = f"run {result.run_id} of {_when(result.run_created_at)}, {result.trials} trial(s)"
    if result.last_scored_at is not None:
        title += f", scored {_when(result.last_scored_at)}"
    return title


def _agent_label(agent: str, model: str) -> str:
    return agent if model == "-" else f"{agent} · {model}"


def _summary(entries: list[CatalogueEntry]) -> str:
    """Counts by family."""
    families = Counter(e.family for e in entries)
    parts = [f"{len(entries)} task{'s' if len(entries) != 1 else ''}"]
    parts += [f"{name} {n}" for name, n in sorted(families.items())]
    return " · ".join(parts)


CATALOGUE_PAGE = Page(
    "catalogue.html.j2",
    (TEMPLATES,),
    "catalogue",
    {
        "tag_prefix": TAG_PREFIX,
        "level_order": _LEVEL_ORDER,
        "results_of": lambda entry: {(r.agent, r.model): r for r in entry.results},
        "result_counts": _result_counts,
        "result_title": _result_title,
        "when": _when,
        # The rule is this package's own constant and holds a <code> span: markup we wrote.
        "difficulty_rule": Markup(DIFFICULTY_RULE),
        "nodes_rule": NODES_RULE,
        "results_rule": RESULTS_RULE,
        "partial_of": detail_template,
    },
    template_folders,
)


def render_catalogue(
    entries: list[CatalogueEntry],
    title: str,
    *,
    runs_source: str | None = "stored runs",
    generated_at: datetime | None = None,
) -> str:
    """The page for ``entries``. ``runs_source`` names the run store the results came from
    (None: none was read, and result cells say so instead of "not run")."""
    agents = sorted({(r.agent, r.model) for e in entries for r in e.results})
    headers = ["Task", "Family", "Suite", "Dataset", "Difficulty", "Nodes scored", "Verified"]
    headers += [_agent_label(a, m) for a, m in agents] or ["Last results"]
    stamp = _when(generated_at or datetime.now(UTC))
    return CATALOGUE_PAGE.render(
        title,
        entries=entries,
        headers=headers,
        agents=agents,
        runs_source=runs_source,
        summary=_summary(entries),
        stamp=stamp,
    )
