"""The sandbox launcher: the first process inside a sandbox, between the backend and the command.

It is run as ``python -I -S launch.py --config-fd N --status-fd N [--lifeline-fd N]``: a
standalone script using only the standard library, so that it starts in a few milliseconds,
imports nothing from the host's packages and still works when the repository is hidden.

The config (JSON, read from ``--config-fd``) says what to do:

* ``mode == "namespace"``: the launcher is pid 1 of fresh pid/mount/(net/ipc/uts) namespaces
  made by ``unshare`` and runs as root. It joins the cgroups prepared by the backend, builds the
  filesystem view (fresh /proc, every host mount read-only, private tmpfs /tmp, hidden paths
  masked, exposures bound back), brings up its own loopback, then forks the command, which
  drops to the sandbox's unprivileged uid and execs. The launcher stays as pid 1 to reap
  orphans; when the command ends it reports the exit status and exits, and the kernel kills
  everything else in the pid namespace. It also exits (killing the tree) when the backend dies
  (the lifeline pipe closes) or a backup deadline passes.
* ``mode == "process"``: no namespaces; set the rlimits and exec the command in place.

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
PR_SET_NO_NEW_PRIVS = 38
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


def _host_mounts() -> list[tuple[str, int]]:
    """Mount points in this mount namespace with their per-mount flags, outermost first."""
    mounts = []
    with open("/proc/self/mountinfo", encoding="utf-8", errors="surrogateescape") as fh:
        for line in fh:
            fields = line.split()
            flags = 0
            for option in fields[5].split(","):
                flags |= _OPTION_FLAGS.get(option, 0)
            mounts.append((_unescape_mountinfo(fields[4]), flags))
    return mounts


def _under(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def _make_host_read_only(notes: list[str]) -> None:
    """Remount every inherited mount read-only and nosuid, in this namespace only.

    Permissions already stop the unprivileged uid from writing most places; this also closes
    world-writable corners (/run/lock, a leftover workspace owned by a recycled uid, ...), so
    the workspace and the private tmpfs really are the only writable places.
    """
    for path, flags in _host_mounts():
        if _under(path, "/proc"):
            continue  # shadowed by the fresh /proc
        keep = flags & _KEPT_MOUNT_FLAGS
        try:
            _mount(None, path, None, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | keep)
        except OSError as exc:
            if exc.errno != errno.ENOENT:  # gone: nothing to protect
                notes.append(f"could not make host mount {path} read-only ({exc.strerror})")


def _prepare_mountpoints(root: str, entries: list[list[Any]]) -> None:
    for rel, is_dir in entries:
        target = os.path.join(root, rel)
        if is_dir:
            os.makedirs(target, mode=0o755, exist_ok=True)
        else:
            os.makedirs(os.path.dirname(target), mode=0o755, exist_ok=True)
            if not os.path.lexists(target):
                os.close(os.open(target, os.O_CREAT | os.O_WRONLY | os.O_CLOEXEC, 0o644))


def _apply_mount_ops(ops: list[dict[str, Any]]) -> None:
    """Apply the backend's mount plan (ordered outermost first)."""
    # Sources are opened before anything is mounted over them: a path under a hidden folder
    # is still reachable through its descriptor.
    sources = {
        i: os.open(op["path"], os.O_PATH | os.O_CLOEXEC)
        for i, op in enumerate(ops)
        if op["kind"] == "bind"
    }
    for i, op in enumerate(ops):
        path, kind = op["path"], op["kind"]
        try:
            if kind == "tmpfs":
                flags = MS_NOSUID | MS_NODEV | (MS_NOEXEC if op["readonly"] else 0)
                _mount("tmpfs", path, "tmpfs", flags, f"size={op['size']},mode={op['mode']:o}")
                _prepare_mountpoints(path, op["mountpoints"])
                if op["readonly"]:
                    _mount("tmpfs", path, "tmpfs", MS_REMOUNT | MS_RDONLY | flags)
            elif kind == "mask":
                # A file cannot be covered by a tmpfs: cover it with /dev/null on a nodev mount,
                # which makes opening it fail.
                _mount("/dev/null", path, None, MS_BIND)
                _mount(None, path, None, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV)
            elif kind == "bind":
                _mount(f"/proc/self/fd/{sources[i]}", path, None, MS_BIND | MS_REC)
                flags = MS_REMOUNT | MS_BIND | MS_NOSUID | MS_NODEV
                _mount(None, path, None, flags | (MS_RDONLY if op["readonly"] else 0))
            else:
                raise SetupError(f"unknown mount op {kind!r}")
        except OSError as exc:
            raise SetupError(f"cannot set up {kind} at {path}: {exc.strerror}") from exc
    for fd in sources.values():
        os.close(fd)


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
    try:
        _mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
    except OSError as exc:
        raise SetupError(f"cannot mount a fresh /proc: {exc.strerror}") from exc
    _make_host_read_only(notes)
    _apply_mount_ops(config["mount_ops"])
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
