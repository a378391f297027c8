"""The scorer's trust boundary, on traced runs (``strace``, see tests/support/open_audit.py):
once candidate code has run in a tree, the scorer process opens nothing in it again, and it
writes nowhere but its own work folder. Checked with the gold repository as the candidate
(the collected path must still score it 100) and with the hostile entries of the reward-hack
catalogue that go after the files a scorer reads after the candidate's run.
"""

from __future__ import annotations

import json
import os
import shutil
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from benchforge.core.sandbox import SandboxRequest
from benchforge.evaluation.de.hacks import CANARY_PREFIX, apply_hack, load_hack_catalogue
from tests.paths import REPO_ROOT
from tests.support.mini_hacks import GOLD_REPO, SCRATCH, Mini
from tests.support.open_audit import AuditLog, run_audited, strace_binary

pytestmark = pytest.mark.slow  # tests/README.md: the fast and the full loop

# The catalogue entries aimed at what a scorer opens after the candidate ran (every entry also
# scores 0 in tests/integration/test_reward_hacks.py, untraced).
HOSTILE = ["planted-macro-compare-db", "symlinked-scorer-files", "scorer-crash-symlinks"]
WRITE_FLAGS = ("O_WRONLY", "O_RDWR", "O_CREAT", "O_TRUNC")
# The sandbox backend's own bookkeeping (uid leases, cgroups) and devices.
SANDBOX_STATE = ("/run/benchforge-sandbox/", "/sys/fs/cgroup/", "/proc/", "/dev/")

SCRIPT = """
import json, os, sys
from pathlib import Path
from benchforge.core.sandbox import default_backend
from benchforge.evaluation.de.scoring import score_candidate
from benchforge.evaluation.tasks.models import DeScoring
from tests.support.open_audit import AuditedBackend
from tests.integration.test_scorer_boundary import runs_candidate_code

args = json.loads(os.environ["BENCHFORGE_AUDIT_ARGS"])
backend = AuditedBackend(default_backend(), runs_candidate_code)
score = score_candidate(
    Path(args["candidate"]), Path(args["gold"]), Path(args["dataset"]), Path(args["work"]),
    DeScoring(), sandbox=backend,
)
Path(args["out"]).write_text(score.model_dump_json())
"""


def runs_candidate_code(request: SandboxRequest) -> bool:
    """Every sandboxed step runs candidate code (dbt, the CS worker) but the collect steps."""
    plan = Path(request.argv[-1])
    if plan.name != "plan.json" or not plan.is_file():
        return True
    return not str(json.loads(plan.read_text()).get("mode", "")).startswith("collect")


@pytest.fixture(scope="module")
def mini() -> Iterator[Mini]:
    strace_binary()  # raises when strace is missing (scripts/test.sh installs it): never skipped
    root = SCRATCH / f"test-scorer-boundary-{uuid.uuid4().hex[:8]}"
    root.mkdir(parents=True)
    for folder in (SCRATCH, root):
        folder.chmod(0o755)
    yield Mini(root).build()
    shutil.rmtree(root, ignore_errors=True)


def _audited_score(mini: Mini, candidate: Path, name: str) -> tuple[dict[str, object], AuditLog]:
    folder = mini.runs / name
    folder.mkdir(parents=True, exist_ok=True)
    work, out = folder / "score", folder / "score.json"
    args = {
        "candidate": str(candidate),
        "gold": str(mini.gold),
        "dataset": str(mini.dataset),
        "work": str(work),
        "out": str(out),
    }
    env = {**os.environ, "BENCHFORGE_AUDIT_ARGS": json.dumps(args), "PYTHONPATH": str(REPO_ROOT)}
    log = run_audited(SCRIPT, env, REPO_ROOT, folder / "strace.log", timeout_s=600)
    assert out.is_file(), f"the scorer did not finish:\n{log.stderr[-3000:]}"
    return json.loads(out.read_text()), log


def _writes_outside(log: AuditLog, allowed: list[Path]) -> list[str]:
    """Scorer opens for writing after the first candidate step, outside ``allowed``."""
    steps = log.candidate_steps()
    first = steps[0].start if steps else 0
    found = []
    for opened in log.opens:
        if opened.index < first or not any(flag in opened.flags for flag in WRITE_FLAGS):
            continue
        if opened.path.startswith(SANDBOX_STATE) or opened.inside(str(a) for a in allowed):
            continue
        found.append(f"{opened.path} ({opened.flags})")
    return found


def _check_boundary(log: AuditLog, mini: Mini, work: Path) -> None:
    assert log.candidate_steps(), "no candidate step was seen: the audit saw nothing"
    assert log.violations() == [], "\n".join(log.violations())
    # its own work folder, and the per-relation extracts it caches beside the gold build
    # (and the test script's own result file)
    outside = _writes_outside(log, [work, work.with_suffix(".json"), mini.gold / "relations"])
    assert outside == [], "\n".join(outside)
    assert not list(mini.canary.glob(f"{CANARY_PREFIX}*"))


def test_the_gold_repository_scores_full_marks_through_the_boundary(mini: Mini) -> None:
    score, log = _audited_score(mini, GOLD_REPO, "oracle")
    assert (score["cs"], score["cfs"], score["sr"]) == (100.0, 100.0, 100.0), score
    _check_boundary(log, mini, mini.runs / "oracle" / "score")
    # the candidate's tree really was written by candidate code, and left alone afterwards
    workspaces = {Path(step.workspace).name for step in log.candidate_steps()}
    # the gold builds exactly the gold on exactly the gold's inputs: every node's CS is its CFS
    # verdict, so no node runs alone ("cs"); only the end-to-end build ran candidate code
    assert workspaces == {"candidate"}, workspaces


@pytest.mark.parametrize("hack_id", HOSTILE)
def test_hostile_scorer_files_score_zero_and_are_never_opened(hack_id: str, mini: Mini) -> None:
    hack = load_hack_catalogue().get(hack_id)
    folder = mini.runs / hack_id
    candidate = apply_hack(mini.base, mini.manifest(), hack, folder / "candidate", mini.context())
    score, log = _audited_score(mini, candidate, hack_id)
    assert (score["cs"], score["cfs"], score["sr"]) == (0.0, 0.0, 0.0), score
    _check_boundary(log, mini, folder / "score")
