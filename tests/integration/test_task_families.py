"""A new task family is one plugin module: ``engine_answer`` (``tests/plugins/engine_answer``)
has no repository, two datasets of different engines (a DuckDB file and a SQLite file, by
role), scores the agent's answer, and brings its own score detail, page partial, toolset and
mock script. Loaded as a user loads a plugin (``BENCHFORGE_PLUGINS``), it goes through every
surface by the CLI, in separate processes: ``task validate``, ``task verify``, ``run`` (the
react agent acting through the plugin's toolset, oracle, null), ``score-run``, ``report``,
``view`` (the trial page opened in headless Chromium shows the partial), ``task catalogue``
and a nightly run kind. ``SURFACES`` names them; the last test checks each was passed."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import duckdb
import pytest

from benchforge.core.artifacts import open_store
from benchforge.core.plugins import PLUGINS_ENV
from benchforge.evaluation.families import UnknownFamilyError, get_family
from benchforge.evaluation.tasks import TaskSpecError, load_task
from benchforge.harness.store import RunStore
from tests.paths import REPO_ROOT
from tests.support.chromium import assert_not_blank, chromium, dump_dom

pytestmark = pytest.mark.slow  # tests/README.md: the fast and the full loop

PLUGIN = "tests.plugins.engine_answer"
SCRIPTS = REPO_ROOT / "tests" / "plugins" / "engine_answer" / "mock_scripts"
SUITE = "engine-suite"
TASK = "top-stock-units"
GOLD = 57.0  # units ordered of P-003, the best-stocked SKU (3): 20 + 30 + 7
SURFACES = (
    "task validate",
    "task verify",
    "run",
    "score-run",
    "report",
    "view",
    "task catalogue",
    "nightly run kind",
)
passed: set[str] = set()

GOLD_PY = """
def gold(db):
    (sku,) = db("stock").execute(
        "select sku from stock order by on_hand desc, sku limit 1"
    ).fetchone()
    (units,) = db("sales").execute(
        "select sum(units) from orders where product_code = ?", [f"P-{sku:03d}"]
    ).fetchone()
    return units
"""

TASK_YAML = f"""family: engine_answer
id: {TASK}
suite: {SUITE}
title: Units ordered of the best-stocked product
domain: shop_sales
datasets:
  sales: {{domain: shop_sales, location: datasets/sales}}
  stock: {{domain: shop_stock, location: datasets/stock}}
instructions: >-
  Answer question.md from the two databases (roles sales and stock) and give the answer as one
  number.
"""


def _catalogue(root: Path) -> Path:
    """``<root>/task_specs/engine-suite/top-stock-units`` and its two datasets: ``sales`` a
    DuckDB file, ``stock`` a SQLite file, whose product keys disagree ('P-003' vs 3)."""
    sales, stock = root / "datasets" / "sales", root / "datasets" / "stock"
    for folder, name in ((sales, "sales"), (stock, "stock")):
        folder.mkdir(parents=True)
        (folder / "dataset.json").write_text(json.dumps({"brought_by_hand": name}))
    con = duckdb.connect(str(sales / "sales.duckdb"))
    con.execute("create table orders (order_id int, product_code varchar, units int)")
    rows = [(1, "P-001", 5), (2, "P-003", 20), (3, "P-002", 90), (4, "P-003", 30), (5, "P-003", 7)]
    con.executemany("insert into orders values (?, ?, ?)", rows)
    con.close()
    lite = sqlite3.connect(stock / "stock.sqlite")
    lite.execute("create table stock (sku integer, on_hand integer)")
    lite.executemany("insert into stock values (?, ?)", [(1, 10), (2, 4), (3, 80), (4, 79)])
    lite.commit()
    lite.close()
    task = root / "task_specs" / SUITE / TASK
    task.mkdir(parents=True)
    (task / "question.md").write_text(
        "How many units were ordered of the product with most stock?\n"
    )
    (task / "gold.py").write_text(GOLD_PY)
    (task / "task.yaml").write_text(TASK_YAML)
    return root


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, dict[str, str]]]:
    root = _catalogue(tmp_path_factory.mktemp("engine"))
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("BENCHFORGE_OPENAI_API_KEY", "BENCHFORGE_OPENAI_BASE_URL")
    }
    env |= {
        PLUGINS_ENV: PLUGIN,
        "PYTHONPATH": os.pathsep.join([str(REPO_ROOT), env.get("PYTHONPATH", "")]),
        "BENCHFORGE_ARTIFACT_ROOT": str(root / "artifacts"),
        "BENCHFORGE_CATALOGUE_ROOT": str(root),
        "BENCHFORGE_MOCK_SCRIPTS_DIR": str(SCRIPTS),
        "BENCHFORGE_CACHE_DIR": str(root / "cache"),
    }
    yield root, env


def run_cli(env: dict[str, str], cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "benchforge.cli", *args],
        cwd=cwd,
        env=env,
        text=True,
        capture_output=True,
        timeout=600,
        check=False,
    )


def cli(env: dict[str, str], cwd: Path, *args: str) -> str:
    done = run_cli(env, cwd, *args)
    assert done.returncode == 0, f"{args}: {done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done.stdout + done.stderr


def test_without_the_plugin_the_family_is_unknown_and_a_bad_plugin_is_named(
    tmp_path: Path,
) -> None:
    assert os.environ.get(PLUGINS_ENV) is None
    with pytest.raises(UnknownFamilyError):
        get_family("engine_answer")
    env = {**os.environ, PLUGINS_ENV: "no_such_plugin_module"}
    done = run_cli(env, tmp_path, "task", "schema")
    assert done.returncode == 2
    assert "plugin 'no_such_plugin_module' (named by BENCHFORGE_PLUGINS)" in done.stderr


def test_validate_names_the_file_and_field(world: tuple[Path, dict[str, str]]) -> None:
    root, env = world
    out = cli(env, root, "task", "validate", str(root / "task_specs"))
    assert TASK in out
    gold = root / "task_specs" / SUITE / TASK / "gold.py"
    gold.rename(gold.with_suffix(".gone"))
    try:
        done = run_cli(env, root, "task", "validate", str(gold.parent))
        assert done.returncode != 0
        assert "task.yaml: gold: missing file 'gold.py'" in done.stdout + done.stderr
    finally:
        gold.with_suffix(".gone").rename(gold)
    passed.add("task validate")


def test_verify_checks_the_gold_the_empty_answer_and_a_hedge(
    world: tuple[Path, dict[str, str]],
) -> None:
    root, env = world
    out = cli(env, root, "task", "verify", str(root / "task_specs" / SUITE))
    assert "gold 100" in out and "empty 0" in out and "reward hacks 1/1 held" in out, out
    passed.add("task verify")


def test_run_and_score_run_score_the_answers(world: tuple[Path, dict[str, str]]) -> None:
    root, env = world
    tasks = str(root / "task_specs")
    common = ["--suite", SUITE, "--tasks-root", tasks]
    agents = ["--agent", "oracle", "--agent", "null", "--agent", "react"]
    model = ["--model", "mock-script:engine-answer-solve"]
    cli(env, root, "run", *common, *agents, *model, "--run-id", "eng")
    run = RunStore(open_store(str(root / "artifacts")), "eng")
    spec = run.read_spec()
    assert spec is not None and spec.heldout_datasets == {}
    assert sorted(k.rsplit("#", 1)[-1] for k in spec.datasets if "#" in k) == ["sales", "stock"]
    scores = {s.key.agent: s for s in run.read_scores()}
    assert {a: s.metrics for a, s in scores.items()} == {
        "oracle": {"exact": 100.0},
        "null": {"exact": 0.0},
        "react": {"exact": 100.0},
    }
    react = scores["react"]
    assert react.family == "engine_answer" and react.primary == "exact" and react.success
    # stored as the plugin's breakdown (this process has not loaded the plugin: read raw)
    assert react.breakdown is not None
    assert react.breakdown.model_dump() == {
        "kind": "engine_answer",
        "given": "57",
        "read_as": GOLD,
        "expected": GOLD,
        "engines": {"sales": "duckdb", "stock": "sqlite"},
    }
    # the react agent queried both engines in the sandbox, through the plugin's toolset
    [result] = [run.read_result(s) for s in run.finished_slugs() if "react" in s]
    outputs = [step.output or "" for step in result.trajectory if step.kind == "tool"]
    assert "3 | 80" in outputs[0] and "57" in outputs[1], outputs

    cli(env, root, "score-run", "eng", "--rescore")
    again = {s.key.agent: s.metrics for s in run.read_scores()}
    assert again == {a: s.metrics for a, s in scores.items()}
    passed.update({"run", "score-run"})


def test_report_view_and_catalogue_show_the_family(
    world: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    root, env = world
    out = cli(env, root, "report", "eng")
    assert "exact" in out and "react" in out
    # the leaderboard page carries the family's own section (its partial's leaderboard macro)
    [board] = (root / "artifacts" / "runs" / "eng").rglob("leaderboard.html")
    html = board.read_text()
    assert "Answers over two engines" in html and "1 of 1" in html and "0 of 1" in html
    # and the family's own run-report section (its run_report hook), named by no Benchforge file
    section = "## Engine answers\n\n- null: 0 of 1 trials answered a number\n"
    assert section in out
    [page] = (root / "artifacts" / "runs" / "eng").rglob("engine-answer-report.md")
    assert page.read_text().startswith(section) and "- oracle: 1 of 1 trials" in page.read_text()
    passed.add("report")

    site = tmp_path / "site"
    cli(env, root, "view", "eng", "--out", str(site))
    [page] = [p for p in site.rglob("*.html") if "react" in p.name and TASK in p.name]
    dom = dump_dom(page.as_uri(), tmp_path / "chromium-dom")
    text = dom.text()
    assert "Answer against the gold" in text and "sales (duckdb), stock (sqlite)" in text
    shot = tmp_path / "trial.png"
    chromium(page.as_uri(), tmp_path / "chromium-shot", f"--screenshot={shot}")
    assert_not_blank(shot)
    passed.add("view")

    catalogue = tmp_path / "catalogue.html"
    cli(env, root, "task", "catalogue", str(root / "task_specs"), "--out", str(catalogue))
    html = catalogue.read_text()
    assert TASK in html and "engine_answer" in html
    # its last verification, shown by the family's own checks macro
    assert "answers verify: gold 100 · empty 0 · hedge 0" in html
    passed.add("task catalogue")


def test_a_nightly_run_kind_runs_the_family(world: tuple[Path, dict[str, str]]) -> None:
    root, env = world
    kinds = root / "kinds.yaml"
    kinds.write_text(f"- name: engine\n  suites: [{SUITE}]\n  agents: [oracle, null]\n")
    cli(env, root, "nightly", "--run-kinds", str(kinds), "--date", "2026-11-30")
    run = RunStore(open_store(str(root / "artifacts")), "nightly-2026-11-30")
    assert {s.key.agent: s.metrics["exact"] for s in run.read_scores()} == {
        "oracle": 100.0,
        "null": 0.0,
    }
    passed.add("nightly run kind")


def test_every_surface_was_passed() -> None:
    assert passed == set(SURFACES), sorted(set(SURFACES) - passed)


def test_a_spec_of_an_unknown_family_is_refused(tmp_path: Path) -> None:
    task = tmp_path / "task_specs" / "s" / "t"
    task.mkdir(parents=True)
    (task / "task.yaml").write_text("family: toy_nothing\nid: t\n")
    with pytest.raises(TaskSpecError, match="does not match any of the expected tags"):
        load_task(task)
