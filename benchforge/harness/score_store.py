"""Scores by content, across runs and machines: a scored submission is not scored again.

A score's identity is everything that decides it (:class:`ScoreIdentity`): the family, the
task (its version and the digest of its folder), the scorer (the source of the scoring code,
``benchforge.evaluation`` and ``benchforge.core``, and of the family's own module, so a plugin
family's change counts too), the version of every dataset it is scored on, by role, the digest
of the submitted files, the agent's answer, and for judged families the judge (model, client
options and judge settings). The same identity is the same score: ``score-run --rescore`` of
an unchanged run, identical submissions of other agents, epochs or runs, and a backfill cost no
dbt invocation and no judge call; any change of those parts scores afresh.

Scores live in the artifact store (``LAYOUT.score_store``), out of every sandbox's sight: no
candidate code can plant one. Only scores whose candidate code ran confined (the namespace
sandbox) or that ran none (answers, reports) are kept; an unsandboxed or weakly sandboxed
score is never kept and never read, nor one with a transient failure in it
(``SubmissionScore.reusable``: a judge call that failed is tried again next time).
"""

from __future__ import annotations

import hashlib
import inspect
import json
import threading
from collections.abc import Callable, Mapping
from functools import lru_cache, partial
from pathlib import Path

from pydantic import BaseModel, ConfigDict, ValidationError

from benchforge.core.artifacts import LAYOUT, ArtifactStore
from benchforge.core.errors import ArtifactError, ArtifactNotFound
from benchforge.core.records import TrialResult
from benchforge.evaluation.de.score_cache import scorer_version
from benchforge.evaluation.families import SubmissionScore, family_of
from benchforge.evaluation.judges.client import Judge
from benchforge.evaluation.tasks.models import LoadedTask
from benchforge.harness.identity import dataset_version, task_digest

# Where candidate code ran for a score to be kept: confined, or no candidate code at all.
KEPT_SANDBOXES = frozenset({None, "namespace"})
STORE_FORMAT = "1"


class ScoreIdentity(BaseModel):
    """Everything a score depends on; its ``key`` names it in the store."""

    model_config = ConfigDict(frozen=True)

    family: str
    task: str  # the task's key and digest (version and folder content)
    scorer: str
    datasets: dict[str, str]  # role -> dataset version
    submission: str  # digest of the submitted files
    answer: str | None
    judge: str | None = None
    # digest of the trajectory and termination, for families that score them
    # (``scores_trajectory``); left out of the key when None, so other keys do not change
    trajectory: str | None = None

    @property
    def key(self) -> str:
        fields = self.model_dump(exclude={"trajectory"} if self.trajectory is None else set())
        payload = json.dumps([STORE_FORMAT, fields], sort_keys=True)
        return hashlib.sha256(payload.encode()).hexdigest()


@lru_cache(maxsize=64)
def family_scorer(module_file: str) -> str:
    """The scoring code's version for a family defined in ``module_file``."""
    own = Path(module_file).read_bytes() if Path(module_file).is_file() else b""
    return hashlib.sha256(scorer_version().encode() + b"\0" + own).hexdigest()


def trajectory_fingerprint(result: TrialResult) -> str:
    """What a trajectory-scoring family reads of a trial beside its answer: each step's kind,
    name, arguments and output, and how the trial ended (not times, tokens or costs)."""
    steps = [
        [step.kind, step.name, step.arguments, step.output, step.tool_calls]
        for step in result.trajectory
    ]
    payload = json.dumps([result.termination, steps], sort_keys=True, default=str)
    return hashlib.sha256(payload.encode()).hexdigest()


def judge_fingerprint(judge: Judge) -> str:
    """The judge's model, client options and settings (the prompts are scoring code)."""
    config = judge.config.model_dump(mode="json", exclude={"api_key", "base_url"})
    parts = {"config": config, "settings": judge.settings.model_dump(mode="json")}
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()


class ScoreStore:
    """The kept scores of an artifact store, with what this process found there."""

    def __init__(self, store: ArtifactStore) -> None:
        self.store = store
        self._lock = threading.Lock()
        self._versions: dict[str, str] = {}
        self.hits = 0
        self.kept = 0

    def identity(
        self,
        task: LoadedTask,
        datasets: Mapping[str, Path],
        submission_digest: str,
        answer: str | None,
        judge: Judge | None,
        trajectory: str | None = None,
    ) -> ScoreIdentity:
        family = family_of(task)
        module = inspect.getsourcefile(type(family)) or ""
        return ScoreIdentity(
            family=family.name,
            task=f"{task.key}:{self._cached(f'task:{task.folder}', lambda: task_digest(task))}",
            scorer=family_scorer(module),
            datasets={
                role: self._cached(f"data:{folder}", partial(dataset_version, folder))
                for role, folder in sorted(datasets.items())
            },
            submission=submission_digest,
            answer=answer,
            judge=judge_fingerprint(judge) if family.judged and judge is not None else None,
            trajectory=trajectory,
        )

    def _cached(self, key: str, compute: Callable[[], str]) -> str:
        """A task's digest or a dataset's version, computed once per store."""
        with self._lock:
            if key not in self._versions:
                self._versions[key] = compute()
            return self._versions[key]

    def get(self, identity: ScoreIdentity) -> SubmissionScore | None:
        try:
            raw = self.store.get_bytes(LAYOUT.score_store(identity.family, identity.key))
            score = SubmissionScore.model_validate_json(raw)
        except (ArtifactNotFound, ValidationError):
            return None
        except ArtifactError:  # unreadable or tampered with: score afresh
            return None
        with self._lock:
            self.hits += 1
        return score.model_copy(update={"reused": True})

    def put(self, identity: ScoreIdentity, score: SubmissionScore) -> None:
        if score.sandbox not in KEPT_SANDBOXES or not score.reusable:
            return
        kept = score.model_copy(update={"reused": False})
        self.store.put_bytes(
            LAYOUT.score_store(identity.family, identity.key), kept.model_dump_json().encode()
        )
        with self._lock:
            self.kept += 1
