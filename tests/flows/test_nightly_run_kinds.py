"""The nightly loops over configured run kinds (issue 25): each kind is verified, run, scored
and reported as a run of its own, with its own suites, task ids, agents, models, epochs and
options; the shipped kinds reproduce the nightly's two runs (de-crm, then da-crm as RUN-da)
with the parameters it always passed; the deployment and the CLI take a list of kinds."""

from __future__ import annotations

import argparse
from datetime import date
from pathlib import Path
from typing import Any

import pytest

from benchforge.cli.nightly import add_parser, run_kinds
from benchforge.core.errors import ConfigError
from benchforge.core.records import AgentLimits
from benchforge.evaluation.tasks import load_tasks
from benchforge.flows.nightly import nightly, nightly_run_id, planned_run_id
from benchforge.flows.run_kinds import (
    NIGHTLY_RUN_KINDS,
    OPTIONAL_RUN_KINDS,
    RUN_KINDS,
    RunKind,
    checked_kinds,
    kind_models,
    read_run_kinds,
)
from benchforge.infra.deploy import deployments
from tests.paths import REPO_ROOT

NIGHT = date(2026, 1, 31)
ALPHA = RunKind(
    name="alpha",
    suites=["de-crm"],
    task_ids=["crm-impl-full"],
    agents=["oracle", "null"],
    epochs=2,
    visible_scores=True,
)
BETA = RunKind(
    name="beta",
    suites=["da-crm"],
    task_ids=["crm-da-bookings-2024"],
    agents=["oracle", "react-da"],
    models=["mock-script:react-da-report"],
)


def test_two_configured_kinds_are_two_runs_each_with_its_own_request(
    nightly_steps: dict[str, list[dict[str, Any]]],
) -> None:
    result = nightly(run_date=NIGHT, run_kinds=[ALPHA, BETA], score_concurrency=3)
    first = nightly_run_id(NIGHT, {}, ["crm-impl-full", "crm-da-bookings-2024"])
    assert [(r.kind, r.run_id) for r in result.runs] == [
        ("alpha", first),
        ("beta", f"{first}-beta"),
    ]
    assert result.run_id == first
    ran = nightly_steps["run_suite"]
    assert [(r["run_id"], r["suites"], r["task_ids"]) for r in ran] == [
        (first, ["de-crm"], ["crm-impl-full"]),
        (f"{first}-beta", ["da-crm"], ["crm-da-bookings-2024"]),
    ]
    assert [(r["agents"], r["models"], r["epochs"]) for r in ran] == [
        (["oracle", "null"], [], 2),  # neither agent calls a model: none by default
        (["oracle", "react-da"], ["mock-script:react-da-report"], 1),
    ]
    scored = nightly_steps["score_run"]
    assert [(s["run_id"], s["visible_scores"], s["workers"]) for s in scored] == [
        (first, True, 3),
        (f"{first}-beta", False, 3),
    ]
    verified = nightly_steps["verify_tasks"]
    assert [(v["path"], v["task_ids"]) for v in verified] == [
        ("task_specs/de-crm", ["crm-impl-full"]),
        ("task_specs/da-crm", ["crm-da-bookings-2024"]),
    ]
    # each kind's resume is checked against its own inputs, before any verification
    matrices = [c["arg2"] for c in nightly_steps["check_rerun"]]
    assert matrices == [
        (["de-crm"], ["oracle", "null"], [], 2),
        (["da-crm"], ["oracle", "react-da"], ["mock-script:react-da-report"], 1),
    ]
    assert [p["arg0"] for p in nightly_steps["publish_report"]] == [first, f"{first}-beta"]


def test_the_shipped_kinds_reproduce_the_nightlys_two_runs(
    nightly_steps: dict[str, list[dict[str, Any]]],
) -> None:
    """What the nightly passed its steps before run kinds (one DE run and one judged run,
    hard-coded), passed now by the default kinds: the same calls, in the same order."""
    result = nightly(run_date=NIGHT)
    assert [r.run_id for r in result.runs] == ["nightly-2026-01-31", "nightly-2026-01-31-da"]
    common = {"concurrency": 4, "limits": AgentLimits(), "datasets": {}, "task_ids": None}
    assert nightly_steps["run_suite"] == [
        {
            "suites": ["de-crm"],
            "agents": ["oracle", "null", "react-de"],
            "models": ["mock-script:react-de-crm-sla-solve"],
            "epochs": 1,
            "run_id": "nightly-2026-01-31",
            **common,
        },
        {
            "suites": ["da-crm"],
            "agents": ["oracle", "null", "react-da"],
            "models": ["mock-script:react-da-report"],
            "epochs": 1,
            "run_id": "nightly-2026-01-31-da",
            **common,
        },
    ]
    scored = nightly_steps["score_run"]
    assert [(s["run_id"], s["visible_scores"], s["workers"]) for s in scored] == [
        ("nightly-2026-01-31", False, 2),
        ("nightly-2026-01-31-da", False, 2),
    ]
    verified = nightly_steps["verify_tasks"]
    assert [(v["path"], v["task_ids"], v["mutations"], v["hacks"]) for v in verified] == [
        ("task_specs/de-crm", None, False, False),
        ("task_specs/da-crm", None, False, False),
    ]
    assert len(nightly_steps["build_gold"]) == 1  # one domain, built once for both runs


def test_the_deployment_takes_the_list_of_kinds() -> None:
    """The scheduled nightly's kinds are the shipped ones, scored on the visible dataset too
    (what its ``visible_scores`` did for the DE run; a judged family holds nothing out), and
    its parameter schema types each kind (a misspelt field is refused by the server)."""
    (deployed,) = deployments(only=["nightly-eval"])
    kinds = RUN_KINDS.validate_python(deployed.parameters["run_kinds"])
    assert kinds == [k.model_copy(update={"visible_scores": True}) for k in NIGHTLY_RUN_KINDS]
    assert deployed.parameters["verify_mutations"] is True
    schema = deployed._parameter_openapi_schema.model_dump()
    kind = schema["definitions"]["RunKind"]
    assert kind["additionalProperties"] is False
    assert {"name", "suites", "task_ids", "agents", "models", "epochs"} <= set(kind["properties"])


def test_kinds_are_named_once_and_named_runs_carry_their_task_ids() -> None:
    with pytest.raises(ConfigError, match="more than one kind named alpha"):
        checked_kinds([ALPHA, ALPHA])
    with pytest.raises(ConfigError, match="at least one run kind"):
        checked_kinds([])
    assert checked_kinds(None) == list(NIGHTLY_RUN_KINDS)
    as_api_holds_them = {"run_kinds": [ALPHA.model_dump(mode="json"), BETA.model_dump()]}
    assert planned_run_id(as_api_holds_them, NIGHT) == nightly_run_id(
        NIGHT, {}, ["crm-impl-full", "crm-da-bookings-2024"]
    )
    assert planned_run_id({"run_kinds": "nonsense"}, NIGHT) == "nightly-2026-01-31"


def test_the_optional_dab_and_explore_kinds_run_only_when_named() -> None:
    dab, explore, _lake = OPTIONAL_RUN_KINDS
    assert (dab.name, dab.suites, dab.epochs) == ("dab", ["dab-crm"], 3)
    assert dab.agents == ["oracle", "null", "react-dab"]
    assert kind_models(dab, has_api_key=False) == ["mock-script:react-dab-crm-solve"]
    assert dab not in checked_kinds(None)
    assert run_kinds(_args("--kind", "dab")) == [dab]
    assert run_kinds(_args("--kind", "da", "--kind", "dab")) == [NIGHTLY_RUN_KINDS[1], dab]
    assert dab not in (run_kinds(_args("--epochs", "2")) or [])
    assert (explore.name, explore.suites, explore.epochs) == ("explore", ["explore-enterprise"], 3)
    assert explore.agents == ["oracle", "null", "react-explore"]
    assert kind_models(explore, has_api_key=False) == ["mock-script:react-explore-revenue"]
    assert explore not in checked_kinds(None)
    assert run_kinds(_args("--kind", "explore")) == [explore]


def test_the_optional_lake_kind_runs_the_full_and_oracle_settings() -> None:
    _dab, _explore, lake = OPTIONAL_RUN_KINDS
    assert (lake.name, lake.suites, lake.epochs) == ("lake", ["lake-crm"], 3)
    assert lake.agents == ["oracle", "null", "ds-star", "react-lake"]
    assert kind_models(lake, has_api_key=False) == [
        "mock-script:ds-star-lake-solve",
        "mock-script:react-lake-crm-solve",
    ]
    tasks = {t.spec.id: t.spec for t in load_tasks(REPO_ROOT / "task_specs" / "lake-crm")}
    assert lake.task_ids is not None and len(lake.task_ids) == 20
    assert {tasks[t].tags[-1] for t in lake.task_ids} == {"setting:full", "setting:oracle"}
    assert lake not in checked_kinds(None)
    assert run_kinds(_args("--kind", "lake")) == [lake]


def _args(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_parser(parser.add_subparsers())
    return parser.parse_args(["nightly", *argv])


def test_the_cli_reads_kinds_from_a_file_and_picks_some(tmp_path: Path) -> None:
    assert run_kinds(_args()) is None  # the flow's defaults
    listed = tmp_path / "kinds.yaml"
    listed.write_text(
        "- {name: alpha, suites: [de-crm], task_ids: [crm-impl-full], agents: [oracle, 'null'],"
        " epochs: 2, visible_scores: true}\n"
        "- name: beta\n  suites: [da-crm]\n  task_ids: [crm-da-bookings-2024]\n"
        "  agents: [oracle, react-da]\n  models: ['mock-script:react-da-report']\n"
    )
    assert read_run_kinds(listed) == [ALPHA, BETA]
    assert run_kinds(_args("--run-kinds", str(listed), "--kind", "beta")) == [BETA]
    (de,) = run_kinds(_args("--kind", "de", "--task", "crm-impl-full", "--epochs", "3")) or []
    assert (de.suites, de.task_ids, de.epochs) == (["de-crm"], ["crm-impl-full"], 3)
    with pytest.raises(ConfigError, match="--kind nope: no such run kind"):
        run_kinds(_args("--kind", "nope"))
    # YAML reads an unquoted null as nothing: in a list of agents it is the null agent
    listed.write_text("- {name: alpha, suites: [de-crm], agents: [oracle, null]}\n")
    assert read_run_kinds(listed)[0].agents == ["oracle", "null"]
    listed.write_text("- {name: alpha, suites: [de-crm], agents: [oracle], epoch: 2}\n")
    with pytest.raises(ConfigError, match=r"kinds.yaml: 0.epoch: Extra inputs"):
        read_run_kinds(listed)
