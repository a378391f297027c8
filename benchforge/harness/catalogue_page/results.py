"""The latest stored result of each agent on each task, read from the run store.

Runs live in the artifact store (``runs/<run_id>/run.json`` and ``scores/<slug>.json``,
:data:`~benchforge.core.artifacts.LAYOUT`), read here through
:class:`~benchforge.harness.store.RunStore`, the same reader ``score-run`` and ``report`` use.
Only scored runs count: a run's trials appear once ``score-run`` wrote their scores.

For each (suite, task id, agent, model) the run created last (``RunSpec.created_at``, then the
run id) that holds a score of it wins; its trials (epochs) are summed up as the leaderboard
does: metrics are means over the scored trials, infra errors and unscored trials are counted
apart and never as 0.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path

from benchforge.core.artifacts import LAYOUT, ArtifactStore, open_store
from benchforge.core.errors import ConfigError
from benchforge.core.records import RunSpec, TrialScore
from benchforge.harness.catalogue_page.models import AgentResult
from benchforge.harness.store import RunStore

TaskKey = tuple[str, str]  # (suite, task_id)
_AgentKey = tuple[str, str, str, str]  # (suite, task_id, agent, model)


def open_runs(runs_root: Path | str) -> ArtifactStore:
    """The artifact store at ``runs_root``: an ``s3://`` prefix or a local folder holding
    ``runs/`` (the ``runs`` folder itself is accepted too). A local folder that does not exist
    is an error: a typo must not read as "no task was ever run"."""
    location = str(runs_root)
    if not location.startswith("s3://"):
        path = Path(location).expanduser()
        if not path.is_dir():
            raise ConfigError(
                f"runs: no artifact store at {path} (give the folder that holds runs/, "
                "e.g. the artifact_root setting)"
            )
        if path.name == LAYOUT.RUNS and not (path / LAYOUT.RUNS).is_dir():
            path = path.parent
        location = str(path)
    return open_store(location)


def summarize(spec: RunSpec, scores: Sequence[TrialScore]) -> AgentResult:
    """One agent's trials of one task in one run (all of the same agent, model and task)."""
    first = scores[0]
    scored = [s for s in scores if s.status == "scored"]
    columns = [s.columns() for s in scored]
    names = sorted({m for c in columns for m in c})
    metrics = {
        name: sum(c[name] for c in columns if name in c) / sum(1 for c in columns if name in c)
        for name in names
    }
    primaries = [s.primary for s in scored if s.primary is not None]
    stamps = [s.scored_at for s in scores if s.scored_at is not None]
    return AgentResult(
        agent=first.key.agent,
        model=first.key.model,
        run_id=spec.run_id,
        run_created_at=spec.created_at,
        task_version=first.key.task_version,
        primary=primaries[0] if primaries else first.primary,
        metrics=metrics,
        trials=len(scores),
        scored=len(scored),
        passed=sum(1 for s in scored if s.success),
        infra_errors=sum(1 for s in scores if s.status == "infra_error"),
        unscored=sum(1 for s in scores if s.status == "unscored"),
        mock_llm=any(s.used_mock_llm for s in scores),
        last_scored_at=max(stamps) if stamps else None,
    )


def latest_results(store: ArtifactStore) -> tuple[dict[TaskKey, list[AgentResult]], int]:
    """Per (suite, task id): the latest result of each agent, sorted by agent label; and the
    number of runs read."""
    specs = sorted(LAYOUT.run_specs(store), key=lambda s: (s.created_at, s.run_id))
    latest: dict[_AgentKey, AgentResult] = {}
    for spec in specs:  # oldest first: a later run replaces what an earlier one left
        groups: dict[_AgentKey, list[TrialScore]] = defaultdict(list)
        for score in RunStore(store, spec.run_id).read_scores():
            k = score.key
            groups[(k.suite, k.task_id, k.agent, k.model)].append(score)
        for key, scores in groups.items():
            latest[key] = summarize(spec, scores)
    by_task: dict[TaskKey, list[AgentResult]] = defaultdict(list)
    for (suite, task_id, _, _), result in latest.items():
        by_task[(suite, task_id)].append(result)
    ordered = {key: sorted(found, key=lambda r: r.label) for key, found in by_task.items()}
    return ordered, len(specs)
