"""The five crm ``da_open`` tasks: they load and validate, follow the authoring rules, hand
agents nothing of the answer, and their reference reports pass THE FAITHFUL MOCK JUDGE RULE
(checked offline here by ``faithful``; through the judges and the mock server in
``test_da_judged``)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from benchforge.evaluation.da.checks import reference_copies
from benchforge.evaluation.da.gold import DaGold
from benchforge.evaluation.da.render import wrong_anchor_report
from benchforge.evaluation.da.spec import DaOpenTask
from benchforge.evaluation.families import family_of, workspace
from benchforge.evaluation.families.da import QUESTION_FILE, DaOpenFamily
from benchforge.evaluation.tasks import LoadedTask
from tests.evaluation.da import faithful
from tests.evaluation.da.conftest import SEEDS, SUITE, DaData
from tests.paths import REPO_ROOT

pytestmark = pytest.mark.slow  # tests/README.md: the fast and the full loop (the da_data build)

TASK_IDS = sorted(p.parent.name for p in SUITE.glob("*/task.yaml"))


def spec_of(task: LoadedTask) -> DaOpenTask:
    assert isinstance(task.spec, DaOpenTask)
    return task.spec


def test_the_suite_has_one_task_per_category(da_tasks: dict[str, LoadedTask]) -> None:
    assert len(TASK_IDS) == 5 and sorted(da_tasks) == TASK_IDS
    categories = sorted(spec_of(t).category for t in da_tasks.values())
    assert categories == sorted(
        ["descriptive", "diagnostic", "strategic", "pattern_recognition", "profiling"]
    )
    for task in da_tasks.values():
        spec = spec_of(task)
        assert (spec.suite, spec.domain, spec.repo) == ("da-crm", "crm", "dbt_projects/crm")
        assert (spec.dataset.scale, spec.dataset.seed) == (0.1, 7)
        family = family_of(task)
        assert isinstance(family, DaOpenFamily)
        assert (family.toolset, family.submission, family.judged, family.heldout) == (
            "da",
            "report",
            True,
            False,
        )


def test_benchforge_task_validate_lists_them() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "benchforge.cli.main", "task", "validate", str(SUITE)],
        capture_output=True,
        text=True,
        cwd=REPO_ROOT,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    for task_id in TASK_IDS:
        assert re.search(rf"ok  da-crm/{task_id}@\d+  \(da_open,", result.stdout), task_id
    assert "5 task(s) valid" in result.stdout


def test_rubrics_follow_the_authoring_rules(da_tasks: dict[str, LoadedTask]) -> None:
    multi_path = 0
    for task in da_tasks.values():
        spec = spec_of(task)
        rubric = spec.rubric
        standards = rubric.standards()
        items = rubric.items()
        assert 2 <= len(rubric.requirements) <= 3, spec.id
        assert 4 <= len(standards) <= 7, spec.id
        assert 12 <= len(items) <= 25, spec.id
        assert 3 <= len(spec.anchors) <= 8, spec.id
        assert 2 <= len(spec.marts) <= 5, spec.id
        assert len(spec.baselines) == 3, spec.id
        assert any(i.points < 0 for i in items), f"{spec.id} has no penalty item"
        assert {i.type for i in items} == {"completeness", "accuracy", "insightfulness"}
        # Accuracy is about 60% of the points (the first path of each standard).
        accuracy = sum(
            i.points
            for s in standards
            for i in s.paths[0].items
            if i.type == "accuracy" and i.points > 0
        )
        assert 0.5 <= accuracy / rubric.max_points <= 0.7, spec.id
        assert all(i.anchor for i in items if i.type == "accuracy" and i.points > 0), spec.id
        multi_path += any(len(s.paths) > 1 for s in standards)
    assert multi_path >= 2


def test_materials_hold_the_question_and_nothing_of_the_answer(
    da_tasks: dict[str, LoadedTask], tmp_path: Path
) -> None:
    for task in da_tasks.values():
        spec = spec_of(task)
        dest = workspace(task, tmp_path / spec.id)
        files = sorted(p.relative_to(dest).as_posix() for p in dest.rglob("*") if p.is_file())
        assert files == ["TASK.md", QUESTION_FILE, "report/.keep"], files
        shown = "\n".join((dest / f).read_text() for f in files)
        question = (dest / QUESTION_FILE).read_text()
        assert spec.instructions.strip() in question
        assert all(f"`{mart}`" in question for mart in spec.marts)
        assert "report/report.md" in question
        secrets = [i.criterion for i in spec.rubric.items()]
        secrets += [a.sql for a in spec.anchors.values()]
        for rel in [spec.reference, *spec.baselines]:
            secrets += [line for line in task.file(rel).read_text().splitlines() if len(line) > 25]
        leaked = [s for s in secrets if s in shown]
        assert not leaked, f"{spec.id} leaks {leaked[:3]}"
        assert "{{" not in shown


def test_solution_is_the_reference_rendered_on_the_dataset(
    da_data: DaData, da_tasks: dict[str, LoadedTask]
) -> None:
    task = da_tasks["crm-da-win-rate-drivers"]
    family = family_of(task)
    assert family.solution(task, da_data.work) is None
    folder = family.solution(task, da_data.work, da_data.datasets[7])
    assert folder is not None
    gold = family.prepare_gold(task, da_data.datasets[7], da_data.work)
    assert (folder / "report.md").read_text() == gold.reference
    assert "{{" not in gold.reference


@pytest.mark.parametrize("task_id", TASK_IDS)
def test_reference_passes_the_faithful_rule(
    task_id: str, da_data: DaData, da_tasks: dict[str, LoadedTask]
) -> None:
    """Every positive item earned (coverage above 0.30 under two stop lists, the anchor
    stated in every best unit, no hedge, no copied rubric), no penalty, "good" against every
    baseline on both GSB dimensions, and the wrong-anchor report losing exactly the anchored
    accuracy items of the paths the reference follows, on both seeds."""
    task = da_tasks[task_id]
    spec = spec_of(task)
    template = task.file(spec.reference).read_text()
    assert reference_copies(spec, template) == []
    for seed in SEEDS:
        gold = family_of(task).prepare_gold(task, da_data.datasets[seed], da_data.work)
        assert isinstance(gold, DaGold)
        check = faithful.rubric_check(gold.reference, gold.rubric)
        failing = {
            i: c.problems
            for i, c in check.items.items()
            if check.paths[c.item.standard_id] == c.item.path_id
            and c.item.points > 0
            and c.earned <= 0
        }
        assert not failing, failing
        assert check.score == pytest.approx(1.0), (seed, check.score)
        for c in check.items.values():
            if c.item.points < 0:
                assert c.earned == 0, f"{c.item.id} applies to the reference ({c.coverage:.2f})"
            elif c.item.points > 0 and check.paths[c.item.standard_id] == c.item.path_id:
                assert c.coverage >= 0.35, f"{c.item.id}: coverage {c.coverage:.2f} (margin)"
        for standard, path in check.paths.items():  # other paths clearly behind
            for other in {c.item.path_id for c in check.items.values()} - {path}:
                if other.startswith(standard + "."):
                    behind = sum(c.earned for c in check.items.values() if c.item.path_id == other)
                    best = sum(c.earned for c in check.items.values() if c.item.path_id == path)
                    assert behind < best, (standard, other, behind, best)
        read, deep = faithful.readability(gold.reference), faithful.depth(gold.reference)
        for baseline_id, text in gold.baselines.items():
            assert faithful.gsb_verdict(read, faithful.readability(text)) == "good", baseline_id
            assert faithful.gsb_verdict(deep, faithful.depth(text)) == "good", baseline_id
            assert faithful.rubric_check(text, gold.rubric).score < 0.3, baseline_id
        wrong = wrong_anchor_report(template, gold.anchors, spec.anchors, claims=gold.claims)
        wrong_check = faithful.rubric_check(wrong, gold.rubric)
        expected = sorted(
            i.id
            for i in gold.rubric.items
            if i.type == "accuracy"
            and i.points > 0
            and i.anchor is not None
            and check.paths[i.standard_id] == i.path_id
        )
        lost = sorted(i for i in check.items if wrong_check.earned(i) < check.earned(i))
        assert lost == expected and expected, (lost, expected)
