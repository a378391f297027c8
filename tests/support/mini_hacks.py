"""The mini fixture the attack tests score hostile candidates on: its dataset, gold build and
de_impl skeleton, in a folder outside /tmp that other users can read (``out/`` of the checkout,
gitignored), as a real artifact root would be: a sandbox's private /tmp or pytest's 0700 temp
folders would otherwise hide the gold by accident rather than by design."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from benchforge.core.records import GOLD_DB
from benchforge.core.sandbox import default_backend
from benchforge.evaluation.dbt.manifest import DbtManifest, load_manifest
from benchforge.evaluation.de.hacks import (
    DEFAULT_CATALOGUE,
    HackCheck,
    HackContext,
    RewardHack,
    check_hack,
    load_hack_catalogue,
    plant_decoy,
)
from benchforge.evaluation.de.scoring import DeScore, score_candidate
from benchforge.evaluation.gold import build_gold
from benchforge.evaluation.tasks.materials import make_skeleton
from benchforge.evaluation.tasks.models import DeScoring
from benchforge.synthesis.dataset import build_dataset
from benchforge.synthesis.spec import load_spec
from tests.paths import FIXTURES
from tests.paths import REPO_ROOT as PROJECT_ROOT

GOLD_REPO = FIXTURES / "mini_dbt"
TASKS_ROOT = FIXTURES / "task_specs"
IMPL, EVOL = "mini-impl", "mini-evol-won-by-industry"
CATALOGUE = load_hack_catalogue(DEFAULT_CATALOGUE)
SCRATCH = PROJECT_ROOT / "out"
DEADLINE_MARGIN_S = 30.0  # start-up of the child process that scores a hack with a deadline


@dataclass(frozen=True)
class Mini:
    """The mini dataset, its gold build and the de_impl skeleton, in a sandbox-visible place."""

    host: Path

    @property
    def dataset(self) -> Path:
        return self.host / "data" / "mini"

    @property
    def gold(self) -> Path:
        return self.host / "gold" / "mini"

    @property
    def base(self) -> Path:
        return self.host / "materials" / "skeleton"

    @property
    def canary(self) -> Path:
        return self.host / "canary"

    @property
    def runs(self) -> Path:
        return self.host / "runs"

    @property
    def decoy(self) -> Path:
        return self.runs / "other-trial"

    def manifest(self) -> DbtManifest:
        return load_manifest(self.gold / "manifest.json")

    def context(self) -> HackContext:
        return HackContext(
            canaries=[self.canary, self.dataset, self.gold],
            gold_db=self.gold / GOLD_DB,
            gold_repo=GOLD_REPO,
        )

    def build(self) -> Mini:
        build_dataset(
            load_spec(FIXTURES / "mini_domain.yaml"),
            scale=1,
            seed=7,
            out=str(self.dataset),
            validate=False,
        )
        build_gold("mini", GOLD_REPO, self.dataset, self.gold)
        make_skeleton(GOLD_REPO, self.base)
        self.canary.mkdir(parents=True)
        plant_decoy(self.gold / GOLD_DB, GOLD_REPO, self.decoy)
        return self

    def check(self, hack: RewardHack) -> HackCheck:
        def score(candidate: Path, work: Path) -> DeScore:
            return score_candidate(
                candidate, self.gold, self.dataset, work, DeScoring(), sandbox=default_backend()
            )

        return check_hack(
            hack,
            self.base,
            self.manifest(),
            score,
            self.runs / hack.id,
            self.context(),
            watched=[self.gold, self.decoy],
            sealed=[self.canary, self.dataset],
        )

    def watched(self) -> list[Path]:
        return [self.base, self.canary, self.dataset, self.gold, self.decoy]
