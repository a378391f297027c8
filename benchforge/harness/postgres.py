"""PostgreSQL for a run's trials: the server, the templates, one database per trial.

- **The server** (:func:`run_postgres`): for a run with a task whose agent data places a
  database on PostgreSQL (``TaskFamily.uses_postgres``): the configured one (the
  ``postgres_url`` setting, ``BENCHFORGE_POSTGRES_URL``), else one the run starts on
  127.0.0.1 in a temporary folder (:mod:`benchforge.core.postgres_server`, durability off) and
  stops and removes when the run ends, also when it fails.
- **Templates** (:func:`ensure_templates`): loaded once per perturbed dataset (their names are
  digests of the spec, dataset and seed) on first need in a process; kept when the server has
  them already, so a configured server is loaded once across runs.
- **Per trial** (:func:`trial_databases`): each PostgreSQL database of the trial's
  ``db_config.yaml`` copied from its template for the trial, opened to the read-only role,
  dropped after (:mod:`benchforge.core.engines.postgres_trials`). The copies' conninfo goes to
  the trial's tools (``TaskEnvironment.postgres``), never into the agent's files or prompt.
"""

from __future__ import annotations

import asyncio
import logging
import shutil
import tempfile
import threading
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path

from benchforge.core import postgres_server
from benchforge.core.engines import DB_CONFIG_FILE, load_db_config
from benchforge.core.engines.postgres_trials import trial_postgres
from benchforge.core.errors import BenchforgeError
from benchforge.synthesis.perturb import ensure_postgres_templates

log = logging.getLogger(__name__)


class TrialPostgresError(BenchforgeError):
    """A trial's PostgreSQL databases could not be made: no server, a template that did not
    load, a copy that failed. An infrastructure error of the trial, not the agent's."""


@contextmanager
def run_postgres(configured: str | None, needed: bool) -> Iterator[str | None]:
    """The admin URL of the server the run's trials use (None when no task needs one):
    ``configured``, else a server started now and stopped when the block ends."""
    if not needed:
        yield None
        return
    if configured:
        yield configured
        return
    folder = Path(tempfile.mkdtemp(prefix="benchforge-run-pg-"))
    folder.chmod(0o755)  # run as root, the server runs as 'nobody', who must reach it
    try:
        state, _ = postgres_server.start(folder, settings=postgres_server.FAST)
        log.info("started PostgreSQL for the run on %s:%s", state.host, state.port)
        yield state.url()
    finally:
        postgres_server.stop(folder)
        shutil.rmtree(folder, ignore_errors=True)


_lock = threading.Lock()
_loading: dict[tuple[str, str], threading.Lock] = {}
_loaded: set[tuple[str, str]] = set()


def ensure_templates(admin_url: str, folder: Path) -> None:
    """The templates of the perturbed dataset in ``folder`` (its record and scripts) on
    ``admin_url``'s server; loaded at most once per process, trials waiting for the first."""
    key = (admin_url, str(folder))
    with _lock:
        if key in _loaded:
            return
        lock = _loading.setdefault(key, threading.Lock())
    with lock:
        if key in _loaded:
            return
        ensure_postgres_templates(folder, admin_url)
        with _lock:
            _loaded.add(key)


@asynccontextmanager
async def trial_databases(
    admin_url: str | None, agent_data: Path, templates: Path, trial: str
) -> AsyncIterator[dict[str, str]]:
    """The trial's own copy of each PostgreSQL database of ``agent_data``'s config for the
    block: logical name -> the read-only role's conninfo; dropped after."""
    if admin_url is None:
        raise TrialPostgresError(
            "the task's databases include PostgreSQL and the run has no server "
            "(a run plans one when a task's family says it uses PostgreSQL)"
        )
    config = load_db_config(agent_data / DB_CONFIG_FILE)
    try:
        await asyncio.to_thread(ensure_templates, admin_url, templates)
        copies = trial_postgres(config, admin_url, f"{trial}\0{uuid.uuid4().hex}")
        targets = await asyncio.to_thread(copies.__enter__)
    except Exception as exc:
        raise TrialPostgresError(f"{type(exc).__name__}: {exc}") from exc
    try:
        yield dict(targets)
    finally:
        try:
            await asyncio.to_thread(copies.__exit__, None, None, None)
        except Exception:  # the trial's result stands; the copy is left on the server
            log.warning("trial %s: its PostgreSQL copies were not dropped", trial, exc_info=True)
