"""The nightly's check that processes sharing one scratch root cannot corrupt each other: a
task's gold solution scored by several ``benchforge score de`` processes at once on one
``--work`` folder (its gold builds, materials and kept scores shared) must give every process
the gold's score. ``tests/harness/test_concurrent_runs.py`` is the quick version the test
command runs; ``verify_tasks(concurrent_scorers=3)`` runs this one on every shipped DE task."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from pydantic import BaseModel


class ConcurrentScores(BaseModel):
    """What each of ``copies`` concurrent scorings of one submission said."""

    task: str
    copies: int
    metrics: list[dict[str, float]] = []
    failures: list[str] = []

    @property
    def ok(self) -> bool:
        if self.copies == 0:  # nothing to score (the family has no solution)
            return True
        agreed = len({json.dumps(m, sort_keys=True) for m in self.metrics}) == 1
        return not self.failures and len(self.metrics) == self.copies and agreed

    def problem(self) -> str | None:
        if self.ok:
            return None
        if self.failures:
            return f"{self.copies} concurrent scorings: " + "; ".join(self.failures)
        return f"{self.copies} concurrent scorings disagree: {self.metrics}"


def score_concurrently(
    task_key: str,
    task_folder: Path,
    candidate: Path,
    dataset_dir: Path,
    work: Path,
    copies: int = 3,
    timeout_s: float = 3600,
) -> ConcurrentScores:
    """Starts ``copies`` ``benchforge score de`` processes at once on ``work`` and collects
    the metrics each reports (CS, CFS, SR); a process that fails is a failure with its last
    output line."""
    work.mkdir(parents=True, exist_ok=True)
    started = []
    for i in range(copies):
        report = work / f"report-{i}.json"
        log = (work / f"score-{i}.log").open("wb")
        command = [
            sys.executable,
            "-m",
            "benchforge.cli",
            "score",
            "de",
            "--task",
            str(task_folder),
            "--candidate",
            str(candidate),
            "--dataset",
            str(dataset_dir),
            "--work",
            str(work / "shared"),
            "--report",
            str(report),
        ]
        proc = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
        started.append((proc, report, log))
    result = ConcurrentScores(task=task_key, copies=copies)
    for i, (proc, report, log) in enumerate(started):
        try:
            proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()
        said = Path(log.name).read_text(errors="replace").strip().splitlines()
        if proc.returncode != 0 or not report.is_file():
            last = said[-1] if said else "no output"
            result.failures.append(f"scorer {i} exited {proc.returncode}: {last[-300:]}")
            continue
        data = json.loads(report.read_text())
        result.metrics.append({k: float(data[k]) for k in ("cs", "cfs", "sr")})
    return result
