"""The ``dab_query`` family on a tiny dataset (fast): gold by SQL on the clean dataset, another
seed another gold; the agent's data is the perturbed folder and nothing else; the oracle's
answer passes, no answer and a wrong one fail, with the verdict and the validator's kind and
version recorded. The shipped suite loads and covers the four properties. One slow test runs
the CLI (``run`` with oracle, null and react-dab on its scripts, then ``report``) on a small crm
dataset."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from pydantic import ValidationError

import benchforge.synthesis.perturb  # noqa: F401  (registers the perturb derivation)
from benchforge.core.artifacts import LAYOUT, open_store
from benchforge.core.engines import TrialDatabases, load_db_config
from benchforge.core.records import DatasetRecord
from benchforge.core.records.trials import SOLUTION_ANSWER_FILE
from benchforge.evaluation.dab.agent_data import perturbed_data
from benchforge.evaluation.dab.gold import DabGold
from benchforge.evaluation.dab.spec import DabQueryTask, ExactRule, GoldShapeError
from benchforge.evaluation.dab.validators import ExactValue
from benchforge.evaluation.families import VerifyOptions, get_family
from benchforge.evaluation.families.dab import DabAnswerDetail
from benchforge.evaluation.tasks import TaskSpecError, load_task
from benchforge.evaluation.tasks.models import LoadedTask
from benchforge.harness.store import RunStore
from tests.paths import REPO_ROOT
from tests.support.datasets import write_dataset
from tests.support.perturb import TABLES, spec_data

SUITE = "dab-shop"
TASK = "high-tickets"
FAMILY = get_family("dab_query")
HIGH_TICKETS = {2: 20, 3: 30}  # seed -> tickets of High priority (30 tickets per seed unit)


def seeded_dataset(folder: Path, seed: int) -> Path:
    """The tiny shop dataset with ``30 * seed`` tickets, recorded as synthesized with ``seed``."""
    tables = dict(TABLES)
    tables["tickets"] = TABLES["tickets"].replace("range(1, 61)", f"range(1, {30 * seed + 1})")
    write_dataset(folder, tables)
    path = LAYOUT.dataset_record_file(folder)
    record = DatasetRecord.model_validate_json(path.read_text())
    path.write_text(record.model_copy(update={"seed": seed}).model_dump_json(indent=2))
    return folder


def task_yaml(**changes: Any) -> dict[str, Any]:
    data: dict[str, Any] = {
        "id": TASK,
        "suite": SUITE,
        "family": "dab_query",
        "title": "High-priority tickets",
        "domain": "shop",
        "dataset": {"domain": "shop", "location": "datasets/shop"},
        "perturb": "../perturb.yaml",
        "difficulty": "easy",
        "properties": ["multi_database", "text_embedded_values"],
        "question": "How many support tickets have High priority?",
        "gold_sql": "SELECT count(*) FROM tickets WHERE priority = 'High'",
        "answer": {"kind": "exact"},
    }
    return data | changes


def write_task(root: Path, perturb: dict[str, Any] | None = None, **changes: Any) -> LoadedTask:
    suite = root / "task_specs" / SUITE
    (suite / TASK).mkdir(parents=True, exist_ok=True)
    spec = perturb or spec_data(key_rules=[{"kind": "prefix", "prefix": "CUST-"}], embed=True)
    (suite / "perturb.yaml").write_text(yaml.safe_dump(spec))
    (suite / TASK / "task.yaml").write_text(yaml.safe_dump(task_yaml(**changes)))
    return load_task(suite / TASK)


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> tuple[LoadedTask, dict[int, Path], Path]:
    root = tmp_path_factory.mktemp("dab")
    datasets = {seed: seeded_dataset(root / f"shop-{seed}", seed) for seed in HIGH_TICKETS}
    return write_task(root), datasets, root / "work"


def test_gold_is_the_sql_on_the_clean_dataset_and_another_seed_gives_another(
    world: tuple[LoadedTask, dict[int, Path], Path],
) -> None:
    task, datasets, work = world
    golds = {seed: FAMILY.prepare_gold(task, folder, work) for seed, folder in datasets.items()}
    assert {seed: gold.validator for seed, gold in golds.items()} == {
        seed: ExactValue(value=count) for seed, count in HIGH_TICKETS.items()
    }
    assert golds[2].dataset_version != golds[3].dataset_version


def test_agent_data_is_the_perturbed_folder_only_built_once(
    world: tuple[LoadedTask, dict[int, Path], Path],
) -> None:
    task, datasets, work = world
    folder = FAMILY.agent_data(task, datasets[2], work)
    names = sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*"))
    assert names == [
        "databases",
        "databases/sales.duckdb",
        "databases/support.sqlite",
        "db_config.yaml",
        "hints.md",
        "schema.md",
    ]
    assert not folder.is_relative_to(datasets[2])
    # the record stays beside it, out of the agent's reach; the priority is gone from tickets
    record = json.loads((folder.parent / "perturbations.json").read_text())
    assert record["seed"] == 2 and record["embeds"]
    assert "has no column `priority`" in (folder / "hints.md").read_text()
    assert FAMILY.agent_data(task, datasets[2], work) == folder  # cached
    other = FAMILY.agent_data(task, datasets[3], work)
    assert other != folder
    assert json.loads((other.parent / "perturbations.json").read_text())["seed"] == 3


def test_postgres_scripts_stay_beside_the_agent_data_for_the_harness(
    world: tuple[LoadedTask, dict[int, Path], Path], tmp_path: Path
) -> None:
    task, datasets, work = world
    assert FAMILY.postgres_templates(task, FAMILY.agent_data(task, datasets[2], work)) is None
    postgres = write_task(tmp_path, perturb=spec_data(support_engine="postgres"))
    folder = FAMILY.agent_data(postgres, datasets[2], tmp_path / "work")
    assert sorted(p.name for p in folder.iterdir()) == [
        "databases",
        "db_config.yaml",
        "hints.md",
        "schema.md",
    ]
    config = yaml.safe_load((folder / "db_config.yaml").read_text())
    assert config["databases"]["support"]["engine"] == "postgres"
    assert set(config["databases"]["support"]) == {"engine", "description", "template"}
    assert FAMILY.postgres_templates(postgres, folder) == folder.parent
    assert (folder.parent / "postgres" / "support.sql").is_file()


def test_oracle_passes_null_and_a_wrong_answer_fail_with_the_verdict_recorded(
    world: tuple[LoadedTask, dict[int, Path], Path],
) -> None:
    task, datasets, work = world
    dataset = datasets[3]
    gold = FAMILY.prepare_gold(task, dataset, work)
    solution = FAMILY.solution(task, work, dataset)
    assert solution is not None
    oracle_answer = (solution / SOLUTION_ANSWER_FILE).read_text().strip()
    assert oracle_answer == "The answer is 30."

    def scored(answer: str | None) -> tuple[bool, float, DabAnswerDetail]:
        score = FAMILY.score(task, work, gold, dataset, work, answer=answer)
        assert isinstance(score.breakdown, DabAnswerDetail)
        return score.success, score.metrics["passed"], score.breakdown

    assert scored(oracle_answer)[:2] == (True, 100.0)
    assert scored(None)[:2] == (False, 0.0)
    success, metric, detail = scored("There are 20 High-priority tickets.")
    assert (success, metric) == (False, 0.0)
    assert (detail.validator_kind, detail.validator_version) == ("exact", ExactValue.VERSION)
    assert detail.verdict.kind == "exact" and detail.verdict.version == ExactValue.VERSION
    assert not detail.verdict.passed and detail.given == "There are 20 High-priority tickets."
    assert detail.expected == "The answer is 30."
    # a hedge naming the gold beside a wrong number fails too
    assert scored("30, or maybe 31")[:2] == (False, 0.0)
    # the gold survives a round trip as stored (the harness may hand it back as data)
    again = FAMILY.score(task, work, gold.model_dump(mode="json"), dataset, work, answer="30")
    assert again.success


def test_verify_checks_gold_empty_and_hedge(
    world: tuple[LoadedTask, dict[int, Path], Path],
) -> None:
    task, datasets, work = world
    verification = FAMILY.verify(task, datasets[2], work, VerifyOptions())
    named = {c.name: (c.observed, c.passed) for c in verification.checks}
    assert {k: named[k] for k in ("gold", "empty", "hedge")} == {
        "gold": ("100", True),
        "empty": ("0", True),
        "hedge": ("0", True),
    }
    assert {c.group for c in verification.checks} >= {"formats", "reward hacks"}
    assert [n for n in named if n.startswith("format: ")] == [
        "format: sentence",
        "format: bold",
        "format: table cell",
    ]
    assert {n for n in named if n.startswith("near miss: ")} == {
        "near miss: off by one",
        "near miss: another unit",
        "near miss: among many",
        "near miss: hidden",
    }
    assert verification.problems == []


def test_spec_refuses_unknown_properties_engines_and_a_gold_of_the_wrong_shape(
    tmp_path: Path,
) -> None:
    with pytest.raises(ValidationError, match="properties"):
        DabQueryTask.model_validate(task_yaml(properties=["multi_database", "vibes"]))
    with pytest.raises(ValidationError, match="rel_tol or abs_tol"):
        DabQueryTask.model_validate(task_yaml(answer={"kind": "number"}))
    spec = DabQueryTask.model_validate(task_yaml())
    assert spec.question in spec.instructions  # TASK.md asks the question
    # PostgreSQL databases are the run's to provide now (harness.postgres): accepted
    postgres = spec_data(support_engine="postgres", notes_engine="postgres")
    task = write_task(tmp_path, perturb=postgres)
    assert FAMILY.uses_postgres(task)
    assert not FAMILY.uses_postgres(write_task(tmp_path / "files"))
    oracle = spec_data(support_engine="oracle")
    with pytest.raises(TaskSpecError, match=r"perturb: .*database 'support' is 'oracle'"):
        write_task(tmp_path / "other", perturb=oracle)
    with pytest.raises(GoldShapeError, match="not a whole number"):
        ExactRule().validator([(2.5,)])
    with pytest.raises(GoldShapeError, match="one row of one column"):
        ExactRule().validator([(1,), (2,)])


def test_the_shipped_suite_covers_the_four_properties() -> None:
    folders = sorted(p.parent for p in (REPO_ROOT / "task_specs" / "dab-crm").glob("*/task.yaml"))
    specs = [load_task(folder).spec for folder in folders]
    assert len(specs) >= 8 and all(isinstance(s, DabQueryTask) for s in specs)
    dab = [s for s in specs if isinstance(s, DabQueryTask)]
    assert {p for s in dab for p in s.properties} == {
        "multi_database",
        "ill_formatted_keys",
        "text_embedded_values",
        "domain_knowledge",
    }
    assert {s.difficulty for s in dab} == {"easy", "medium", "hard"}
    assert {s.perturb for s in dab} == {"../perturb-files.yaml"}


# ------------------------------------------------------------------------------- the CLI (slow)

CRM_TASK = "crm-dab-healthcare-contacts"


def run_cli(env: dict[str, str], cwd: Path, *args: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "benchforge.cli", *args],
        cwd=cwd,
        env=env,
        text=True,
        capture_output=True,
        timeout=900,
        check=False,
    )
    assert done.returncode == 0, f"{args}: {done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done.stdout + done.stderr


@pytest.mark.slow
def test_every_shipped_query_takes_its_formats_and_refuses_its_near_misses(
    tmp_path: Path,
) -> None:
    """``task verify`` on each dab-crm query: the gold in several legitimate formats scores
    100, each near miss (glued inside a word, among many values, another unit, outside the
    tolerance, hidden from readers, a list out of order or short) 0."""
    from benchforge.synthesis.dataset import build_dataset

    crm = tmp_path / "crm"
    build_dataset("crm", scale=0.01, seed=7, out=str(crm), validate=False)
    folders = sorted((REPO_ROOT / "task_specs" / "dab-crm").glob("*/task.yaml"))
    assert len(folders) >= 8
    for task_file in folders:
        task = load_task(task_file.parent)
        verification = FAMILY.verify(task, crm, tmp_path / "work", VerifyOptions())
        kinds = {c.group for c in verification.checks}
        assert {"formats", "reward hacks"} <= kinds, task.spec.id
        assert sum(c.name.startswith("near miss: ") for c in verification.checks) >= 3
        assert verification.problems == [], (task.spec.id, verification.problems)

    # react-dab-crm-substring's mistake bites: its substring match on the descriptions counts
    # more High-priority cases than the gold, on the perturbed databases as the agent gets them
    script = yaml.safe_load(
        (REPO_ROOT / "benchforge/agents/mock_llm/scripts/react-dab-crm-substring.yaml").read_text()
    )
    sqls = [
        call["arguments"]["sql"]
        for reply in script["replies"]
        for call in reply.get("tool_calls", [])
        if call["name"] == "query_db"
    ]
    task = load_task(REPO_ROOT / "task_specs" / "dab-crm" / "crm-dab-high-cases-mobile")
    assert isinstance(task.spec, DabQueryTask)
    gold = FAMILY.prepare_gold(task, crm, tmp_path / "work")
    agent = perturbed_data(crm, task.folder / task.spec.perturb, tmp_path / "work")
    with TrialDatabases(load_db_config(agent / "db_config.yaml")) as dbs:
        cases = dbs.query_db("support", sqls[0])
        mobile = dbs.query_db("customers", sqls[1])
        assert cases.kind == mobile.kind == "result"
        mobile_numbers = {row[0] for row in mobile.rows}
        counted = sum(row[0] in mobile_numbers for row in cases.rows)
    assert isinstance(gold.validator, ExactValue) and isinstance(gold.validator.value, int)
    assert counted > gold.validator.value


@pytest.mark.slow
def test_run_and_report_on_a_small_crm_dataset(tmp_path: Path) -> None:
    """oracle passes, null fails, react-dab on its solving script passes and on its exact-join
    script fails with the wrong number; the report shows oracle 100% and null 0%."""
    from benchforge.synthesis.dataset import build_dataset

    crm = tmp_path / "crm"
    build_dataset("crm", scale=0.01, seed=7, out=str(crm), validate=False)
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("BENCHFORGE_OPENAI_API_KEY", "BENCHFORGE_OPENAI_BASE_URL")
    }
    env |= {
        "PYTHONPATH": os.pathsep.join([str(REPO_ROOT), env.get("PYTHONPATH", "")]),
        "BENCHFORGE_ARTIFACT_ROOT": str(tmp_path / "artifacts"),
        "BENCHFORGE_CACHE_DIR": str(tmp_path / "cache"),
    }
    common = ["--suite", "dab-crm", "--task", CRM_TASK, "--dataset", f"crm={crm}"]
    tasks = ["--tasks-root", str(REPO_ROOT / "task_specs")]
    agents = ["--agent", "oracle", "--agent", "null", "--agent", "react-dab"]
    model = ["--model", "mock-script:react-dab-crm-solve"]
    run_cli(env, tmp_path, "run", *common, *tasks, *agents, *model, "--run-id", "dab")
    run = RunStore(open_store(str(tmp_path / "artifacts")), "dab")
    scores = {s.key.agent: s for s in run.read_scores()}
    assert {a: s.metrics["passed"] for a, s in scores.items()} == {
        "oracle": 100.0,
        "null": 0.0,
        "react-dab": 100.0,
    }
    react = scores["react-dab"].breakdown
    assert isinstance(react, DabAnswerDetail) and react.verdict.passed
    assert (react.validator_kind, react.validator_version) == ("exact", ExactValue.VERSION)
    assert react.expected == "The answer is 55."
    # the agent's data folder, as mounted: no record of the perturbation, no clean warehouse
    [result] = [run.read_result(s) for s in run.finished_slugs() if "react-dab" in s]
    tools = [step.output or "" for step in result.trajectory if step.kind == "tool"]
    assert "customers (sqlite)" in tools[0] and "contacts at Healthcare accounts: 55" in tools[4]
    assert tools[1].startswith("# ") and "account_id" in tools[1]  # read_doc: hints.md

    out = run_cli(env, tmp_path, "report", "dab")
    assert "oracle" in out and "react-dab" in out
    [board] = (tmp_path / "artifacts" / "runs" / "dab").rglob("leaderboard.json")
    rows = json.loads(board.read_text())["rows"]
    assert {row["agent"]: row["success_rate"] for row in rows} == {
        "oracle": 1.0,
        "null": 0.0,
        "react-dab": 1.0,
    }
    # the DAB report: the null agent's trial failed before planning (no answer), by code
    report_dir = tmp_path / "artifacts" / "runs" / "dab"
    [dab_json] = report_dir.rglob("dab-report.json")
    dab = json.loads(dab_json.read_text())
    assert {row["agent"]: row["failures"] for row in dab["rows"]} == {
        "oracle": {},
        "null": {"before_planning": 1},
        "react-dab": {},
    }
    [dab_html] = report_dir.rglob("dab-report.html")
    assert 'id="dab-failure-modes"' in dab_html.read_text()
    [markdown] = report_dir.rglob("leaderboard.md")
    assert "### Failure modes of failed trials" in markdown.read_text()

    mistake = ["--model", "mock-script:react-dab-crm-exact-join", "--agent", "react-dab"]
    run_cli(env, tmp_path, "run", *common, *tasks, *mistake, "--run-id", "dab-wrong")
    wrong = RunStore(open_store(str(tmp_path / "artifacts")), "dab-wrong")
    [score] = wrong.read_scores()
    assert not score.success and isinstance(score.breakdown, DabAnswerDetail)
    assert score.breakdown.given is not None and score.breakdown.given.startswith("0 contacts")
    assert not score.breakdown.verdict.passed
    # its failure mode is the (mock) judge's: data was queried, the answer is wrong
    run_cli(env, tmp_path, "report", "dab-wrong")
    [wrong_json] = (tmp_path / "artifacts" / "runs" / "dab-wrong").rglob("dab-report.json")
    [label] = json.loads(wrong_json.read_text())["failures"]
    assert (label["mode"], label["source"], label["judge_model"]) == (
        "implementation",
        "judge",
        "mock-judge",
    )


def test_a_gold_is_stored_as_data() -> None:
    gold = DabGold(validator=ExactValue(value=3), dataset_version="abc")
    assert DabGold.model_validate_json(gold.model_dump_json()) == gold
