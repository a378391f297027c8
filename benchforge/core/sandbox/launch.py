"""The sandbox launcher: the first process inside a sandbox, between the backend and the command.

It is run as ``python -I -S launch.py --config-fd N --status-fd N [--lifeline-fd N]``: a
standalone script using only the standard library, so that it starts in a few milliseconds,
imports nothing from the host's packages and still works when the repository is hidden.

The config (JSON, read from ``--config-fd``) says what to do:

* ``mode == "namespace"``: the launcher is pid 1 of fresh pid/mount/(net/ipc/uts) namespaces
  made by ``unshare`` and runs as root. It joins the cgroups prepared by the backend, builds the
  filesystem view, brings up its own loopback, then forks the command, which drops to the
  sandbox's unprivileged uid and execs. The launcher stays as pid 1 to reap orphans; when the
  command ends it reports the exit status and exits, and the kernel kills everything else in
  the pid namespace. It also exits (killing the tree) when the backend dies (the lifeline pipe
  closes) or a backup deadline passes.
* ``mode == "process"``: no namespaces; set the rlimits and exec the command in place.

The filesystem view is an allow-list (planned by ``mounts.py``, as ``mount_ops``), built the
way bubblewrap builds one:

1. every bind source is opened (``O_PATH``) while the host tree is still in sight, and must
   still be the very path the backend resolved (a folder an agent swapped for a symlink since,
   in a workspace it shares with a running sandbox, fails the setup instead of exposing
   whatever the link points to);
2. an empty tmpfs, the new root, is mounted over /tmp (in this mount namespace only);
3. each op is applied inside it at its own path, outermost first, creating its mount point
   on the way (the folders leading to an exposure are these empty folders): binds from the
   opened sources (recursive, then remounted read-only/nosuid/nodev at once), tmpfs, dead
   mounts on hidden files, symlinks, a fresh /proc;
4. ``pivot_root`` into the new root, then the old (host) root is detached: from then on no
   path leads to anything of the host that the plan did not name (without ``pivot_root``:
   ``MS_MOVE`` onto / and ``chroot``, which the unprivileged command cannot leave);
5. every mount but the workspace and the private tmpfs is made read-only and nosuid (nodev
   but for the device nodes): the root tmpfs, hidden folders, and mounts nested in a bound
   tree (/sys's cgroup mounts), which a recursive bind brings along writable.

Messages to the backend are JSON lines on ``--status-fd``: ``ready`` (with setup notes),
``error`` (setup failed: the sandbox could not start) and ``exit`` (the command's status).
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import fcntl
import json
import os
import re
import resource
import select
import signal
import socket
import stat
import struct
import sys
import time
from typing import Any, NoReturn

MS_RDONLY = 0x1
MS_NOSUID = 0x2
MS_NODEV = 0x4
MS_NOEXEC = 0x8
MS_REMOUNT = 0x20
MS_NOATIME = 0x400
MS_NODIRATIME = 0x800
MS_BIND = 0x1000
MS_MOVE = 0x2000
MS_REC = 0x4000
MS_RELATIME = 0x200000
MS_STRICTATIME = 0x1000000
_KEPT_MOUNT_FLAGS = MS_NODEV | MS_NOEXEC | MS_NOATIME | MS_NODIRATIME | MS_RELATIME
_OPTION_FLAGS = {
    "nosuid": MS_NOSUID,
    "nodev": MS_NODEV,
    "noexec": MS_NOEXEC,
    "noatime": MS_NOATIME,
    "nodiratime": MS_NODIRATIME,
    "relatime": MS_RELATIME,
    "strictatime": MS_STRICTATIME,
}
MNT_DETACH = 0x2
PR_SET_NO_NEW_PRIVS = 38
# pivot_root(2) has no libc wrapper: its syscall number per machine (os.uname().machine).
_SYS_PIVOT_ROOT = {
    "x86_64": 155,
    "aarch64": 41,
    "arm64": 41,
    "riscv64": 41,
    "i386": 217,
    "i686": 217,
    "s390x": 217,
    "ppc64le": 203,
    "ppc64": 203,
}
# Where the new root is assembled (covered by it in this mount namespace only).
STAGING = "/tmp"
_ROOT_TMPFS = "size=1m,mode=755"
SIOCGIFFLAGS = 0x8913
SIOCSIFFLAGS = 0x8914
IFF_UP = 0x1

# Exit codes of the command as a shell reports them.
EXIT_CANNOT_EXECUTE = 126
EXIT_NOT_FOUND = 127
# The launcher's own exit code when setup failed (the command never ran).
EXIT_SETUP_FAILED = 125

_libc = ctypes.CDLL(None, use_errno=True)


class SetupError(Exception):
    """Building the sandbox failed: the command must not run."""


def _mount(source: str | None, target: str, fstype: str | None, flags: int, data: str = "") -> None:
    def enc(value: str | None) -> bytes | None:
        return None if value is None else os.fsencode(value)

    rc = _libc.mount(
        enc(source), enc(target), enc(fstype), ctypes.c_ulong(flags), enc(data) if data else None
    )
    if rc != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"mount {target}: {os.strerror(err)}")


def _unescape_mountinfo(field: str) -> str:
    # mountinfo escapes space, tab, newline and backslash as \ooo.
    return re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), field)


def _mounts() -> list[tuple[str, bool, int]]:
    """Mount points of this mount namespace (as seen from our root): path, whether read-only,
    per-mount flags to keep."""
    mounts = []
    with open("/proc/self/mountinfo", encoding="utf-8", errors="surrogateescape") as fh:
        for line in fh:
            fields = line.split()
            options = fields[5].split(",")
            flags = 0
            for option in options:
                flags |= _OPTION_FLAGS.get(option, 0)
            mounts.append((_unescape_mountinfo(fields[4]), "ro" in options, flags))
    return mounts


def _under(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def _make_mount_point(target: str, is_dir: bool) -> None:
    if os.path.lexists(target):
        return
    if is_dir:
        os.makedirs(target, mode=0o755)
    else:
        os.makedirs(os.path.dirname(target), mode=0o755, exist_ok=True)
        os.close(os.open(target, os.O_CREAT | os.O_WRONLY | os.O_CLOEXEC, 0o644))


def _bind_flags(op: dict[str, Any]) -> int:
    flags = MS_REMOUNT | MS_BIND | MS_NOSUID | (MS_RDONLY if op["readonly"] else 0)
    return flags if op["dev"] else flags | MS_NODEV


def _apply_op(op: dict[str, Any], root: str, source: int | None) -> None:
    kind, target = op["kind"], root + op["path"]
    if kind == "symlink":
        os.makedirs(os.path.dirname(target), mode=0o755, exist_ok=True)
        os.symlink(op["target"], target)
    elif kind == "proc":
        _make_mount_point(target, True)
        _mount("proc", target, "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
    elif kind == "tmpfs":
        _make_mount_point(target, True)
        flags = MS_NOSUID | MS_NODEV | (MS_NOEXEC if op["readonly"] else 0)
        _mount("tmpfs", target, "tmpfs", flags, f"size={op['size']},mode={op['mode']:o}")
        # A hidden folder stays writable until the end: deeper mount points go in it.
    elif kind == "mask":
        # A file cannot be covered by a tmpfs: cover it with /dev/null on a nodev mount,
        # which makes opening it fail.
        assert source is not None
        _make_mount_point(target, False)
        _mount(f"/proc/self/fd/{source}", target, None, MS_BIND)
        _mount(None, target, None, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV)
    elif kind == "bind":
        assert source is not None
        _make_mount_point(target, stat.S_ISDIR(os.fstat(source).st_mode))
        _mount(f"/proc/self/fd/{source}", target, None, MS_BIND | MS_REC)
        _mount(None, target, None, _bind_flags(op))
    else:
        raise SetupError(f"unknown mount op {kind!r}")


def _pivot_root(root: str, notes: list[str]) -> None:
    """Make ``root`` the root of this mount namespace and drop the old one."""
    os.chdir(root)
    number = _SYS_PIVOT_ROOT.get(os.uname().machine)
    if number is not None and _libc.syscall(number, b".", b".") == 0:
        # The old root now sits on top of the new one: detach it, and with it every path to
        # the host's tree.
        if _libc.umount2(b".", MNT_DETACH) != 0:
            err = ctypes.get_errno()
            raise OSError(err, f"cannot detach the host root: {os.strerror(err)}")
        os.chdir("/")
        return
    err = ctypes.get_errno() if number is not None else errno.ENOSYS
    # No pivot_root (an initramfs root, an unknown machine): move the new root over / and
    # chroot into it; the command, unprivileged and without CAP_SYS_CHROOT, cannot leave.
    _mount(".", "/", None, MS_MOVE)
    os.chroot(".")
    os.chdir("/")
    notes.append(f"pivot_root unavailable ({os.strerror(err)}): the sandbox root is a chroot")


def _seal(ops: list[dict[str, Any]]) -> None:
    """Every mount read-only and nosuid, except the writable ones the plan asked for."""
    writable = {op["path"] for op in ops if op["kind"] in ("bind", "tmpfs") and not op["readonly"]}
    devices = {op["path"] for op in ops if op["kind"] == "bind" and op["dev"]}
    for path, readonly, flags in _mounts():
        if readonly or path in writable or path in devices or _under(path, "/proc"):
            continue
        flags = (flags & _KEPT_MOUNT_FLAGS) | MS_NODEV
        try:
            _mount(None, path, None, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | flags)
        except OSError as exc:
            raise SetupError(f"cannot make {path} read-only: {exc.strerror}") from exc


def build_root(ops: list[dict[str, Any]], notes: list[str]) -> None:
    """Build the sandbox's filesystem from the plan and switch into it (see module doc)."""
    os.umask(0o022)
    # Sources are opened before anything is mounted: a path under /tmp or under a hidden
    # folder is still reachable through its descriptor.
    sources: dict[int, int] = {}
    try:
        for i, op in enumerate(ops):
            if op["kind"] in ("bind", "mask"):
                path = op["path"] if op["kind"] == "bind" else "/dev/null"
                sources[i] = fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
                if os.readlink(f"/proc/self/fd/{fd}") != path:
                    raise SetupError(f"{path} changed since the sandbox was planned")
    except (OSError, SetupError) as exc:
        for fd in sources.values():
            os.close(fd)
        if isinstance(exc, SetupError):
            raise
        raise SetupError(f"cannot open {exc.filename}: {exc.strerror}") from exc
    try:
        try:
            _mount("tmpfs", STAGING, "tmpfs", MS_NOSUID | MS_NODEV, _ROOT_TMPFS)
        except OSError as exc:
            raise SetupError(f"cannot mount the sandbox root: {exc.strerror}") from exc
        for i, op in enumerate(ops):
            try:
                _apply_op(op, STAGING, sources.get(i))
            except OSError as exc:
                raise SetupError(
                    f"cannot set up {op['kind']} at {op['path']}: {exc.strerror}"
                ) from exc
    finally:
        for fd in sources.values():
            os.close(fd)
    try:
        _pivot_root(STAGING, notes)
    except OSError as exc:
        raise SetupError(f"cannot switch to the sandbox root: {exc.strerror}") from exc
    _seal(ops)


def _loopback_up() -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        ifreq = struct.pack("16sh22x", b"lo", 0)
        flags = struct.unpack("16sh22x", fcntl.ioctl(sock.fileno(), SIOCGIFFLAGS, ifreq))[1]
        fcntl.ioctl(sock.fileno(), SIOCSIFFLAGS, struct.pack("16sh22x", b"lo", flags | IFF_UP))


def _write(path: str, text: str) -> None:
    with open(path, "w", encoding="ascii") as fh:
        fh.write(text)


def setup_namespace(config: dict[str, Any]) -> list[str]:
    """Build the sandbox around this process (pid 1, root); return notes on what degraded."""
    notes: list[str] = []
    for procs_file in config["cgroup_procs"]:
        try:
            _write(procs_file, str(os.getpid()))
        except OSError as exc:
            raise SetupError(f"cannot join cgroup {procs_file}: {exc.strerror}") from exc
    # The command, not the launcher, must be what the OOM killer picks.
    with contextlib.suppress(OSError):
        _write("/proc/self/oom_score_adj", "-1000")
    build_root(config["mount_ops"], notes)
    if config["uts"]:
        try:
            socket.sethostname("sandbox")
        except OSError as exc:
            notes.append(f"could not set the hostname ({exc.strerror})")
    if config["loopback"]:
        try:
            _loopback_up()
        except OSError as exc:
            notes.append(f"loopback left down ({exc.strerror}): localhost servers cannot work")
    return notes


def _set_rlimits(limits: dict[str, list[int]]) -> None:
    for name, (soft, hard) in limits.items():
        which = getattr(resource, name)
        try:
            resource.setrlimit(which, (soft, hard))
        except (ValueError, OSError):
            # Unprivileged: cannot raise the hard limit; clamp to it.
            cur_hard = resource.getrlimit(which)[1]
            if cur_hard != resource.RLIM_INFINITY:
                hard = cur_hard if hard == resource.RLIM_INFINITY else min(hard, cur_hard)
                soft = hard if soft == resource.RLIM_INFINITY else min(soft, hard)
            resource.setrlimit(which, (soft, hard))


def _close_inherited_fds() -> None:
    for name in os.listdir("/proc/self/fd"):
        fd = int(name)
        if fd > 2:
            with contextlib.suppress(OSError):
                os.close(fd)


def exec_command(config: dict[str, Any]) -> NoReturn:
    """Become the command: limits, identity, cwd, then execve (never returns)."""
    argv: list[str] = config["argv"]
    try:
        signal.set_wakeup_fd(-1)
        # Python ignores these; an exec'd program must get the defaults back.
        for sig in (signal.SIGPIPE, signal.SIGXFSZ, signal.SIGCHLD):
            signal.signal(sig, signal.SIG_DFL)
        if config["mode"] == "namespace":
            os.setsid()  # no controlling terminal of the host's to reach (TIOCSTI)
            with contextlib.suppress(OSError):
                _write("/proc/self/oom_score_adj", "0")
        _close_inherited_fds()
        _set_rlimits(config["rlimits"])
        uid, gid = config["uid"], config["gid"]
        if uid is not None:
            os.setgroups([])
            os.setresgid(gid, gid, gid)
            os.setresuid(uid, uid, uid)
            if _libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
                raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS) failed")
        os.umask(0o022)
        os.chdir(config["cwd"])
    except OSError as exc:
        os.write(2, f"sandbox: cannot start {argv[0]}: {exc}\n".encode(errors="replace"))
        os._exit(EXIT_CANNOT_EXECUTE)
    try:
        os.execvpe(argv[0], argv, config["env"])
    except OSError as exc:
        os.write(2, f"sandbox: {argv[0]}: {exc.strerror}\n".encode(errors="replace"))
        os._exit(EXIT_NOT_FOUND if exc.errno == errno.ENOENT else EXIT_CANNOT_EXECUTE)


def _wait_status_to_returncode(status: int) -> int:
    if os.WIFSIGNALED(status):
        return -os.WTERMSIG(status)
    return os.WEXITSTATUS(status)


def supervise(config: dict[str, Any], send: Any, lifeline_fd: int | None) -> int:
    """As pid 1: run the command, reap every orphan, report the command's exit status."""
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_r, False)
    os.set_blocking(wake_w, False)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    signal.set_wakeup_fd(wake_w)
    child = os.fork()
    if child == 0:
        exec_command(config)
    poller = select.poll()
    poller.register(wake_r, select.POLLIN)
    if lifeline_fd is not None:
        poller.register(lifeline_fd, select.POLLIN | select.POLLHUP)
    deadline = time.monotonic() + config["deadline_s"]
    main_status: int | None = None
    while True:
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if pid == 0:
                break
            if pid == child:
                main_status = status
        if main_status is not None:
            break
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            send({"event": "deadline"})
            return 0
        for fd, _ in poller.poll(max(1, int(remaining * 1000))):
            if fd == lifeline_fd and os.read(fd, 1) == b"":
                return 0  # the backend is gone: take the whole sandbox down
            if fd == wake_r:
                with contextlib.suppress(BlockingIOError):
                    while os.read(wake_r, 4096):
                        pass
    send({"event": "exit", "returncode": _wait_status_to_returncode(main_status)})
    return 0


def _read_all(fd: int) -> bytes:
    os.lseek(fd, 0, os.SEEK_SET)
    chunks = []
    while chunk := os.read(fd, 1 << 16):
        chunks.append(chunk)
    return b"".join(chunks)


def main(argv: list[str]) -> int:
    args = dict(zip(argv[::2], argv[1::2], strict=False))
    config_fd = int(args["--config-fd"])
    status_fd = int(args["--status-fd"])
    lifeline_fd = int(args["--lifeline-fd"]) if "--lifeline-fd" in args else None
    config = json.loads(_read_all(config_fd))
    os.close(config_fd)
    for fd in (status_fd, lifeline_fd):
        if fd is not None:
            os.set_inheritable(fd, False)

    def send(message: dict[str, Any]) -> None:
        with contextlib.suppress(OSError):
            os.write(status_fd, (json.dumps(message) + "\n").encode())

    try:
        notes = setup_namespace(config) if config["mode"] == "namespace" else []
    except (SetupError, OSError) as exc:
        send({"event": "error", "message": str(exc)})
        return EXIT_SETUP_FAILED
    send({"event": "ready", "notes": notes})
    if config["mode"] != "namespace":
        exec_command(config)
    return supervise(config, send, lifeline_fd)


if __name__ == "__main__":
    code = main(sys.argv[1:])
    sys.stdout.flush()
    os._exit(code)
