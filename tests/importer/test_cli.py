"""``benchforge dataset import`` end to end: as a subprocess (the library path), and through
the Prefect flow ``import-dataset`` (the default) on the test session's ephemeral server; both
publish a dataset every consumer takes, and a bad source is one line."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from benchforge.cli.main import main
from tests.importer.checks import assert_dataset
from tests.importer.test_import_files import write_csvs
from tests.paths import REPO_ROOT

ARGS = ["--name", "shop", "--no-prefect", "--no-validate", "--out"]


def test_the_command_imports_a_folder(tmp_path: Path) -> None:
    src, out = write_csvs(tmp_path / "src"), tmp_path / "datasets" / "shop"
    result = subprocess.run(
        [sys.executable, "-m", "benchforge.cli", "dataset", "import", str(src), *ARGS, str(out)],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        env=dict(os.environ),
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert f"dataset shop: 7 rows in 2 tables\n  -> {out}\n" in result.stdout
    assert_dataset(out, "shop", {"orders": 4, "customers": 3})


def test_the_flow_validates_publishes_and_refuses_a_bad_source(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src, out = write_csvs(tmp_path / "src"), tmp_path / "datasets" / "shop"
    assert main(["dataset", "import", str(src), "--name", "shop", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert re.search(r"Great Expectations: \d+ expectations passed", printed), printed
    assert_dataset(out, "shop", {"orders": 4, "customers": 3})
    (src / "zones.csv").write_text("id,name\n1,a\n2,b,extra\n")
    assert main(["dataset", "import", str(src), "--name", "shop", "--out", str(out)]) == 2
    assert "zones.csv line 3: 3 fields" in capsys.readouterr().err
    assert_dataset(out, "shop", {"orders": 4, "customers": 3})  # the old one, untouched
