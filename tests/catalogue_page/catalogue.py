"""A tiny catalogue written into a temporary folder, and runs stored through the store's API.

Three tasks of three families on one four-model dbt project whose models live under a
non-default ``model-paths`` folder (``transform``):

- ``de_impl`` scores every model: 4, one given node weight 0 -> 3 (derived difficulty easy);
- ``de_evol``'s overlay adds one model, edits one, and rewrites a third with whitespace only
  (not a change) -> 2 models (authored difficulty hard);
- ``de_arch`` has 3 rubric items; nobody ran it.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from benchforge.core.artifacts import open_store
from benchforge.core.records import AgentLimits, RunSpec, ScoreStatus, TrialKey, TrialScore
from benchforge.harness.store import RunStore

SUITE = "de-tiny"
IMPL, EVOL, ARCH = "tiny-impl", "tiny-evol", "tiny-arch"
IMPL_TITLE = "Build <the> tiny & warehouse"

_PROJECT = """\
name: tiny
version: "1.0.0"
config-version: 2
profile: benchforge
model-paths: ["transform"]
"""
_MODELS = {
    "transform/staging/stg_orders.sql": "select * from {{ source('raw', 'orders') }}",
    "transform/staging/stg_customers.sql": "select * from {{ source('raw', 'customers') }}",
    "transform/marts/fct_orders.sql": "select o.id, o.amount\nfrom {{ ref('stg_orders') }} o",
    "transform/marts/dim_customers.sql": "select id, name from {{ ref('stg_customers') }}",
}
_COMMON = """\
version: "1"
suite: de-tiny
domain: tiny
dataset: {domain: tiny, scale: 0.5, seed: 11}
repo: dbt_projects/tiny
instructions: >-
  Do what the documents of this task folder ask, in the dbt project under repo/.
"""


def _task(root: Path, task_id: str, body: str, files: dict[str, str]) -> None:
    folder = root / "task_specs" / SUITE / task_id
    folder.mkdir(parents=True)
    (folder / "task.yaml").write_text(f"id: {task_id}\n{_COMMON}{body}")
    for rel, text in files.items():
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_text(text)


def write_catalogue(root: Path) -> Path:
    """The catalogue under ``root``; returns its tasks root (``root/task_specs``)."""
    repo = root / "dbt_projects" / "tiny"
    repo.mkdir(parents=True)
    (repo / "dbt_project.yml").write_text(_PROJECT)
    for rel, text in _MODELS.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text)
    # a compiled copy under target/ is not a model
    (repo / "transform" / "target").mkdir()
    (repo / "transform" / "target" / "stale.sql").write_text("select 1")
    _task(
        root,
        IMPL,
        f"family: de_impl\ntitle: {IMPL_TITLE}\ntags: [orders]\n"
        "scoring: {node_weights: {dim_customers: 0}}\n",
        {"data_contract.yaml": "models: []\n", "contract_metadata.yaml": "models: {}\n"},
    )
    _task(
        root,
        EVOL,
        "family: de_evol\ntitle: Add order size buckets\ntags: [orders, 'difficulty:hard']\n",
        {
            "change_request.md": "Add fct_order_sizes and the amount in cents.\n",
            "gold_v2/transform/marts/fct_order_sizes.sql": "select id from {{ ref('fct_orders') }}",
            "gold_v2/transform/marts/fct_orders.sql": "select o.id, o.amount * 100 as cents\n"
            "from {{ ref('stg_orders') }} o",
            "gold_v2/transform/staging/stg_orders.sql": (
                "select *\n  from {{ source('raw', 'orders') }}"
            ),
        },
    )
    _task(
        root,
        ARCH,
        "family: de_arch\ntitle: Design a returns mart\n"
        "expected_output: design/blueprint.yaml\nrubric:\n"
        "  - {id: BA1, dimension: business_alignment, points: 2, criterion: Defines a return.}\n"
        "  - {id: TF1, dimension: technical_feasibility, points: 2, criterion: Reuses staging.}\n"
        "  - {id: DQ1, dimension: design_quality, points: 1, criterion: States every grain.}\n",
        {"requirement.md": "Design a returns mart.\n", "reference_blueprint.yaml": "models: []\n"},
    )
    return root / "task_specs"


def store_run(
    artifacts: Path,
    run_id: str,
    created_at: datetime,
    trials: list[tuple[str, str, str, dict[str, float], ScoreStatus]],
) -> None:
    """A run in the artifact store at ``artifacts`` with one score per trial
    ``(task_id, agent, model, metrics, status)``: epochs number in the order given per (task,
    agent, model); success is sr == 100."""
    run = RunStore(open_store(str(artifacts)), run_id)
    run.write_spec(
        RunSpec(
            run_id=run_id,
            suites=[SUITE],
            tasks_root=str(artifacts.parent / "task_specs"),
            agents=sorted({t[1] for t in trials}),
            models=sorted({t[2] for t in trials}),
            epochs=1,
            limits=AgentLimits(),
            created_at=created_at,
        )
    )
    epochs: dict[tuple[str, str, str], int] = {}
    for task_id, agent, model, metrics, status in trials:
        epoch = epochs.get((task_id, agent, model), 0)
        epochs[(task_id, agent, model)] = epoch + 1
        key = TrialKey(
            suite=SUITE,
            task_id=task_id,
            task_version="1",
            agent=agent,
            agent_config_hash="abc123",
            model=model,
            epoch=epoch,
        )
        run.write_score(
            TrialScore(
                run_id=run_id,
                key=key,
                family="de_impl" if task_id == IMPL else "de_evol",
                status=status,
                metrics=metrics if status == "scored" else {},
                primary="cs" if status == "scored" else None,
                success=metrics.get("sr") == 100.0 if status == "scored" else None,
                termination="finished",
                scored_at=created_at,
            )
        )


def at(day: int) -> datetime:
    return datetime(2025, 3, day, 12, 0, tzinfo=UTC)


PERFECT = {"cs": 100.0, "cfs": 100.0, "sr": 100.0}


def stored_runs(artifacts: Path) -> Path:
    """An older run (r-old, 1 March) and a newer one (a-new, 5 March: its id sorts first, so
    only the creation time can make it the latest)."""
    store_run(
        artifacts,
        "r-old",
        at(1),
        [
            (IMPL, "oracle", "-", {"cs": 50.0, "cfs": 40.0, "sr": 0.0}, "scored"),
            (IMPL, "react-de", "gpt-x", {"cs": 80.0, "cfs": 70.0, "sr": 0.0}, "scored"),
            (EVOL, "oracle", "-", PERFECT, "scored"),
        ],
    )
    store_run(
        artifacts,
        "a-new",
        at(5),
        [
            (IMPL, "oracle", "-", PERFECT, "scored"),
            (IMPL, "oracle", "-", {"cs": 90.0, "cfs": 80.0, "sr": 0.0}, "scored"),
            (IMPL, "oracle", "-", {}, "infra_error"),
        ],
    )
    return artifacts


KEYS = {t: f"{SUITE}/{t}@1" for t in (IMPL, EVOL, ARCH)}
ORACLE_IMPL = "95.0 cs cfs 90.0 · sr 50.0 pass 1/2 · 1 infra error 2025-03-05"
