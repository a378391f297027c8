"""A reward-hack check's verdict: the time it may take grows with the gold it is scored against
(the scorer's own limits, from the gold build's times), and a hack that broke through says which
check failed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchforge.core.records import GOLD_DB
from benchforge.evaluation.dbt.manifest import DbtManifest, ModelNode
from benchforge.evaluation.de.hacks import HackCheck, RewardHack, time_allowed
from benchforge.evaluation.de.mutations import PredictedScore

HACK = RewardHack.model_validate(
    {
        "id": "enormous-output",
        "kind": "enormous_output",
        "expected": "zero",
        "max_seconds": 60,
        "description": "a cross join",
    }
)


def _gold(folder: Path, seconds: dict[str, float]) -> DbtManifest:
    folder.mkdir(parents=True)
    results = [{"unique_id": f"model.p.{name}", "execution_time": t} for name, t in seconds.items()]
    (folder / "run_results.json").write_text(json.dumps({"results": results}))
    models = {
        name: ModelNode(
            unique_id=f"model.p.{name}",
            name=name,
            layer="marts",
            database="gold",
            schema_="marts",
            alias=name,
            relation=f'"gold"."marts"."{name}"',
            depends_on=[],
            sources=[],
            compiled_code="select 1",
            raw_code="select 1",
            original_file_path=f"models/marts/{name}.sql",
        )
        for name in seconds
    }
    return DbtManifest(project_name="p", models=models, sources={})


def test_the_allowance_grows_with_the_gold(tmp_path: Path) -> None:
    small = _gold(tmp_path / "small", {"a": 0.1, "b": 0.2})
    large = _gold(tmp_path / "large", {"a": 12.0, "b": 8.0})
    # 60 + 2 x (build 60 + 10 x 0.3, slowest model 30)
    assert time_allowed(HACK, small, tmp_path / "small" / GOLD_DB) == pytest.approx(246.0)
    # 60 + 2 x (build 60 + 10 x 20, slowest model 10 x 12)
    assert time_allowed(HACK, large, tmp_path / "large" / GOLD_DB) == pytest.approx(820.0)
    assert time_allowed(HACK, small, None) == 60.0


def test_a_hack_that_broke_through_names_each_failed_check() -> None:
    check = HackCheck(
        id="enormous-output",
        kind="enormous_output",
        expected="refused",
        score=PredictedScore(cs=12.5, cfs=0.0, sr=0.0),
        statuses={"fct_a": "match / build_error"},
        seconds=300.0,
        max_seconds=246.0,
    )
    assert check.held is False
    assert check.failures == [
        "scoring took 300.0s, over the 246.0s allowed",
        "it scored cs=12.5 cfs=0.0 sr=0.0 (expected 0 / 0 / 0)",
        "the scorer ran some of its SQL (expected every node refused)",
    ]
    assert check.summary().endswith("BROKE THROUGH (" + "; ".join(check.failures) + ")")
    fine = check.model_copy(
        update={"score": PredictedScore(cs=0, cfs=0, sr=0), "seconds": 200.0, "statuses": {}}
    )
    assert fine.held is False and fine.failures == [
        "the scorer ran some of its SQL (expected every node refused)"
    ]
