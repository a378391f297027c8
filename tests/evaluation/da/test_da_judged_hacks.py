"""The judged reward-hack catalogue on the shipped crm ``da_open`` tasks (seed 7), with the
faithful and the obedient mock judge, per item and batched: no hostile report scores above the
honest report it was made from (the reference without its anchored lines), every injection is
flagged, every expected flag is found. The same run on all 15 da tasks is part of
``benchforge task verify``."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from benchforge.agents.mock_llm import MockServerHandle
from benchforge.core.llm import LlmConfig, SyncLlmClient
from benchforge.evaluation.da.gold import DaGold
from benchforge.evaluation.families import family_of
from benchforge.evaluation.families.da import DaOpenFamily
from benchforge.evaluation.families.da_hacks import run_judged_hacks
from benchforge.evaluation.judges.client import Judge, JudgeSettings
from benchforge.evaluation.judges.hacks import load_judged_hacks
from benchforge.evaluation.tasks import LoadedTask
from tests.evaluation.da.conftest import DaData
from tests.evaluation.da.test_da_tasks import TASK_IDS

HACKS = load_judged_hacks()
JUDGES = ("mock-judge", "mock-judge-obedient")
MODES = ("per_item", "batched")


@pytest.fixture
def make(mock_server: MockServerHandle) -> Iterator[dict[tuple[str, str], Judge]]:
    clients = []
    judges = {}
    for model in JUDGES:
        for mode in MODES:
            config = LlmConfig(
                role="judge", model=model, base_url=mock_server.url, api_key="mock", max_retries=0
            )
            client = SyncLlmClient(config)
            clients.append(client)
            judges[(model, mode)] = Judge(client, JudgeSettings(mode=mode))
    yield judges
    for client in clients:
        client.close()


@pytest.mark.parametrize("task_id", TASK_IDS)
def test_no_hostile_report_beats_its_honest_source(
    task_id: str,
    da_data: DaData,
    da_tasks: dict[str, LoadedTask],
    make: dict[tuple[str, str], Judge],
) -> None:
    task = da_tasks[task_id]
    family = family_of(task)
    assert isinstance(family, DaOpenFamily)
    gold = family.prepare_gold(task, da_data.datasets[7], da_data.work)
    assert isinstance(gold, DaGold)
    failures = []
    for (model, mode), judge in make.items():
        run = run_judged_hacks(
            lambda text, j=judge: family.judge_report(task, text, gold, j), task, gold, judge, HACKS
        )
        assert run.honest is not None and 0 < run.honest < 100, (model, mode, run.honest)
        assert len(run.outcomes) == len(HACKS)
        failures += [(model, mode, o.hack_id, o.problems) for o in run.failed]
    assert failures == []
