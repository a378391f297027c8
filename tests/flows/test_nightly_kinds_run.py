"""A nightly of two configured run kinds, run for real on the fixture catalogue (the mini
domain): each kind's tasks verified, run by the oracle and null agents in sandboxes, scored
(the judged kind through the mock judge) and reported as a run of its own, on the session's
Prefect server; the domain's gold is built once for both."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

import pytest

from benchforge.flows.nightly import nightly
from benchforge.flows.run_kinds import RunKind
from tests.paths import FIXTURES
from tests.support.datasets import mini_dataset

pytestmark = pytest.mark.slow  # tests/README.md: the fast and the full loop


def test_two_run_kinds_are_two_verified_scored_and_reported_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    dataset = mini_dataset(tmp_path / "mini")
    monkeypatch.chdir(tmp_path)  # task_specs/ is the fixture catalogue's, not the checkout's
    monkeypatch.setenv("BENCHFORGE_CATALOGUE_ROOT", str(FIXTURES))
    monkeypatch.setenv("BENCHFORGE_ARTIFACT_ROOT", str(tmp_path / "artifacts"))
    monkeypatch.delenv("BENCHFORGE_OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("BENCHFORGE_OPENAI_BASE_URL", raising=False)
    kinds = [
        RunKind(name="built", suites=["de-mini"], task_ids=["mini-impl"], agents=["oracle"]),
        RunKind(name="judged", suites=["da-mini"], agents=["oracle", "null"]),
    ]
    result = nightly(
        run_date=date(2026, 1, 31),
        run_kinds=kinds,
        datasets={"mini": str(dataset)},
        concurrency=2,
        score_concurrency=1,
    )
    built, judged = result.runs
    assert (built.kind, judged.kind) == ("built", "judged")
    assert judged.run_id == f"{built.run_id}-judged" and built.run_id == result.run_id
    assert (built.verified_tasks, judged.verified_tasks) == (1, 1)
    assert (built.run.trials, judged.run.trials) == (1, 2)
    assert built.scores.statuses == {"scored": 1} and judged.scores.statuses == {"scored": 2}
    assert built.scores.judge is None and judged.scores.judge is not None
    assert set(result.gold) == {"mini"}
    for done in (built, judged):
        board = json.loads(Path(done.report.uris["leaderboard.json"]).read_text())
        rows = {row["agent"]: row["primary_mean"] for row in board["rows"]}
        assert rows["oracle"] >= 90.0, (done.kind, rows)
    assert rows["null"] == 0.0  # the judged kind's empty report
