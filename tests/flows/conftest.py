"""The nightly's steps recorded instead of run (``nightly_steps``): what a nightly test reads is
which steps the flow called, with which arguments, in which order, on the session's real
Prefect server; the steps themselves are the subject of their own tests."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from benchforge.flows import nightly as nightly_module
from tests.support.nightly_steps import report_summary, run_summary, score_summary

Calls = dict[str, list[dict[str, Any]]]


@pytest.fixture
def nightly_steps(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Calls:
    """Every step of the nightly recorded (step name -> its calls' arguments, in order);
    datasets resolve to ``/d``, gold is ``gold``, runs and scores are small summaries."""
    monkeypatch.setenv("BENCHFORGE_ARTIFACT_ROOT", str(tmp_path / "artifacts"))
    monkeypatch.delenv("BENCHFORGE_OPENAI_API_KEY", raising=False)
    calls: Calls = {}

    def record(name: str, answer: Any) -> Callable[..., Any]:
        def call(*args: Any, **kwargs: Any) -> Any:
            kwargs |= {f"arg{i}": a for i, a in enumerate(args)}
            calls.setdefault(name, []).append(kwargs)
            return answer(kwargs) if callable(answer) else answer

        return call

    m = nightly_module
    monkeypatch.setattr(m, "resolve_datasets", lambda tasks, o, w: {t.key: "/d" for t in tasks})
    monkeypatch.setattr(m, "resolve_heldout", lambda tasks, o, w: {})
    monkeypatch.setattr(m, "run_identity", lambda *a: None)
    monkeypatch.setattr(m, "check_rerun", record("check_rerun", None))
    monkeypatch.setattr(m, "datasets_by_domain", lambda tasks, dirs: {"crm": "/d"})
    monkeypatch.setattr(m, "gold_key", lambda *a: "gold/crm/x")
    monkeypatch.setattr(m, "build_gold", record("build_gold", "gold"))
    monkeypatch.setattr(m, "verify_tasks", record("verify_tasks", []))
    monkeypatch.setattr(m, "run_suite", record("run_suite", lambda kw: run_summary(kw["run_id"])))
    monkeypatch.setattr(m, "score_run", record("score_run", lambda kw: score_summary(kw["run_id"])))
    monkeypatch.setattr(
        m, "publish_report", record("publish_report", lambda kw: report_summary(kw["arg0"]))
    )
    # the infra-error gate is another test's subject (tests/harness/test_infra_error_exits.py)
    monkeypatch.setattr(m, "fail_on_infra_errors", lambda result: result, raising=False)
    return calls
