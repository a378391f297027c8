"""A run in the artifact store (local folder or S3): its spec, trials, scores and report, at
the keys :data:`~benchforge.core.artifacts.LAYOUT` gives them. A trial is done when its result is
stored (written last); an infrastructure error leaves a marker beside it (written first). A
trial is scored when its score is stored, unless a scoring-error marker is beside it: one
listing tells both apart, as for trials.
"""

from __future__ import annotations

from benchforge.core.artifacts import LAYOUT, ArtifactStore
from benchforge.core.errors import ArtifactNotFound, BenchforgeError
from benchforge.core.records import RunSpec, TrialResult, TrialScore
from benchforge.evaluation.families.registry import families


class RunStore:
    def __init__(self, store: ArtifactStore, run_id: str) -> None:
        self.store = store
        self.run_id = run_id
        self.prefix = LAYOUT.run(run_id)

    def uri(self) -> str:
        return self.store.uri(self.prefix)

    # -- the run ---------------------------------------------------------------------------
    def read_spec(self) -> RunSpec | None:
        try:
            return RunSpec.model_validate_json(self.store.get_bytes(LAYOUT.run_spec(self.run_id)))
        except ArtifactNotFound:
            return None

    def write_spec(self, spec: RunSpec) -> None:
        self.store.put_bytes(LAYOUT.run_spec(self.run_id), spec.model_dump_json(indent=2).encode())

    def require_spec(self) -> RunSpec:
        spec = self.read_spec()
        if spec is None:
            raise BenchforgeError(f"no run {self.run_id!r} at {self.uri()} (no {LAYOUT.RUN_SPEC})")
        return spec

    # -- trials ----------------------------------------------------------------------------
    def trial_key(self, slug: str, name: str) -> str:
        return LAYOUT.trial_file(self.run_id, slug, name)

    def trial_states(self) -> dict[str, str]:
        """slug -> "done" or "infra_error", for trials with a result artifact. One listing,
        not one request per trial."""
        head = LAYOUT.trials(self.run_id)
        done, infra = set(), set()
        for info in self.store.list(head):
            slug, _, name = info.key[len(head) :].rpartition("/")
            if name == LAYOUT.TRIAL_RESULT:
                done.add(slug)
            elif name == LAYOUT.TRIAL_INFRA_MARKER:
                infra.add(slug)
        return {slug: "infra_error" if slug in infra else "done" for slug in done}

    def finished_slugs(self) -> set[str]:
        return set(self.trial_states())

    def infra_error(self, slug: str) -> str:
        """Why the trial ended in an infrastructure error (its marker's text)."""
        return self.store.get_bytes(LAYOUT.trial_infra_marker(self.run_id, slug)).decode()

    def write_submission(self, slug: str, archive: bytes) -> str:
        key = LAYOUT.trial_submission(self.run_id, slug)
        self.store.put_bytes(key, archive)
        return key

    def write_result(self, result: TrialResult) -> None:
        """The marker goes first and the result last, so a crash in between leaves an
        unfinished trial (run again), never a finished one with a wrong marker."""
        slug = result.key.slug
        marker = LAYOUT.trial_infra_marker(self.run_id, slug)
        if result.status == "infra_error":
            self.store.put_bytes(marker, (result.error or "").encode())
        elif self.store.exists(marker):
            self.store.delete(marker)
        self.store.put_bytes(
            LAYOUT.trial_result(self.run_id, slug), result.model_dump_json(indent=1).encode()
        )

    def has_result(self, slug: str) -> bool:
        return self.store.exists(LAYOUT.trial_result(self.run_id, slug))

    def read_result(self, slug: str) -> TrialResult:
        return TrialResult.model_validate_json(
            self.store.get_bytes(LAYOUT.trial_result(self.run_id, slug))
        )

    def materials_key(self, name: str) -> str:
        return LAYOUT.materials(self.run_id, name)

    # -- scores ----------------------------------------------------------------------------
    def score_key(self, slug: str) -> str:
        return LAYOUT.score(self.run_id, slug)

    def scored_slugs(self) -> set[str]:
        head, suffix = LAYOUT.scores(self.run_id), LAYOUT.SCORE_SUFFIX
        return {
            info.key[len(head) : -len(suffix)]
            for info in self.store.list(head)
            if info.key.endswith(suffix)
        }

    def score_states(self) -> dict[str, str]:
        """slug -> "scored" or "scoring_error", for trials with a stored score. One listing,
        not one request per score."""
        head = LAYOUT.scores(self.run_id)
        scored, errors = set(), set()
        for info in self.store.list(head):
            name = info.key[len(head) :]
            if name.endswith(LAYOUT.SCORE_SUFFIX):
                scored.add(name[: -len(LAYOUT.SCORE_SUFFIX)])
            elif name.endswith(LAYOUT.SCORE_ERROR_SUFFIX):
                errors.add(name[: -len(LAYOUT.SCORE_ERROR_SUFFIX)])
        return {slug: "scoring_error" if slug in errors else "scored" for slug in scored}

    def write_score(self, score: TrialScore) -> None:
        """A scoring error's marker goes before its score; any other score goes first and the
        marker of an earlier scoring error is removed after it, so a crash in between leaves
        the trial to score again, never a failed scoring that looks done."""
        slug = score.key.slug
        marker = LAYOUT.score_error_marker(self.run_id, slug)
        if score.status == "scoring_error":
            self.store.put_bytes(marker, (score.detail or "").encode())
        self.store.put_bytes(self.score_key(slug), score.model_dump_json(indent=1).encode())
        if score.status != "scoring_error" and self.store.exists(marker):
            self.store.delete(marker)

    def read_scores(self) -> list[TrialScore]:
        families()  # each family registers the type of its scores' breakdown when imported
        return [
            TrialScore.model_validate_json(self.store.get_bytes(self.score_key(slug)))
            for slug in sorted(self.scored_slugs())
        ]

    def write_report(self, name: str, payload: bytes) -> str:
        key = LAYOUT.report(self.run_id, name)
        self.store.put_bytes(key, payload)
        return key
