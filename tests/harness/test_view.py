"""The run browser (`benchforge view`): a real stored run rendered to HTML and opened in
headless Chromium.

The run is made by the real code paths, without Prefect (it would cost a server start): the
executor runs react-de and single-call trials on the de-mini fixtures against the mock LLM
server (a success, a mistake that leaves one column wrong, a wall-clock stop, an LLM endpoint
that always fails), and ``score_trial`` scores them with the real scorer, which stores the
per-node diff the trial page shows. Chromium is Debian's package, installed by
scripts/_chromium.sh; without it these tests fail, they do not skip.
"""

from __future__ import annotations

import asyncio
import re
import threading
import urllib.request
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import duckdb
import pytest

from benchforge.agents.mock_llm import FaultConfig, MockServerConfig, run_server
from benchforge.agents.registry import build_agent
from benchforge.cli.main import main as benchforge_main
from benchforge.core.artifacts import open_store
from benchforge.core.llm import LlmConfig, SharedSemaphore
from benchforge.core.records import (
    AgentLimits,
    GoldBuild,
    RunSpec,
    Step,
    TrialKey,
    TrialResult,
    TrialScore,
)
from benchforge.core.sandbox import default_backend
from benchforge.evaluation.de.breakdown import nodes_of
from benchforge.evaluation.de.compare import NodeComparison, compare_relations
from benchforge.evaluation.de.details import (
    EXAMPLE_COLUMNS,
    VALUE_CHARS,
    de_breakdown,
    node_details,
)
from benchforge.evaluation.de.scoring import DeScore, NodeScore, layered_score
from benchforge.evaluation.de.tasks import gold_cache_folder
from benchforge.evaluation.gold import build_gold
from benchforge.evaluation.tasks.loader import load_task
from benchforge.evaluation.tasks.materials import apply_overlay
from benchforge.evaluation.tasks.models import DeEvolTask, DeScoring, LoadedTask
from benchforge.harness.browser import load_run, trial_page, trial_page_html, write_site
from benchforge.harness.browser.load import trial_view
from benchforge.harness.browser.site import serve
from benchforge.harness.executor import LimitedSandbox, RunContext, run_chunk
from benchforge.harness.matrix import expand
from benchforge.harness.models import TrialPlan
from benchforge.harness.scoring import GoldCache, score_trial
from benchforge.harness.store import RunStore
from benchforge.synthesis.dataset import build_dataset
from benchforge.synthesis.spec import load_spec
from tests.paths import FIXTURES
from tests.support.chromium import assert_not_blank, chromium, dump_dom, parse_html

pytestmark = pytest.mark.slow  # tests/README.md: the fast and the full loop

TASKS = FIXTURES / "task_specs" / "de-mini"
EVOL, ARCH = "mini-evol-won-by-industry", "mini-arch-retention"
MARTS_V2 = TASKS / EVOL / "gold_v2" / "models" / "marts"
RUN_ID = "browse"
SOLVE, MISTAKE = "mock-script:view-solve", "mock-script:view-mistake"
LOOP, SINGLE = "mock-script:react-de-loop", "mock-script:single-call"


# --- a real run, made once for the module --------------------------------------------------


def _script(industry_sql: str) -> dict[str, Any]:
    """react-de writes both marts of the evol task (no dbt run in the agent: it costs time)."""

    def create(name: str, content: str) -> dict[str, Any]:
        path = f"repo/models/marts/{name}.sql"
        return {"name": "create_file", "arguments": {"path": path, "content": content}}

    country = (MARTS_V2 / "fct_won_revenue_by_country.sql").read_text()
    return {
        "policy": "scripted",
        "replies": [
            {
                "content": "I start with the change request.",
                "tool_calls": [{"name": "bash", "arguments": {"command": "cat change_request.md"}}],
            },
            {
                "content": "I add industry to the country mart's columns and grain.",
                "tool_calls": [create("fct_won_revenue_by_country", country)],
            },
            {
                "content": "Now the new mart by industry and close month.",
                "tool_calls": [create("fct_won_revenue_by_industry", industry_sql)],
            },
            {
                "content": "Done.",
                "tool_calls": [
                    {"name": "terminate", "arguments": {"answer": "both marts written"}}
                ],
            },
        ],
    }


def _scripts() -> dict[str, Any]:
    industry = (MARTS_V2 / "fct_won_revenue_by_industry.sql").read_text()
    rounded = industry.replace("round(sum(amount), 2)", "round(sum(amount), 0)")
    assert rounded != industry
    return {"view-solve": _script(industry), "view-mistake": _script(rounded)}


@dataclass
class StoredRun:
    run: RunStore
    root: Path
    slugs: dict[str, str] = field(default_factory=dict)  # model -> trial slug


def _context(
    run: RunStore, tmp: Path, limits: AgentLimits, llm: dict[str, LlmConfig]
) -> RunContext:
    return RunContext(
        run=run,
        scratch=tmp / "scratch",
        sandbox=LimitedSandbox(default_backend(), SharedSemaphore(4)),
        limits=limits,
        llm_configs=llm,
        trial_slots=SharedSemaphore(4),
        solutions=lambda _key: None,
    )


def _llm(url: str, model: str, **options: Any) -> LlmConfig:
    return LlmConfig(role="agent", model=model, base_url=url, api_key="benchforge-mock", **options)


def _run_agents(run: RunStore, tmp: Path, plans: dict[str, list[TrialPlan]]) -> None:
    """Three chunks at once, each with its own mock server: a plain one, a slow one (1.5 s a
    reply: react-de-loop meets its 4 s wall clock before its third, repeated, action) and one
    that answers every request with a 500 (an infra error once the one retry is spent)."""
    scripted = MockServerConfig.model_validate({"scripts": _scripts()})
    slow = MockServerConfig(faults=FaultConfig(latency_ms=1500))
    failing = MockServerConfig(faults=FaultConfig(rate_500=1.0))
    with (
        run_server(config=scripted) as ok,
        run_server(config=slow) as slow_server,
        run_server(config=failing) as bad,
    ):
        ok_llm = {m: _llm(ok.url, m) for m in (SOLVE, MISTAKE)}
        slow_llm = {LOOP: _llm(slow_server.url, LOOP)}
        bad_llm = {SINGLE: _llm(bad.url, SINGLE, max_retries=1, backoff_base_s=0.01)}

        async def chunks() -> None:
            await asyncio.gather(
                run_chunk(plans["ok"], _context(run, tmp, AgentLimits(), ok_llm)),
                run_chunk(plans["slow"], _context(run, tmp, AgentLimits(wall_s=4.0), slow_llm)),
                run_chunk(plans["bad"], _context(run, tmp, AgentLimits(), bad_llm)),
            )

        asyncio.run(chunks())


def _prebuild_gold(
    task: LoadedTask, dataset: Path, work: Path, pool: ThreadPoolExecutor
) -> list[Future[GoldBuild]]:
    """The slow part, sped up: ``prepare_gold`` builds gold v1 and v2 one after the other, each
    with its dbt docs; here both build at once, without docs (the scorer reads none), where
    ``prepare_gold`` finds them (``gold_cache_folder``)."""
    spec = task.spec
    assert isinstance(spec, DeEvolTask)
    v1 = task.repo
    v2 = apply_overlay(v1, task.file(spec.gold_v2), spec.removed, work / "prebuilt-v2")
    return [
        pool.submit(
            build_gold,
            spec.domain,
            repo,
            dataset,
            gold_cache_folder(work / "gold", spec.domain, repo, dataset),
            docs=False,
        )
        for repo in (v1, v2)
    ]


@pytest.fixture(scope="module")
def stored(tmp_path_factory: pytest.TempPathFactory) -> StoredRun:
    tmp = tmp_path_factory.mktemp("view")
    dataset = tmp / "mini"
    spec = load_spec(FIXTURES / "mini_domain.yaml")
    build_dataset(spec, scale=1, seed=7, out=str(dataset), validate=False)
    evol, arch = load_task(TASKS / EVOL), load_task(TASKS / ARCH)
    react, single = build_agent("react-de"), build_agent("single-call")
    datasets: dict[str, Path | None] = {evol.key: dataset, arch.key: dataset}
    plans = {
        "ok": expand([evol], {"react-de": react}, [SOLVE, MISTAKE], 1, datasets),
        "slow": expand([arch], {"react-de": react}, [LOOP], 1, datasets),
        "bad": expand([arch], {"single-call": single}, [SINGLE], 1, datasets),
    }
    root = tmp / "artifacts"
    run = RunStore(open_store(str(root)), RUN_ID)
    run.write_spec(
        RunSpec(
            run_id=RUN_ID,
            suites=["de-mini"],
            tasks_root=str(FIXTURES / "task_specs"),
            agents=["react-de", "single-call"],
            models=[SOLVE, MISTAKE, LOOP, SINGLE],
            epochs=1,
            limits=AgentLimits(),
            mock_llm=True,
            datasets={k: str(v) for k, v in datasets.items()},
            created_at=datetime.now(UTC),
        )
    )
    gold, work = GoldCache(tmp / "work"), tmp / "work"
    with ThreadPoolExecutor(2) as pool:
        builds = _prebuild_gold(evol, dataset, work, pool)
        _run_agents(run, tmp, plans)
        for build in builds:
            build.result()
        tasks = {evol.spec.id: evol, arch.spec.id: arch}
        results = [run.read_result(slug) for slug in sorted(run.finished_slugs())]
        scores = pool.map(
            lambda r: score_trial(
                run, r, tasks[r.key.task_id], dataset, gold, work, default_backend()
            ),
            results,
        )
        for score in scores:
            run.write_score(score)
    return StoredRun(run=run, root=root, slugs={r.key.model: r.key.slug for r in results})


@pytest.fixture(scope="module")
def site(stored: StoredRun, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("site")
    written = write_site(stored.run, out)
    assert (written.trials, written.scored) == (4, 4)
    return out


# --- the tests ---------------------------------------------------------------------------


def test_the_stored_run_holds_every_kind_of_trial(stored: StoredRun) -> None:
    scores = {s.key.model: s for s in stored.run.read_scores()}
    assert scores[SOLVE].metrics == {"cs": 100.0, "cfs": 100.0, "sr": 100.0}
    assert scores[MISTAKE].metrics == {"cs": 50.0, "cfs": 50.0, "sr": 0.0}
    assert (scores[LOOP].status, scores[LOOP].termination) == ("unscored", "wall_clock")
    assert scores[SINGLE].status == "infra_error"
    # the mock label follows the recorded usage: the failing endpoint never answered
    assert scores[SOLVE].used_mock_llm and scores[LOOP].used_mock_llm
    assert not scores[SINGLE].used_mock_llm
    wrong = next(n for n in nodes_of(scores[MISTAKE]) if n.name == "fct_won_revenue_by_industry")
    assert not wrong.cs_matched and wrong.cs.status == "data_mismatch"
    assert set(wrong.cs.column_mismatches) == {"won_amount"}
    assert wrong.cs.examples_gold and wrong.cs.examples_candidate
    assert all(n.cs_matched for n in nodes_of(scores[SOLVE])) and nodes_of(scores[SOLVE])


def test_the_index_shows_the_leaderboard_and_every_trial(site: Path, tmp_path: Path) -> None:
    index = site / "index.html"
    with ThreadPoolExecutor(3) as pool:
        full = pool.submit(dump_dom, index.as_uri(), tmp_path / "a")
        failures = pool.submit(dump_dom, index.as_uri() + "#status=failure", tmp_path / "b")
        by_agent = pool.submit(dump_dom, index.as_uri() + "?agent=single-call", tmp_path / "c")
        shot = pool.submit(
            chromium, index.as_uri(), tmp_path / "d", f"--screenshot={tmp_path / 'index.png'}"
        )
        dom, filtered, queried = full.result(), failures.result(), by_agent.result()
        shot.result()

    board = dom.find("table", "leaderboard")
    links = [a.attrs["href"] for a in board.find_all("a")]
    assert links and all(h.startswith("index.html#") for h in links)
    assert {"react-de", "single-call"} <= {a.text() for a in board.find_all("a")}
    epoch_links = [a.attrs["href"] for a in dom.find("table", "per-task").find_all("a")]
    trial_links = [h for h in epoch_links if h.startswith("trials/")]
    assert len(trial_links) == 4 and all((site / h).is_file() for h in trial_links)

    rows = dom.find("table", "trials").find_all("tr", "trial")
    assert sorted(r.attrs["data-status"] for r in rows) == [
        "failure",
        "infra_error",
        "success",
        "unscored",
    ]
    assert not any("hidden" in r.attrs for r in rows)
    assert dom.find("span", id="shown").text() == "4 of 4 trials shown"
    assert "MOCK LLM" in dom.find("div", "mock").text()
    infra = dom.find("section", id="infra-errors").text()
    assert "LlmInfrastructureError" in infra

    # a filter in the URL fragment (and in a query string) shows only the matching rows
    shown = [r for r in filtered.find_all("tr", "trial") if "hidden" not in r.attrs]
    assert [r.attrs["data-status"] for r in shown] == ["failure"]
    assert filtered.find("span", id="shown").text() == "1 of 4 trials shown"
    shown = [r for r in queried.find_all("tr", "trial") if "hidden" not in r.attrs]
    assert [(r.attrs["data-agent"], r.attrs["data-status"]) for r in shown] == [
        ("single-call", "infra_error")
    ]
    assert_not_blank(tmp_path / "index.png")


def test_trial_pages_show_why_a_trial_scored_what_it_did(
    stored: StoredRun, site: Path, tmp_path: Path
) -> None:
    page = {model: site / trial_page(slug) for model, slug in stored.slugs.items()}
    with ThreadPoolExecutor(4) as pool:
        doms = {
            m: pool.submit(dump_dom, p.as_uri(), tmp_path / f"u{i}")
            for i, (m, p) in enumerate(page.items())
        }
        shot = pool.submit(
            chromium,
            page[MISTAKE].as_uri(),
            tmp_path / "shot",
            f"--screenshot={tmp_path / 'trial.png'}",
        )
        dom = {m: d.result() for m, d in doms.items()}
        shot.result()

    # the failure: its scores, the node that differs, the column, example rows of both sides
    failure = dom[MISTAKE]
    assert failure.find("span", "status").text() == "failure"
    metrics = failure.find("table", "metrics").text()
    assert "CS (primary) 50.0" in metrics and "SR 0.0" in metrics
    node = failure.find("div", "node", id="node-fct_won_revenue_by_industry")
    assert [c.text() for c in node.find("table", "diffcols").find_all("code")] == ["won_amount"]
    gold_rows = node.find("table", "gold").find_all("tr")
    assert (
        len(gold_rows) > 1 and "won_amount" in node.find("table", "cand").find("th", "diff").text()
    )
    assert "fct_won_revenue_by_country" not in {d.attrs.get("id") for d in failure.find_all("div")}
    steps = failure.find("ol", "steps").find_all("li", "step")
    assert len(steps) == 8  # 4 model calls, 4 tool calls (terminate is one)
    assert "create_file" in steps[3].text() and "round(sum(amount), 0)" in steps[4].text()
    assert failure.find_all("span", "mock-label")

    # the success: every node matched
    success = dom[SOLVE]
    assert success.find("span", "status").text() == "success"
    assert "Every node matched" in success.find("section", id="nodes").text()

    # the wall-clock stop: its termination, what it did until then, the sandbox it ran in
    stopped = dom[LOOP]
    assert stopped.find("span", "termination").text() == "wall_clock"
    assert "ran past 4 s" in stopped.find("div", "errorbox").text()
    assert stopped.find("ol", "steps").find_all("li", "step-model")
    assert "namespace" in stopped.find("div", "isolation").text()

    # the infra error: the error text, and no mock label (the endpoint never answered)
    infra = dom[SINGLE]
    assert infra.find("span", "status").text() == "infra error"
    assert "LlmInfrastructureError" in infra.find("pre", "trial-error").text()
    assert not infra.find_all("span", "mock-label")
    assert_not_blank(tmp_path / "trial.png")


def test_benchforge_view_writes_the_site_and_serves_it(
    stored: StoredRun,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("BENCHFORGE_ARTIFACT_ROOT", str(stored.root))
    out = tmp_path / "site"
    assert benchforge_main(["view", RUN_ID, "--out", str(out)]) == 0
    assert f"{out / 'index.html'}" in capsys.readouterr().out
    assert benchforge_main(["view", RUN_ID, "--out", str(out)]) == 0  # its own site: replaced
    assert benchforge_main(["view", RUN_ID, "--out", str(tmp_path)]) == 2  # any other folder
    assert "not empty" in capsys.readouterr().err
    server = serve(out, port=0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        host, port = server.server_address[:2]
        with urllib.request.urlopen(f"http://{host!s}:{port}/index.html", timeout=10) as reply:
            assert reply.status == 200 and b'tr class="trial"' in reply.read()
    finally:
        server.shutdown()
        server.server_close()
    assert host == "127.0.0.1"


# --- the loader and the diff extraction, on a known mismatch ---------------------------------


def _known_mismatch() -> tuple[NodeComparison, NodeComparison]:
    con = duckdb.connect()
    con.execute(
        "CREATE TABLE gold AS SELECT * FROM (VALUES (1, 'a', 10.0), (2, 'b', 20.0), "
        "(3, 'c', 30.0)) AS t(id, name, amount)"
    )
    con.execute(
        "CREATE TABLE cand AS SELECT * FROM (VALUES (1, 'a', 10.0), (2, 'b', 25.0), "
        "(3, 'c', 35.0)) AS t(id, name, amount)"
    )
    wide = ", ".join(f"'{'x' * 300}' AS c{i:02d}" for i in range(40))
    con.execute(f"CREATE TABLE wide_gold AS SELECT i AS id, i AS v, {wide} FROM range(5) t(i)")
    con.execute(f"CREATE TABLE wide_cand AS SELECT i AS id, i + 1 AS v, {wide} FROM range(5) t(i)")
    return compare_relations(con, "gold", "cand"), compare_relations(con, "wide_gold", "wide_cand")


def test_node_details_keep_the_differing_columns_and_a_few_rows() -> None:
    small, wide = _known_mismatch()
    built = NodeComparison(status="build_error", reason="end-to-end build: error: <boom> & co")
    nodes = [
        NodeScore(name="fct_amounts", layer="marts", weight=1.0, cs=small, cfs=small),
        NodeScore(name="fct_wide", layer="marts", weight=1.0, cs=wide, cfs=built),
    ]
    scoring = DeScoring()
    score = DeScore(
        cs=layered_score(nodes, scoring, {n.name: n.cs.matched for n in nodes}),
        cfs=layered_score(nodes, scoring, {n.name: n.cfs_score for n in nodes}),
        sr=0.0,
        nodes=nodes,
    )
    amounts, wide_node = node_details(score)
    assert amounts.cs.status == "data_mismatch" and not amounts.cs_matched
    assert amounts.cs.mismatch_key == "id" and amounts.cs.column_mismatches == {"amount": 2}
    assert [r["amount"] for r in amounts.cs.examples_gold] == ["20.0", "30.0"]
    assert [r["amount"] for r in amounts.cs.examples_candidate] == ["25.0", "35.0"]
    # wide rows: the key and the differing column kept first, values cut, the rest counted
    row = wide_node.cs.examples_gold[0]
    assert len(row) == EXAMPLE_COLUMNS and {"id", "v"} <= set(row)
    assert all(len(v) <= VALUE_CHARS for v in row.values())
    assert wide_node.cs.omitted_columns == 42 - EXAMPLE_COLUMNS
    assert wide_node.cfs.status == "build_error" and not wide_node.cfs_matched

    # the trial page built from it: the diff table, the build error, everything escaped
    started = datetime.now(UTC)
    key = TrialKey(
        suite="s",
        task_id="t<script>",
        task_version="1",
        agent="a",
        agent_config_hash="0" * 12,
        model="-",
        epoch=0,
    )
    result = TrialResult(
        run_id="r",
        key=key,
        family="de_impl",
        status="completed",
        termination="finished",
        trajectory=[
            Step(
                kind="tool",
                index=0,
                started_at=started,
                seconds=0.5,
                name="bash",
                arguments={"command": "echo '<b>'"},
                output="<b>\n",
                exit_code=0,
            )
        ],
        started_at=started,
        finished_at=started,
        wall_s=1.0,
    )
    stored = TrialScore(
        run_id="r",
        key=key,
        family="de_impl",
        status="scored",
        metrics={"cs": score.cs, "cfs": score.cfs, "sr": score.sr},
        primary="cs",
        success=False,
        termination="finished",
        breakdown=de_breakdown(score),
    )
    view = trial_view(result, stored)
    assert view.row.status == "failure" and view.row.page == trial_page(key.slug)
    html = trial_page_html(view, "r")
    dom = parse_html(html)
    assert "<script>" not in re.sub(r"<script>.*?</script>", "", html, flags=re.S)
    node = dom.find("div", "node", id="node-fct_amounts")
    assert node.find("table", "diffcols").find("code").text() == "amount"
    assert [td.text() for td in node.find("table", "gold").find_all("td", "diff")] == [
        "20.0",
        "30.0",
    ]
    wide_div = dom.find("div", "node", id="node-fct_wide")
    assert "<boom> & co" in wide_div.text() and "more columns not shown" in wide_div.text()
    assert dom.find("ol", "steps").find("li", "step-tool").text().count("<b>") == 2


def test_load_run_without_scores_lists_the_trials(stored: StoredRun, tmp_path: Path) -> None:
    """A run not scored yet still browses: no leaderboard, trials 'not scored yet'."""
    copy = RunStore(open_store(str(tmp_path / "store")), "unscored")
    copy.write_spec(stored.run.require_spec().model_copy(update={"run_id": "unscored"}))
    for slug in stored.run.finished_slugs():
        result = stored.run.read_result(slug)
        copy.write_result(result.model_copy(update={"run_id": "unscored"}))
    view, trials = load_run(copy)
    assert view.leaderboard is None and "score-run" in (view.leaderboard_note or "")
    assert sorted(t.row.status for t in trials) == [
        "infra_error",
        "not_scored",
        "not_scored",
        "not_scored",
    ]


def test_heldout_scores_withhold_example_rows_unless_the_operator_asks(stored: StoredRun) -> None:
    """A score on the held-out seed keeps counts and differing columns, not its rows (the
    visible dataset stands in for the held-out one here; the gold is already cached)."""
    run, work = stored.run, stored.root.parent / "work"
    result = run.read_result(stored.slugs[MISTAKE])
    task = load_task(TASKS / EVOL)
    dataset = Path(run.require_spec().datasets[task.key] or "")
    gold = GoldCache(work)

    def score(show: bool) -> TrialScore:
        return score_trial(
            run,
            result,
            task,
            dataset,
            gold,
            work,
            default_backend(),
            heldout_dir=dataset,
            show_heldout_examples=show,
        )

    hidden, shown = score(False), score(True)
    assert hidden.scored_on == "heldout" and hidden.metrics["cs"] == 50.0
    wrong = next(n for n in nodes_of(hidden) if n.name == "fct_won_revenue_by_industry")
    assert wrong.cs.examples_withheld and not wrong.cs.examples_gold
    assert not wrong.cs.examples_candidate and not wrong.cfs.examples_gold
    assert set(wrong.cs.column_mismatches) == {"won_amount"} and wrong.cs.differing_rows
    assert hidden.visible is not None
    visible = next(n for n in nodes_of(hidden.visible.breakdown) if n.name == wrong.name)
    assert visible.cs.examples_gold and not visible.cs.examples_withheld
    kept = next(n for n in nodes_of(shown) if n.name == wrong.name)
    assert kept.cs.examples_gold and not kept.cs.examples_withheld
    page = trial_page_html(trial_view(result, hidden), "r")
    assert "Example rows withheld" in page
    assert "Example rows withheld" not in trial_page_html(trial_view(result, shown), "r")
