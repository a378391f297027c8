"""What a run of each deployed flow checks before any work, callable before the run exists: so
``benchforge schedule add`` refuses a schedule whose parameters its runs would refuse (the
parameter types, by the flow's own signature; for the flows that run agents on tasks, the
request: suites, task ids, agents, models, datasets (each run kind's, for the nightly), as
the run checks it), and the name each
flow run will carry (its run id), so a scheduled run can be named before it starts."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import date
from typing import Any

from prefect import Flow
from prefect.exceptions import ParameterTypeError

from benchforge.core.errors import ConfigError
from benchforge.core.settings import load_settings
from benchforge.flows.anonymize import anonymize
from benchforge.flows.dataset_import import import_dataset
from benchforge.flows.nightly import check_nightly, nightly, planned_run_id
from benchforge.flows.rebuild import rebuild_datasets
from benchforge.flows.report import report
from benchforge.flows.runs import run_suite, score_run
from benchforge.flows.verify import verify_tasks
from benchforge.harness.preflight import check_request, model_pairing, resolve_models

FLOWS: dict[str, Flow[Any, Any]] = {
    f.name: f
    for f in (
        nightly,
        run_suite,
        score_run,
        report,
        verify_tasks,
        rebuild_datasets,
        anonymize,
        import_dataset,
    )
}


def _check_nightly(p: Mapping[str, Any]) -> None:
    check_nightly(p.get("run_kinds"), p.get("datasets"))


def _check_run_suite(p: Mapping[str, Any]) -> None:
    # run_suite's own first steps (flows/runs.py)
    has_key = load_settings().openai_api_key is not None
    agents = list(p["agents"])
    models = resolve_models(agents, list(p.get("models") or []), has_key)
    request = check_request(
        p.get("tasks_root", "task_specs"),
        list(p["suites"]),
        p.get("task_ids"),
        agents,
        models,
        dict(p.get("datasets") or {}),
        has_key,
    )
    model_pairing(request, list(p.get("models") or []), has_key)


REQUEST_CHECKS: dict[str, Callable[[Mapping[str, Any]], None]] = {
    "nightly": _check_nightly,
    "run_suite": _check_run_suite,
}


def check_flow_parameters(flow_name: str, parameters: Mapping[str, Any]) -> dict[str, Any]:
    """``parameters`` (as a run of ``flow_name`` gets them: the deployment's merged with the
    schedule's) checked as the run would check them before any work; returns them validated
    (typed). Raises ConfigError naming the flow and the first bad parameter."""
    flow = FLOWS.get(flow_name)
    if flow is None:
        raise ConfigError(
            f"no Benchforge flow named {flow_name!r} (flows: {', '.join(sorted(FLOWS))})"
        )
    try:
        validated = flow.validate_parameters(dict(parameters))
    except ParameterTypeError as err:
        raise ConfigError(f"{flow_name}: bad parameters: {err}") from None
    check = REQUEST_CHECKS.get(flow_name)
    if check is not None:
        try:
            check(validated)
        except ConfigError as err:
            raise ConfigError(f"{flow_name}: {err}") from None
    return validated


def planned_name(flow_name: str, parameters: Mapping[str, Any], scheduled: date) -> str | None:
    """The name a run of ``flow_name`` with ``parameters`` scheduled on ``scheduled`` (UTC)
    gives itself when it starts (its run id), or None where it is not known before the run
    (a run_suite without a run_id draws one)."""
    run_id = parameters.get("run_id")
    if flow_name == "nightly":
        return planned_run_id(parameters, scheduled)
    if flow_name == "run_suite":
        return f"run-suite-{run_id}" if run_id else None
    if flow_name == "score_run" and run_id:
        return f"score-run-{run_id}"
    if flow_name == "report" and run_id:
        return f"report-{run_id}"
    return None
