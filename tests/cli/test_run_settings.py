"""``benchforge run --setting S``: the tasks of the suites tagged ``setting:S`` (lake tasks are
one task per setting), among ``--task`` when given; a setting no task has is an error."""

from __future__ import annotations

import pytest

from benchforge.cli.run import tasks_in_settings
from benchforge.core.errors import BenchforgeError
from tests.paths import REPO_ROOT

ROOT = str(REPO_ROOT / "task_specs")


def test_settings_select_their_tasks() -> None:
    chosen = tasks_in_settings(ROOT, ["lake-crm"], None, ["full", "oracle"])
    assert len(chosen) == 20
    assert "crm-lake-webinar-campaigns-oracle" in chosen
    assert not any(t.endswith(("-trimmed", "-obscured", "-subtasks")) for t in chosen)
    among = ["crm-lake-webinar-campaigns-full", "crm-lake-webinar-campaigns-subtasks"]
    assert tasks_in_settings(ROOT, ["lake-crm"], among, ["subtasks"]) == among[1:]


def test_a_setting_no_task_has_is_an_error() -> None:
    with pytest.raises(BenchforgeError, match="no task of lake-crm is tagged setting:ful"):
        tasks_in_settings(ROOT, ["lake-crm"], None, ["ful"])
