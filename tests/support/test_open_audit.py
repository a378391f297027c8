"""The open audit (tests/support/open_audit.py): markers, the scorer process, and what counts."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from tests.paths import REPO_ROOT
from tests.support import open_audit
from tests.support.open_audit import (
    MARKER_ROOT,
    STRACE_MISSING,
    AuditLog,
    parse_strace,
    run_audited,
)

pytestmark = pytest.mark.slow  # tests/README.md: the fast and the full loop

# A synthetic scorer: opens W1 before the candidate step, runs the candidate (which writes and
# reads W1 inside the sandbox), then opens what it wrote with Python and with DuckDB (C++, on
# DuckDB's own threads too), follows a symlink into W1 from elsewhere, runs a trusted request
# in W2 (through run_async) and opens W2 and W3, which no candidate request could write.
SCORER = """
import asyncio, os, threading, duckdb
from pathlib import Path
from benchforge.core.sandbox import SandboxRequest, default_backend
from tests.support.open_audit import AuditedBackend

w1, w2, w3 = (Path(os.environ[k]) for k in ("AUDIT_W1", "AUDIT_W2", "AUDIT_W3"))
backend = AuditedBackend(default_backend(), lambda request: request.workspace != w2)
(w1 / "before.txt").read_text()
candidate = "echo x > f.txt; printf 'a\\\\n1\\\\n' > f.csv; cat before.txt f.txt > /dev/null"
result = backend.run(SandboxRequest(argv=["/bin/sh", "-c", candidate], workspace=w1))
assert result.returncode == 0, result
(w1 / "f.txt").read_text()
reader = threading.Thread(target=(w1 / "f.txt").read_bytes)
reader.start()
reader.join()
assert duckdb.sql(f"select a from read_csv('{w1}/f.csv')").fetchall() == [(1,)]
duckdb.connect(str(w1 / "x.duckdb")).close()
(w3 / "link.txt").read_text()
trusted = SandboxRequest(argv=["/bin/sh", "-c", "echo y > g.txt"], workspace=w2)
assert asyncio.run(backend.run_async(trusted)).returncode == 0
(w2 / "g.txt").read_text()
(w3 / "own.txt").read_text()
"""


@pytest.fixture(scope="module")
def scored(tmp_path_factory: pytest.TempPathFactory) -> tuple[AuditLog, dict[str, Path]]:
    # A missing strace fails (scripts/test.sh installs it): the boundary must not go unchecked.
    assert shutil.which("strace") is not None, STRACE_MISSING
    root = tmp_path_factory.mktemp("audit")
    trees = {name: root / name for name in ("w1", "w2", "w3")}
    for tree in trees.values():
        tree.mkdir()
    (trees["w1"] / "before.txt").write_text("before")
    (trees["w3"] / "own.txt").write_text("own")
    (trees["w3"] / "link.txt").symlink_to(trees["w1"] / "f.txt")
    env = {**os.environ, **{f"AUDIT_{k.upper()}": str(v) for k, v in trees.items()}}
    log = run_audited(SCORER, env, REPO_ROOT, root / "trace.log", timeout_s=120)
    return log, trees


def test_candidate_written_files_opened_by_python_and_duckdb_are_violations(
    scored: tuple[AuditLog, dict[str, Path]],
) -> None:
    log, trees = scored
    w1 = trees["w1"]
    found = log.violating_opens()
    paths = {v.open.path for v in found}
    assert str(w1 / "f.txt") in paths  # Python's open
    assert str(w1 / "f.csv") in paths  # DuckDB's read_csv: C++, no Python open of it
    assert str(w1 / "x.duckdb") in paths  # duckdb.connect
    # A thread of the scorer process is the scorer too.
    assert any(v.open.path == str(w1 / "f.txt") and v.open.pid != log.root_pid for v in found)
    # A symlink from elsewhere into the candidate's tree: caught by the kernel's path.
    (link,) = [v.open for v in found if v.open.path == str(trees["w3"] / "link.txt")]
    assert link.real_path == str(w1 / "f.txt")
    assert all(v.step.request == 1 and v.step.workspace == str(w1) for v in found)
    assert log.violations()[0].startswith("scorer opened ")
    assert f"after candidate step 1 (sh) that could write {w1}" in log.violations()[0]


def test_trusted_requests_other_trees_and_earlier_opens_are_not_violations(
    scored: tuple[AuditLog, dict[str, Path]],
) -> None:
    log, trees = scored
    start, _, _, trusted_end = log.markers
    assert [s.candidate for s in log.steps()] == [True, False]
    assert log.candidate_workspaces() == [trees["w1"]]
    # Seen, but not violations: W2 after a trusted request, W3's own file, W1 before.
    assert [o for o in log.opens_inside(trees["w2"]) if o.index > trusted_end.index]
    assert [o for o in log.opens_inside(trees["w3"]) if o.path.endswith("own.txt")]
    (before,) = [o for o in log.opens_inside(trees["w1"]) if o.path.endswith("before.txt")]
    assert before.index < start.index
    violated = [v.open for v in log.violating_opens(strict=True)]
    assert not [o for o in violated if o.inside([str(trees["w2"])])]
    assert [o.path for o in violated if o.inside([str(trees["w3"])])] == [
        str(trees["w3"] / "link.txt")
    ]
    assert before not in violated


def test_the_sandboxed_commands_opens_are_not_the_scorers(
    scored: tuple[AuditLog, dict[str, Path]],
) -> None:
    log, trees = scored
    start = log.candidate_steps()[0]
    inside = [o for o in log.all_opens if o.inside([str(trees["w1"])]) and o.index > start.start]
    sandboxed = [o for o in inside if o.pid not in log.scorer_pids]
    # The candidate wrote f.txt and read before.txt (in the sandbox): seen, not the scorer's.
    assert {"f.txt", "before.txt"} <= {Path(o.path).name for o in sandboxed}
    assert not {o.pid for o in sandboxed} & {v.open.pid for v in log.violating_opens()}
    assert all(o.pid in log.scorer_pids for o in log.opens)


def test_the_backends_own_walks_count_only_when_strict(
    scored: tuple[AuditLog, dict[str, Path]],
) -> None:
    """The namespace backend lists the workspace to hand it to the sandbox uid and back
    (``chown_tree``) while the request runs: directory opens the default leaves out."""
    log, trees = scored
    strict = {(v.open.index, v.open.path) for v in log.violating_opens(strict=True)}
    default = {(v.open.index, v.open.path) for v in log.violating_opens()}
    assert default <= strict
    step = log.candidate_steps()[0]
    for index, path in strict - default:
        assert step.in_flight_at(index)
        assert Path(path).is_relative_to(trees["w1"])


# Hand-written `strace -f -qq -y` output: the scorer (100) starts a thread (101) whose lines
# come before its clone3 returns, that thread starts another with clone (102); a vfork'd child
# (200), its thread (201) and a forked process (300) are not the scorer, and the marker the
# child tries to forge does not count.
LOG = r"""
100  execve("/usr/bin/python3", ["python3", "-c", "..."], 0x7ffd /* 5 vars */) = 0
100  openat(AT_FDCWD</work>, "/ws/early.txt", O_RDONLY|O_CLOEXEC) = 3</ws/early.txt>
100  openat(AT_FDCWD</work>, "{M}/1/candidate/dbt/ws", O_RDONLY|O_CLOEXEC) = -1 ENOENT (No such)
100  vfork( <unfinished ...>
200  execve("/usr/bin/unshare", ["unshare", "--", "dbt"], 0x7ffd /* 3 vars */ <unfinished ...>
100  <... vfork resumed>)                 = 200
200  <... execve resumed>)                = 0
200  openat(AT_FDCWD</ws>, "model.sql", O_RDONLY) = 3</ws/model.sql>
200  openat(AT_FDCWD</ws>, "{M}/9/trusted/sh/ws", O_RDONLY) = -1 ENOENT (No such file)
200  clone3({flags=CLONE_VM|CLONE_FS|CLONE_THREAD|CLONE_SYSVSEM} => {parent_tid=[201]}, 88) = 201
201  openat(5</ws/sub>, "x", O_RDONLY) = 3</ws/sub/x>
100  openat(AT_FDCWD</work>, "{M}/1/end/dbt/ws", O_RDONLY|O_CLOEXEC) = -1 ENOENT (No such file)
100  clone3({flags=CLONE_VM|CLONE_FS|CLONE_FILES|CLONE_THREAD, stack=0x7f} <unfinished ...>
101  openat(AT_FDCWD</work>, "../ws/out.duckdb", O_RDWR|O_CREAT|O_CLOEXEC, 0666 <unfinished ...>
100  <... clone3 resumed> => {parent_tid=[101]}, 88) = 101
101  <... openat resumed>)                = 3</ws/out.duckdb>
101  clone(child_stack=0x7f, flags=CLONE_VM|CLONE_THREAD|CLONE_SETTLS, parent_tid=[102]) = 102
102  openat(3</ws/dir\76x, y>, "data.csv", O_RDONLY) = 4</ws/dir\76x, y/data.csv>
102  openat2(AT_FDCWD</work>, "/ws/y", {flags=O_RDONLY|O_CLOEXEC, resolve=0}, 24) = -1 ENOENT (No)
100  clone(child_stack=NULL, flags=CLONE_CHILD_CLEARTID|SIGCHLD, child_tidptr=0x7f) = 300
300  openat(AT_FDCWD</ws>, "z", O_RDONLY) = 3</ws/z>
100  chdir("/ws/sub") = 0
100  open("rel.txt", O_RDONLY) = 3</ws/sub/rel.txt>
100  openat(AT_FDCWD</work>, "/elsewhere/ok.txt", O_RDONLY) = 3</elsewhere/ok.txt>
100  +++ exited with 0 +++
""".replace("{M}", MARKER_ROOT)


def test_parser_joins_split_lines_and_follows_threads_only() -> None:
    log = parse_strace(LOG, cwd="/work")
    assert log.root_pid == 100
    assert log.scorer_pids == {100, 101, 102}
    assert [(m.request, m.kind, m.program, m.workspace) for m in log.markers] == [
        (1, "candidate", "dbt", "/ws"),
        (1, "end", "dbt", "/ws"),
    ]
    assert not [o for o in log.opens if o.path.startswith(MARKER_ROOT)]
    assert [(v.open.pid, v.open.path, v.open.flags) for v in log.violating_opens()] == [
        (101, "/ws/out.duckdb", "O_RDWR|O_CREAT|O_CLOEXEC"),
        (102, "/ws/dir>x, y/data.csv", "O_RDONLY"),
        (102, "/ws/y", "O_RDONLY|O_CLOEXEC"),
        (100, "/ws/sub/rel.txt", "O_RDONLY"),  # relative, after chdir
    ]
    assert log.violations()[0] == (
        "scorer opened /ws/out.duckdb (O_RDWR|O_CREAT|O_CLOEXEC) after candidate step 1 (dbt) "
        "that could write /ws"
    )
    assert "[failed: -1 ENOENT" in log.violations()[2]
    assert {o.pid for o in log.all_opens} == {100, 101, 102, 200, 201, 300}


def test_a_missing_strace_is_a_clear_error(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(shutil, "which", lambda *args, **kwargs: None)
    with pytest.raises(open_audit.StraceMissingError, match="apt-get install strace"):
        run_audited("pass", dict(os.environ), tmp_path, tmp_path / "trace.log", timeout_s=10)
