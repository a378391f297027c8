"""Calibration cases from judged trials, without Prefect or a stored run: what each family
declares it judges (the output file, the rubric and baselines from its gold) becomes rubric
item cases and GSB pair cases; a family that judges nothing is refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchforge.core.errors import BenchforgeError
from benchforge.core.records import TrialScore
from benchforge.core.records.trials import TrialKey
from benchforge.evaluation.calibration.cases import FlatRubricRecord, JudgedMaterial, read_cases
from benchforge.evaluation.calibration.trial_cases import (
    JudgedTrial,
    case_set,
    judged_material,
    judged_text,
    trial_cases,
)
from benchforge.evaluation.da.gold import DaGold
from benchforge.evaluation.families import family_of
from benchforge.evaluation.tasks.loader import load_task
from benchforge.evaluation.tasks.models import LoadedTask
from tests.paths import FIXTURES

CALIBRATION = FIXTURES / "calibration"
TASKS = FIXTURES / "task_specs"


def _score(task: LoadedTask, agent: str, family: str) -> TrialScore:
    key = TrialKey(
        suite=task.spec.suite,
        task_id=task.spec.id,
        task_version=task.spec.version,
        agent=agent,
        agent_config_hash="1234",
        model="gpt",
        epoch=0,
    )
    return TrialScore(run_id="r", key=key, family=family, status="scored", termination="finished")


@pytest.fixture(scope="module")
def da_task() -> LoadedTask:
    return load_task(TASKS / "da-mini" / "mini-da-won-revenue")


@pytest.fixture(scope="module")
def arch_task() -> LoadedTask:
    return load_task(TASKS / "de-mini" / "mini-arch-retention")


def test_a_da_trial_gives_every_rubric_item_and_each_baseline_on_both_dimensions(
    da_task: LoadedTask, tmp_path: Path
) -> None:
    (rubric,) = read_cases(CALIBRATION / "cases.jsonl").rubrics.values()
    # the fields the family reads; a real DaGold needs the analysis data (its own tests)
    gold = DaGold.model_construct(rubric=rubric, question="Why?", baselines={"b2": "B", "b1": "A"})
    family = family_of(da_task)
    (tmp_path / "report").mkdir()
    (tmp_path / "report" / "report.md").write_text("# Report")
    output = judged_text(family, da_task, tmp_path)
    assert output == "# Report"
    material = judged_material(family, da_task, gold)
    assert material.rubric is rubric and material.question == "Why?"
    score = _score(da_task, "react-da", family.name)
    cases = trial_cases(JudgedTrial(score=score, task=da_task, material=material, output=output))
    items = [c for c in cases if c.kind == "rubric_item"]
    assert [c.item_id for c in items] == [i.id for i in rubric.items]
    assert all(c.question == "Why?" and c.rubric == rubric.version for c in items)
    assert all(c.task == da_task.key and c.output == "# Report" for c in cases)
    gsb = [c for c in cases if c.kind == "gsb_pair"]
    assert [(c.baseline_id, c.dimension) for c in gsb] == [
        ("b1", "readability"),
        ("b1", "depth"),
        ("b2", "readability"),
        ("b2", "depth"),
    ]
    slug = score.key.slug
    assert gsb[0].pair == f"{slug}:gsb:b1" and gsb[0].case_id == f"{gsb[0].pair}:readability"
    assert gsb[0].baseline == "A" and gsb[0].contestant == "react-da (gpt)"
    assert all(c.rubric is None for c in gsb)


def test_a_blueprint_trial_gives_its_flat_rubric_items(
    arch_task: LoadedTask, tmp_path: Path
) -> None:
    family = family_of(arch_task)
    gold = family.prepare_gold(arch_task, tmp_path / "no-data", tmp_path / "work")
    assert judged_text(family, arch_task, tmp_path) == ""  # the agent wrote no blueprint
    blueprint = family.judged_output(arch_task, tmp_path)
    assert blueprint is not None
    blueprint.parent.mkdir(parents=True)
    blueprint.write_text("models: []\n")
    trials = [
        JudgedTrial(
            score=_score(arch_task, agent, family.name),
            task=arch_task,
            material=judged_material(family, arch_task, gold),
            output=judged_text(family, arch_task, tmp_path),
        )
        for agent in ("oracle", "careless")
    ]
    found = case_set(trials)
    (flat,) = found.flat_rubrics.values()  # one rubric, cited by both trials' cases
    assert isinstance(flat, FlatRubricRecord) and not found.rubrics
    assert flat.task == arch_task.key and {i.id for i in flat.items} == {"BA1", "TF1", "DQ1"}
    assert [(c.agent, c.item_id) for c in found.cases] == [
        (agent, item) for agent in ("oracle", "careless") for item in ("BA1", "TF1", "DQ1")
    ]
    assert {c.question for c in found.cases} == {flat.requirement}
    assert {c.kind for c in found.cases} == {"rubric_item"}


def test_a_family_that_judges_nothing_has_no_cases(tmp_path: Path) -> None:
    task = load_task(TASKS / "de-mini" / "mini-impl")
    family = family_of(task)
    assert family.judged_output(task, tmp_path) is None
    with pytest.raises(BenchforgeError, match="has no judged output"):
        judged_text(family, task, tmp_path)
    with pytest.raises(BenchforgeError, match="has no judged rubric"):
        judged_material(family, task, gold=None)


def test_material_is_what_the_judge_scores_against() -> None:
    (rubric,) = read_cases(CALIBRATION / "cases.jsonl").rubrics.values()
    material = JudgedMaterial(question="Why?", rubric=rubric)
    assert material.rubric_version == rubric.version and material.baselines == {}
    assert material.item_ids() == [i.id for i in rubric.items]
