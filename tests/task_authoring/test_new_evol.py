"""``benchforge task new de_evol``: base_version filled, an empty overlay to write, a stale
base_version named with both versions, and mutation checks on the models v2 adds or changes
(predicted over the scored set, measured the same)."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchforge.cli import main as cli_main
from benchforge.core.records.verification import REFERENCE
from benchforge.evaluation.de.mutations import PredictedScore
from benchforge.evaluation.de.tasks import DeVerification
from benchforge.evaluation.families import VerifyOptions, get_family
from benchforge.evaluation.gold import repo_version
from benchforge.evaluation.tasks import DeEvolTask, load_task
from benchforge.evaluation.tasks.authoring import ParsedRepos, review_task
from tests.task_authoring.conftest import Shop
from tests.task_authoring.tiny import MUTATION, write_overlay

pytestmark = pytest.mark.slow  # tests/README.md: the fast and the full loop


def test_the_scaffold_names_the_repository_version_and_validates(
    env: Shop, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = env.task("shop-evol")
    spec = load_task(folder).spec
    assert isinstance(spec, DeEvolTask)
    assert spec.base_version == repo_version(env.repo)
    assert [p.name for p in (folder / "gold_v2").iterdir()] == [".gitkeep"]
    assert cli_main.main(["task", "validate", str(folder)]) == 0
    out = capsys.readouterr().out
    assert "warning  de-shop/shop-evol@1: gold_v2/ is empty: gold v2 changes nothing yet" in out
    assert "change_request.md still holds TODO(scaffold) placeholders" in out
    assert cli_main.main(["task", "base-version", str(folder)]) == 0
    assert f"repository {spec.base_version}  (current)" in capsys.readouterr().out


def test_a_stale_base_version_names_both_versions(
    env: Shop, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    copy = env.copy(tmp_path / "catalogue")
    before = repo_version(copy.repo)
    (copy.repo / "models" / "marts" / "_marts.yml").write_text(
        (copy.repo / "models" / "marts" / "_marts.yml").read_text() + "\n"
    )
    now = repo_version(copy.repo)
    review = review_task(load_task(copy.task("shop-evol")), ParsedRepos(tmp_path / "parsed"))
    assert len(review.problems) == 1
    assert f"base_version is {before}, the repository is now {now}" in review.problems[0]
    assert f'set base_version: "{now}"' in review.problems[0]
    assert cli_main.main(["task", "base-version", str(copy.task("shop-evol"))]) == 0
    assert f"base_version {before}  repository {now}  (STALE)" in capsys.readouterr().out


def test_mutations_of_the_scored_models_score_as_predicted(env: Shop, tmp_path: Path) -> None:
    copy = env.copy(tmp_path / "catalogue")
    folder = copy.task("shop-evol")
    write_overlay(folder)
    (folder / "mutations.yaml").write_text(
        MUTATION
        + "  - id: unscored-node\n    kind: wrong_type\n    node: stg_orders\n"
        + '    edits: [{find: "amount\\n", replace: "amount::varchar as amount\\n"}]\n'
    )
    task = load_task(folder)
    # The work folder `task new` built v1's gold in (for the de_impl contract): reused.
    result = get_family("de_evol").verify(
        task, copy.dataset, copy.work / "contracts", VerifyOptions(hacks=False)
    )
    assert result.shown(REFERENCE) == "gold 100/100/100"
    assert isinstance(result.record, DeVerification)
    (check,) = result.record.mutations
    # fct_orders and revenue_by_country are scored (both marts); the mutant of fct_orders
    # loses it in CS, and it with its descendant in CFS.
    assert check.predicted == check.actual == PredictedScore(cs=50.0, cfs=0.0, sr=0.0)
    assert result.problems == [
        "mutation unscored-node: stg_orders is not scored by this task "
        "(scored: fct_orders, revenue_by_country)"
    ]
