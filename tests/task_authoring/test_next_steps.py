"""What ``task new`` prints next, per family: each family says its own steps (the CLI names
no family), and the lines are the ones the CLI printed when it named them."""

from __future__ import annotations

import pytest

from benchforge.cli.task import _next_steps
from benchforge.evaluation.families import get_family
from benchforge.evaluation.tasks.loader import load_task
from tests.paths import FIXTURES

CHECK = [
    "check: benchforge task validate {folder}",
    "       benchforge task verify {folder}",
]
STEPS = {
    "mini-impl": [
        "  fill {folder}/contract_metadata.yaml (metrics, data-quality rules, notes), then "
        "regenerate the contract: benchforge task contract {folder}",
        "  add mutations to task_specs/mutations/mini.yaml (six kinds; see "
        "task_specs/mutations/README.md)",
    ],
    "mini-evol-won-by-industry": [
        "  write {folder}/change_request.md",
        "  put gold v2 in {folder}/gold_v2/: every file v2 adds or changes, whole, at its path "
        "in the repository (models/..., their .yml); files v2 deletes go under removed: in "
        "task.yaml",
        "  optionally, mutations of the models v2 adds or changes in {folder}/mutations.yaml",
    ],
    "mini-arch-retention": [
        "  write {folder}/requirement.md, {folder}/reference_blueprint.yaml and the rubric in "
        "task.yaml (replace each TODO(scaffold))"
    ],
}


@pytest.mark.parametrize("task_id", sorted(STEPS))
def test_each_family_says_its_next_steps(task_id: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(FIXTURES)
    task = load_task(FIXTURES / "task_specs" / "de-mini" / task_id)
    folder = f"task_specs/de-mini/{task_id}"
    expected = [
        "next:",
        f"  edit {folder}/task.yaml: title, instructions (the family's default), tags",
        *STEPS[task_id],
        *CHECK,
    ]
    assert _next_steps(task) == [line.format(folder=folder) for line in expected]


def test_the_families_declare_what_the_cli_and_verification_named_them_for() -> None:
    """(generated files, ``task prepare``, checks on the dataset's twin, concurrent scoring)
    per shipped family: what the CLI and ``verify_tasks`` decided by family name before."""
    declared = {
        name: (f.generated, f.prepares, f.verifies_on_twin, f.shares_scoring_work)
        for name in ("de_impl", "de_evol", "de_arch", "da_open")
        for f in [get_family(name)]
    }
    assert declared == {
        "de_impl": (("contract",), False, False, True),
        "de_evol": ((), False, False, True),
        "de_arch": ((), False, False, False),
        "da_open": ((), True, True, False),
    }
