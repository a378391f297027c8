"""Which files the scorer process opens after candidate code has run, seen by ``strace``.

The trust boundary this checks: after candidate code has run, the scorer process opens no file
in any tree that candidate code could write (not a database, not a config, not a symlink
target). Opens happen in Python and inside DuckDB's C++ code alike, so Python's audit hooks
are not enough: :func:`run_audited` runs a script under ``strace -f`` and parses the log.

The script builds an :class:`AuditedBackend` around a real sandbox backend and hands it to the
scorer. Before each request the wrapper tries to open a *marker* path that does not exist
(``/nonexistent-benchforge-audit/<n>/<candidate|trusted>/<program><workspace>``) and after it
returns an ``.../<n>/end/...`` one; the failed opens land in the strace log, in order with
every other open. :meth:`AuditLog.violations` then lists each open by the scorer process that
comes after a candidate request's start marker and lies inside that request's workspace
(the only place the candidate could write)::

    script = '''
    from benchforge.evaluation.de.scoring import score_candidate
    from tests.support.open_audit import AuditedBackend
    ...
    score_candidate(..., sandbox=AuditedBackend(default_backend(), lambda r: True))
    '''
    log = run_audited(script, env, REPO_ROOT, tmp_path / "trace.log", timeout_s=300)
    assert log.violations() == []

The *scorer process* is the traced root process and every thread it (transitively) creates:
children it forks or spawns (dbt, the sandbox launcher, a worker) are not the scorer, and
neither is anything they start, so what the sandboxed command opens never counts. Markers
are taken from scorer threads only, so candidate code cannot forge one. Paths are compared
as requested (made absolute against the dirfd or cwd strace's ``-y`` shows) and as the kernel
resolved them (``-y`` on the returned fd), so a symlink from elsewhere into a workspace counts;
failed opens (``ENOENT``: looking for a file the candidate could have made) count too.

By default :meth:`AuditLog.violations` leaves out the directory opens the sandbox backend
itself makes in a request's own workspace while that request runs (the namespace backend
walks the tree to hand it to the sandbox uid and back); ``strict=True`` keeps them.

What it does not see: syscalls other than the open family (``stat``, ``readlink``,
``execve`` of a workspace file by a child, ``connect`` to a unix socket in a workspace, io_uring
opens); reads through a file descriptor opened *before* the candidate step (a DuckDB
connection kept open across it); content copied out of a workspace and opened elsewhere; a
backend run in another process (its markers are not the scorer's, so there are no steps:
assert ``log.candidate_steps()`` is not empty). Thread ids reused within one trace are not
told apart.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal
from urllib.parse import quote, unquote

from benchforge.core.sandbox import Isolation, SandboxBackend, SandboxRequest, SandboxResult

MARKER_ROOT = "/nonexistent-benchforge-audit"
"""Markers are failed opens under this folder (which must not exist)."""
STRACE_MISSING = "strace missing: apt-get install strace"
TRACED_SYSCALLS = (
    "open",
    "openat",
    "openat2",
    "creat",
    "clone",
    "clone3",
    "fork",
    "vfork",
    "execve",
    "chdir",
    "fchdir",
)
"""Opens, process/thread creation (who is the scorer), ``execve`` (the root's first line) and
``chdir``/``fchdir`` (a fallback for ``AT_FDCWD`` when strace does not decorate it)."""

MarkerKind = Literal["candidate", "trusted", "end"]


class StraceMissingError(RuntimeError):
    """``strace`` is not installed."""


class AuditError(RuntimeError):
    """The audited script failed or ran past its time."""


# -- the backend wrapper (runs inside the scorer process) ------------------------------------


def marker_path(n: int, kind: MarkerKind, request: SandboxRequest) -> str:
    """The marker of request ``n``: ``<root>/<n>/<kind>/<program><absolute workspace>``."""
    program = quote(os.path.basename(request.argv[0]) or "-", safe="")
    return f"{MARKER_ROOT}/{n}/{kind}/{program}{os.path.abspath(request.workspace)}"


def _emit(path: str) -> None:
    # ENOENT (or ENAMETOOLONG) is the point: strace has recorded the path.
    with contextlib.suppress(OSError):
        os.close(os.open(path, os.O_RDONLY))


class AuditedBackend:
    """A :class:`SandboxBackend` that marks the start and the end of every request in the
    strace log; ``is_candidate(request)`` says whether a request runs candidate code."""

    def __init__(
        self, inner: SandboxBackend, is_candidate: Callable[[SandboxRequest], bool]
    ) -> None:
        self.inner = inner
        self.is_candidate = is_candidate
        self.name = inner.name
        self._numbers = itertools.count(1)
        self._lock = threading.Lock()

    def isolation(self) -> Isolation:
        return self.inner.isolation()

    def _start(self, request: SandboxRequest) -> int:
        with self._lock:
            n = next(self._numbers)
        _emit(marker_path(n, "candidate" if self.is_candidate(request) else "trusted", request))
        return n

    def run(self, request: SandboxRequest) -> SandboxResult:
        n = self._start(request)
        try:
            return self.inner.run(request)
        finally:
            _emit(marker_path(n, "end", request))

    async def run_async(self, request: SandboxRequest) -> SandboxResult:
        n = self._start(request)
        try:
            return await self.inner.run_async(request)
        finally:
            _emit(marker_path(n, "end", request))


# -- the log ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Open:
    """One open-family syscall (``open``, ``openat``, ``openat2``, ``creat``)."""

    index: int
    """Position in the log (the line where the call began)."""
    pid: int
    """The thread (strace's tid) that made the call."""
    syscall: str
    path: str
    """The requested path made absolute (against the dirfd's path or the cwd, as strace's
    ``-y`` decoration shows it) and normalized lexically; ``fd:<n>/<rel>`` when strace gave no
    path for the dirfd."""
    flags: str
    result: str
    """What strace printed after ``=``: ``3</real/path>``, ``-1 ENOENT (...)``, ..."""
    real_path: str | None = None
    """The kernel's path of the opened file (``-y`` on the returned fd), symlinks resolved."""

    @property
    def ok(self) -> bool:
        return self.real_path is not None or re.match(r"\d+", self.result) is not None

    @property
    def is_directory(self) -> bool:
        return "O_DIRECTORY" in self.flags.split("|")

    def paths(self) -> list[str]:
        """The requested path and, when it differs, the kernel's resolved one."""
        if self.real_path is None or self.real_path == self.path:
            return [self.path]
        return [self.path, self.real_path]

    def inside(self, roots: Iterable[str]) -> bool:
        return any(_is_within(p, root) for p in self.paths() for root in roots)


@dataclass(frozen=True)
class Marker:
    index: int
    pid: int
    request: int
    kind: MarkerKind
    program: str
    """Base name of the request's ``argv[0]``."""
    workspace: str


@dataclass(frozen=True)
class Step:
    """One sandbox request the scorer made, between its start and end markers."""

    request: int
    candidate: bool
    program: str
    workspace: str
    start: int
    end: int | None
    """None: the end marker is missing (the scorer died inside the request)."""

    def workspace_roots(self) -> list[str]:
        """The workspace as the marker gave it and with its symlinks resolved now."""
        real = os.path.realpath(self.workspace)
        return [self.workspace] if real == self.workspace else [self.workspace, real]

    def in_flight_at(self, index: int) -> bool:
        return self.start < index and (self.end is None or index < self.end)


@dataclass(frozen=True)
class Violation:
    step: Step
    open: Open

    def __str__(self) -> str:
        o, s = self.open, self.step
        line = (
            f"scorer opened {o.path} ({o.flags}) after candidate step {s.request} "
            f"({s.program}) that could write {s.workspace}"
        )
        if o.real_path is not None and o.real_path != o.path:
            line += f" [resolved: {o.real_path}]"
        if not o.ok:
            line += f" [failed: {o.result}]"
        return line


@dataclass
class AuditLog:
    """What the scorer process opened, in order, and the sandbox requests it made."""

    root_pid: int | None
    scorer_pids: set[int]
    """The root and every thread it created (transitively)."""
    opens: list[Open]
    """Opens by scorer threads, markers left out, in log order."""
    markers: list[Marker]
    """Markers emitted by scorer threads, in log order."""
    all_opens: list[Open] = field(default_factory=list)
    """Every open in the log, any process, markers included (for debugging)."""
    returncode: int | None = None
    stdout: str = ""
    stderr: str = ""
    trace_file: Path | None = None

    def steps(self) -> list[Step]:
        ends = {m.request: m.index for m in self.markers if m.kind == "end"}
        return [
            Step(
                m.request,
                m.kind == "candidate",
                m.program,
                m.workspace,
                m.index,
                ends.get(m.request),
            )
            for m in self.markers
            if m.kind != "end"
        ]

    def candidate_steps(self) -> list[Step]:
        return [s for s in self.steps() if s.candidate]

    def candidate_workspaces(self) -> list[Path]:
        """The trees candidate code could write, first use first."""
        return [Path(w) for w in dict.fromkeys(s.workspace for s in self.candidate_steps())]

    def opens_inside(self, root: Path | str) -> list[Open]:
        """Scorer opens inside ``root`` (requested or resolved path)."""
        roots = {str(root), os.path.realpath(root)}
        return [o for o in self.opens if o.inside(roots)]

    def _backend_walk(self, o: Open, steps: list[Step]) -> bool:
        """A directory open inside a request's own workspace while that request is in flight:
        the backend handing the tree to the sandbox uid and back (``chown_tree``'s walk)."""
        return o.is_directory and any(
            s.in_flight_at(o.index) and o.inside(s.workspace_roots()) for s in steps
        )

    def violating_opens(self, *, strict: bool = False) -> list[Violation]:
        """Every (candidate step, scorer open) where the open comes after the step's start
        marker and lies inside its workspace. Not ``strict``: leaves out directory opens the
        backend makes in a request's own workspace while that request runs."""
        steps = self.steps()
        found = []
        for step in steps:
            if not step.candidate:
                continue
            roots = step.workspace_roots()
            for o in self.opens:
                if o.index <= step.start or not o.inside(roots):
                    continue
                if not strict and self._backend_walk(o, steps):
                    continue
                found.append(Violation(step, o))
        return found

    def violations(self, *, strict: bool = False) -> list[str]:
        """:meth:`violating_opens` as readable lines."""
        return [str(v) for v in self.violating_opens(strict=strict)]


# -- parsing strace -f -y output -------------------------------------------------------------

_LINE = re.compile(r"^(\d+)\s+(.*)$")
_RESUMED = re.compile(r"^<\.\.\. (\w+) resumed>\s?(.*)$")
_UNFINISHED = "<unfinished ...>"
_FD = re.compile(r"^(AT_FDCWD|-?\d+)(?:<(.*)>)?$")
_RESULT_FD = re.compile(r"^(\d+)<([^>]*)>")
_CLONE_FLAGS = re.compile(r"flags=([A-Z0-9_|]+)")
_ESCAPE = re.compile(rb"\\(x[0-9a-fA-F]{2}|[0-7]{1,3}|.)")
_SIMPLE_ESCAPES = {b"n": b"\n", b"t": b"\t", b"r": b"\r", b"v": b"\v", b"f": b"\f"}
_OPENS = {"open", "openat", "openat2", "creat"}


def _is_within(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def _unescape(text: str) -> str:
    """strace's C-style escaping (``\\"``, ``\\n``, ``\\76``, ``\\x3e``) back to a path."""

    def one(m: re.Match[bytes]) -> bytes:
        code = m.group(1)
        if code[:1] == b"x" and len(code) == 3:
            return bytes([int(code[1:], 16)])
        if code.isdigit():
            return bytes([int(code, 8) & 0xFF])
        return _SIMPLE_ESCAPES.get(code, code)

    return os.fsdecode(_ESCAPE.sub(one, text.encode("latin-1", errors="replace")))


def _string(arg: str) -> str | None:
    """The value of a quoted string argument (``"..."``; a trailing ``...`` is truncation)."""
    if not arg.startswith('"'):
        return None
    end = arg.rfind('"')
    return _unescape(arg[1:end]) if end > 0 else None


def _split_call(text: str) -> tuple[str, list[str], str] | None:
    """``name(arg, arg, ...) = result`` into its parts, minding quotes, brackets and ``<...>``
    fd decorations (which strace escapes ``<``/``>`` inside)."""
    m = re.match(r"(\w+)\(", text)
    if m is None:
        return None
    args: list[str] = []
    depth, i, start = 0, m.end(), m.end()
    while i < len(text):
        c = text[i]
        if c == '"':
            i += 1
            while i < len(text) and text[i] != '"':
                i += 2 if text[i] == "\\" else 1
        elif c == "<":
            close = text.find(">", i)
            i = close if close > 0 else i
        elif c in "([{":
            depth += 1
        elif c in ")]}":
            if depth == 0:
                if text[start:i].strip():
                    args.append(text[start:i].strip())
                rest = re.match(r"\s*=\s*(.*)$", text[i + 1 :])
                return m.group(1), args, rest.group(1).strip() if rest else ""
            depth -= 1
        elif c == "," and depth == 0:
            args.append(text[start:i].strip())
            start = i + 1
        i += 1
    return None


def _joined_calls(lines: Iterable[str]) -> Iterable[tuple[int, int, str]]:
    """(index, pid, whole call) per syscall, ``<unfinished ...>``/``<... resumed>`` joined per
    pid; the index is where the call began."""
    pending: dict[int, tuple[int, str]] = {}
    for index, line in enumerate(lines):
        m = _LINE.match(line.rstrip("\n"))
        if m is None:
            continue
        pid, rest = int(m.group(1)), m.group(2)
        if rest.startswith(("+++", "---")):
            continue
        if rest.endswith(_UNFINISHED):
            pending[pid] = (index, rest[: -len(_UNFINISHED)].rstrip())
            continue
        resumed = _RESUMED.match(rest)
        if resumed is not None:
            began = pending.pop(pid, None)
            if began is None or not began[1].startswith(resumed.group(1) + "("):
                continue  # the first half is missing
            yield began[0], pid, began[1] + resumed.group(2)
            continue
        yield index, pid, rest


def _decorated_path(arg: str) -> tuple[str, str | None]:
    """(fd, path) of a ``-y`` decorated fd argument: ``AT_FDCWD</x>``, ``5</x/y>``."""
    m = _FD.match(arg)
    if m is None:
        return arg, None
    return m.group(1), _unescape(m.group(2)) if m.group(2) is not None else None


def _real_path(result: str) -> str | None:
    m = _RESULT_FD.match(result)
    if m is None:
        return None
    path = _unescape(m.group(2))
    return path.removesuffix(" (deleted)")


def _open_call(
    index: int, pid: int, name: str, args: list[str], result: str, cwd: str
) -> Open | None:
    if name in ("open", "creat"):
        dirfd, base, rest = "AT_FDCWD", None, args
    else:
        if not args:
            return None
        (dirfd, base), rest = _decorated_path(args[0]), args[1:]
    if not rest:
        return None
    requested = _string(rest[0])
    if requested is None:
        return None
    if name == "creat":
        flags = "O_CREAT|O_WRONLY|O_TRUNC"
    elif name == "openat2":
        found = re.search(r"flags=([A-Z0-9_|x]+)", ",".join(rest[1:]))
        flags = found.group(1) if found else "?"
    else:
        flags = rest[1] if len(rest) > 1 else "?"
    if os.path.isabs(requested):
        path = os.path.normpath(requested)
    elif base is not None:
        path = os.path.normpath(os.path.join(base, requested))
    elif dirfd == "AT_FDCWD":
        path = os.path.normpath(os.path.join(cwd, requested))
    else:
        path = f"fd:{dirfd}/{requested}"
    return Open(index, pid, name, path, flags, result, _real_path(result))


def _parse_marker(o: Open) -> Marker | None:
    if not o.path.startswith(MARKER_ROOT + "/"):
        return None
    parts = o.path[len(MARKER_ROOT) + 1 :].split("/", 3)
    if len(parts) < 4 or not parts[0].isdigit() or parts[1] not in ("candidate", "trusted", "end"):
        return None
    kind: MarkerKind = parts[1]  # type: ignore[assignment]
    return Marker(o.index, o.pid, int(parts[0]), kind, unquote(parts[2]), "/" + parts[3])


def parse_strace(text: str, *, cwd: Path | str) -> AuditLog:
    """Parse ``strace -f -y`` output (pid-prefixed lines) of one traced root process.

    ``cwd``: the root's starting directory, for relative paths strace did not decorate."""
    calls = list(_joined_calls(text.splitlines()))
    root = calls[0][1] if calls else None
    threads: list[tuple[int, int]] = []  # (creator, new thread)
    parsed: list[tuple[int, int, str, list[str], str]] = []
    for index, pid, call in calls:
        split = _split_call(call)
        if split is None:
            continue
        name, args, result = split
        parsed.append((index, pid, name, args, result))
        if name in ("clone", "clone3") and re.fullmatch(r"\d+", result):
            flags = _CLONE_FLAGS.search(",".join(args))
            if flags is not None and "CLONE_THREAD" in flags.group(1).split("|"):
                threads.append((pid, int(result)))
    scorer = {root} if root is not None else set()
    grew = True
    while grew:  # threads of threads, whatever order their lines came in
        grew = False
        for creator, thread in threads:
            if creator in scorer and thread not in scorer:
                scorer.add(thread)
                grew = True
    scorer_cwd = os.path.abspath(cwd)
    other_cwd: dict[int, str] = {}
    log = AuditLog(root, {p for p in scorer if p is not None}, [], [])
    for index, pid, name, args, result in parsed:
        here = scorer_cwd if pid in scorer else other_cwd.get(pid, scorer_cwd)
        if name in ("chdir", "fchdir") and result == "0" and args:
            target = _string(args[0]) if name == "chdir" else _decorated_path(args[0])[1]
            if target is not None:
                new = os.path.normpath(os.path.join(here, target))
                if pid in scorer:
                    scorer_cwd = new
                else:
                    other_cwd[pid] = new
            continue
        if name not in _OPENS:
            continue
        o = _open_call(index, pid, name, args, result, here)
        if o is None:
            continue
        log.all_opens.append(o)
        if pid not in scorer:
            continue
        marker = _parse_marker(o)
        if marker is not None:
            log.markers.append(marker)
        else:
            log.opens.append(o)
    return log


# -- running a script under strace -----------------------------------------------------------


def strace_binary() -> str:
    """The strace executable; :class:`StraceMissingError` (:data:`STRACE_MISSING`) if none."""
    found = shutil.which("strace", path=os.pathsep.join([os.environ.get("PATH", ""), "/usr/bin"]))
    if found is None:
        raise StraceMissingError(STRACE_MISSING)
    return found


def strace_command(trace_file: Path, *, seccomp_bpf: bool = True) -> list[str]:
    """``strace -f [--seccomp-bpf] -qq -y -s 4096 -e signal=none -e trace=... -o <trace_file>``.

    ``--seccomp-bpf`` stops the tracees only on the traced syscalls (dbt and DuckDB make
    many others), so a traced run is barely slower; without it, every syscall stops."""
    return [
        strace_binary(),
        "-f",
        *(["--seccomp-bpf"] if seccomp_bpf else []),
        "-qq",
        "-y",
        "-s",
        "4096",
        "-e",
        "signal=none",
        "-e",
        "trace=" + ",".join(TRACED_SYSCALLS),
        "-o",
        str(trace_file),
    ]


def run_audited(
    code: str,
    env: dict[str, str],
    cwd: Path,
    trace_file: Path,
    timeout_s: float,
    *,
    check: bool = True,
    seccomp_bpf: bool = True,
) -> AuditLog:
    """Run ``python -c code`` (this interpreter) under strace and parse the log.

    ``env`` is the script's whole environment. ``check``: raise :class:`AuditError` when the
    script exits nonzero. Past ``timeout_s`` the whole session is killed and it raises."""
    argv = [*strace_command(trace_file, seccomp_bpf=seccomp_bpf), "--", sys.executable, "-c", code]
    proc = subprocess.Popen(
        argv,
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    try:
        out, err = proc.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        raise AuditError(
            f"the audited script ran past {timeout_s}s\n{err.decode(errors='replace')[-3000:]}"
        ) from None
    stdout, stderr = out.decode(errors="replace"), err.decode(errors="replace")
    if check and proc.returncode != 0:
        raise AuditError(
            f"the audited script exited {proc.returncode}\n{stdout[-2000:]}\n{stderr[-4000:]}"
        )
    log = parse_strace(trace_file.read_text(errors="replace"), cwd=cwd)
    log.returncode, log.stdout, log.stderr = proc.returncode, stdout, stderr
    log.trace_file = trace_file
    return log


__all__ = [
    "MARKER_ROOT",
    "STRACE_MISSING",
    "AuditError",
    "AuditLog",
    "AuditedBackend",
    "Marker",
    "Open",
    "Step",
    "StraceMissingError",
    "Violation",
    "marker_path",
    "parse_strace",
    "run_audited",
    "strace_binary",
    "strace_command",
]
