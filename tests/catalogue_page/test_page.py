"""The written page: the stored numbers in the right agent's column and task's row, "not run"
where an agent never ran a task, every authored text escaped, and the CLI command."""

from __future__ import annotations

import argparse
from datetime import UTC, datetime
from pathlib import Path

from benchforge.cli.task_catalogue import add_arguments, catalogue_command
from benchforge.core.artifacts import open_store
from benchforge.core.records.verification import (
    EMPTY,
    REFERENCE,
    TaskVerification,
    VerificationCheck,
)
from benchforge.harness.catalogue_page import (
    AgentResult,
    CatalogueEntry,
    DatasetInfo,
    render_catalogue,
    write_catalogue_page,
)
from benchforge.harness.verifications import read_verifications, write_verifications
from tests.catalogue_page.catalogue import (
    ARCH,
    EVOL,
    IMPL,
    IMPL_TITLE,
    KEYS,
    ORACLE_IMPL,
    stored_runs,
    write_catalogue,
)
from tests.catalogue_page.dom import read_table

FIXED = ["Task", "Family", "Suite", "Dataset", "Difficulty", "Nodes scored", "Verified"]


def test_the_page_shows_each_agents_latest_numbers(tmp_path: Path) -> None:
    artifacts = stored_runs(tmp_path / "artifacts")
    page = write_catalogue_page(write_catalogue(tmp_path), tmp_path / "cat.html", artifacts)
    table = read_table(page.read_text())
    assert table.headers == [*FIXED, "oracle", "react-de · gpt-x"]
    assert [r.task for r in table.rows] == [KEYS[ARCH], KEYS[EVOL], KEYS[IMPL]]
    assert table.cell(KEYS[IMPL], "oracle") == ORACLE_IMPL
    assert table.cell(KEYS[IMPL], "react-de · gpt-x") == (
        "80.0 cs cfs 70.0 · sr 0.0 pass 0/1 2025-03-01"
    )
    assert table.cell(KEYS[EVOL], "oracle") == ("100.0 cs cfs 100.0 · sr 100.0 pass 1/1 2025-03-01")
    assert table.cell(KEYS[EVOL], "react-de · gpt-x") == "not run"
    assert table.cell(KEYS[ARCH], "oracle") == "not run"
    assert table.cell(KEYS[IMPL], "Nodes scored").startswith("3 models")
    assert table.cell(KEYS[EVOL], "Difficulty") == "hard"  # authored: no derived mark
    assert table.cell(KEYS[IMPL], "Difficulty") == "easy*"
    assert table.cell(KEYS[IMPL], "Dataset") == "tiny · scale 0.5 · seed 11"
    assert table.cell(KEYS[IMPL], "Verified") == "not verified"
    text = page.read_text()
    assert "runs (2 runs)" in text
    assert "<link" not in text and " src=" not in text  # self-contained: no asset to fetch


def test_authored_and_stored_text_is_escaped(tmp_path: Path) -> None:
    page = write_catalogue_page(write_catalogue(tmp_path), tmp_path / "cat.html").read_text()
    assert "Build &lt;the&gt; tiny &amp; warehouse" in page
    assert IMPL_TITLE not in page

    hostile = "<img src=x onerror=alert(1)>"
    entry = CatalogueEntry(
        suite="s",
        task_id="t",
        version="1",
        family=hostile,
        title=hostile,
        domain="d",
        dataset=DatasetInfo(domain="d", location=hostile),
        tags=[hostile],
        difficulty="unrated",
        difficulty_source="none",
        folder=hostile,
        results=[
            AgentResult(
                agent=hostile,
                model=hostile,
                run_id=hostile,
                run_created_at=datetime(2025, 1, 1, tzinfo=UTC),
                task_version=hostile,
                primary=hostile,
                metrics={hostile: 1.0},
                trials=1,
                scored=1,
                passed=0,
            )
        ],
    )
    html = render_catalogue([entry], hostile)
    assert "<img" not in html
    assert html.count("&lt;img src=x onerror=alert(1)&gt;") >= 8


def test_without_a_run_store_the_page_says_so(tmp_path: Path) -> None:
    page = write_catalogue_page(write_catalogue(tmp_path), tmp_path / "out")
    assert page == tmp_path / "out" / "catalogue.html"
    table = read_table(page.read_text())
    assert table.headers == [*FIXED, "Last results"]
    assert {r.cells[-1] for r in table.rows} == {"no run store read"}


def test_the_command_writes_the_page(tmp_path: Path, capsys: object) -> None:
    """As ``benchforge task catalogue PATH --out DIR --runs STORE`` parses it (the task parser
    gives path and --out)."""
    artifacts = stored_runs(tmp_path / "artifacts")
    root = write_catalogue(tmp_path)
    parser = argparse.ArgumentParser()
    parser.add_argument("path", nargs="?", default="task_specs")
    parser.add_argument("--out")
    add_arguments(parser)
    args = parser.parse_args([str(root), "--out", str(tmp_path / "site"), "--runs", str(artifacts)])
    assert catalogue_command(args) == 0
    table = read_table((tmp_path / "site" / "catalogue.html").read_text())
    assert table.cell(KEYS[IMPL], "oracle") == ORACLE_IMPL


def test_the_last_stored_verification_shows_in_its_row(tmp_path: Path) -> None:
    """A verify stores each task's checks; the page shows the last one of each task version
    with the shared checks macro (the DE families define none of their own)."""
    artifacts = stored_runs(tmp_path / "artifacts")
    store = open_store(str(artifacts))
    checks = [
        VerificationCheck.of_score("gold", REFERENCE, 100.0, 100.0),
        VerificationCheck.of_score("empty", EMPTY, 12.5, 0.0),
        VerificationCheck(name="m1", group="mutations", expected="1", observed="1", passed=True),
        VerificationCheck(name="m2", group="mutations", expected="1", observed="0", passed=False),
    ]
    failing = TaskVerification(task=KEYS[IMPL], checks=checks, problems=["empty scores 12.5"])
    write_verifications(store, [failing])
    assert read_verifications(store)[KEYS[IMPL]].verified_at is not None
    page = write_catalogue_page(write_catalogue(tmp_path), tmp_path / "cat.html", artifacts)
    table = read_table(page.read_text())
    assert table.cell(KEYS[IMPL], "Verified") == (
        "FAILS gold 100 · empty 12.5 · mutations 1/2 1 problem empty scores 12.5"
    )
    assert table.cell(KEYS[EVOL], "Verified") == "not verified"
