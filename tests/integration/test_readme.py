"""Keeps the README true: every command in its code blocks is run here (or by CI itself)."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest

from benchforge.evaluation.leaderboard.formatting import MISSING
from tests.integration import test_anonymize_release as anonymize_release
from tests.integration.test_byo_walkthrough import walkthrough_commands
from tests.paths import REPO_ROOT

pytestmark = pytest.mark.slow  # tests/README.md: the fast and the full loop

ROOT = REPO_ROOT
README = (ROOT / "README.md").read_text()


CALIBRATE = (
    "benchforge calibrate --cases tests/fixtures/calibration/cases.jsonl "
    "--labels tests/fixtures/calibration/labels.csv --truth tests/fixtures/calibration/truth.jsonl "
    "--judge-model mock-judge-noisy:sigma=0.05,bias=0,seed=1 "
    "--judge-model mock-judge-noisy:sigma=0.6,bias=0.4,seed=2 --resamples 200"
)


def readme_commands() -> list[str]:
    commands = []
    for block in re.findall(r"```bash\n(.*?)```", README, flags=re.S):
        for line in block.splitlines():
            command = line.split("  #")[0].strip()
            if command:
                commands.append(command)
    return commands


def section_commands(heading: str) -> list[str]:
    """The commands of the bash blocks of one README section (``heading`` to the next ``## ``)."""
    start = README.index(f"\n{heading}\n")
    end = README.find("\n## ", start + 1)
    text = README[start : end if end >= 0 else len(README)]
    return [
        command
        for block in re.findall(r"```bash\n(.*?)```", text, flags=re.S)
        for line in block.splitlines()
        if (command := line.split("  #")[0].strip())
    ]


DAB_RUN = "benchforge run --suite dab-crm --agent oracle --agent null --agent react-dab --epochs 3"
EXPLORE_RUN = (
    "benchforge run --suite explore-enterprise --agent oracle --agent null --agent react-explore "
    "--epochs 3"
)
LAKE_RUN = (
    "benchforge run --suite lake-crm --setting full --setting oracle --agent oracle --agent null "
    "--agent ds-star --agent react-lake --epochs 3"
)
POSTGRES_SECTION = "## Importing from PostgreSQL"
PRODUCTION_SECTION = "## Running in production"
DASK_SECTION = "## One run on a Dask cluster"


def run(
    command: str, cwd: Path, env: dict[str, str | None] | None = None, timeout: int = 1800
) -> subprocess.CompletedProcess[str]:
    """``command`` in bash, in this session's environment updated by ``env`` (None: unset)."""
    full = {**os.environ, **(env or {})}
    return subprocess.run(
        ["bash", "-c", command],
        cwd=cwd,
        capture_output=True,
        text=True,
        env={k: v for k, v in full.items() if v is not None},
        timeout=timeout,
        check=False,
    )


def test_first_screen_gives_the_two_commands_and_ci_runs_the_test_one() -> None:
    first_screen = "\n".join(README.splitlines()[:15])
    assert "bash scripts/pipeline.sh" in first_screen
    assert "bash scripts/test.sh" in first_screen
    assert "bash scripts/test.sh" in (ROOT / ".ci" / "run").read_text()


def test_every_readme_command_is_covered_here() -> None:
    covered = {
        "bash scripts/pipeline.sh",  # test_pipeline_command_runs_the_nightly_eval_offline
        "bash scripts/test.sh",  # what CI runs (.ci/run) -- it runs this very file
        "bash scripts/test-fast.sh",  # test.sh --fast: see test_fast_loop_is_the_test_command_*
        "source .venv/bin/activate",
        "benchforge synth crm --scale 0.1 --seed 7 --out out/crm",
        "benchforge synth crm --scale 0.1 --seed 7 --out s3://bucket/datasets/crm",
        "benchforge spec list",
        "benchforge spec validate",
        "benchforge spec schema > domain_spec.schema.json",
        "benchforge --help",
        "python bench/synth.py",
        "benchforge gold build crm --dataset out/crm",
        "benchforge task validate task_specs/",
        "benchforge score de --task task_specs/de-crm/crm-impl-full --candidate dbt_projects/crm "
        "--report score.json",
        "python bench/de_scoring.py",
        "python bench/nightly.py",  # test_readme_commands.py (one task, 3 and 6 trials)
        "benchforge run --suite de-crm --agent oracle --agent null --epochs 2",
        "benchforge report",
        "benchforge run --suite de-crm --task crm-evol-support-response-sla --agent react-de "
        "--model mock-script:react-de-crm-sla-solve",
        "python -m benchforge.infra.deploy --list",
        "python bench/fanout.py",
        "benchforge run --suite da-crm --agent oracle --agent null --agent react-da",
        DAB_RUN,  # test_dab_run_and_report_commands
        EXPLORE_RUN,  # test_explore_run_command
        LAKE_RUN,  # test_lake_run_and_report_commands (two questions, one epoch)
        "benchforge score-run --rescore",
        "benchforge score-run --rescore --fresh",
        "benchforge task prepare task_specs/da-crm --seed 8",
        "python bench/judging.py",
        "benchforge judge export-labelling --out labelling",
        CALIBRATE,
        # tests/integration/test_anonymize_release.py::test_readme_release_commands
        anonymize_release.EXPORT_SECRET,
        anonymize_release.ANONYMIZE,
        anonymize_release.POLICY_CHECK,
        anonymize_release.POLICY_DRAFT,
        anonymize_release.POLICY_SCHEMA,
        "python bench/anonymize.py",
        "python bench/dataset_import.py",  # tests/importer/test_bench.py (smoke size)
        "python bench/explore_env.py",  # tests/synthesis/test_explore_enterprise.py (scale 0.1)
        "python bench/lake.py",  # run by hand: its figures are the README's table
        # tests/integration/test_byo_walkthrough.py runs its section's commands in order
        *walkthrough_commands(),
        # test_readme_commands.py::test_postgres_import_commands runs them as written
        *section_commands(POSTGRES_SECTION),
        # test_readme_commands.py::test_schedule_commands, on the session's Prefect server
        *section_commands(PRODUCTION_SECTION),
        # tests/harness/test_dask_cluster.py: the scheduler and worker commands on loopback,
        # and a run with --dask on the fixture suite (the de-crm run is the nightly's)
        *section_commands(DASK_SECTION),
    }
    assert set(readme_commands()) == covered


def test_a_lint_or_type_error_fails_the_test_command(tmp_path: Path) -> None:
    """Each check is a command of its own: in `echo && ruff check .` a failing ruff would not
    stop a `set -e` script (only the last command of an && list does), and CI would pass."""
    script = (ROOT / "scripts" / "test.sh").read_text()
    for check in ("ruff check .", "ruff format --check .", "mypy", "lint-imports", "sqlfluff"):
        [line] = [
            x.strip()
            for x in script.splitlines()
            if x.strip().startswith(check.split()[0])
            and check in x
            and not x.strip().startswith("#")
        ] or [""]
        assert line.startswith(check), f"{check!r} must start its own line in test.sh: {line!r}"
        assert "&&" not in line and "||" not in line, line
    # and bash really stops there: the same shape, with a failing check
    probe = tmp_path / "probe.sh"
    probe.write_text("set -euo pipefail\necho '== lint'\nfalse\necho reached\n")
    done = subprocess.run(["bash", str(probe)], capture_output=True, text=True, check=False)
    assert done.returncode != 0 and "reached" not in done.stdout


def test_fast_loop_is_the_test_command_without_the_slow_files() -> None:
    """`test-fast.sh` is `test.sh --fast`: the same checks, then the test files not marked
    slow (tests/README.md); some files are in each loop."""
    script = (ROOT / "scripts" / "test.sh").read_text()
    assert '-m "not slow"' in script and "mypy" in script and "ruff format --check" in script
    assert '/test.sh" --fast' in (ROOT / "scripts" / "test-fast.sh").read_text()
    files = sorted((ROOT / "tests").rglob("test_*.py"))
    slow = [f for f in files if "pytestmark = pytest.mark.slow" in f.read_text()]
    assert 0 < len(slow) < len(files)
    for name in ("test.sh", "test-fast.sh"):
        assert subprocess.run(["bash", "-n", str(ROOT / "scripts" / name)]).returncode == 0


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("readme")


def test_pipeline_command_runs_the_nightly_eval_offline(workdir: Path) -> None:
    # as on a fresh machine: Prefect's ephemeral server, not the session's (PREFECT_API_URL)
    env: dict[str, str | None] = {
        "BENCHFORGE_ARTIFACT_ROOT": str(workdir / "artifacts"),
        "BENCHFORGE_OPENAI_API_KEY": "",
        "PREFECT_API_URL": None,
    }
    # ~25 min on an idle 2-core machine beside the other test worker; 45 allows a busy one
    result = run("bash scripts/pipeline.sh --date 2026-01-31", ROOT, env, timeout=2700)
    out = result.stdout
    assert result.returncode == 0, (out + result.stderr)[-4000:]
    assert "kind de: verified 7 tasks" in out  # 4 executed, 3 blueprints
    assert "run nightly-2026-01-31: 21 trials" in out
    # the judged analysis suite, as a run kind of its own
    assert "kind da: verified 5 tasks" in out
    assert "run nightly-2026-01-31-da: 15 trials" in out
    assert "judge mock-judge (the Benchforge mock LLM server)" in out
    da_board = json.loads(
        (workdir / "artifacts/runs/nightly-2026-01-31-da/report/leaderboard.json").read_text()
    )
    da_rows = {row["agent"]: row for row in da_board["rows"]}
    assert da_rows["oracle"]["primary_mean"] >= 90.0 and da_rows["null"]["primary_mean"] == 0.0
    assert {"accuracy", "gsb", "readability"} <= set(da_rows["react-da"]["metrics"])
    assert out.index("mock LLM server") < out.index("| oracle")  # the banner comes first
    assert "network isolated" in out
    board = json.loads(
        (workdir / "artifacts/runs/nightly-2026-01-31/report/leaderboard.json").read_text()
    )
    rows = {row["agent"]: row for row in board["rows"]}
    assert rows["oracle"]["primary_mean"] == 100.0 and rows["null"]["primary_mean"] == 0.0
    sla = next(t for t in board["tasks"] if t["task_id"] == "crm-evol-support-response-sla")
    assert [c["primary_mean"] for c in sla["cells"] if c["agent"] == "react-de"] == [100.0]
    # DE trials are scored once, on the held-out seed (the nightly's visible scores are opt-in),
    # and the oracle's and null agent's held-out scores are verification's gold and do-nothing
    # scores, kept in the score cache
    de_scores = [
        json.loads(p.read_text())
        for p in (workdir / "artifacts/runs/nightly-2026-01-31/scores").rglob("*.json")
    ]
    executed = [d for d in de_scores if d["family"] in ("de_impl", "de_evol")]
    assert len(executed) == 12 and all(d["scored_on"] == "heldout" for d in executed)
    assert not any(k.endswith("_visible") for d in executed for k in d["metrics"])
    references = [d for d in executed if d["key"]["agent"] in ("oracle", "null")]
    assert len(references) == 8 and all(d["score_reused"] for d in references)
    # Operators find the leaderboard on the nightly flow run itself (same Prefect database).
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import ArtifactFilter, ArtifactFilterKey

    keys = [
        "leaderboard-nightly-2026-01-31",
        "leaderboard-html-nightly-2026-01-31",
        "nightly-nightly-2026-01-31",
    ]
    with get_client(sync_client=True) as client:
        found = client.read_artifacts(
            artifact_filter=ArtifactFilter(key=ArtifactFilterKey(any_=keys))
        )
        assert sorted(a.key or "" for a in found) == sorted(keys)
        runs = {client.read_flow_run(a.flow_run_id).name for a in found if a.flow_run_id}
    assert runs == {"nightly-2026-01-31"}


def task_row(markdown: str, task: str, family: str, agent: str) -> tuple[list[str], str]:
    """The per-task table's row of (task, agent): its filled score cells and scored/epochs."""
    prefix = f"| {task} | {family} | {agent} | - |"
    (line,) = [row for row in markdown.splitlines() if row.startswith(prefix)]
    cells = [c.strip() for c in line[len(prefix) :].strip(" |").split(" | ")]
    scored = next(c for c in cells if "/" in c)
    values = cells[: cells.index(scored)]
    return [v for v in values if v != MISSING], scored


def test_run_and_report_commands(workdir: Path) -> None:
    env = {"BENCHFORGE_ARTIFACT_ROOT": str(workdir / "artifacts"), "BENCHFORGE_OPENAI_API_KEY": ""}
    ran = run("benchforge run --suite de-crm --agent oracle --agent null --epochs 2", ROOT, env)
    assert ran.returncode == 0, (ran.stdout + ran.stderr)[-4000:]
    assert "28 trials, 0 already done, 28 run (0 infrastructure errors)" in ran.stdout
    reported = run("benchforge report", ROOT, env)
    assert reported.returncode == 0, reported.stderr[-3000:]
    for task, family in [
        ("crm-impl-full", "de_impl"),
        ("crm-evol-rep-quarterly-attainment", "de_evol"),
        ("crm-evol-support-response-sla", "de_evol"),
    ]:
        # the primary metric (CS), then CS, CFS and SR (the run mixes two primary metrics, so
        # CS also has its own column; the de_arch metrics' columns are empty on a DE row, and
        # visible-seed columns need --visible-scores)
        assert task_row(reported.stdout, task, family, "oracle") == (["100.0"] * 4, "2/2")
        assert task_row(reported.stdout, task, family, "null") == (["0.0"] * 4, "2/2")
    assert "MOCK LLM" not in reported.stdout  # no agent called a model
    # ... but the blueprints (de_arch) were judged by the mock server's judge, and it says so
    assert "MOCK JUDGE" in reported.stdout
    for task in ("crm-arch-account-health-score", "crm-arch-bookings-to-revenue"):
        # the rubric (primary) and its three dimensions
        assert task_row(reported.stdout, task, "de_arch", "oracle") == (["100.0"] * 5, "2/2")
        assert task_row(reported.stdout, task, "de_arch", "null") == (["0.0"] * 5, "2/2")
    react = run(
        "benchforge run --suite de-crm --task crm-evol-support-response-sla --agent react-de "
        "--model mock-script:react-de-crm-sla-solve",
        ROOT,
        env,
    )
    assert react.returncode == 0, (react.stdout + react.stderr)[-4000:]
    assert "scored 1 trials (scored 1)" in react.stdout and "mock server" in react.stdout
    deploy = run("python -m benchforge.infra.deploy --list", ROOT)
    assert "nightly/nightly-eval" in deploy.stdout


def test_dab_run_and_report_commands(workdir: Path) -> None:
    """The DAB commands as written: 9 questions x (oracle + null + react-dab) x 3 epochs, then
    the report with its failure modes (the null agent's by code, react-dab's mock script,
    written for another scale, answers wrongly: the mock judge's)."""
    env = {"BENCHFORGE_ARTIFACT_ROOT": str(workdir / "artifacts"), "BENCHFORGE_OPENAI_API_KEY": ""}
    ran = run(DAB_RUN, ROOT, env)
    assert ran.returncode == 0, (ran.stdout + ran.stderr)[-4000:]
    assert "81 trials" in ran.stdout and "(0 infrastructure errors)" in ran.stdout
    reported = run("benchforge report", ROOT, env)
    assert reported.returncode == 0, (reported.stdout + reported.stderr)[-4000:]
    assert "### Failure modes of failed trials" in reported.stdout
    [report] = (workdir / "artifacts" / "runs").rglob("dab-report.json")
    rows = {row["agent"]: row for row in json.loads(report.read_text())["rows"]}
    assert rows["oracle"]["pass_at_k"]["1"] == 1.0 and rows["oracle"]["failures"] == {}
    assert rows["null"]["pass_at_k"]["3"] == 0.0
    assert rows["null"]["failures"] == {"before_planning": 27}
    react = rows["react-dab"]
    assert react["trials"] == 27 and react["tools"]["sql"] > 0 and react["tools"]["python"] > 0
    assert sum(react["failures"].values()) == pytest.approx(27 * (1 - react["pass_at_k"]["1"]))
    assert "infra_error" not in react["failures"]


def test_explore_run_command(workdir: Path) -> None:
    """The exploration commands as written: 15 tasks x (oracle + null + react-explore) x 3
    epochs; the oracle scores Acc 100 and GPR 100 on every trial, null 0 on both, and
    react-explore's offline script solves the top-revenue task and gets part of the way on
    others; then the report with its intervals and plots."""
    from benchforge.core.artifacts import open_store
    from benchforge.evaluation.families.explore import ExploreDetail
    from benchforge.harness.store import RunStore

    env = {"BENCHFORGE_ARTIFACT_ROOT": str(workdir / "artifacts"), "BENCHFORGE_OPENAI_API_KEY": ""}
    ran = run(EXPLORE_RUN, ROOT, env)
    assert ran.returncode == 0, (ran.stdout + ran.stderr)[-4000:]
    assert "135 trials" in ran.stdout and "(0 infrastructure errors)" in ran.stdout
    [run_id] = re.findall(r"^run (\S+): 135 trials", ran.stdout, flags=re.M)
    store = RunStore(open_store(str(workdir / "artifacts")), run_id)
    scores = store.read_scores()
    oracle = [s.metrics for s in scores if s.key.agent == "oracle"]
    null = [s.metrics for s in scores if s.key.agent == "null"]
    assert len(oracle) == 45 and all(m["accuracy"] == m["gpr"] == 100.0 for m in oracle)
    assert len(null) == 45 and all(m["accuracy"] == m["gpr"] == 0.0 for m in null)
    react = {s.key.task_id: s for s in scores if s.key.agent == "react-explore"}
    solved = react["ent-top-revenue-industry"]
    assert solved.success and solved.metrics["gpr"] == 100.0 and "ee" in solved.metrics
    growth = react["ent-revenue-growth-top-industry"]
    assert not growth.success and growth.metrics["gpr"] == 50.0
    assert isinstance(growth.breakdown, ExploreDetail)
    assert growth.breakdown.milestones.first_missed == "prior_revenue"
    assert growth.breakdown.termination == "wrong_answer_stop"
    # the agent's data is the environment alone: no record of the noise, no clean warehouse
    result, *_ = [  # one per epoch
        store.read_result(slug)
        for slug in store.finished_slugs()
        if "react-explore" in slug and "ent-top-revenue-industry@" in slug
    ]
    listing = next(s.output or "" for s in result.trajectory if s.kind == "tool")
    assert "database/" in listing and "noise.json" not in listing
    assert "warehouse.duckdb" not in listing

    reported = run("benchforge report", ROOT, env)
    assert reported.returncode == 0, (reported.stdout + reported.stderr)[-4000:]
    assert "## Exploration tasks" in reported.stdout and "react-explore" in reported.stdout
    [report_json] = (workdir / "artifacts" / "runs" / run_id).rglob("explore-report.json")
    rows = {r["agent"]: r for r in json.loads(report_json.read_text())["report"]["rows"]}
    assert rows["oracle"]["accuracy"]["mean"] == rows["oracle"]["gpr"]["mean"] == 1.0
    assert rows["null"]["accuracy"]["mean"] == rows["null"]["gpr"]["mean"] == 0.0
    assert rows["null"]["terminations"] == {"silent_stop": 45}
    assert rows["null"]["first_missed"] == {"1": 45}
    assert rows["react-explore"]["accuracy"]["interval"] is not None
    assert 0 < rows["react-explore"]["gpr"]["mean"] < 1
    [page] = (workdir / "artifacts" / "runs" / run_id).rglob("explore-report.html")
    assert page.read_text().count("<svg") == 3


LAKE_QUESTIONS = ("webinar-campaigns", "won-usd-2024")  # easy and hard; react-lake solves the first
LAKE_MISTAKES = "mock-script:react-lake-crm-mistakes"  # sums distractors into won-usd-2024


def test_lake_run_and_report_commands(workdir: Path) -> None:
    """The lake commands on two questions, one epoch (the README's runs all ten, three times):
    the settings the README names with every agent, then the other settings with the oracle,
    the null agent and react-lake's mistakes script; the reports. The oracle scores 100 on every
    setting and in the sub-task mode, the null agent 0; react-lake's and ds-star's scripts solve
    the easy question, react-lake's mistakes script reads distractors and scores as they make it."""
    env = {"BENCHFORGE_ARTIFACT_ROOT": str(workdir / "lake"), "BENCHFORGE_OPENAI_API_KEY": ""}
    tasks = " ".join(
        f"--task crm-lake-{q}-{s}"
        for q in LAKE_QUESTIONS
        for s in ("full", "oracle", "trimmed", "obscured", "subtasks")
    )
    ran = run(f"{LAKE_RUN.replace('--epochs 3', '--epochs 1')} {tasks}", ROOT, env)
    assert ran.returncode == 0, (ran.stdout + ran.stderr)[-4000:]
    assert "16 trials" in ran.stdout and "(0 infrastructure errors)" in ran.stdout
    others = (
        "benchforge run --suite lake-crm --setting trimmed --setting obscured --setting subtasks "
        f"--agent oracle --agent null --agent react-lake --model {LAKE_MISTAKES} {tasks}"
    )
    ran = run(others, ROOT, env)
    assert ran.returncode == 0, (ran.stdout + ran.stderr)[-4000:]
    assert "18 trials" in ran.stdout and "scored 18 trials (scored 18)" in ran.stdout
    [mistake] = (workdir / "lake" / "runs").glob(
        "*/scores/lake-crm/crm-lake-won-usd-2024-trimmed@1/react-lake-*/*/epoch-0.json"
    )
    # a distractor read: stale copies and revised re-exports summed in, 1 / (1 + RAE) of 11.8 %
    assert json.loads(mistake.read_text())["metrics"]["accuracy"] == pytest.approx(89.47, abs=0.01)
    reported = run("benchforge report", ROOT, env)  # the latest run's, as the README says
    assert reported.returncode == 0, (reported.stdout + reported.stderr)[-4000:]
    assert "## Lake questions" in reported.stdout
    runs = sorted((workdir / "lake" / "runs").iterdir())
    assert len(runs) == 2
    first = run(f"benchforge report {runs[0].name}", ROOT, env)
    assert first.returncode == 0, (first.stdout + first.stderr)[-4000:]
    reports = []
    for folder in runs:
        written = {p.name for p in (folder / "report").iterdir()}
        assert {"lake-report.md", "lake-report.html", "lake-report.json"} <= written
        reports.append(json.loads((folder / "report" / "lake-report.json").read_text()))
    rows: dict[str, dict[str, float]] = {}
    for report in reports:
        for row in report["rows"]:
            rows.setdefault(row["agent"], {})
            for setting, value in row["accuracy_by_setting"].items():
                if value is not None:
                    rows[row["agent"]][setting] = value
            if row["subtasks"] is not None:
                rows[row["agent"]]["subtasks"] = row["subtasks"]
    every = {"full", "oracle", "trimmed", "obscured", "subtasks"}
    assert rows["oracle"] == {setting: 100.0 for setting in every}
    assert rows["null"] == {setting: 0.0 for setting in every}
    assert set(rows["ds-star"]) == {"full", "oracle"}
    react = next(x for x in reports[0]["rows"] if x["agent"] == "react-lake")
    assert react["accuracy_by_difficulty"]["easy"] == 100.0
    assert react["roles"]["-"]["calls_per_trial"] == 4.0
    ds_star = next(x for x in reports[0]["rows"] if x["agent"] == "ds-star")
    # calls per role, off its trajectory (the analyzer's descriptions may come from its cache)
    assert ds_star["roles"]["planner"]["calls_per_trial"] == 1.0
    assert ds_star["rounds_mean"] == 1.0  # webinar-campaigns: sufficient at the first round
    assert ds_star["accuracy_by_difficulty"]["easy"] == 100.0  # its script knows webinar-campaigns


def test_judged_run_rescore_prepare_and_labelling_commands(workdir: Path) -> None:
    # After test_run_and_report_commands: the crm dataset and its gold build are reused.
    env = {"BENCHFORGE_ARTIFACT_ROOT": str(workdir / "artifacts"), "BENCHFORGE_OPENAI_API_KEY": ""}
    ran = run(
        "benchforge run --suite da-crm --agent oracle --agent null --agent react-da", ROOT, env
    )
    out = ran.stdout
    assert ran.returncode == 0, (out + ran.stderr)[-4000:]
    assert "15 trials, 0 already done, 15 run (0 infrastructure errors)" in out
    assert "scored 15 trials (scored 15)" in out
    # (the nightly test judged the same reports on the same data: its replies may be cached)
    assert re.search(r"judge mock-judge \(the Benchforge mock LLM server\): \d+ LLM requests", out)
    reported = run("benchforge report", ROOT, env)
    assert "MOCK JUDGE" in reported.stdout and "## Judging" in reported.stdout
    for task in ("crm-da-bookings-2024", "crm-da-win-rate-drivers", "crm-da-customer-profile"):
        oracle, scored = task_row(reported.stdout, task, "da_open", "oracle")
        assert float(oracle[0]) >= 90.0 and scored == "1/1", oracle
        null, _ = task_row(reported.stdout, task, "da_open", "null")
        assert float(null[0]) == 0.0, null

    again = run("benchforge score-run --rescore", ROOT, env)
    assert again.returncode == 0, (again.stdout + again.stderr)[-3000:]
    assert "scored 15 trials (scored 15)" in again.stdout
    assert "dbt invocations 0, judge requests 0, kept scores used " in again.stdout
    fresh = run("benchforge score-run --rescore --fresh", ROOT, env)
    assert fresh.returncode == 0, (fresh.stdout + fresh.stderr)[-3000:]
    assert re.search(
        r": 0 LLM requests sent, [1-9]\d* answered from the response cache", fresh.stdout
    )

    seeds = {}
    for seed, command in (
        (7, "benchforge task prepare task_specs/da-crm --seed 7 --out prepared-7"),
        (8, "benchforge task prepare task_specs/da-crm --seed 8"),
    ):
        prepared = run(command, workdir, env)
        assert prepared.returncode == 0, (prepared.stdout + prepared.stderr)[-3000:]
        assert prepared.stdout.count("ok  da-crm/") == 5
        seeds[seed] = workdir / ("prepared-7" if seed == 7 else "out/prepared") / "da-crm"
    for task in (p.name for p in seeds[7].iterdir()):
        seven = json.loads((seeds[7] / task / "anchors.json").read_text())
        eight = json.loads((seeds[8] / task / "anchors.json").read_text())
        assert seven.keys() == eight.keys() and seven
        assert all(seven[k]["value"] != eight[k]["value"] for k in seven), task
        rubric7, rubric8 = (s / task / "rubric.md" for s in (seeds[7], seeds[8]))
        assert rubric7.read_text() != rubric8.read_text()

    labelled = run("benchforge judge export-labelling --out labelling", workdir, env)
    assert labelled.returncode == 0, (labelled.stdout + labelled.stderr)[-3000:]
    for name in ("cases.jsonl", "labelling.csv", "labelling.html"):
        assert (workdir / "labelling" / name).stat().st_size > 0


def test_task_and_score_commands(workdir: Path) -> None:
    validated = run("benchforge task validate task_specs/", ROOT)
    assert validated.returncode == 0, validated.stderr[-3000:]
    assert "de-crm/crm-impl-full" in validated.stdout
    scored = run(
        "benchforge score de --task task_specs/de-crm/crm-impl-full --candidate dbt_projects/crm "
        "--report score.json",
        ROOT,
        {"BENCHFORGE_ARTIFACT_ROOT": str(workdir / "artifacts")},
    )
    assert scored.returncode == 0, (scored.stdout + scored.stderr)[-3000:]
    assert "CS 100.00 / CFS 100.00 / SR 100 (held-out seed)" in scored.stdout
    assert "visible seed: CS 100.00 / CFS 100.00 / SR 100" in scored.stdout
    assert "sandbox: namespace (network isolated, filesystem confined)" in scored.stdout
    report = ROOT / "score.json"
    data = json.loads(report.read_text())
    assert data["sr"] == 100.0 and data["scored_on"] == "heldout"
    assert data["visible"]["sr"] == 100.0 and data["unsandboxed"] is False
    report.unlink()
