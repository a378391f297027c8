"""Run planning without an orchestrator (:mod:`benchforge.harness.planning`): the trial matrix
of a request, what a resumed run leaves out, how trials are cut into chunks, and the datasets
of a task that names several by role (each resolved, versioned in the run's identity, held out
where its family says so, and mounted for the agent). No Prefect here."""

from __future__ import annotations

import asyncio
import shutil
from datetime import UTC, datetime
from pathlib import Path

import pytest
import yaml
from pydantic import BaseModel, ValidationError

from benchforge.agents.protocol import AgentOutcome, TaskEnvironment
from benchforge.agents.tools.de import sandbox_request
from benchforge.core.artifacts import LAYOUT, open_store
from benchforge.core.digest import folder_digest
from benchforge.core.records import AgentLimits, RunSpec, TrialKey, TrialResult
from benchforge.core.settings import load_settings
from benchforge.evaluation.tasks import load_task
from benchforge.harness.chunk import context_for, execute_chunk
from benchforge.harness.datasets import resolve_heldout
from benchforge.harness.executor import run_trial
from benchforge.harness.identity import RunInputsChanged, dataset_version
from benchforge.harness.planning import RunPlan, RunRequest, plan_scoring, planned_run
from benchforge.harness.store import RunStore
from tests.paths import FIXTURES
from tests.support.datasets import write_dataset

TASKS = ["mini-impl", "mini-evol-won-by-industry"]


@pytest.fixture
def artifacts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "artifacts"
    root.mkdir()
    monkeypatch.setenv("BENCHFORGE_ARTIFACT_ROOT", str(root))
    monkeypatch.delenv("BENCHFORGE_OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("BENCHFORGE_SANDBOX_ALLOWED_READ_ONLY", raising=False)
    monkeypatch.delenv("BENCHFORGE_CATALOGUE_ROOT", raising=False)
    return root


def no_synthesis(*, domain: str, scale: float, seed: int, out: str) -> object:
    raise AssertionError(f"nothing is synthesized here (asked for {domain} at {out})")


def mini(folder: Path, rows: int = 3) -> Path:
    """A dataset of the mini domain with one table of ``rows`` rows (another row count is
    another dataset version)."""
    return write_dataset(
        folder, {"accounts": f"SELECT range AS id FROM range({rows})"}, domain="mini"
    )


def plan_once(request: RunRequest, run_id: str) -> RunPlan:
    settings = load_settings()
    run = RunStore(open_store(settings.artifact_root), run_id)
    with planned_run(request, run, settings, synthesize=no_synthesis) as plan:
        return plan


def finish(run_id: str, slug: str, *, infra: bool = False) -> None:
    """Marks a trial finished in the store (its result written; ``infra``: an infra error)."""
    run = RunStore(open_store(load_settings().artifact_root), run_id)
    if infra:
        run.store.put_bytes(run.trial_key(slug, LAYOUT.TRIAL_INFRA_MARKER), b"{}")
    run.store.put_bytes(run.trial_key(slug, LAYOUT.TRIAL_RESULT), b"{}")


def test_a_two_task_plan_leaves_out_done_trials_and_cuts_the_rest_into_chunks(
    artifacts: Path, tmp_path: Path
) -> None:
    data = mini(tmp_path / "mini")
    request = RunRequest(
        suites=["de-mini"],
        agents=["oracle", "null"],
        epochs=2,
        chunk_size=3,
        concurrency=8,
        processes=2,
        tasks_root=str(FIXTURES / "task_specs"),
        task_ids=TASKS,
        datasets={"mini": str(data)},
    )
    first = plan_once(request, "planned")
    assert len(first.trials) == 2 * 2 * 2  # tasks x agents x epochs (no agent calls a model)
    assert {p.key.task_id for p in first.trials} == set(TASKS)
    assert first.skipped == 0 and len(first.pending) == 8
    assert [len(c) for c in first.chunks] == [3, 3, 2]
    assert first.job.trial_concurrency == 4  # 8 trials at once over 2 processes
    assert first.spec.heldout_datasets == {}  # a dataset named for the domain has no twin
    assert first.spec.datasets == {t.key: str(data.resolve()) for t in first.tasks}
    assert all(p.dataset_dirs == {"primary": str(data.resolve())} for p in first.trials)
    stored = RunStore(open_store(str(artifacts)), "planned").read_spec()
    assert stored is not None and stored.identity == first.spec.identity

    slugs = [p.key.slug for p in first.trials]
    for slug in slugs[:3]:
        finish("planned", slug)
    finish("planned", slugs[3], infra=True)
    resumed = plan_once(request, "planned")
    assert resumed.skipped == 3  # the infra error runs again
    assert [p.key.slug for p in resumed.pending] == slugs[3:]
    assert [len(c) for c in resumed.chunks] == [3, 2]
    assert resumed.job.previous_attempts == {slugs[3]: 1}
    no_retry = plan_once(request.model_copy(update={"retry_infra_errors": False}), "planned")
    assert no_retry.skipped == 4 and [len(c) for c in no_retry.chunks] == [3, 1]

    for slug in slugs[4:]:
        finish("planned", slug)
    done = plan_once(request.model_copy(update={"retry_infra_errors": False}), "planned")
    assert (done.skipped, done.pending, done.chunks) == (8, [], [])

    with pytest.raises(RunInputsChanged, match="epochs"):
        plan_once(request.model_copy(update={"epochs": 3}), "planned")


def catalogue_with_roles(root: Path, datasets: dict[str, dict[str, object]]) -> Path:
    """A catalogue under ``root`` holding the fixture suite, its de_impl task naming
    ``datasets`` by role instead of one dataset; returns its tasks root."""
    tasks = root / "task_specs"
    shutil.copytree(FIXTURES / "task_specs" / "de-mini", tasks / "de-mini")
    (root / "mini_dbt").symlink_to(FIXTURES / "mini_dbt")
    spec = tasks / "de-mini" / "mini-impl" / "task.yaml"
    data = yaml.safe_load(spec.read_text())
    del data["dataset"]
    data["datasets"] = datasets
    spec.write_text(yaml.safe_dump(data, sort_keys=False))
    return tasks


class _Seen(BaseModel):
    name: str = "data-lister"


# Every role's dataset is what the scorer computes the gold from: an agent that could write
# one (append a row, replace the warehouse, drop a file beside it) would choose its own gold.
TAMPER = (
    'for f in "$0"/*; do echo planted >> "$f" && echo "WROTE $f"; done; '
    'touch "$0/planted.sql" && echo "CREATED"; '
    'mv "$0/warehouse.duckdb" "$0/moved" && echo "MOVED"; true'
)


class DataLister:
    """An agent that lists each of its data folders from inside its sandbox, and tries to
    write into each (``TAMPER``): every role, not only the primary one, is read-only."""

    name = "data-lister"
    uses_model = False
    config = _Seen()

    def __init__(self) -> None:
        self.roles: dict[str, Path] = {}
        self.data_dir: Path | None = None
        self.listed: dict[str, str] = {}
        self.tampered: dict[str, str] = {}

    async def run(self, env: TaskEnvironment) -> AgentOutcome:
        self.roles, self.data_dir = dict(env.data_dirs), env.data_dir
        for role, folder in env.data_dirs.items():
            done = await env.sandbox.run_async(sandbox_request(env, ["ls", str(folder)]))
            self.listed[role] = done.stdout
            tamper = sandbox_request(env, ["sh", "-c", TAMPER, str(folder)])
            tried = await env.sandbox.run_async(tamper)
            self.tampered[role] = tried.stdout + tried.stderr
        return AgentOutcome(termination="completed")


def test_a_task_with_two_datasets_by_role_versions_and_mounts_both(
    artifacts: Path, tmp_path: Path
) -> None:
    catalogue = tmp_path / "catalogue"
    orders, archive = mini(catalogue / "data" / "orders", 3), mini(catalogue / "data" / "old", 5)
    tasks_root = catalogue_with_roles(
        catalogue,
        {
            "orders": {"domain": "mini", "location": "data/orders"},
            "archive": {"domain": "mini", "location": "data/old"},
        },
    )
    request = RunRequest(
        suites=["de-mini"],
        agents=["null"],
        tasks_root=str(tasks_root),
        task_ids=["mini-impl"],
    )
    plan = plan_once(request, "by-role")
    (task,) = plan.tasks
    assert task.spec.primary_role == "orders" and task.spec.dataset.location == "data/orders"
    assert plan.spec.datasets == {
        task.key: str(orders.resolve()),
        f"{task.key}#orders": str(orders.resolve()),
        f"{task.key}#archive": str(archive.resolve()),
    }
    assert plan.spec.identity is not None
    versions = plan.spec.identity.datasets
    assert versions[f"{task.key}#orders"] == dataset_version(orders) == versions[task.key]
    assert versions[f"{task.key}#archive"] == dataset_version(archive) != versions[task.key]
    (trial,) = plan.trials
    assert trial.dataset_dir == str(orders.resolve())
    assert trial.dataset_dirs == {
        "orders": str(orders.resolve()),
        "archive": str(archive.resolve()),
    }

    before = {folder: folder_digest(folder) for folder in (orders, archive)}
    agent = DataLister()
    asyncio.run(run_trial(trial, task, agent, None, context_for(plan.job)))
    assert agent.data_dir == orders.resolve()
    assert agent.roles == {"orders": orders.resolve(), "archive": archive.resolve()}
    for role in ("orders", "archive"):
        assert "warehouse.duckdb" in agent.listed[role], agent.listed
        said = agent.tampered[role]
        assert "WROTE" not in said and "CREATED" not in said and "MOVED" not in said, said
        assert "Read-only file system" in said, said
    assert {folder: folder_digest(folder) for folder in before} == before  # both untouched


def test_every_synthesized_role_gets_its_held_out_twin(artifacts: Path, tmp_path: Path) -> None:
    tasks_root = catalogue_with_roles(
        tmp_path / "catalogue",
        {"primary": {"domain": "mini", "seed": 7}, "later": {"domain": "mini", "seed": 8}},
    )
    task = load_task(tasks_root / "de-mini" / "mini-impl")
    built: list[tuple[str, int]] = []

    def synth(*, domain: str, scale: float, seed: int, out: str) -> object:
        built.append((domain, seed))
        return mini(Path(out), rows=seed % 10 + 1)

    heldout = resolve_heldout([task], {}, tmp_path / "work", synthesize=synth)
    assert set(heldout) == {task.key, f"{task.key}#primary", f"{task.key}#later"}
    assert heldout[task.key] == heldout[f"{task.key}#primary"] != heldout[f"{task.key}#later"]
    assert len(built) == 2 and {seed for _, seed in built}.isdisjoint({7, 8})  # secret seeds
    assert resolve_heldout([task], {"mini": str(tmp_path)}, tmp_path / "w", synthesize=synth) == {}


def test_dataset_and_datasets_are_one_or_the_other(tmp_path: Path) -> None:
    spec = FIXTURES / "task_specs" / "de-mini" / "mini-impl" / "task.yaml"
    data = yaml.safe_load(spec.read_text())
    task = load_task(spec.parent)
    assert task.spec.dataset_roles() == {"primary": task.spec.dataset}
    assert "datasets" not in task.spec.model_dump(exclude_defaults=True)
    spec_type = type(task.spec)
    with pytest.raises(ValidationError, match=r"either dataset .* or datasets"):
        spec_type.model_validate({**data, "datasets": {"primary": data["dataset"]}})
    with pytest.raises(ValidationError, match="needs a dataset"):
        spec_type.model_validate({k: v for k, v in data.items() if k != "dataset"})
    with pytest.raises(ValidationError, match="role 'Crm-PG'"):
        spec_type.model_validate(
            {
                **{k: v for k, v in data.items() if k != "dataset"},
                "datasets": {"Crm-PG": data["dataset"]},
            }
        )
    by_role = {k: v for k, v in data.items() if k != "dataset"} | {
        "datasets": {"crm_pg": {"domain": "other"}, "primary": data["dataset"]}
    }
    roles = spec_type.model_validate(by_role)
    assert roles.primary_role == "primary" and roles.dataset.domain == "mini"
    assert list(roles.dataset_roles()) == ["primary", "crm_pg"]  # the primary first
    again = spec_type.model_validate(roles.model_dump())  # written as given: validates again
    assert again == roles and "dataset" not in roles.model_dump()


def test_a_scoring_plan_takes_unscored_trials_and_scoring_errors_in_chunks(
    artifacts: Path,
) -> None:
    run = RunStore(open_store(str(artifacts)), "to-score")
    now = datetime.now(UTC)
    run.write_spec(
        RunSpec(
            run_id="to-score",
            suites=["s"],
            tasks_root="task_specs",
            agents=["null"],
            models=[],
            epochs=1,
            limits=AgentLimits(),
            created_at=now,
        )
    )
    slugs = []
    for i, family in enumerate(["de_impl"] * 4 + ["de_arch"]):
        key = TrialKey(
            suite="s",
            task_id=f"t{i}",
            task_version="1",
            agent="null",
            agent_config_hash="0" * 12,
            model="-",
            epoch=0,
        )
        run.write_result(
            TrialResult(
                run_id="to-score",
                key=key,
                family=family,
                status="completed",
                termination="finished",
                started_at=now,
                finished_at=now,
                wall_s=1.0,
            )
        )
        slugs.append(key.slug)
    run.store.put_bytes(run.score_key(slugs[0]), b"{}")  # scored
    run.store.put_bytes(run.score_key(slugs[1]), b"{}")  # scored, with a scoring error
    run.store.put_bytes(LAYOUT.score_error_marker("to-score", slugs[1]), b"ValueError: x")
    run.store.put_bytes(run.score_key(slugs[4]), b"{}")  # the judged one is scored

    plan = plan_scoring(run, rescore=False, chunk_size=2)
    assert plan.finished == sorted(slugs) and plan.skipped == 2
    assert plan.todo == sorted(slugs[1:4]) and [len(c) for c in plan.chunks] == [2, 1]
    assert not plan.judged  # no judged trial left to score: no judge is started
    everything = plan_scoring(run, rescore=True, chunk_size=2)
    assert everything.skipped == 0 and [len(c) for c in everything.chunks] == [2, 2, 1]
    assert everything.judged


def test_a_chunk_run_again_keeps_the_trials_it_finished(artifacts: Path, tmp_path: Path) -> None:
    """A Dask worker killed after finishing some trials of its chunk loses the chunk's summary,
    and the scheduler runs the chunk again elsewhere: the trials it finished are not run
    twice. A trial whose stored result is an earlier attempt (an infra error being retried)
    still runs."""
    request = RunRequest(
        suites=["de-mini"],
        agents=["oracle", "null"],
        tasks_root=str(FIXTURES / "task_specs"),
        task_ids=TASKS[:1],
        datasets={"mini": str(mini(tmp_path / "mini"))},
        heldout=False,
    )
    plan = plan_once(request, "rerun-chunk")
    (chunk,) = plan.chunks
    first = execute_chunk(plan.job, chunk)
    run = RunStore(open_store(str(artifacts)), "rerun-chunk")
    before = {p.key.slug: run.read_result(p.key.slug) for p in chunk}
    again = execute_chunk(plan.job, chunk)
    assert (again.trials, again.completed) == (first.trials, first.completed) == (2, 2)
    assert {p.key.slug: run.read_result(p.key.slug) for p in chunk} == before

    retried = chunk[0].key.slug
    retry_job = plan.job.model_copy(update={"previous_attempts": {retried: 1}})
    execute_chunk(retry_job, chunk)
    after = run.read_result(retried)
    assert after.attempt == 2 and after.started_at > before[retried].started_at
    assert run.read_result(chunk[1].key.slug) == before[chunk[1].key.slug]
