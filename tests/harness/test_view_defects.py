"""Run-browser defects found by operators (issue 24), on a small hand-written run: an oracle /
null run lists no model (not the mock one its request named for other agents), the leaderboard
scrolls inside the page at 1400 px instead of being cut, and a DE schema mismatch names its
missing columns once. Pages are opened in headless Chromium as in test_view.py."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import duckdb
import pytest

from benchforge.core.artifacts import open_store
from benchforge.core.records import AgentLimits, RunSpec, TrialKey, TrialResult, TrialScore
from benchforge.evaluation.de.compare import compare_relations
from benchforge.evaluation.de.details import de_breakdown
from benchforge.evaluation.de.scoring import DeScore, NodeScore, layered_score
from benchforge.evaluation.tasks.models import DeScoring
from benchforge.harness.browser import trial_page, write_site
from benchforge.harness.store import RunStore
from tests.support.chromium import assert_not_blank, chromium, dump_dom

pytestmark = pytest.mark.slow  # tests/README.md: the fast and the full loop

RUN_ID = "nightly-2026-01-31"
MOCK = "mock-script:react-de-crm-sla-solve"
# no character a browser breaks a line at: the column is as wide as the name
LONG_AGENT = "command=/opt/agents/" + "a_long_agent_config_name_" * 4 + "agent.yaml"


def _missing_column_score() -> DeScore:
    con = duckdb.connect()
    con.execute("CREATE TABLE gold AS SELECT 1 AS id, 2.0 AS amount, 'x' AS region")
    con.execute("CREATE TABLE cand AS SELECT 1 AS id, 2.0 AS amount")
    mismatch = compare_relations(con, "gold", "cand")
    assert mismatch.status == "schema_mismatch" and mismatch.missing_columns == ["region"]
    nodes = [NodeScore(name="fct_sales", layer="marts", weight=1.0, cs=mismatch, cfs=mismatch)]
    scoring = DeScoring()
    return DeScore(
        cs=layered_score(nodes, scoring, {"fct_sales": False}),
        cfs=layered_score(nodes, scoring, {"fct_sales": 0.0}),
        sr=0.0,
        nodes=nodes,
    )


def _write_run(root: Path, agents: list[str]) -> RunStore:
    """A nightly-like run of agents that call no model, whose request still named the mock
    model (as the nightly's default models do)."""
    run = RunStore(open_store(str(root)), RUN_ID)
    now = datetime.now(UTC)
    run.write_spec(
        RunSpec(
            run_id=RUN_ID,
            suites=["de-crm"],
            tasks_root="task_specs",
            agents=agents,
            models=[MOCK],
            epochs=1,
            limits=AgentLimits(),
            mock_llm=True,
            created_at=now,
        )
    )
    score = _missing_column_score()
    for agent in agents:
        key = TrialKey(
            suite="de-crm",
            task_id="crm-impl-full",
            task_version="1",
            agent=agent,
            agent_config_hash="0" * 12,
            model="-",
            epoch=0,
        )
        run.write_result(
            TrialResult(
                run_id=RUN_ID,
                key=key,
                family="de_impl",
                status="completed",
                termination="finished",
                started_at=now,
                finished_at=now,
                wall_s=1.0,
            )
        )
        run.write_score(
            TrialScore(
                run_id=RUN_ID,
                key=key,
                family="de_impl",
                status="scored",
                metrics={"cs": score.cs, "cfs": score.cfs, "sr": score.sr},
                primary="cs",
                success=False,
                termination="finished",
                breakdown=de_breakdown(score),
            )
        )
    return run


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> tuple[RunStore, Path]:
    tmp = tmp_path_factory.mktemp("defects")
    run = _write_run(tmp / "artifacts", ["oracle", "null", LONG_AGENT])
    out = tmp / "site"
    write_site(run, out)
    return run, out


def test_an_oracle_null_run_lists_no_model(site: tuple[RunStore, Path], tmp_path: Path) -> None:
    _, out = site
    dom = dump_dom((out / "index.html").as_uri(), tmp_path)
    facts = dom.find("dl", "facts").text()
    assert MOCK not in facts
    assert "Models none (no agent of this run calls" in facts
    board = dom.find("table", "leaderboard").text()
    assert "mock" not in board and "none" in board
    cells = dom.find("table", "trials").find_all("span", "no-model")
    assert len(cells) == 3 and all(c.text() == "none" for c in cells)
    assert all("not an LLM agent" in c.attrs["title"] for c in cells)


MEASURE = """<!DOCTYPE html><html><body>
<iframe id="f" src="index.html" style="border:0;width:1400px;height:900px"></iframe>
<script>
document.getElementById("f").onload = function () {
  var doc = this.contentDocument, root = doc.documentElement;
  var board = doc.querySelector("table.leaderboard");
  var box = board.parentElement;
  document.body.setAttribute("data-layout", JSON.stringify({
    page_overflow: root.scrollWidth - root.clientWidth,
    board_right: board.getBoundingClientRect().right,
    box_right: box.getBoundingClientRect().right,
    box_scrolls: box.scrollWidth > box.clientWidth,
    viewport: root.clientWidth
  }));
};
</script></body></html>"""


def test_the_leaderboard_scrolls_inside_the_page_at_1400_px(
    site: tuple[RunStore, Path], tmp_path: Path
) -> None:
    _, out = site
    (out / "measure.html").write_text(MEASURE)
    url = (out / "measure.html").as_uri()
    dom = dump_dom_with(url, tmp_path / "m", "--allow-file-access-from-files")
    layout = json.loads(dom.find("body").attrs["data-layout"])
    # the table is wider than the page: it scrolls in its own box, the page does not
    assert layout["board_right"] > layout["viewport"], layout
    assert layout["page_overflow"] == 0, layout
    assert layout["box_scrolls"] and layout["box_right"] <= layout["viewport"], layout
    shot = tmp_path / "index.png"
    chromium((out / "index.html").as_uri(), tmp_path / "s", f"--screenshot={shot}")
    assert_not_blank(shot)


def dump_dom_with(url: str, workdir: Path, *flags: str):  # type: ignore[no-untyped-def]
    from tests.support.chromium import parse_html

    done = chromium(url, workdir, *flags, "--virtual-time-budget=5000", "--dump-dom")
    return parse_html(done.stdout)


def test_a_missing_column_is_named_once_on_the_trial_page(
    site: tuple[RunStore, Path], tmp_path: Path
) -> None:
    run, out = site
    slug = next(s for s in run.finished_slugs() if run.read_result(s).key.agent == "oracle")
    dom = dump_dom((out / trial_page(slug)).as_uri(), tmp_path)
    node = dom.find("div", "node", id="node-fct_sales")
    assert node.text().lower().count("missing columns") == 1, node.text()
    assert "region" in node.text()


def test_a_very_long_agent_spelling_gets_a_page_name_a_file_system_takes() -> None:
    agent = "command=/opt/agents/" + "nested_folder/" * 20 + "agent.yaml"  # 300 characters
    slugs = [f"de-crm/crm-impl-full@1/{agent}-{h}/-/epoch-0" for h in ("aaaa", "bbbb")]
    names = [Path(trial_page(slug)).name for slug in slugs]
    assert all(len(name.encode()) <= 255 for name in names), names
    assert names[0] != names[1]  # the digest tells slugs apart whatever is cut
