"""An agent config cannot widen its sandbox: the host paths a ``command`` agent's ``read_only``
asks for are refused before a run starts when they are, lie inside or contain a protected path
(after resolving symlinks and ``..``), naming both paths; only the operator's
``sandbox_allowed_read_only`` setting lets one through; and the agent checks again when it
builds its sandbox request. No Prefect here: the checks are the harness's."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
import yaml

from benchforge.agents.builtin.command import CommandAgent, CommandAgentConfig
from benchforge.agents.protocol import TaskEnvironment
from benchforge.core.catalogue import catalogue
from benchforge.core.errors import ConfigError
from benchforge.core.records import AgentLimits, TrialKey
from benchforge.core.sandbox import SandboxError, default_backend
from benchforge.core.sandbox.exposure import refusals
from benchforge.core.settings import load_settings
from benchforge.harness.preflight import check_request
from tests.paths import FIXTURES

TASKS_ROOT = str(FIXTURES / "task_specs")


@pytest.fixture
def artifacts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "artifacts"
    (root / "secrets").mkdir(parents=True)
    (root / "secrets" / "heldout.key").write_text("not for agents")
    (root / "work" / "scoring" / "gold").mkdir(parents=True)
    monkeypatch.setenv("BENCHFORGE_ARTIFACT_ROOT", str(root))
    monkeypatch.delenv("BENCHFORGE_SANDBOX_ALLOWED_READ_ONLY", raising=False)
    monkeypatch.delenv("BENCHFORGE_CATALOGUE_ROOT", raising=False)
    return root


@pytest.fixture
def dataset(tmp_path: Path) -> Path:
    folder = tmp_path / "dataset"
    folder.mkdir()
    (folder / "dataset.json").write_text("{}")
    return folder


@pytest.fixture
def cli_folder(tmp_path: Path) -> Path:
    """A harmless folder with a CLI in it, beside (not in) the artifact root."""
    folder = tmp_path / "opt" / "agent-cli"
    folder.mkdir(parents=True)
    (folder / "agent.py").write_text("print('hello')\n")
    return folder


def _agent(tmp_path: Path, read_only: list[str]) -> str:
    config = tmp_path / f"agent-{len(list(tmp_path.glob('agent-*.yaml')))}.yaml"
    config.write_text(
        yaml.safe_dump({"name": "widen", "argv": ["python3", "agent.py"], "read_only": read_only})
    )
    return f"command={config}"


def _check(agent: str, dataset: Path) -> None:
    check_request(TASKS_ROOT, ["de-mini"], None, [agent], [], {"mini": str(dataset)}, False)


def _refused(tmp_path: Path, dataset: Path, path: str) -> str:
    with pytest.raises(ConfigError) as refused:
        _check(_agent(tmp_path, [path]), dataset)
    message = str(refused.value)
    assert f"read_only path {path}" in message, message  # the path as the config gives it
    assert "sandbox_allowed_read_only" in message  # and how an operator may allow one
    return message


def test_the_artifact_root_and_what_is_in_it_are_refused(
    artifacts: Path, dataset: Path, tmp_path: Path
) -> None:
    message = _refused(tmp_path, dataset, str(artifacts))
    assert "is the artifact root (runs and their scores, datasets, held-out datasets, " in message
    assert f"secrets) {artifacts}" in message
    message = _refused(tmp_path, dataset, str(artifacts / "secrets" / "heldout.key"))
    assert "lies inside the artifact root (runs" in message
    message = _refused(tmp_path, dataset, str(artifacts / "work" / "scoring" / "gold"))
    assert "lies inside the scratch space (workspaces, scoring work, gold caches) " in message
    assert f"{artifacts / 'work'}" in message


def test_a_folder_containing_a_protected_path_is_refused(
    artifacts: Path, dataset: Path, tmp_path: Path
) -> None:
    message = _refused(tmp_path, dataset, str(artifacts.parent))
    assert "contains the artifact root (runs and their scores, datasets, held-out " in message
    assert f"the mini dataset {dataset}, the scratch space" in message
    message = _refused(tmp_path, dataset, "/")
    assert "read_only path / contains " in message


def test_symlinks_and_dotdot_are_resolved_before_comparing(
    artifacts: Path, dataset: Path, tmp_path: Path, cli_folder: Path
) -> None:
    link = tmp_path / "opt" / "innocent"
    link.symlink_to(artifacts / "work" / "scoring")
    message = _refused(tmp_path, dataset, str(link))
    assert f"(resolved: {artifacts / 'work' / 'scoring'}) lies inside the scratch space" in message
    dotdot = f"{cli_folder}/../../artifacts/secrets"
    message = _refused(tmp_path, dataset, dotdot)
    assert f"(resolved: {artifacts / 'secrets'}) lies inside the artifact root" in message


def test_datasets_and_the_catalogue_are_protected(
    artifacts: Path, dataset: Path, tmp_path: Path
) -> None:
    message = _refused(tmp_path, dataset, str(dataset))
    assert f"is the mini dataset {dataset}" in message
    tasks = catalogue(load_settings()).tasks_dir.resolve()
    message = _refused(tmp_path, dataset, str(tasks / "hacks"))
    assert f"lies inside the catalogue's task specs {tasks}" in message
    message = _refused(tmp_path, dataset, f"{TASKS_ROOT}/de-mini")
    assert "is the task folders of suite de-mini" in message


def test_a_harmless_folder_is_accepted(
    artifacts: Path, dataset: Path, tmp_path: Path, cli_folder: Path
) -> None:
    _check(_agent(tmp_path, [str(cli_folder), str(cli_folder / "agent.py")]), dataset)


def test_only_the_operator_allow_list_lets_a_protected_path_through(
    artifacts: Path, dataset: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    gold = artifacts / "work" / "scoring" / "gold"
    agent = _agent(tmp_path, [str(gold)])
    monkeypatch.setenv("BENCHFORGE_SANDBOX_ALLOWED_READ_ONLY", json.dumps([str(gold.parent)]))
    assert load_settings().sandbox_allowed_read_only == [gold.parent]
    _check(agent, dataset)  # inside an allowed path: through
    # an allowed path lets through what lies in it, not a folder around it
    with pytest.raises(ConfigError, match=f"read_only path {artifacts} is the artifact root"):
        _check(_agent(tmp_path, [str(artifacts)]), dataset)
    # the agent config has no say: an unknown key is refused, the setting is the operator's
    config = tmp_path / "sneaky.yaml"
    config.write_text(
        yaml.safe_dump(
            {"argv": ["true"], "read_only": [str(artifacts)], "sandbox_allowed_read_only": ["/"]}
        )
    )
    with pytest.raises(ConfigError, match="sandbox_allowed_read_only: Extra inputs"):
        _check(f"command={config}", dataset)


def test_refusals_compare_both_sides_resolved(tmp_path: Path) -> None:
    real = tmp_path / "real" / "gold"
    real.mkdir(parents=True)
    (tmp_path / "alias").symlink_to(tmp_path / "real")
    # the protected path itself given through a link: still the same folder
    assert refusals([real / "x"], [tmp_path / "alias" / "gold"]) == [
        f"read_only path {real / 'x'} lies inside the protected path {real}"
    ]
    assert refusals([tmp_path / "elsewhere"], [tmp_path / "alias" / "gold"]) == []
    assert refusals([real], [real], allowed=[tmp_path / "alias"]) == []


def test_the_agent_checks_again_when_it_builds_its_sandbox_request(tmp_path: Path) -> None:
    """Defense in depth: a path that became protected after the run started (a symlink
    retargeted) is refused in the trial, an infrastructure error, before anything runs."""
    protected = tmp_path / "artifacts"
    protected.mkdir()
    link = tmp_path / "cli"
    link.symlink_to(protected)
    agent = CommandAgent(CommandAgentConfig(argv=["touch", "ran"], read_only=[link]))
    assert agent.config_mounts == [link]
    key = TrialKey(
        suite="s",
        task_id="t",
        task_version="1",
        agent="command",
        agent_config_hash="0",
        model="-",
        epoch=0,
    )
    workspace = tmp_path / "ws"

    def env(allowed: list[Path]) -> TaskEnvironment:
        return TaskEnvironment(
            key=key,
            family="de_impl",
            prompt="",
            workspace_path=workspace,
            data_dir=None,
            tools=[],
            limits=AgentLimits(),
            sandbox=default_backend(),
            hidden=[protected],
            allowed_read_only=allowed,
        )

    with pytest.raises(SandboxError, match=f"read_only path {link} \\(resolved: {protected}\\)"):
        asyncio.run(agent.run(env([])))
    assert not workspace.exists()  # refused before the workspace was even made
