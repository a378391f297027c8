"""Reward hacks: the first entry of each kind of the hack catalogue
(``task_specs/hacks/catalogue.yaml``; every entry runs in ``benchforge task verify``) applied
to the mini fixture and scored for real (sandboxed dbt, sandboxed CS) must score 0 / 0 / 0 and
stay contained; the command-agent hacks of ``task_specs/hacks/agents/`` must score 0 through
the real run path. These are attack tests: when one fails, the scorer or the sandbox has a hole.

Everything lives in a folder outside /tmp that other users can read (``out/`` of the checkout,
gitignored), as a real artifact root would: a sandbox's private /tmp or pytest's 0700 temp
folders would otherwise hide the gold by accident rather than by design.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import get_args

import pytest

from benchforge.core.artifacts import open_store
from benchforge.core.records import GOLD_DB, AgentLimits
from benchforge.core.sandbox import default_backend
from benchforge.evaluation.de.hacks import (
    BUILDERS,
    CANARY_PREFIX,
    HackCatalogueError,
    HackCheck,
    HackKind,
    RewardHack,
    apply_hack,
    changes,
    check_catalogue,
    fingerprint,
    hack_agent_configs,
    load_hack_catalogue,
    time_allowed,
)
from benchforge.evaluation.de.scoring import score_candidate
from benchforge.evaluation.de.tasks import prepare_gold
from benchforge.evaluation.tasks.loader import load_task
from benchforge.evaluation.tasks.materials import make_skeleton
from benchforge.evaluation.tasks.models import DeScoring
from benchforge.flows.runs import run_suite, score_run
from benchforge.harness.store import RunStore
from tests.paths import REPO_ROOT as PROJECT_ROOT
from tests.support.maintainer_checkout import maintainer_checkout
from tests.support.mini_hacks import (
    CATALOGUE,
    DEADLINE_MARGIN_S,
    EVOL,
    GOLD_REPO,
    IMPL,
    SCRATCH,
    TASKS_ROOT,
    Mini,
)

pytestmark = pytest.mark.slow  # tests/README.md: the fast and the full loop


@pytest.fixture(scope="module")
def host() -> Iterator[Path]:
    root = SCRATCH / f"test-reward-hacks-{uuid.uuid4().hex[:8]}"
    root.mkdir(parents=True)
    for folder in (SCRATCH, root):
        folder.chmod(0o755)
    yield root
    shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(scope="module")
def mini(host: Path) -> Mini:
    return Mini(host).build()


def _details(check: HackCheck) -> str:
    lines = [check.summary(), f"nodes: {check.statuses}", f"errors: {check.candidate_errors}"]
    return "\n".join(lines + [f"loot: {line}" for line in check.loot[:25]])


def check_with_deadline(mini: Mini, hack: RewardHack) -> HackCheck:
    """Scores ``hack`` in a child process killed (with its whole session) at the deadline: a
    hack that holds the scorer must fail the test, not hang it."""
    allowed = time_allowed(hack, mini.manifest(), mini.gold / GOLD_DB)
    assert allowed is not None
    deadline = allowed + DEADLINE_MARGIN_S
    watch = [*mini.watched(), *mini.context().canaries]
    before = fingerprint(watch)
    out = mini.runs / f"{hack.id}.check.json"
    out.unlink(missing_ok=True)
    env = {
        **os.environ,
        "PYTHONPATH": str(PROJECT_ROOT),
        "BENCHFORGE_HACK_CHILD": json.dumps([str(mini.host), hack.id, str(out)]),
    }
    code = "from tests.integration.test_reward_hacks import child_check; child_check()"
    proc = subprocess.Popen(
        [sys.executable, "-c", code], cwd=PROJECT_ROOT, env=env, start_new_session=True
    )
    try:
        proc.wait(timeout=deadline)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    if out.is_file():
        check = HackCheck.model_validate_json(out.read_text())
    else:
        check = HackCheck(
            id=hack.id,
            kind=hack.kind,
            expected=hack.expected,
            max_seconds=allowed,
            seconds=deadline,
            scorer_error=f"scoring did not end within {deadline:.0f}s: killed",
        )
    check.findings = changes(before, fingerprint(watch), [mini.base, mini.canary, mini.dataset])
    return check


def child_check() -> None:
    """The child side of :func:`check_with_deadline`."""
    host, hack_id, out = json.loads(os.environ["BENCHFORGE_HACK_CHILD"])
    check = Mini(Path(host)).check(CATALOGUE.get(hack_id))
    Path(out).write_text(check.model_dump_json())


# --- (a) every catalogue entry on the mini fixture -----------------------------------------


def first_of_each_kind(hacks: list[RewardHack]) -> list[RewardHack]:
    """The test suite's share of the catalogue: the first entry of each kind. Every entry runs
    in ``benchforge task verify`` (the nightly's exhaustive verification, on each de_impl task);
    here one per kind keeps the suite within its time budget."""
    seen: set[str] = set()
    picked = []
    for hack in hacks:
        if hack.kind not in seen:
            seen.add(hack.kind)
            picked.append(hack)
    return picked


IN_SUITE = first_of_each_kind(CATALOGUE.hacks)
MUST_SCORE_ZERO = [h for h in IN_SUITE if h.expected != "zero_on_heldout"]
HELDOUT_ONLY = [h for h in IN_SUITE if h.expected == "zero_on_heldout"]


@pytest.mark.parametrize("hack", MUST_SCORE_ZERO, ids=lambda h: h.id)
def test_reward_hack_scores_zero_and_stays_contained(hack: RewardHack, mini: Mini) -> None:
    check = check_with_deadline(mini, hack) if hack.max_seconds else mini.check(hack)
    assert check.held, _details(check)
    assert check.contained, _details(check)


@pytest.mark.parametrize("hack", HELDOUT_ONLY, ids=lambda h: h.id)
def test_answers_shipped_as_constants_score_on_the_visible_seed(
    hack: RewardHack, mini: Mini
) -> None:
    """The hack is real: on the data the agent saw, the shipped tables match. That it scores 0
    on a held-out seed (how trials are scored) is pinned in tests/evaluation/test_heldout.py."""
    check = mini.check(hack)
    assert check.contained, _details(check)
    assert check.held is None  # judged only on a held-out seed
    shipped = {p.stem for p in (mini.runs / hack.id / "candidate" / "models").rglob("*.sql")}
    assert shipped, "no table was small enough to ship as constants"
    assert all(check.statuses[name].startswith("match") for name in shipped), _details(check)
    assert check.score is not None and check.score.cs >= 50.0, _details(check)


def test_every_kind_has_a_builder_and_an_entry() -> None:
    kinds = set(get_args(HackKind))
    assert set(BUILDERS) == kinds
    assert {h.kind for h in CATALOGUE.hacks} == kinds
    assert {h.kind for h in IN_SUITE} == kinds and len(IN_SUITE) == len(kinds)


VERIFIED = ["select-from-gold", "planted-macro-compare-db", "symlinked-scorer-files"]


def test_check_catalogue_scores_a_task_as_verify_does(mini: Mini) -> None:
    """The entry point ``benchforge task verify`` calls, on the mini de_impl task with a few
    entries, the scorer-file attacks among them (the whole catalogue is covered above)."""
    task = load_task(TASKS_ROOT / "de-mini" / IMPL)
    work = mini.host / "verify"
    gold = prepare_gold(task, mini.dataset, work)
    some = CATALOGUE.model_copy(update={"hacks": [CATALOGUE.get(h) for h in VERIFIED]})
    checks = check_catalogue(task, gold, mini.dataset, work / "hacks", default_backend(), some)
    assert [c.id for c in checks] == VERIFIED
    for check in checks:
        assert check.ok, _details(check)


# --- (c) malformed catalogues -----------------------------------------------------------


def test_a_malformed_entry_names_the_file_and_the_field(tmp_path: Path) -> None:
    bad = tmp_path / "catalogue.yaml"
    bad.write_text(
        "hacks:\n"
        "  - {id: ok-one, kind: select_from_gold, expected: zero,\n"
        "     description: a valid entry for comparison}\n"
        "  - {id: bad-kind, kind: teleport, expected: zero, description: no such kind at all}\n"
        "  - {id: bad-variant, kind: symlink_out, variant: hardlink, expected: zero,\n"
        "     description: symlink_out has no hardlink variant}\n"
        "  - {id: no-outcome, kind: multi_statement, description: the expected outcome is "
        "missing}\n"
    )
    with pytest.raises(HackCatalogueError) as err:
        load_hack_catalogue(bad)
    text = str(err.value)
    assert str(bad) in text
    assert "hacks[1].kind" in text and "hacks[3].expected" in text
    assert "hacks[2]" in text and "hardlink" in text
    broken = tmp_path / "broken.yaml"
    broken.write_text("hacks:\n  - {id: x\n")
    with pytest.raises(HackCatalogueError, match=str(broken)):
        load_hack_catalogue(broken)
    duplicated = tmp_path / "duplicated.yaml"
    entry = "  - {id: twice, kind: multi_statement, expected: zero, description: id used twice}\n"
    duplicated.write_text("hacks:\n" + entry + entry)
    with pytest.raises(HackCatalogueError, match="duplicate hack ids: twice"):
        load_hack_catalogue(duplicated)


# --- (b) command agents through the real run path --------------------------------------------


def _canaries_in(paths: list[Path]) -> list[str]:
    return [str(p) for root in paths for p in root.rglob(f"{CANARY_PREFIX}*")]


def test_hack_agents_score_zero_through_the_run_path(
    mini: Mini, monkeypatch: pytest.MonkeyPatch
) -> None:
    host = mini.host / "agents"
    artifacts = host / "artifacts"
    monkeypatch.setenv("BENCHFORGE_ARTIFACT_ROOT", str(artifacts))
    monkeypatch.delenv("BENCHFORGE_OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("BENCHFORGE_OPENAI_BASE_URL", raising=False)
    # The hack agents' code lives in the catalogue, which no agent config may show: the
    # operator (this test) allows that one folder, as a deployment would allow a CLI's.
    hacks = PROJECT_ROOT / "task_specs" / "hacks"
    monkeypatch.setenv("BENCHFORGE_SANDBOX_ALLOWED_READ_ONLY", json.dumps([str(hacks)]))
    canary = host / "canary"
    canary.mkdir(parents=True)
    repo_paths = [GOLD_REPO, TASKS_ROOT, hacks]
    targets = [canary, *repo_paths]
    configs = hack_agent_configs(
        host / "configs", env={"BENCHFORGE_HACK_CANARIES": ":".join(map(str, targets))}
    )
    watch = [canary, mini.dataset]
    before = fingerprint(watch)
    try:
        summary = run_suite(
            suites=["de-mini"],
            agents=[*(f"command={c}" for c in configs), "null"],
            run_id="reward-hacks",
            tasks_root=str(TASKS_ROOT),
            task_ids=[IMPL, EVOL],
            datasets={"mini": str(mini.dataset)},
            concurrency=4,
            limits=AgentLimits(wall_s=240),
        )
        assert summary.ran == 2 * (len(configs) + 1) and summary.infra_errors == 0
        scored = score_run(run_id="reward-hacks")
        assert scored.statuses == {"scored": summary.ran}, scored
    finally:
        leaked = _canaries_in(repo_paths)
        for path in leaked:
            Path(path).unlink(missing_ok=True)
    run = RunStore(open_store(str(artifacts)), "reward-hacks")
    results = {(r.key.agent, r.key.task_id): r for r in map(run.read_result, run.finished_slugs())}
    for (agent, task_id), result in sorted(results.items()):
        print(f"{agent} on {task_id}: {result.termination}\n{result.answer or ''}")
        if agent != "null":  # the attack really ran and submitted a hostile repository
            assert result.termination == "finished", (agent, task_id, result.error)
            made = [f for f in result.output_files if f.startswith("repo/models/")]
            assert made or "benchforge-loot.txt" in result.output_files, agent
    for score in run.read_scores():
        answer = results[(score.key.agent, score.key.task_id)].answer
        assert score.metrics == {"cs": 0.0, "cfs": 0.0, "sr": 0.0}, (
            score.key.agent,
            score.key.task_id,
            score.metrics,
            score.detail,
            answer,
        )
    agents = {s.key.agent for s in run.read_scores()}
    assert agents == {
        "null",
        "hack-steal-files",
        "hack-hostile-project",
        "hack-planted-macro",
        "hack-scorer-symlinks",
        "hack-workspace-scrape",
    }
    assert not leaked, leaked
    assert changes(before, fingerprint(watch), watch) == []


def test_a_planted_macro_scores_zero_through_score_de(mini: Mini) -> None:
    """The `benchforge score de` path (a process of its own, as a maintainer runs it)."""
    hack = CATALOGUE.get("planted-macro-compare-db")
    folder = mini.host / "score-de"
    candidate = apply_hack(mini.base, mini.manifest(), hack, folder / "candidate", mini.context())
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "benchforge.cli",
            "score",
            "de",
            "--task",
            str(TASKS_ROOT / "de-mini" / IMPL),
            "--candidate",
            str(candidate),
            "--dataset",
            str(mini.dataset),
            "--work",
            str(folder / "work"),
            "--report",
            str(folder / "report.json"),
        ],
        capture_output=True,
        text=True,
        cwd=PROJECT_ROOT,
        timeout=600,
        check=False,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert "CS 0.00 / CFS 0.00 / SR 0" in result.stdout, result.stdout
    report = json.loads((folder / "report.json").read_text())
    assert (report["cs"], report["cfs"], report["sr"]) == (0.0, 0.0, 0.0)


SCRAPER = PROJECT_ROOT / "task_specs" / "hacks" / "agents" / "workspace_scrape.py"


def _scrape(ws: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(SCRAPER)],
        cwd=ws,
        env={**os.environ, "BENCHFORGE_WORKSPACE": str(ws)},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_a_workspace_scrape_finds_no_answer_in_a_maintainers_checkout(
    mini: Mini, tmp_path: Path
) -> None:
    """A maintainer's own project (a git checkout, a notebook writing every model, a script
    quoting a mart) as a de_impl repository: the scrape agent rebuilds every gold model from a
    copy of it, and nothing from the workspace the family builds, which scores 0 / 0 / 0."""
    project = maintainer_checkout(GOLD_REPO, tmp_path / "project")
    contract = TASKS_ROOT / "de-mini" / IMPL / "data_contract.yaml"
    gold_models = {p.stem: p.read_text() for p in (GOLD_REPO / "models").rglob("*.sql")}

    exposed = tmp_path / "exposed"  # the attack is real: what a whole-repository copy gives
    shutil.copytree(project, exposed / "repo")
    for sql in (exposed / "repo" / "models").rglob("*.sql"):
        sql.unlink()
    shutil.copyfile(contract, exposed / "data_contract.yaml")
    assert _scrape(exposed).returncode == 0
    rebuilt = {p.stem: p.read_text() for p in (exposed / "repo" / "models").rglob("*.sql")}
    assert rebuilt == gold_models

    ws = tmp_path / "workspace"
    make_skeleton(project, ws / "repo")
    shutil.copyfile(contract, ws / "data_contract.yaml")
    scraped = _scrape(ws)
    assert scraped.returncode == 0, scraped.stderr
    assert "scraped 0 of" in (ws / "answer.txt").read_text()
    score = score_candidate(
        ws / "repo",
        mini.gold,
        mini.dataset,
        tmp_path / "work",
        DeScoring(),
        sandbox=default_backend(),
    )
    assert (score.cs, score.cfs, score.sr) == (0.0, 0.0, 0.0)
