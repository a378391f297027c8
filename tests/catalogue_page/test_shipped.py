"""The shipped catalogue renders one row per task, each with what it scores."""

from __future__ import annotations

from pathlib import Path

from benchforge.evaluation.tasks import load_tasks
from benchforge.harness.catalogue_page import write_catalogue_page
from tests.catalogue_page.dom import read_table
from tests.paths import REPO_ROOT


def test_every_shipped_task_has_one_row(tmp_path: Path) -> None:
    tasks_root = REPO_ROOT / "task_specs"
    keys = sorted(t.key for t in load_tasks(tasks_root))
    table = read_table(write_catalogue_page(tasks_root, tmp_path / "cat.html").read_text())
    assert sorted(r.task for r in table.rows) == keys
    families = {r.task: table.cell(r.task, "Family") for r in table.rows}
    assert set(families.values()) >= {"de_impl", "de_evol", "de_arch", "da_open", "lake_pipeline"}
    for row in table.rows:  # every shipped family is counted: a positive number of units
        count = table.cell(row.task, "Nodes scored").split()[0]
        assert int(count) > 0, row.task
