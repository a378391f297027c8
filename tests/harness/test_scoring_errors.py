"""One trial whose scoring raises, among oracle and null trials of a real run (real Prefect,
sandboxes and dbt): it is stored and listed as a scoring error with the exception, the other
trials are scored and ranked, ``score_run`` returns normally, the CLI lists the error, and the
next ``score_run`` (no ``--rescore``) scores that trial again.

The failure is real, not a patched scorer: the stored submission of one oracle trial is
replaced by an archive whose only member is a symlink to a host file, which the scorer's
extraction refuses (``tarfile``'s data filter raises), as a hostile or corrupted store would
make it.
"""

from __future__ import annotations

import io
import json
import tarfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from benchforge.cli import main as cli_main
from benchforge.core.artifacts import LAYOUT, open_store
from benchforge.core.records import TrialResult
from benchforge.flows.report import report
from benchforge.flows.runs import run_suite, score_run
from benchforge.harness.store import RunStore
from benchforge.synthesis.dataset import build_dataset
from benchforge.synthesis.spec import load_spec
from tests.paths import FIXTURES

pytestmark = pytest.mark.slow  # tests/README.md: the fast and the full loop

TASKS_ROOT = str(FIXTURES / "task_specs")
IMPL = "mini-impl"
RUN = "scoring-errors"


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("ds") / "mini"
    build_dataset(
        load_spec(FIXTURES / "mini_domain.yaml"), scale=1, seed=7, out=str(out), validate=False
    )
    return out


@pytest.fixture
def artifacts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    root = tmp_path / "artifacts"
    monkeypatch.setenv("BENCHFORGE_ARTIFACT_ROOT", str(root))
    monkeypatch.delenv("BENCHFORGE_OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("BENCHFORGE_OPENAI_BASE_URL", raising=False)
    # `benchforge score-run` quiets Prefect's console through these (setdefault): undone here
    monkeypatch.setenv("PREFECT_LOGGING_HANDLERS_CONSOLE_LEVEL", "WARNING")
    monkeypatch.setenv("PREFECT_LOGGING_TO_API_WHEN_MISSING_FLOW", "warn")
    yield root


def _symlink_archive(target: str) -> bytes:
    """A submission archive holding only ``repo`` -> ``target`` (absolute): refused on
    extraction by the data filter (``AbsoluteLinkError``)."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        link = tarfile.TarInfo("repo")
        link.type, link.linkname = tarfile.SYMTYPE, target
        tar.addfile(link)
    return buffer.getvalue()


def _board(run_id: str) -> dict[str, Any]:
    uri = report(run_id=run_id).uris["leaderboard.json"]
    board: dict[str, Any] = json.loads(Path(uri.removeprefix("file://")).read_text())
    return board


def test_a_trial_whose_scoring_raises_is_a_listed_scoring_error_and_the_rest_are_scored(
    artifacts: Path, dataset: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    summary = run_suite(
        suites=["de-mini"],
        agents=["oracle", "null"],
        epochs=2,
        run_id=RUN,
        tasks_root=TASKS_ROOT,
        task_ids=[IMPL],
        datasets={"mini": str(dataset)},
        concurrency=4,
    )
    assert (summary.ran, summary.infra_errors) == (4, 0)
    run = RunStore(open_store(str(artifacts)), RUN)
    results = {
        (r.key.agent, r.key.epoch): r for r in map(run.read_result, sorted(run.finished_slugs()))
    }
    hostile: TrialResult = results[("oracle", 1)]
    original = run.store.get_bytes(hostile.submission) if hostile.submission else None
    key = run.write_submission(hostile.key.slug, _symlink_archive("/etc/passwd"))
    run.write_result(hostile.model_copy(update={"submission": key}))

    scored = score_run(run_id=RUN)  # returns normally: one trial's failure is not the run's
    assert scored.statuses == {"scored": 3, "scoring_error": 1}, scored
    assert list(scored.scoring_errors) == [hostile.key.slug]
    assert "AbsoluteLinkError" in scored.scoring_errors[hostile.key.slug]

    scores = {(s.key.agent, s.key.epoch): s for s in run.read_scores()}
    error = scores[("oracle", 1)]
    assert error.status == "scoring_error" and error.metrics == {} and error.primary is None
    assert error.detail is not None and error.detail.startswith("AbsoluteLinkError: ")
    assert scores[("oracle", 0)].metrics == {"cs": 100.0, "cfs": 100.0, "sr": 100.0}
    assert (
        scores[("null", 0)].metrics
        == scores[("null", 1)].metrics
        == {
            "cs": 0.0,
            "cfs": 0.0,
            "sr": 0.0,
        }
    )
    assert run.score_states()[hostile.key.slug] == "scoring_error"

    board = _board(RUN)
    rows = {r["agent"]: r for r in board["rows"]}
    # listed apart and left out of the means: the oracle's mean is its one scored trial's 100,
    # not 50 (a scoring error is never a 0)
    assert rows["oracle"]["primary_mean"] == 100.0 and rows["oracle"]["scoring_errors"] == 1
    assert (rows["oracle"]["trials_scored"], rows["oracle"]["trials"]) == (1, 2)
    assert rows["oracle"]["infra_errors"] == 0 and rows["null"]["scoring_errors"] == 0
    assert rows["null"]["primary_mean"] == 0.0
    listed = board["scoring_errors"]
    assert [(i["trial"], i["agent"]) for i in listed] == [(hostile.key.slug, "oracle")]
    assert board["infra_errors"] == []
    markdown = (artifacts / "runs" / RUN / "report" / "leaderboard.md").read_text()
    assert "## Scoring errors" in markdown and "AbsoluteLinkError" in markdown

    # The CLI lists the scoring errors; without --rescore only the failed trial is redone.
    capsys.readouterr()
    assert cli_main.main(["score-run", RUN]) == 0
    out = capsys.readouterr().out
    assert "scored 1 trials (scoring_error 1), 3 already scored" in out, out
    assert f"! {hostile.key.slug}: AbsoluteLinkError" in out, out

    # Once the stored trial is readable again, the next score_run scores it: it was not done.
    if original is not None:
        run.write_submission(hostile.key.slug, original)
    run.write_result(hostile)
    again = score_run(run_id=RUN)
    assert (again.scored, again.skipped, again.statuses) == (1, 3, {"scored": 1})
    assert again.scoring_errors == {}
    assert run.score_states()[hostile.key.slug] == "scored"
    assert not run.store.exists(LAYOUT.score_error_marker(RUN, hostile.key.slug))
    board = _board(RUN)
    rows = {r["agent"]: r for r in board["rows"]}
    assert rows["oracle"]["trials_scored"] == 2 and rows["oracle"]["scoring_errors"] == 0
    assert board["scoring_errors"] == []
