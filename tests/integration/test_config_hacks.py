"""Config attacks (``task_specs/hacks/configs.yaml``): every entry, made into a ``command`` agent
config, is refused when ``benchforge run`` starts (exit 2, before any trial or data work),
naming the path the config asks for and the protected path it collides with; ``run_suite``
itself refuses it too (for runs started from Prefect, not the CLI)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from benchforge.cli import main as cli_main
from benchforge.core.catalogue import catalogue
from benchforge.core.errors import ConfigError
from benchforge.core.settings import load_settings
from benchforge.flows.runs import run_suite
from tests.paths import FIXTURES, REPO_ROOT

CATALOGUE = REPO_ROOT / "task_specs" / "hacks" / "configs.yaml"
HACKS: list[dict[str, Any]] = yaml.safe_load(CATALOGUE.read_text())["hacks"]
TASKS_ROOT = str(FIXTURES / "task_specs")
IMPL = "mini-impl"


@pytest.fixture
def host(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An artifact root with what the attacks go for, a dataset, and the attacker's folder
    (``scratch``) beside the artifact root."""
    artifacts = tmp_path / "artifacts"
    (artifacts / "secrets").mkdir(parents=True)
    (artifacts / "secrets" / "heldout.key").write_text("not for agents")
    (artifacts / "work" / "scoring" / "gold").mkdir(parents=True)
    (tmp_path / "scratch").mkdir()
    (tmp_path / "dataset").mkdir()
    (tmp_path / "dataset" / "dataset.json").write_text("{}")
    monkeypatch.setenv("BENCHFORGE_ARTIFACT_ROOT", str(artifacts))
    monkeypatch.delenv("BENCHFORGE_SANDBOX_ALLOWED_READ_ONLY", raising=False)
    monkeypatch.delenv("BENCHFORGE_CATALOGUE_ROOT", raising=False)
    monkeypatch.delenv("BENCHFORGE_OPENAI_API_KEY", raising=False)
    return tmp_path


def _make(hack: dict[str, Any], host: Path) -> tuple[Path, list[str], str | None]:
    """The hack's agent config (its links planted first), its read_only paths as given, and
    the protected path the refusal must name."""
    values = {
        "artifact_root": str(host / "artifacts"),
        "work": str(host / "artifacts" / "work"),
        "tasks": str(catalogue(load_settings()).tasks_dir.resolve()),
        "scratch": str(host / "scratch"),
    }
    for name, target in hack.get("links", {}).items():
        (host / "scratch" / name).symlink_to(target.format(**values))
    read_only = [p.format(**values) for p in hack["read_only"]]
    config = host / f"{hack['id']}.yaml"
    config.write_text(
        yaml.safe_dump(
            {
                "name": hack["id"],
                "argv": ["sh", "-c", "cat */secrets/heldout.key > answer.txt"],
                "read_only": read_only,
            }
        )
    )
    collides = hack.get("collides")
    return config, read_only, collides.format(**values) if collides else None


def test_the_catalogue_is_well_formed() -> None:
    ids = [h["id"] for h in HACKS]
    assert len(ids) == len(set(ids)) and len(ids) >= 8
    for hack in HACKS:
        assert hack["expected"] == "refused" and hack["read_only"] and hack["description"]
        assert set(hack) <= {"id", "read_only", "links", "collides", "expected", "description"}


@pytest.mark.parametrize("hack", HACKS, ids=[h["id"] for h in HACKS])
def test_each_config_attack_is_refused_when_the_run_starts(
    hack: dict[str, Any], host: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config, read_only, collides = _make(hack, host)
    code = cli_main.main(
        [
            "run",
            "--suite",
            "de-mini",
            "--tasks-root",
            TASKS_ROOT,
            "--task",
            IMPL,
            "--agent",
            f"command={config}",
            "--dataset",
            f"mini={host / 'dataset'}",
            "--run-id",
            "widen",
        ]
    )
    err = capsys.readouterr().err
    assert code == 2, err
    assert "an agent config asks its sandbox to show protected host paths" in err
    for path in read_only:
        assert f"read_only path {path}" in err, (path, err)
    if collides is not None:
        assert str(Path(collides).resolve()) in err, (collides, err)
    else:
        assert " contains " in err, err
    assert not (host / "artifacts" / "runs").exists()  # no run, no trial started


def test_run_suite_refuses_it_before_any_trial(host: Path) -> None:
    config, _, _ = _make(HACKS[0], host)
    with pytest.raises(ConfigError, match="is the artifact root"):
        run_suite(
            suites=["de-mini"],
            agents=[f"command={config}", "null"],
            run_id="widen",
            tasks_root=TASKS_ROOT,
            task_ids=[IMPL],
            datasets={"mini": str(host / "dataset")},
        )
    assert not (host / "artifacts" / "runs").exists()
