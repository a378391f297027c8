"""The command's dispatch in-process: one module per stage, deliberate errors as one line, bugs
with their traceback."""

from __future__ import annotations

import argparse

import pytest

from benchforge.cli import main as cli_main
from benchforge.core.errors import BenchforgeError


def test_every_stage_module_adds_its_subcommands() -> None:
    parser = cli_main.build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    assert list(sub.choices) == [
        "synth",
        "spec",
        "dataset",
        "postgres",
        "anonymize",
        "policy",
        "rebuild",
        "pipeline",
        "gold",
        "task",
        "score",
        "run",
        "score-run",
        "report",
        "view",
        "judge",
        "calibrate",
        "nightly",
        "schedule",
        "mock-llm",
        "settings",
    ]
    assert parser.parse_args(["pipeline"]).func is parser.parse_args(["rebuild"]).func


def _patched(monkeypatch: pytest.MonkeyPatch, error: Exception) -> None:
    def fail(_: argparse.Namespace) -> int:
        raise error

    monkeypatch.setattr(cli_main.settings, "settings_command", fail)


def test_a_deliberate_error_is_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _patched(monkeypatch, BenchforgeError("no such thing"))
    assert cli_main.main(["settings"]) == 2
    assert capsys.readouterr().err == "benchforge: error: no such thing\n"


def test_a_bug_keeps_its_traceback(monkeypatch: pytest.MonkeyPatch) -> None:
    _patched(monkeypatch, ValueError("a bug, not bad input"))
    with pytest.raises(ValueError, match="a bug"):
        cli_main.main(["settings"])


def test_a_spec_error_is_a_deliberate_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli_main.main(["spec", "validate", "/nonexistent/domain.yaml"]) == 2
    assert "invalid domain spec" in capsys.readouterr().err


def test_bad_flag_values_are_deliberate_errors(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli_main.main(["mock-llm", "--rate-429", "3"]) == 2
    assert "rate_429" in capsys.readouterr().err
