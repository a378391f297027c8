"""The judged reward-hack catalogue on shipped crm ``da_open`` tasks (seed 7): no hostile
report scores above the honest report it was made from (the reference without its anchored
lines), every injection is flagged, every expected flag is found. Three tasks, each with one
judge and mode, so that both mock judges and both modes are covered in the suite's budget; the
whole matrix (every da task, both judges, both modes) is ``python bench/judged_hacks.py``, and
``benchforge task verify`` runs the catalogue on every task it verifies."""

from __future__ import annotations

import pytest

from benchforge.agents.mock_llm import MockServerHandle
from benchforge.core.llm import LlmConfig
from benchforge.evaluation.da.gold import DaGold
from benchforge.evaluation.families import family_of
from benchforge.evaluation.families.da import DaOpenFamily
from benchforge.evaluation.families.da_hacks import run_judged_hacks
from benchforge.evaluation.judges.client import JudgeSettings
from benchforge.evaluation.judges.hacks import load_judged_hacks
from benchforge.evaluation.tasks import LoadedTask
from benchforge.harness.judging import open_judge
from tests.evaluation.da.conftest import DaData

pytestmark = pytest.mark.slow  # tests/README.md: the fast and the full loop

HACKS = load_judged_hacks()


CASES = [
    ("crm-da-campaign-budget", "mock-judge-obedient", "per_item"),
    ("crm-da-support-sla-patterns", "mock-judge", "batched"),
    ("crm-da-customer-profile", "mock-judge-obedient", "batched"),
]


@pytest.mark.parametrize(("task_id", "model", "mode"), CASES)
def test_no_hostile_report_beats_its_honest_source(
    task_id: str,
    model: str,
    mode: str,
    da_data: DaData,
    da_tasks: dict[str, LoadedTask],
    mock_server: MockServerHandle,
) -> None:
    task = da_tasks[task_id]
    family = family_of(task)
    assert isinstance(family, DaOpenFamily)
    gold = family.prepare_gold(task, da_data.datasets[7], da_data.work)
    assert isinstance(gold, DaGold)
    config = LlmConfig(
        role="judge", model=model, base_url=mock_server.url, api_key="mock", max_retries=0
    )
    with open_judge(config, JudgeSettings(mode=mode)) as judge:
        run = run_judged_hacks(
            lambda text: family.judge_report(task, text, gold, judge), task, gold, judge, HACKS
        )
    assert run.honest is not None and 0 < run.honest < 100
    assert len(run.outcomes) == len(HACKS)
    assert [(o.hack_id, o.problems) for o in run.failed] == []
