"""Deployments: schedules and typed parameters, so a backfill is a custom run from the UI."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
import yaml

from benchforge.flows.nightly import DATE_PATTERN
from benchforge.infra.deploy import (
    NIGHTLY_CRON,
    VERIFY_CRON,
    deployments,
    scheduled_run_kinds,
)
from tests.paths import REPO_ROOT

ROOT = REPO_ROOT


def test_nightly_is_scheduled_with_typed_parameters() -> None:
    found = {d.name: d for d in deployments()}
    assert set(found) == {
        "nightly-eval",
        "dataset-rebuild",
        "run-suite",
        "score-run",
        "report",
        "verify-tasks",
        "verify-all-tasks",
        "anonymize",
        "import-dataset",
    }
    nightly = found["nightly-eval"]
    assert [s.schedule.cron for s in nightly.schedules] == [NIGHTLY_CRON]  # type: ignore[union-attr]
    schema = nightly._parameter_openapi_schema.model_dump()
    props = schema["properties"]
    run_date = props["run_date"]["anyOf"][0]
    # a date, and a pattern the server checks at creation (it does not check the format)
    assert run_date == {"type": "string", "format": "date", "pattern": DATE_PATTERN}
    assert props["datasets"]["anyOf"][0]["type"] == "object"
    assert props["run_kinds"]["anyOf"][0]["type"] == "array"
    assert nightly.parameters == {"verify_mutations": True, "run_kinds": scheduled_run_kinds()}
    assert not found["run-suite"].schedules
    # Every shipped task is verified exhaustively each night (the test suite samples them).
    verify_all = found["verify-all-tasks"]
    assert [s.schedule.cron for s in verify_all.schedules] == [VERIFY_CRON]  # type: ignore[union-attr]
    assert verify_all.parameters == {
        "path": "task_specs",
        "mutations": True,
        "hacks": True,
        "concurrent_scorers": 3,  # the longer cross-process check
    }
    # The weekly rebuild can also publish an anonymized release of each dataset: a parameter of
    # the deployment's form, on by default with --anonymize-rebuilds.
    rebuild = found["dataset-rebuild"]
    assert rebuild.parameters == {}
    assert rebuild._parameter_openapi_schema.model_dump()["properties"]["anonymize_after"] == {
        "default": False,
        "position": 3,
        "title": "anonymize_after",
        "type": "boolean",
        "description": rebuild._parameter_openapi_schema.model_dump()["properties"][
            "anonymize_after"
        ]["description"],
    }
    anonymized = {d.name: d for d in deployments(anonymize_rebuilds=True)}["dataset-rebuild"]
    assert anonymized.parameters == {"anonymize_after": True}
    anon_props = found["anonymize"]._parameter_openapi_schema.model_dump()["properties"]
    assert {"dataset", "policy", "out", "verify_suite"} <= set(anon_props)


@pytest.mark.slow  # a CLI start importing every flow (~15 s); the README's command test runs it too
def test_deploy_lists_the_deployments() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "benchforge.infra.deploy", "--list"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert f"nightly/nightly-eval\t{NIGHTLY_CRON}" in result.stdout
    assert "run_suite/run-suite\ton demand" in result.stdout


def test_work_pool_deployments_load_their_flows_from_the_checkout() -> None:
    found = deployments(source=ROOT, only=["run-suite", "report"])
    assert [d.name for d in found] == ["run-suite", "report"]
    report = found[1]
    assert report.entrypoint == "flows/report.py:report"
    assert report.storage is not None
    assert report.storage.to_pull_step() == {
        "prefect.deployments.steps.set_working_directory": {"directory": str(ROOT)}
    }
    for d in found:  # the server refuses unknown parameters, not only mistyped ones
        assert d.enforce_parameter_schema
        schema = d._parameter_openapi_schema.model_dump(exclude_unset=True)
        assert schema["additionalProperties"] is False and schema["properties"]
    with pytest.raises(ValueError, match="no deployment named nightly"):
        deployments(only=["nightly"])


def test_compose_wires_the_topology() -> None:
    compose = yaml.safe_load((ROOT / "infra" / "compose.yaml").read_text())
    services = compose["services"]
    for name, service in services.items():
        for needed in service.get("depends_on", []):
            assert needed in services, (name, needed)
        build = service.get("build")
        if build:
            assert (ROOT / "infra" / build["context"] / build["dockerfile"]).is_file()
    server = services["prefect-server"]
    assert server["command"].startswith("prefect server start")
    db_url = server["environment"]["PREFECT_API_DATABASE_CONNECTION_URL"]
    assert db_url.startswith("postgresql+asyncpg://") and "@postgres:5432/" in db_url
    assert server["environment"]["PREFECT_UI_API_URL"].endswith("/api")
    pool = services["deploy"]["command"].split("--work-pool ")[1].split()[0]
    assert f"--pool {pool} --type process" in services["worker"]["command"]
    for name in ("deploy", "worker", "dask-worker"):
        env = services[name]["environment"]
        assert env["PREFECT_API_URL"] == "http://prefect-server:4200/api"
        assert env["BENCHFORGE_ARTIFACT_ROOT"].startswith("s3://")
        assert env["BENCHFORGE_S3_ENDPOINT_URL"] == "http://minio:9000"


def test_kubernetes_template_is_a_valid_base_job_template() -> None:
    from jsonschema import Draft7Validator
    from prefect.server.schemas.actions import validate_base_job_template
    from prefect.utilities.templating import apply_values

    template = json.loads((ROOT / "infra" / "k8s" / "base-job-template.json").read_text())
    validate_base_job_template(template)  # what the server checks when the pool is created
    Draft7Validator.check_schema(template["variables"])
    defaults = {
        k: v["default"] for k, v in template["variables"]["properties"].items() if "default" in v
    }
    job = apply_values(template["job_configuration"], defaults)["job_manifest"]
    pod = job["spec"]["template"]["spec"]
    assert (pod["parallelism"], pod["completions"], pod["restartPolicy"]) == (1, 1, "Never")
    container = pod["containers"][0]
    assert container["name"] == "prefect-job"
    assert container["envFrom"] == [{"secretRef": {"name": "benchforge-settings"}}]
    assert container["securityContext"] == {"privileged": True}
