"""A real ``da_open`` task's length limit: padding a report (the judged catalogue's ``pad``:
headings, lists, distinct numbers, "because" sentences) scores no higher than the report it was
made from with either mock judge; a report over the task's ``max_report_words`` is judged on its
first words, flagged in the score; the judge calls do not grow with the padding."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack

import pytest

from benchforge.agents.mock_llm import MockServerHandle
from benchforge.core.llm import LlmConfig
from benchforge.evaluation.da.gold import DaGold
from benchforge.evaluation.da.spec import DaOpenTask
from benchforge.evaluation.families import family_of
from benchforge.evaluation.families.da import DaOpenFamily, JudgedReport
from benchforge.evaluation.judges.breakdown import judge_record_of
from benchforge.evaluation.judges.client import Judge, JudgeSettings
from benchforge.evaluation.judges.gsb import LENGTH_RATIO
from benchforge.evaluation.judges.hostile import anchored_lines_removed, pad
from benchforge.evaluation.judges.length import (
    DEFAULT_MAX_REPORT_WORDS,
    count_words,
    limit_words,
)
from benchforge.evaluation.judges.sanitize import sanitize_output
from benchforge.evaluation.tasks import LoadedTask
from benchforge.harness.judging import open_judge
from tests.evaluation.da.conftest import DaData

pytestmark = pytest.mark.slow  # tests/README.md: the fast and the full loop (the da_data build)

TASK = "crm-da-support-sla-patterns"


@pytest.fixture
def judges(mock_server: MockServerHandle) -> Iterator[dict[str, Judge]]:
    """Both mock judges, uncached."""
    with ExitStack() as stack:
        out = {}
        for model in ("mock-judge", "mock-judge-obedient"):
            config = LlmConfig(
                role="judge", model=model, base_url=mock_server.url, api_key="mock", max_retries=0
            )
            out[model] = stack.enter_context(open_judge(config, JudgeSettings()))
        yield out


def _prepared(da_data: DaData, task: LoadedTask) -> tuple[DaOpenFamily, DaGold]:
    family = family_of(task)
    assert isinstance(family, DaOpenFamily)
    gold = family.prepare_gold(task, da_data.datasets[7], da_data.work)
    assert isinstance(gold, DaGold)
    return family, gold


def _requests(report: JudgedReport) -> int:
    assert judge_record_of(report.score) is not None
    return judge_record_of(report.score).requests


def test_max_report_words_defaults_to_the_judges_limit(da_tasks: dict[str, LoadedTask]) -> None:
    for task in da_tasks.values():
        assert isinstance(task.spec, DaOpenTask)
        assert task.spec.max_report_words == DEFAULT_MAX_REPORT_WORDS
        reference = task.file(task.spec.reference).read_text()
        assert count_words(reference) < DEFAULT_MAX_REPORT_WORDS / 3


def test_padding_scores_no_higher_on_a_real_task(
    da_data: DaData, da_tasks: dict[str, LoadedTask], judges: dict[str, Judge]
) -> None:
    task = da_tasks[TASK]
    family, gold = _prepared(da_data, task)
    source = anchored_lines_removed(gold.reference, gold.rubric)
    within, over = pad(source, 1200), pad(source, 3000)
    # Past the limit the padding is never read: 3,000 and 100,000 words read the same.
    limit = DEFAULT_MAX_REPORT_WORDS
    assert limit_words(over, limit).text == limit_words(pad(source, 100_000), limit).text
    expected = count_words(sanitize_output(gold.reference).text)
    assert count_words(sanitize_output(source).text) <= LENGTH_RATIO * expected

    for model, judge in judges.items():
        honest = family.judge_report(task, source, gold, judge)
        reports = {
            n: family.judge_report(task, t, gold, judge)
            for n, t in (("within", within), ("over", over))
        }
        assert honest.gsb is not None and honest.gsb.length_matched == 0
        for name, report in reports.items():
            assert report.gsb is not None and report.rubric is not None
            assert report.score.metrics["score_da"] <= honest.score.metrics["score_da"], (
                model,
                name,
            )
            assert report.score.metrics["gsb"] <= honest.score.metrics["gsb"], (model, name)
            assert report.gsb.length_matched == len(gold.baselines)
            # Rubric calls do not change; GSB adds two per baseline (the length-matched check).
            assert _requests(report) == _requests(honest) + 2 * len(gold.baselines)
        over_report = reports["over"]
        assert over_report.gsb is not None and over_report.rubric is not None
        flag = over_report.gsb.truncated
        assert flag is not None and flag.startswith("truncated: kept ") and "of " in flag
        assert over_report.rubric.truncated == flag
        assert (
            judge_record_of(over_report.score) is not None
            and judge_record_of(over_report.score).truncated == flag
        )
        assert over_report.score.detail is not None and f"report {flag}" in over_report.score.detail
        assert judge_record_of(reports["within"].score) is not None
        assert judge_record_of(reports["within"].score).truncated is None


def test_a_report_over_the_tasks_limit_is_judged_on_its_first_words(
    da_data: DaData, da_tasks: dict[str, LoadedTask], judges: dict[str, Judge]
) -> None:
    task = da_tasks[TASK]
    family, gold = _prepared(da_data, task)
    assert isinstance(task.spec, DaOpenTask)
    short = task.model_copy(update={"spec": task.spec.model_copy(update={"max_report_words": 120})})
    judge = judges["mock-judge"]
    whole = family.judge_report(task, gold.reference, gold, judge)
    cut = family.judge_report(short, gold.reference, gold, judge)
    visible = sanitize_output(gold.reference).text
    kept = limit_words(visible, 120)
    flag = f"truncated: kept {kept.kept_words} of {count_words(visible)} words"
    assert cut.rubric is not None and cut.rubric.truncated == flag
    assert judge_record_of(cut.score) is not None and judge_record_of(cut.score).truncated == flag
    assert (
        judge_record_of(whole.score) is not None and judge_record_of(whole.score).truncated is None
    )
    assert cut.score.metrics["rubric"] < whole.score.metrics["rubric"]
    quotes = [q for v in cut.rubric.items if v.status == "scored" and v.earned for q in v.evidence]
    assert quotes and all(q in kept.text for q in quotes)  # evidence only from the kept words
    assert _requests(cut) <= _requests(whole) + 2 * len(gold.baselines)
