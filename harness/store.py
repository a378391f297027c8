"""Where a run lives in the artifact store (local folder or S3):

runs/<run_id>/run.json                         the RunSpec
runs/<run_id>/trials/<trial slug>/submission.tar.gz
runs/<run_id>/trials/<trial slug>/result.json  written last: the trial is done
runs/<run_id>/scores/<trial slug>.json         TrialScore, written by score_run
runs/<run_id>/report/leaderboard.{md,html,json}
"""

from __future__ import annotations

from benchforge.agents.protocol import TrialResult
from benchforge.core.artifacts import ArtifactStore
from benchforge.core.errors import ArtifactNotFound, BenchforgeError
from benchforge.evaluation.leaderboard.records import TrialScore
from benchforge.harness.models import RunSpec

RESULT = "result.json"
SUBMISSION = "submission.tar.gz"
INFRA_MARKER = "infra_error"  # beside result.json when the trial ended in an infrastructure error


class RunStore:
    def __init__(self, store: ArtifactStore, run_id: str) -> None:
        self.store = store
        self.run_id = run_id
        self.prefix = f"runs/{run_id}"

    def uri(self) -> str:
        return self.store.uri(self.prefix)

    # -- the run ---------------------------------------------------------------------------
    def read_spec(self) -> RunSpec | None:
        try:
            return RunSpec.model_validate_json(self.store.get_bytes(f"{self.prefix}/run.json"))
        except ArtifactNotFound:
            return None

    def write_spec(self, spec: RunSpec) -> None:
        self.store.put_bytes(f"{self.prefix}/run.json", spec.model_dump_json(indent=2).encode())

    def require_spec(self) -> RunSpec:
        spec = self.read_spec()
        if spec is None:
            raise BenchforgeError(f"no run {self.run_id!r} at {self.uri()} (no run.json)")
        return spec

    # -- trials ----------------------------------------------------------------------------
    def trial_key(self, slug: str, name: str) -> str:
        return f"{self.prefix}/trials/{slug}/{name}"

    def trial_states(self) -> dict[str, str]:
        """slug -> "done" or "infra_error", for trials with a result artifact. One listing,
        not one request per trial."""
        head = f"{self.prefix}/trials/"
        done, infra = set(), set()
        for info in self.store.list(head):
            slug, _, name = info.key[len(head) :].rpartition("/")
            if name == RESULT:
                done.add(slug)
            elif name == INFRA_MARKER:
                infra.add(slug)
        return {slug: "infra_error" if slug in infra else "done" for slug in done}

    def finished_slugs(self) -> set[str]:
        return set(self.trial_states())

    def write_submission(self, slug: str, archive: bytes) -> str:
        key = self.trial_key(slug, SUBMISSION)
        self.store.put_bytes(key, archive)
        return key

    def write_result(self, result: TrialResult) -> None:
        """The marker goes first and the result last, so a crash in between leaves an
        unfinished trial (run again), never a finished one with a wrong marker."""
        slug = result.key.slug
        marker = self.trial_key(slug, INFRA_MARKER)
        if result.status == "infra_error":
            self.store.put_bytes(marker, (result.error or "").encode())
        elif self.store.exists(marker):
            self.store.delete(marker)
        self.store.put_bytes(
            self.trial_key(slug, RESULT), result.model_dump_json(indent=1).encode()
        )

    def read_result(self, slug: str) -> TrialResult:
        return TrialResult.model_validate_json(self.store.get_bytes(self.trial_key(slug, RESULT)))

    def materials_key(self, name: str) -> str:
        return f"{self.prefix}/materials/{name}.tar.gz"

    # -- scores ----------------------------------------------------------------------------
    def score_key(self, slug: str) -> str:
        return f"{self.prefix}/scores/{slug}.json"

    def scored_slugs(self) -> set[str]:
        head = f"{self.prefix}/scores/"
        return {
            info.key[len(head) : -len(".json")]
            for info in self.store.list(head)
            if info.key.endswith(".json")
        }

    def write_score(self, score: TrialScore) -> None:
        self.store.put_bytes(self.score_key(score.trial), score.model_dump_json(indent=1).encode())

    def read_scores(self) -> list[TrialScore]:
        return [
            TrialScore.model_validate_json(self.store.get_bytes(self.score_key(slug)))
            for slug in sorted(self.scored_slugs())
        ]

    def write_report(self, name: str, payload: bytes) -> str:
        key = f"{self.prefix}/report/{name}"
        self.store.put_bytes(key, payload)
        return key
