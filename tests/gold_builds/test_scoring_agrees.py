"""The scorer and ``predict()`` agree on a maintainer's project scored with a layer mapping,
when the broken node weighs 0 and nodes below it weigh (measured before the fix: CFS 20,
SR 0 scored; SR 100 predicted)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from benchforge.evaluation.dbt.manifest import load_manifest
from benchforge.evaluation.de.mutations import predict
from benchforge.evaluation.de.scoring import score_candidate
from benchforge.evaluation.gold import build_gold
from benchforge.evaluation.tasks.models import DeScoring, LayerRule
from tests.gold_builds.project import write_dataset, write_project

pytestmark = pytest.mark.slow  # tests/README.md: the fast and the full loop

SCORING = DeScoring(
    layers=[
        LayerRule(layer="marts", folder="models/reporting"),
        LayerRule(layer="marts", tag="finance"),
    ],
    layer_weights={"staging": 10.0, "intermediate": 30.0, "marts": 60.0},
    node_weights={"stg_countries": 0.0},
)


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    root = tmp_path_factory.mktemp("agree")
    repo, dataset = write_project(root / "shop"), write_dataset(root / "data")
    build_gold("shop", repo, dataset, root / "gold", docs=False)
    return repo, dataset, root / "gold"


def test_a_weight_0_node_with_weighted_descendants(
    built: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    """stg_countries (weight 0) keeps its values but gains a column: its own output is wrong,
    int_orders below it still matches the gold row for row, yet CFS blocks it and SR is 0."""
    repo, dataset, gold = built
    mutant = tmp_path / "mutant"
    shutil.copytree(repo, mutant)
    path = mutant / "models/staging/stg_countries.sql"
    path.write_text(path.read_text().replace("as country_name", "as country_name, 1 as extra"))
    score = score_candidate(mutant, gold, dataset, tmp_path / "w", SCORING)
    by_name = {n.name: n for n in score.nodes}
    assert by_name["rpt_revenue"].layer == "marts" and by_name["orders_summary"].layer == "marts"
    assert by_name["int_orders"].cfs.matched and by_name["int_orders"].cfs_blocked_by
    # The seed reached both builds: the end-to-end one (dbt seed) and the model run alone (CS).
    for check in (by_name["stg_countries"].cfs, by_name["stg_countries"].cs):
        assert check.extra_columns == ["extra"], check
    assert by_name["int_orders"].cs.matched and not score.candidate_errors
    predicted = predict(load_manifest(gold / "manifest.json"), SCORING, "stg_countries")
    # CS 100 (only the weight-0 node fails); CFS: staging 1, intermediate 0, marts 1/3 ->
    # (10 + 0 + 20) / 100 = 30; SR 0.
    assert (predicted.cs, predicted.cfs, predicted.sr) == pytest.approx((100.0, 30.0, 0.0))
    assert (score.cs, score.cfs, score.sr) == pytest.approx(
        (predicted.cs, predicted.cfs, predicted.sr)
    )
