"""Where everything lives in the artifact store, and which file marks each artifact complete.

One object, :data:`LAYOUT`, owns every key; stages ask it instead of spelling paths::

    datasets/<domain>/scale-<s>/seed-<n>/          a dataset (the default location of one)
        dataset.json                               DatasetRecord, written last
    datasets-heldout/<domain>/<digest>/            a held-out dataset (same layout)
    datasets-imported/<name>/                      an imported dataset (the default location
                                                   of ``benchforge dataset import``)
    gold/<domain>/<dataset version>/<repo version>/
        build.json                                 GoldBuild, written last
    runs/<run_id>/run.json                         RunSpec
    runs/<run_id>/materials/<name>.tar.gz          a task's workspace as the agents got it
    runs/<run_id>/trials/<trial slug>/submission.tar.gz
    runs/<run_id>/trials/<trial slug>/infra_error  beside the result when the trial was not run
                                                   fairly (written before it)
    runs/<run_id>/trials/<trial slug>/result.json  TrialResult, written last: the trial is done
    runs/<run_id>/scores/<trial slug>.json         TrialScore
    runs/<run_id>/scores/<trial slug>.scoring_error
                                                   beside the score when scoring the trial
                                                   raised (written before it): not done
    runs/<run_id>/report/<name>                    the leaderboard (md, html, json)
    secrets/heldout.key                            the held-out seeds' secret

A dataset may also live anywhere else (a folder or ``s3://`` prefix given by hand): its record
is still ``<location>/dataset.json`` (:meth:`ArtifactLayout.dataset_record`). Keys are relative
to the store's root; the methods that take a local folder return paths inside it.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from benchforge.core.artifacts.base import ArtifactStore, join_key, normalize_prefix

if TYPE_CHECKING:  # the records pull in the LLM client; the store is imported on its own
    from benchforge.core.records import RunSpec


class ArtifactLayout:
    """Every key and completion marker of the artifact store (see the module docstring)."""

    DATASET_RECORD: ClassVar[str] = "dataset.json"
    GOLD_RECORD: ClassVar[str] = "build.json"
    RUN_SPEC: ClassVar[str] = "run.json"
    TRIAL_RESULT: ClassVar[str] = "result.json"
    TRIAL_SUBMISSION: ClassVar[str] = "submission.tar.gz"
    TRIAL_INFRA_MARKER: ClassVar[str] = "infra_error"
    SCORE_SUFFIX: ClassVar[str] = ".json"
    SCORE_ERROR_SUFFIX: ClassVar[str] = ".scoring_error"

    DATASETS: ClassVar[str] = "datasets"
    HELDOUT_DATASETS: ClassVar[str] = "datasets-heldout"
    IMPORTED_DATASETS: ClassVar[str] = "datasets-imported"
    GOLD: ClassVar[str] = "gold"
    RUNS: ClassVar[str] = "runs"
    HELDOUT_SECRET: ClassVar[str] = "secrets/heldout.key"

    # -- datasets ----------------------------------------------------------------------------
    def dataset(self, domain: str, scale: float, seed: int) -> str:
        """The default location (a prefix) of the dataset of (domain, scale, seed)."""
        return f"{self.DATASETS}/{domain}/scale-{scale:g}/seed-{seed}"

    def heldout_dataset(self, domain: str, digest: str) -> str:
        """A held-out dataset's prefix: it names a digest, never the seed."""
        return f"{self.HELDOUT_DATASETS}/{domain}/{digest}"

    def imported_dataset(self, name: str) -> str:
        """The default location (a prefix) of the dataset imported as ``name``: apart from the
        synthesized ones, so no name can collide with a domain's scale-<s>/seed-<n> folders."""
        return f"{self.IMPORTED_DATASETS}/{name}"

    def dataset_record(self, prefix: str) -> str:
        """The completion record of the dataset at ``prefix`` (relative to its store)."""
        return join_key(normalize_prefix(prefix), self.DATASET_RECORD)

    def dataset_record_file(self, folder: Path) -> Path:
        """The completion record of a dataset in a local folder."""
        return folder / self.DATASET_RECORD

    # -- gold builds -------------------------------------------------------------------------
    def gold(self, domain: str, dataset_version: str, repo_version: str) -> str:
        """The prefix of the gold build of a repository version on a dataset version."""
        return f"{self.GOLD}/{domain}/{dataset_version}/{repo_version}"

    def gold_record_file(self, folder: Path) -> Path:
        """The completion record of a gold build in a local folder."""
        return folder / self.GOLD_RECORD

    # -- scores by content (benchforge.harness.score_store) ----------------------------------
    SCORE_STORE: ClassVar[str] = "score-store"

    def score_store(self, family: str, key: str) -> str:
        return f"{self.SCORE_STORE}/{family}/{key[:2]}/{key}.json"

    # -- task verifications ----------------------------------------------------------------
    VERIFICATIONS: ClassVar[str] = "verifications"

    def verification(self, task_key: str) -> str:
        """The last ``task verify`` of a task (``suite/id@version``): its checks, no record."""
        return f"{self.VERIFICATIONS}/{task_key}.json"

    # -- runs --------------------------------------------------------------------------------
    def run(self, run_id: str) -> str:
        return f"{self.RUNS}/{run_id}"

    def run_spec(self, run_id: str) -> str:
        return f"{self.run(run_id)}/{self.RUN_SPEC}"

    def trials(self, run_id: str) -> str:
        """The prefix every trial of the run lives under (with a trailing slash)."""
        return f"{self.run(run_id)}/trials/"

    def trial_file(self, run_id: str, slug: str, name: str) -> str:
        return f"{self.trials(run_id)}{slug}/{name}"

    def trial_result(self, run_id: str, slug: str) -> str:
        return self.trial_file(run_id, slug, self.TRIAL_RESULT)

    def trial_submission(self, run_id: str, slug: str) -> str:
        return self.trial_file(run_id, slug, self.TRIAL_SUBMISSION)

    def trial_infra_marker(self, run_id: str, slug: str) -> str:
        return self.trial_file(run_id, slug, self.TRIAL_INFRA_MARKER)

    def materials(self, run_id: str, name: str) -> str:
        return f"{self.run(run_id)}/materials/{name}.tar.gz"

    def scores(self, run_id: str) -> str:
        """The prefix of the run's scores (with a trailing slash)."""
        return f"{self.run(run_id)}/scores/"

    def score(self, run_id: str, slug: str) -> str:
        return f"{self.scores(run_id)}{slug}{self.SCORE_SUFFIX}"

    def score_error_marker(self, run_id: str, slug: str) -> str:
        return f"{self.scores(run_id)}{slug}{self.SCORE_ERROR_SUFFIX}"

    def report(self, run_id: str, name: str) -> str:
        return f"{self.run(run_id)}/report/{name}"

    def run_specs(self, store: ArtifactStore) -> list[RunSpec]:
        """Every run in ``store``, oldest first (by ``created_at``)."""
        from benchforge.core.records import RunSpec

        head = f"{self.RUNS}/"
        specs = [
            RunSpec.model_validate_json(store.get_bytes(info.key))
            for info in store.list(head)
            if info.key.count("/") == 2 and info.key.endswith(f"/{self.RUN_SPEC}")
        ]
        return sorted(specs, key=lambda spec: spec.created_at)

    def latest_run(self, store: ArtifactStore) -> RunSpec | None:
        """The run created last, or None when the store holds none."""
        specs = self.run_specs(store)
        return max(specs, key=lambda spec: spec.created_at) if specs else None


LAYOUT = ArtifactLayout()
"""The layout every stage uses."""
