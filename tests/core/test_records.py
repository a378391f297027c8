"""The shared records and the artifact layout: a score holds its key (and still reads the flat
layout scores were stored in before), and the layout owns every key and lists runs."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from pydantic import ValidationError

from benchforge.core.artifacts import LAYOUT, open_store
from benchforge.core.records import AgentLimits, RunSpec, TrialKey, TrialScore

KEY = TrialKey(
    suite="s",
    task_id="t",
    task_version="1",
    agent="oracle",
    agent_config_hash="0" * 12,
    model="org/model",
    epoch=2,
)


def test_a_score_holds_its_key_and_round_trips() -> None:
    score = TrialScore(
        run_id="r",
        key=KEY,
        family="de_impl",
        status="scored",
        metrics={"cs": 100.0},
        primary="cs",
        termination="finished",
    )
    stored = json.loads(score.model_dump_json())
    assert stored["key"] == KEY.model_dump() and "task_id" not in stored
    assert TrialScore.model_validate_json(score.model_dump_json()) == score
    assert score.primary_score == 100.0


def test_a_score_in_the_old_flat_layout_still_loads() -> None:
    flat = {
        "run_id": "r",
        "trial": KEY.slug,
        **KEY.model_dump(),
        "family": "de_impl",
        "status": "infra_error",
        "termination": "infra_error",
        "detail": "LLM 503",
    }
    score = TrialScore.model_validate_json(json.dumps(flat))
    assert score.key == KEY and score.detail == "LLM 503"
    with pytest.raises(ValidationError, match="is not its key's slug"):
        TrialScore.model_validate({**flat, "trial": "another/trial"})


def test_layout_keys() -> None:
    slug = KEY.slug
    assert LAYOUT.run_spec("r1") == "runs/r1/run.json"
    assert LAYOUT.trial_result("r1", slug) == f"runs/r1/trials/{slug}/result.json"
    assert LAYOUT.trial_submission("r1", slug) == f"runs/r1/trials/{slug}/submission.tar.gz"
    assert LAYOUT.trial_infra_marker("r1", slug) == f"runs/r1/trials/{slug}/infra_error"
    assert LAYOUT.score("r1", slug) == f"runs/r1/scores/{slug}.json"
    assert LAYOUT.report("r1", "leaderboard.md") == "runs/r1/report/leaderboard.md"
    assert LAYOUT.materials("r1", "x") == "runs/r1/materials/x.tar.gz"
    assert LAYOUT.dataset("crm", 0.1, 7) == "datasets/crm/scale-0.1/seed-7"
    assert LAYOUT.dataset_record("datasets/crm/") == "datasets/crm/dataset.json"
    assert LAYOUT.heldout_dataset("crm", "ab12") == "datasets-heldout/crm/ab12"
    assert LAYOUT.gold("crm", "dv", "rv") == "gold/crm/dv/rv"
    assert LAYOUT.gold_record_file(Path("/g")) == Path("/g/build.json")
    assert LAYOUT.dataset_record_file(Path("/d")) == Path("/d/dataset.json")


def test_layout_lists_runs_and_finds_the_latest(tmp_path: Path) -> None:
    store = open_store(str(tmp_path / "store"))
    assert LAYOUT.run_specs(store) == [] and LAYOUT.latest_run(store) is None
    start = datetime(2025, 1, 1, tzinfo=UTC)
    for run_id, hours in (("b", 2), ("a", 1), ("c", 0)):
        spec = RunSpec(
            run_id=run_id,
            suites=["s"],
            tasks_root="tasks",
            agents=["oracle"],
            models=["-"],
            epochs=1,
            limits=AgentLimits(),
            created_at=start + timedelta(hours=hours),
        )
        store.put_bytes(LAYOUT.run_spec(run_id), spec.model_dump_json().encode())
    # a trial's file named like a run spec, deeper down, is not a run
    store.put_bytes(LAYOUT.trial_file("a", "x", LAYOUT.RUN_SPEC), b"{}")
    assert [s.run_id for s in LAYOUT.run_specs(store)] == ["c", "a", "b"]
    latest = LAYOUT.latest_run(store)
    assert latest is not None and latest.run_id == "b"
