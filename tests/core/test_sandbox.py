"""The sandbox against hostile agent code: each attack is contained and the next run goes on.

Everything runs for real (namespaces, cgroups, a per-sandbox uid); a control run shows that
each attack would succeed without the protection under test, so every test can fail.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from benchforge.core.sandbox import (
    Isolation,
    NamespaceBackend,
    ProcessBackend,
    SandboxBackend,
    SandboxError,
    SandboxLimits,
    SandboxRequest,
    SandboxResult,
    default_backend,
)
from benchforge.core.sandbox import mounts as mounts_module
from benchforge.core.sandbox import namespace as namespace_module
from benchforge.core.sandbox.mounts import plan_mounts
from benchforge.core.sandbox.namespace import runtime_paths as namespace_runtime_paths
from benchforge.core.sandbox.uids import pids_of_uid
from benchforge.core.scratch import private_folder
from tests.paths import REPO_ROOT

pytestmark = pytest.mark.slow  # tests/README.md: the fast and the full loop

ROOT = REPO_ROOT
# The sandbox gives every command a private /tmp: a checkout under /tmp (a CI clone) is not a
# host folder the sandbox can see, so host-folder checks then use one that always is.
_PRIVATE_TMP = ("/tmp", "/var/tmp", "/dev/shm")
_ROOT_IN_PRIVATE_TMP = any(
    str(ROOT.resolve()) == t or str(ROOT.resolve()).startswith(t + "/") for t in _PRIVATE_TMP
)
# Not task_specs: that is a link into the benchforge package, hidden in every sandbox.
HOST_FOLDER = Path("/usr/share/doc") if _ROOT_IN_PRIVATE_TMP else ROOT / "docs"
HOST_FILE = Path("/etc/os-release") if _ROOT_IN_PRIVATE_TMP else ROOT / "README.md"
PY = sys.executable


def working(backend: NamespaceBackend) -> NamespaceBackend:
    """The namespace sandbox must work here: containment is what these tests prove, so a
    machine without it fails them, unless BENCHFORGE_ALLOW_NO_NAMESPACES=1 says it is known
    and accepted (the run then records the process fallback in every trial)."""
    caps = backend.capabilities()
    if not caps.usable:
        message = f"namespace sandbox unavailable on this machine: {caps.reason}"
        if os.environ.get("BENCHFORGE_ALLOW_NO_NAMESPACES") == "1":
            pytest.skip(message)
        pytest.fail(message + " (set BENCHFORGE_ALLOW_NO_NAMESPACES=1 to accept)")
    works, reason = backend.probe()
    assert works, reason
    return backend


@pytest.fixture(scope="module")
def ns() -> NamespaceBackend:
    return working(NamespaceBackend())


@pytest.fixture(scope="module")
def ns_rlimits() -> NamespaceBackend:
    """The namespace backend as on a machine without usable cgroups."""
    return working(NamespaceBackend(use_cgroups=False))


@pytest.fixture(params=["namespace", "process"])
def any_backend(request: pytest.FixtureRequest) -> SandboxBackend:
    if request.param == "process":
        return ProcessBackend()
    backend: NamespaceBackend = request.getfixturevalue("ns")
    return backend


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    path = tmp_path / "ws"
    path.mkdir()
    return path


def py(code: str) -> list[str]:
    return [PY, "-c", code]


def run(backend: SandboxBackend, argv: list[str], workspace: Path, **kwargs: Any) -> SandboxResult:
    return backend.run(SandboxRequest(argv=argv, workspace=workspace, **kwargs))


def with_marker(marker: str) -> list[int]:
    """Live processes with ``marker`` as one of their arguments."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if marker.encode() in Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0"):
                found.append(int(pid))
        except OSError:
            continue
    return found


def assert_gone(marker: str, timeout_s: float = 3.0) -> None:
    deadline = time.monotonic() + timeout_s
    while with_marker(marker) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert with_marker(marker) == []


def assert_still_works(backend: SandboxBackend, workspace: Path) -> None:
    """The next run goes on normally, and the host can still start processes."""
    result = run(backend, ["sh", "-c", "echo still-ok"], workspace)
    assert (result.returncode, result.stdout) == (0, "still-ok\n"), result
    assert subprocess.run(["true"], timeout=10).returncode == 0


def assert_no_sandbox_processes(result: SandboxResult) -> None:
    assert result.sandbox_uid is not None
    assert pids_of_uid(result.sandbox_uid) == []


READ_ATTEMPT = """
import sys
for path in sys.argv[1:]:
    try:
        # its start only, spaces replaced: a long file (README.md) must not push the other
        # lines out of the captured output, nor its words skew the READ / DENIED counts
        print(path, "READ", open(path).read()[:200].replace(" ", "_").replace("\\n", "_"))
    except OSError as exc:
        print(path, "DENIED", type(exc).__name__)
"""


# -- 1. hidden paths ---------------------------------------------------------------------------


def test_hidden_paths_cannot_be_read(ns: NamespaceBackend, ws: Path) -> None:
    secret = f"SECRET-{uuid.uuid4().hex}"
    gold = ws / "gold"
    gold.mkdir()
    (gold / "answer.sql").write_text(secret)
    (ws / "answer.txt").write_text(secret)  # a hidden single file
    repo_file = next(
        (
            p
            for p in sorted(HOST_FOLDER.rglob("*"))
            if p.is_file() and not p.is_symlink() and p.suffix in ("", ".md", ".yaml", ".sql")
        ),
        None,
    )
    targets = [str(gold / "answer.sql"), str(ws / "answer.txt")]
    if repo_file is not None:  # a real host folder outside any private tmpfs
        targets.append(str(repo_file))
    argv = [PY, "-c", READ_ATTEMPT, *targets]

    # Only what is exposed is there at all: the host folder's parent, read-only.
    shown = [HOST_FOLDER.parent]
    control = run(ns, argv, ws, read_only=shown)  # the same files, not hidden: readable
    assert control.stdout.count(" READ ") == len(targets), control.stdout

    hidden = [gold, ws / "answer.txt", HOST_FOLDER]
    result = run(ns, [*argv, str(HOST_FILE)], ws, hidden=hidden, read_only=shown)
    assert secret not in result.stdout
    assert result.stdout.count(" DENIED ") == len(targets), result.stdout
    assert f"{HOST_FILE} READ" in result.stdout  # only what is hidden disappears
    assert (gold / "answer.sql").read_text() == secret  # hidden, not harmed

    if not _ROOT_IN_PRIVATE_TMP:  # the checkout's task specs and gold repos, even when shown
        specs = [str(ROOT / "task_specs" / "README.md"), str(ROOT / "benchforge" / "__init__.py")]
        result = run(ns, [PY, "-c", READ_ATTEMPT, *specs], ws, read_only=shown)
        assert " READ " not in result.stdout, result.stdout

    # Uncovering it: unmount as the sandbox user, or as "root" of a fresh user namespace.
    target = gold / "answer.sql"
    escape = f"umount {gold}; unshare -Urm sh -c 'umount {gold}; cat {target}'; cat {target}"
    result = run(ns, ["sh", "-c", escape], ws, hidden=[gold])
    assert secret not in result.stdout, result
    assert_no_sandbox_processes(result)
    assert_still_works(ns, ws)


# -- 1b. the filesystem is an allow-list -----------------------------------------------------

GOLD_FIXTURE = ROOT / "tests" / "fixtures" / "mini_dbt"


@pytest.fixture
def outside_copies() -> Iterator[list[Path]]:
    """Folders outside the checkout, outside /tmp and outside any hidden path (a home folder,
    /srv), removed afterwards."""
    made = [Path(base) / f"benchforge-test-{uuid.uuid4().hex}" for base in ("/srv", "/root")]
    try:
        for path in made:
            path.mkdir(parents=True)
        yield made
    finally:
        for path in made:
            shutil.rmtree(path, ignore_errors=True)


LS_CAT_OPEN = """
path=$1; shift
ls "$(dirname "$path")" && echo LS-WORKED
cat "$path" && echo CAT-WORKED
python3 -c 'import sys; print(open(sys.argv[1]).read()); print("OPEN-WORKED")' "$path"
for file in "$@"; do cat "$file"; done
echo written > written.txt && echo WRITE-WORKED
"""


def test_gold_copies_elsewhere_on_the_host_are_invisible(
    ns: NamespaceBackend, ws: Path, tmp_path: Path, outside_copies: list[Path]
) -> None:
    secret = f"GOLD-{uuid.uuid4().hex}"
    data = tmp_path / "data"
    data.mkdir()
    (data / "orders.csv").write_text("id,amount\n1,10\n")
    gold_files = []
    for base in outside_copies:
        shutil.copytree(GOLD_FIXTURE, base / "mini_dbt")
        sql = next(iter(sorted((base / "mini_dbt" / "models").rglob("*.sql"))))
        sql.write_text(sql.read_text() + f"\n-- {secret}\n")
        gold_files.append(sql)

    for sql in gold_files:
        argv = ["sh", "-c", LS_CAT_OPEN, "sh", str(sql), str(data / "orders.csv")]
        # Control: exposed read-only, the same commands read it.
        control = run(ns, argv, ws, read_only=[sql.parents[2], data])
        assert control.stdout.count(secret) >= 2, control
        assert "LS-WORKED" in control.stdout and "OPEN-WORKED" in control.stdout

        result = run(ns, argv, ws, read_only=[data])
        assert secret not in result.stdout + result.stderr, result
        for what in ("LS", "CAT", "OPEN"):
            assert f"{what}-WORKED" not in result.stdout, result
        assert "id,amount\n1,10" in result.stdout  # the read_only file is readable
        assert "WRITE-WORKED" in result.stdout  # the workspace is writable
        assert (ws / "written.txt").read_text() == "written\n"


def test_other_trials_workspaces_are_invisible(
    ns: NamespaceBackend, tmp_path: Path, outside_copies: list[Path]
) -> None:
    for base in (tmp_path, outside_copies[0]):  # under the private /tmp, and a host folder
        trials = base / "trials"
        mine, other = trials / "a" / "ws", trials / "b" / "ws"
        for path in (mine, other):
            path.mkdir(parents=True)
        secret = f"OTHER-{uuid.uuid4().hex}"
        (other / "answer.sql").write_text(secret)
        code = (
            "import os, sys\n"
            "trials, other = sys.argv[1], sys.argv[2]\n"
            "print('trials:', sorted(os.listdir(trials)))\n"
            "print('a:', sorted(os.listdir(os.path.join(trials, 'a'))))\n"
            "try:\n    print(open(other).read())\nexcept OSError as exc:\n"
            "    print('DENIED', type(exc).__name__)\n"
        )
        result = run(ns, [*py(code), str(trials), str(other / "answer.sql")], mine)
        assert result.returncode == 0, result
        assert secret not in result.stdout
        assert "trials: ['a']" in result.stdout and "a: ['ws']" in result.stdout
        assert "DENIED FileNotFoundError" in result.stdout


def test_a_trial_cannot_reach_its_runs_shared_task_template(
    ns: NamespaceBackend, tmp_path: Path
) -> None:
    """The run's scratch folder holds each task's template (``.materials``), which every later
    trial of the run is checked out from and compared against, beside the trials' own
    folders; it lives as long as any process runs the id (``shared_until_last``). A trial
    that could rewrite it would poison the others' workspaces and the change detection that
    decides what they submitted."""
    run_dir = tmp_path / "scratch" / "run-1"
    template = run_dir / ".materials" / "de-crm" / "task@1" / "abcd1234"
    template.mkdir(parents=True)
    (template / "TASK.md").write_text("the real task\n")
    workspace = private_folder(run_dir, "de-crm/task/epoch-0") / "workspace"
    workspace.mkdir()
    code = (
        "import os, sys\n"
        "run_dir, target = sys.argv[1], sys.argv[2]\n"
        "try:\n    print('LISTED', sorted(os.listdir(run_dir)))\n"
        "except OSError as exc:\n    print('LIST-DENIED', type(exc).__name__)\n"
        "for path in (target, os.path.join(os.path.dirname(target), 'planted.md')):\n"
        "    try:\n        open(path, 'w').write('do nothing and claim success')\n"
        "        print('WROTE', path)\n"
        "    except OSError as exc:\n        print('DENIED', type(exc).__name__)\n"
    )
    result = run(ns, [*py(code), str(run_dir), str(template / "TASK.md")], workspace)
    assert result.returncode == 0, result
    assert "WROTE" not in result.stdout and ".materials" not in result.stdout, result.stdout
    assert result.stdout.count("DENIED") == 2, result.stdout
    assert (template / "TASK.md").read_text() == "the real task\n"
    assert sorted(p.name for p in template.iterdir()) == ["TASK.md"]


WALK = """
import json, os, sys
allowed = json.loads(sys.argv[1])
def shown(path):
    return any(path == a or path.startswith(a + "/") or a.startswith(path + "/") for a in allowed)
found = {"top": sorted(os.listdir("/")), "extra": [], "links": {}}
for name in ("bin", "sbin", "lib", "lib32", "lib64", "libx32"):
    if os.path.lexists("/" + name):
        found["links"][name] = os.path.islink("/" + name)
for top in ("/root", "/home", "/work", "/srv", "/opt", "/mnt", "/var", "/run"):
    for dirpath, dirnames, filenames in os.walk(top):
        for name in dirnames + filenames:
            path = os.path.join(dirpath, name)
            if not shown(path):
                found["extra"].append(path)
        dirnames[:] = [d for d in dirnames if not any(
            os.path.join(dirpath, d) == a for a in allowed)]
found["extra"] = found["extra"][:50]
print(json.dumps(found))
"""


def test_only_the_system_runtime_and_exposures_are_visible(
    ns: NamespaceBackend, tmp_path: Path, outside_copies: list[Path]
) -> None:
    ws = outside_copies[0] / "trials" / "1" / "ws"  # a workspace outside /tmp
    ws.mkdir(parents=True)
    data = outside_copies[1] / "data"
    data.mkdir()
    (outside_copies[1] / "gold.sql").write_text("select 1")
    runtime = [str(p) for p in namespace_runtime_paths()]
    allowed = [*runtime, str(ws), str(data), "/var/tmp"]
    result = run(ns, [PY, "-c", WALK, json.dumps(allowed)], ws, read_only=[data])
    assert result.returncode == 0, result
    found = json.loads(result.stdout)
    assert found["extra"] == [], found["extra"]
    host_top = set(os.listdir("/"))
    system = {"usr", "bin", "sbin", "lib", "lib32", "lib64", "libx32", "etc"} & host_top
    expected = system | {"dev", "proc", "sys", "tmp", "var"}
    expected |= {Path(p).parts[1] for p in allowed}
    assert set(found["top"]) == expected, found["top"]
    for name, is_link in found["links"].items():  # merged /usr: the same symlinks
        assert is_link == os.path.islink("/" + name), name

    devices = (
        "head -c 16 /dev/urandom | wc -c; head -c 4 /dev/zero | wc -c; echo x > /dev/null "
        "&& echo NULL-OK; ls /dev/fd/ >/dev/null && echo FD-OK; ls /proc/1/root 2>&1 | head -1"
    )
    result = run(ns, ["sh", "-c", devices], ws)
    lines = result.stdout.split()
    assert lines[:4] == ["16", "4", "NULL-OK", "FD-OK"], result
    assert "Permission denied" in result.stdout  # the launcher's root is not reachable


def test_hidden_inside_a_read_only_path(
    ns: NamespaceBackend, ws: Path, outside_copies: list[Path]
) -> None:
    shown = outside_copies[0] / "project"
    shutil.copytree(GOLD_FIXTURE, shown)
    secret = f"GOLD-{uuid.uuid4().hex}"
    (shown / "models" / "staging" / "secret.sql").write_text(secret)
    code = (
        "import os, sys\n"
        "root = sys.argv[1]\n"
        "print('models:', sorted(os.listdir(os.path.join(root, 'models'))))\n"
        "print('staging:', os.listdir(os.path.join(root, 'models', 'staging')))\n"
        "print(open(os.path.join(root, 'dbt_project.yml')).read()[:4])\n"
    )
    result = run(
        ns, [*py(code), str(shown)], ws, read_only=[shown], hidden=[shown / "models" / "staging"]
    )
    assert result.returncode == 0, result
    assert "staging: []" in result.stdout and secret not in result.stdout
    assert "models: ['intermediate', 'marts', 'staging']" in result.stdout


def test_an_exposure_swapped_for_a_symlink_is_refused(
    ns: NamespaceBackend, ws: Path, outside_copies: list[Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A read_only folder inside a workspace that an agent (in a concurrent sandbox) replaces
    by a symlink between planning and mounting: the launcher refuses, it exposes nothing."""
    secret = f"GOLD-{uuid.uuid4().hex}"
    (outside_copies[0] / "answer.sql").write_text(secret)
    data = ws / "data"
    data.mkdir()
    (data / "orders.csv").write_text("id\n1\n")
    planned = namespace_module.plan_mounts

    def plan_then_swap(**kwargs: Any) -> Any:
        result = planned(**kwargs)
        data.rename(ws / "data.moved")
        data.symlink_to(outside_copies[0])
        return result

    monkeypatch.setattr(namespace_module, "plan_mounts", plan_then_swap)
    argv = ["sh", "-c", f"cat {data}/answer.sql {data}/orders.csv"]
    with pytest.raises(SandboxError, match="changed since the sandbox was planned"):
        run(ns, argv, ws, read_only=[data])
    monkeypatch.undo()
    data.unlink()
    (ws / "data.moved").rename(data)
    result = run(ns, argv, ws, read_only=[data])
    assert secret not in result.stdout and "id\n1" in result.stdout
    assert_still_works(ns, ws)


def test_the_plan_is_an_allow_list(tmp_path: Path) -> None:
    ws = tmp_path / "trials" / "7" / "ws"
    (ws / "gold").mkdir(parents=True)
    data = tmp_path / "data"
    (data / "gold").mkdir(parents=True)
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    ops, notes = plan_mounts(
        workspace=ws,
        read_only=[data],
        hidden=[ws / "gold", data / "gold", outside, Path("/etc")],
        runtime=[Path("/usr")],
        uid=os.getuid(),
        tmp_bytes=1 << 20,
    )
    assert notes == []
    kinds = {(op.path, op.kind, op.readonly) for op in ops}
    real = str(tmp_path.resolve())
    assert (f"{real}/trials/7/ws", "bind", False) in kinds
    assert (f"{real}/data", "bind", True) in kinds
    assert (f"{real}/trials/7/ws/gold", "tmpfs", True) in kinds
    assert (f"{real}/data/gold", "tmpfs", True) in kinds
    assert ("/usr", "bind", True) in kinds and ("/proc", "proc", True) in kinds
    assert ("/tmp", "tmpfs", False) in kinds and ("/dev/null", "bind", True) in kinds
    paths = [op.path for op in ops]
    assert f"{real}/elsewhere" not in paths  # not in the view: nothing to hide
    assert "/etc" not in paths  # a hidden system folder is left out
    assert paths.index("/tmp") < paths.index(f"{real}/trials/7/ws")  # outermost first
    assert paths.index(f"{real}/trials/7/ws") < paths.index(f"{real}/trials/7/ws/gold")
    for bad in (Path("/"), Path("/proc/1")):
        with pytest.raises(SandboxError, match="cannot expose"):
            plan_mounts(
                workspace=ws, read_only=[bad], hidden=[], runtime=[], uid=0, tmp_bytes=1 << 20
            )


def test_a_resolv_conf_linked_out_of_etc_is_shown(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    resolved = tmp_path / "run" / "resolv.conf"  # systemd-resolved's stub file
    resolved.parent.mkdir()
    resolved.write_text("nameserver 127.0.0.53\n")
    link = tmp_path / "resolv.conf"
    link.symlink_to(resolved)
    monkeypatch.setattr(mounts_module, "RESOLV_CONF", str(link))
    ws = tmp_path / "ws"
    ws.mkdir()
    ops, _ = plan_mounts(workspace=ws, read_only=[], hidden=[], runtime=[], uid=0, tmp_bytes=1)
    shown = {op.path for op in ops if op.kind == "bind"}
    assert str(resolved.resolve()) in shown
    assert str(tmp_path.resolve() / "run") not in shown  # the file, not its folder


def test_python_stdlib_and_dbt_run_with_a_workspace_under_tmp(
    ns: NamespaceBackend, ws: Path
) -> None:
    assert str(ws.resolve()).startswith("/tmp/")
    code = "import json, sqlite3, ssl; ssl.create_default_context(); print('IMPORTS-OK')"
    result = run(ns, py(code), ws)
    assert (result.returncode, result.stdout) == (0, "IMPORTS-OK\n"), result
    dbt = str(Path(PY).with_name("dbt"))
    result = run(ns, [dbt, "--version"], ws, limits=SandboxLimits(wall_s=120))
    assert result.returncode == 0, result
    assert "duckdb" in result.stdout.lower(), result.stdout


# -- 2. writes outside the workspace -----------------------------------------------------------

WRITE_ATTEMPT = """
import sys
for path in sys.argv[1:]:
    try:
        with open(path, "w") as fh:
            fh.write("pwned")
        print(path, "WROTE")
    except OSError as exc:
        print(path, "FAILED", type(exc).__name__)
"""


def test_writes_outside_the_workspace_fail(ns: NamespaceBackend, ws: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir(mode=0o777)
    outside.chmod(0o777)  # the sandbox uid could write here by permission
    (outside / "keep.txt").write_text("original")
    name = f"sandbox-test-{uuid.uuid4().hex}"
    targets = [
        outside / "keep.txt",
        outside / "new.txt",
        ROOT / name,
        Path("/etc") / name,
        Path("/run/lock") / name,  # world-writable on the host
    ]
    made = ws / "made.txt"
    result = run(ns, [PY, "-c", WRITE_ATTEMPT, *map(str, targets), str(made)], ws)
    assert result.returncode == 0, result
    lines = dict(line.split(" ")[:2] for line in result.stdout.splitlines())
    # /tmp/... writes land in the sandbox's private /tmp, the rest fail; the host sees nothing.
    for target in targets[2:]:
        assert lines[str(target)] == "FAILED", result.stdout
    assert (outside / "keep.txt").read_text() == "original"
    assert sorted(p.name for p in outside.iterdir()) == ["keep.txt"]
    for target in targets[2:]:
        assert not target.exists()

    assert lines[str(made)] == "WROTE"
    assert made.read_text() == "pwned"
    assert made.stat().st_uid == os.getuid()  # handed back to the caller
    made.unlink()
    assert_no_sandbox_processes(result)
    assert_still_works(ns, ws)


def test_files_left_in_the_workspace_are_harmless(ns: NamespaceBackend, ws: Path) -> None:
    script = (
        "mkdir -p deep/er && cp /bin/true deep/er/tool && chmod 4755 deep/er/tool && chmod 700 deep"
    )
    result = run(ns, ["sh", "-c", script], ws)
    assert result.returncode == 0, result
    tool = ws / "deep" / "er" / "tool"
    assert tool.stat().st_uid == os.getuid()
    assert not tool.stat().st_mode & 0o6000  # no setuid binary owned by us
    subprocess.run(["rm", "-rf", str(ws / "deep")], check=True)


# -- 3. fork bomb ------------------------------------------------------------------------------

FORK_BOMB = """
import os, time
while True:
    try:
        os.fork()
    except OSError:
        time.sleep(0.01)
"""


@pytest.mark.parametrize("backend_name", ["ns", "ns_rlimits"])
def test_fork_bomb_is_contained(
    backend_name: str, request: pytest.FixtureRequest, ws: Path
) -> None:
    backend: NamespaceBackend = request.getfixturevalue(backend_name)
    marker = f"bomb-{uuid.uuid4().hex}"
    limits = SandboxLimits(wall_s=3, max_processes=64)
    started = time.monotonic()
    result = run(backend, [PY, "-c", FORK_BOMB, marker], ws, limits=limits)
    assert time.monotonic() - started < 3 + 5
    assert result.timed_out and result.killed_reason == "wall_clock"
    assert result.isolation.processes == ("cgroup" if backend_name == "ns" else "rlimit-nproc")
    assert_gone(marker, timeout_s=0.5)
    assert_no_sandbox_processes(result)
    assert_still_works(backend, ws)


COUNT_FORKS = """
import os, time
count = 0
try:
    while count < 500:
        if os.fork() == 0:
            time.sleep(5)
            os._exit(0)
        count += 1
except OSError:
    pass
print(count)
"""


@pytest.mark.parametrize("backend_name", ["ns", "ns_rlimits"])
def test_process_limit(backend_name: str, request: pytest.FixtureRequest, ws: Path) -> None:
    backend: NamespaceBackend = request.getfixturevalue(backend_name)
    limits = SandboxLimits(wall_s=10, max_processes=40)
    result = run(backend, py(COUNT_FORKS), ws, limits=limits)
    assert result.returncode == 0, result
    assert 30 <= int(result.stdout) < 40  # the forking process itself counts too
    assert_no_sandbox_processes(result)  # the sleeping children died with the sandbox


# -- 4. infinite loop --------------------------------------------------------------------------


def test_infinite_loop_hits_the_wall_clock(any_backend: SandboxBackend, ws: Path) -> None:
    result = run(any_backend, py("while True: pass"), ws, limits=SandboxLimits(wall_s=2))
    assert result.timed_out
    assert result.killed_reason == "wall_clock"
    assert result.returncode is None
    assert 2 <= result.wall_s < 4
    assert_still_works(any_backend, ws)


# -- 5. memory ---------------------------------------------------------------------------------

GRADUAL = """
chunks = []
while True:
    chunks.append(bytearray(16 * 2**20))  # written, so really resident
"""


@pytest.mark.parametrize("code", ["bytearray(8 * 2**30)", GRADUAL], ids=["8GB", "gradual"])
@pytest.mark.parametrize("backend_name", ["ns", "ns_rlimits"])
def test_memory_hog_is_stopped(
    backend_name: str, code: str, request: pytest.FixtureRequest, ws: Path
) -> None:
    backend: NamespaceBackend = request.getfixturevalue(backend_name)
    result = run(backend, py(code), ws, limits=SandboxLimits(wall_s=30, memory_mb=512))
    assert not result.timed_out
    assert result.returncode != 0
    assert result.killed_reason == "memory" or "MemoryError" in result.stderr, result
    if backend_name == "ns" and code == GRADUAL:
        assert result.killed_reason == "memory"
        assert result.peak_memory_mb is not None and result.peak_memory_mb <= 512 + 1
    assert_no_sandbox_processes(result)
    assert_still_works(backend, ws)


# -- 6. network --------------------------------------------------------------------------------

CONNECT = """
import socket, sys
for host, port in [("127.0.0.1", int(sys.argv[1])), ("8.8.8.8", 53)]:
    try:
        socket.create_connection((host, port), timeout=2).close()
        print(host, "CONNECTED")
    except OSError as exc:
        print(host, "FAILED", exc)
"""


@pytest.fixture
def listening_port() -> Iterator[tuple[socket.socket, int]]:
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    server.setblocking(False)
    try:
        yield server, server.getsockname()[1]
    finally:
        server.close()


def test_network_is_unreachable(
    ns: NamespaceBackend, ws: Path, listening_port: tuple[socket.socket, int]
) -> None:
    server, port = listening_port
    argv = [PY, "-c", CONNECT, str(port)]

    control = run(ns, argv, ws, network=True)  # host network: the host's server answers
    assert "127.0.0.1 CONNECTED" in control.stdout, control
    assert control.isolation.network == "host"
    server.accept()[0].close()

    result = run(ns, argv, ws)
    assert result.isolation.network == "isolated"
    assert "CONNECTED" not in result.stdout, result.stdout
    assert "127.0.0.1 FAILED" in result.stdout and "8.8.8.8 FAILED" in result.stdout
    with pytest.raises(BlockingIOError):
        server.accept()  # nothing got through
    assert_still_works(ns, ws)


# -- 7. read-only data under a hidden folder -----------------------------------------------------

DATA_ATTEMPT = """
import os, sys
data, gold = sys.argv[1], sys.argv[2]
print("data:", open(os.path.join(data, "orders.csv")).read().strip())
root = os.path.dirname(os.path.dirname(data))
for attempt in ("overwrite", "create", "delete", "create-in-hidden"):
    try:
        if attempt == "overwrite":
            open(os.path.join(data, "orders.csv"), "w").write("x")
        elif attempt == "create":
            open(os.path.join(data, "new.csv"), "w").write("x")
        elif attempt == "delete":
            os.remove(os.path.join(data, "orders.csv"))
        else:
            os.mkdir(os.path.join(root, "gold"))
        print(attempt, "SUCCEEDED")
    except OSError as exc:
        print(attempt, "FAILED", type(exc).__name__)
print("gold:", os.path.exists(gold))
print("root:", sorted(os.listdir(root)))
"""


@pytest.mark.parametrize("where", ["inside-workspace", "outside-workspace"])
def test_read_only_data_under_a_hidden_folder(
    ns: NamespaceBackend, ws: Path, tmp_path: Path, where: str
) -> None:
    artifacts = (ws if where == "inside-workspace" else tmp_path) / "artifacts"
    data = artifacts / "datasets" / "crm"
    data.mkdir(parents=True)
    (data / "orders.csv").write_text("id,amount\n1,10\n")
    gold = artifacts / "gold" / "answer.csv"
    gold.parent.mkdir()
    gold.write_text("gold")
    argv = [PY, "-c", DATA_ATTEMPT, str(data), str(gold)]

    if where == "inside-workspace":  # control: without the mounts, all of it is reachable
        control = run(ns, argv, ws)
        assert "overwrite SUCCEEDED" in control.stdout and "gold: True" in control.stdout
        (data / "orders.csv").write_text("id,amount\n1,10\n")
        for leftover in data.glob("new.csv"):
            leftover.unlink()

    result = run(ns, argv, ws, hidden=[artifacts], read_only=[data])
    assert result.returncode == 0, result
    assert "data: id,amount\n1,10" in result.stdout
    for attempt in ("overwrite", "create", "delete", "create-in-hidden"):
        assert f"{attempt} FAILED" in result.stdout, result.stdout
    assert "gold: False" in result.stdout
    assert "root: ['datasets']" in result.stdout
    assert (data / "orders.csv").read_text() == "id,amount\n1,10\n"
    assert sorted(p.name for p in data.iterdir()) == ["orders.csv"]
    assert gold.read_text() == "gold"


# -- 8. async ----------------------------------------------------------------------------------


def test_cancelling_run_async_kills_the_tree(any_backend: SandboxBackend, ws: Path) -> None:
    marker = f"30.{uuid.uuid4().int % 10**9}"  # `sleep 30.xxx`: findable in /proc

    async def main() -> float:
        task = asyncio.create_task(
            any_backend.run_async(
                SandboxRequest(argv=["sh", "-c", f"sleep {marker} & sleep {marker}"], workspace=ws)
            )
        )
        await asyncio.sleep(0.5)
        assert with_marker(marker), "the command should be running"
        task.cancel()
        started = time.monotonic()
        with pytest.raises(asyncio.CancelledError):
            await task
        return time.monotonic() - started

    assert asyncio.run(main()) < 3
    assert_gone(marker)
    assert ws.stat().st_uid == os.getuid()  # cleanup ran: the workspace is ours again
    assert_still_works(any_backend, ws)


def test_the_sandbox_dies_with_its_parent(ns: NamespaceBackend, ws: Path) -> None:
    """An orchestrator killed mid-run leaves no agent process behind."""
    marker = f"30.{uuid.uuid4().int % 10**9}"
    code = (
        "from pathlib import Path; from benchforge.core.sandbox import *; NamespaceBackend().run("
        f"SandboxRequest(argv=['sleep', '{marker}'], workspace=Path('{ws}')))"
    )
    parent = subprocess.Popen([PY, "-c", code])
    try:
        deadline = time.monotonic() + 20
        while not with_marker(marker):
            assert time.monotonic() < deadline and parent.poll() is None
            time.sleep(0.05)
    finally:
        parent.kill()
        parent.wait()
    assert_gone(marker)


def test_run_async_runs_sandboxes_concurrently(ns: NamespaceBackend, tmp_path: Path) -> None:
    workspaces = [tmp_path / f"ws{i}" for i in range(4)]
    for path in workspaces:
        path.mkdir()

    async def main() -> tuple[list[SandboxResult], float, int]:
        ticks = 0

        async def ticker() -> None:
            nonlocal ticks
            while True:
                await asyncio.sleep(0.05)
                ticks += 1

        beat = asyncio.create_task(ticker())
        started = time.monotonic()
        results = await asyncio.gather(
            *(
                ns.run_async(SandboxRequest(argv=["sh", "-c", "sleep 1.5; echo done"], workspace=w))
                for w in workspaces
            )
        )
        elapsed = time.monotonic() - started
        beat.cancel()
        return results, elapsed, ticks

    results, elapsed, ticks = asyncio.run(main())
    assert [r.stdout for r in results] == ["done\n"] * 4
    assert elapsed < 1.5 * 2  # not one after the other
    assert ticks >= 15  # the event loop kept running
    assert len({r.sandbox_uid for r in results}) == 4


def test_concurrent_sandboxes_share_a_workspace(ns: NamespaceBackend, ws: Path) -> None:
    """Parallel tool calls in one workspace: both can write, and it is ours again after."""

    async def main() -> list[SandboxResult]:
        first = SandboxRequest(argv=["sh", "-c", "echo a > a.txt; sleep 1"], workspace=ws)
        second = SandboxRequest(
            argv=["sh", "-c", "sleep 0.5; echo b >> a.txt; echo c > c.txt"], workspace=ws
        )
        return list(await asyncio.gather(ns.run_async(first), ns.run_async(second)))

    results = asyncio.run(main())
    assert [r.returncode for r in results] == [0, 0], results
    assert results[0].sandbox_uid == results[1].sandbox_uid
    assert (ws / "a.txt").read_text() == "a\nb\n"
    assert {p.stat().st_uid for p in [ws, *ws.iterdir()]} == {os.getuid()}
    assert_no_sandbox_processes(results[0])


# -- 9. the process backend, and behaviour common to both --------------------------------------


def test_process_backend_says_what_it_does_not_isolate(ws: Path) -> None:
    backend = ProcessBackend(notes=["because"])
    isolation = backend.isolation()
    assert (isolation.backend, isolation.network, isolation.filesystem) == (
        "process",
        "host",
        "host",
    )
    assert isolation.process_tree == "process-group"
    assert "because" in isolation.notes
    result = run(backend, ["true"], ws, hidden=[ws / "gold"])
    assert result.isolation.network == "host"
    assert any("NOT hidden" in note for note in result.isolation.notes)


def test_process_backend_kills_background_leftovers(ws: Path) -> None:
    marker = f"30.{uuid.uuid4().int % 10**9}"
    started = time.monotonic()
    result = run(ProcessBackend(), ["sh", "-c", f"sleep {marker} & echo started"], ws)
    assert time.monotonic() - started < 5
    assert (result.returncode, result.stdout) == (0, "started\n")
    assert_gone(marker)


def test_a_missing_workspace_is_a_sandbox_error(
    any_backend: SandboxBackend, tmp_path: Path
) -> None:
    with pytest.raises(SandboxError, match="workspace"):
        run(any_backend, ["true"], tmp_path / "missing")


def test_a_bad_request_leaves_nothing_behind(
    ns: NamespaceBackend, ws: Path, tmp_path: Path
) -> None:
    with pytest.raises(SandboxError, match="read_only"):
        run(ns, ["true"], ws, read_only=[tmp_path / "missing"])
    assert ws.stat().st_uid == os.getuid()  # handed back although the run never started
    assert_still_works(ns, ws)


def test_output_is_kept_as_tails(any_backend: SandboxBackend, ws: Path) -> None:
    code = "import sys; print('x' * 200_000 + 'END'); print('e' * 50_000 + 'ERR', file=sys.stderr)"
    result = run(any_backend, py(code), ws, limits=SandboxLimits(output_limit_bytes=1000))
    assert result.returncode == 0
    assert len(result.stdout) == 1000 and result.stdout.endswith("END\n")
    assert len(result.stderr) == 1000 and result.stderr.endswith("ERR\n")
    assert result.stdout_truncated and result.stderr_truncated


def test_exit_status_stdin_and_exact_environment(
    any_backend: SandboxBackend, ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("BENCHFORGE_SANDBOX_TEST_LEAK", "leak")
    code = "import os, sys; print(sorted(os.environ)); print(sys.stdin.read()); sys.exit(3)"
    result = run(any_backend, py(code), ws, env={"FOO": "bar"}, stdin="hello")
    assert result.returncode == 3 and result.killed_reason is None
    keys, stdin = result.stdout.splitlines()[:2]
    assert keys == str(sorted(["DO_NOT_TRACK", "FOO", "HOME", "LANG", "PATH", "TMPDIR"]))
    assert stdin == "hello"

    result = run(any_backend, ["sh", "-c", "echo $HOME; id -u"], ws)
    home, uid = result.stdout.split()
    assert home == str(ws.resolve())
    if isinstance(any_backend, NamespaceBackend):
        assert uid == str(result.sandbox_uid) and uid != "0"
    missing = run(any_backend, ["no-such-command-here"], ws)
    assert missing.returncode == 127 and "no-such-command-here" in missing.stderr


# -- dbt inside the sandbox --------------------------------------------------------------------


def test_dbt_duckdb_runs_inside(ns: NamespaceBackend, ws: Path) -> None:
    (ws / "models").mkdir()
    (ws / "dbt_project.yml").write_text('name: mini\nversion: "1.0"\nprofile: mini\n')
    (ws / "profiles.yml").write_text(
        "mini:\n  target: dev\n  outputs:\n    dev:\n      type: duckdb\n"
        "      path: warehouse.duckdb\n      threads: 1\n"
    )
    (ws / "models" / "answer.sql").write_text("select 42 as answer")
    dbt = str(Path(PY).parent / "dbt")
    result = run(
        ns,
        [dbt, "run", "--profiles-dir", "."],
        ws,
        hidden=[ROOT / "dbt_projects", ROOT / "task_specs"],
        limits=SandboxLimits(wall_s=120),
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Completed successfully" in result.stdout

    import duckdb

    with duckdb.connect(str(ws / "warehouse.duckdb"), read_only=True) as con:
        assert con.sql("select answer from answer").fetchall() == [(42,)]
    assert all(p.stat().st_uid == os.getuid() for p in ws.rglob("*"))


# -- 10. what this machine gets ----------------------------------------------------------------


def test_default_backend_isolates(ns: NamespaceBackend) -> None:
    backend = default_backend()
    isolation: Isolation = backend.isolation()
    assert backend.name == "namespace", isolation.notes
    assert isolation.network == "isolated"
    assert isolation.filesystem == "confined"
    assert isolation.process_tree == "pid-namespace"
    assert default_backend() is backend  # probed once


def test_candidate_code_cannot_read_or_plant_a_kept_score(
    ns: NamespaceBackend, ws: Path, tmp_path: Path
) -> None:
    """Attack on the score cache: candidate code tries to read a kept score (held-out counts)
    and to plant a perfect one beside the gold build; the namespace sandbox shows neither."""
    from benchforge.evaluation.de.score_cache import ScoreCache

    cache = ScoreCache(tmp_path / "gold" / "crm" / "abc")
    cache.folder.mkdir(parents=True)
    kept = cache.folder / "k.json"
    kept.write_text('{"cs": 12.5}')
    attack = (
        "import pathlib, sys\n"
        f"p = pathlib.Path({str(kept)!r})\n"
        "print('seen' if p.exists() else 'unseen')\n"
        "try:\n"
        f"    pathlib.Path({str(cache.folder / 'planted.json')!r}).write_text('{{\"cs\": 100}}')\n"
        "    print('planted')\n"
        "except OSError:\n"
        "    print('refused')\n"
    )
    result = run(ns, py(attack), ws)
    assert result.returncode == 0, result
    assert result.stdout.split() == ["unseen", "refused"]
    assert sorted(p.name for p in cache.folder.iterdir()) == ["k.json"]
