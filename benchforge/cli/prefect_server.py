"""Prefect's API for the commands that run flows: the server ``PREFECT_API_URL`` names, else
Prefect's ephemeral server, started here, before the command's first flow call, instead of
lazily inside it, so a slow start is retried once and a failed one is one line, not a traceback.

Then it marks CRASHED the flow runs a dead process left RUNNING (:func:`mark_dead_runs`).

Prefect waits ``server.ephemeral.startup_timeout_seconds``
(``PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS``, default 20 s) for its server to answer.
A fresh clone's first start creates Prefect's database: about 12 s on an idle 2-core machine,
past 20 s on a loaded one. Unless the user set the timeout (environment, ``.env``, Prefect
profile, ``prefect.toml``), it is raised to :data:`STARTUP_TIMEOUT_S` for every start in this
process and its children, Prefect's own lazy ones included.
"""

from __future__ import annotations

import os
import sys
import textwrap

from benchforge.core.errors import BenchforgeError

STARTUP_TIMEOUT_SETTING = "PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS"
STARTUP_TIMEOUT_S = 120
TIMED_OUT = "Timed out while attempting to connect to ephemeral Prefect API server"
ATTEMPTS = 2


class PrefectUnavailable(BenchforgeError):
    """Prefect's API is not there: the command's flows cannot run."""


def flow_only(why: str, instead: str = "") -> str:
    """The ``--help`` epilog of a stage that runs only as a flow: why, and the ways on."""
    instead = f"; {instead}" if instead else ""
    return textwrap.fill(
        f"Runs only as a Prefect flow ({why}): there is no --no-prefect{instead}. If "
        "Prefect's ephemeral server does not start in time, allow it longer "
        f"({STARTUP_TIMEOUT_SETTING}, default here {STARTUP_TIMEOUT_S}), or run `prefect "
        "server start` and point PREFECT_API_URL at it (http://127.0.0.1:4200/api).",
        width=78,
    )


def use_prefect(verbose: bool, *, start: bool = True, has_no_prefect: bool = False) -> None:
    """Call before a command's first flow: Prefect's terminal noise off (unless ``verbose``),
    the start-up timeout raised (unless set) and, with ``start``, the API up: the ephemeral
    server started now, once more if it does not answer in time, else
    :class:`PrefectUnavailable`. ``start=False``: a command that runs a flow only sometimes (a
    missing dataset synthesized) lets Prefect start its server lazily, with the same timeout;
    if that start times out, ``benchforge``'s entry point says the same one line
    (:func:`startup_failure`). ``has_no_prefect``: the command has ``--no-prefect``, and the
    error line suggests it."""
    quiet_prefect(verbose)
    timeout = startup_timeout()
    if start:
        start_api(timeout, verbose=verbose, has_no_prefect=has_no_prefect)
        mark_dead_runs()


def mark_dead_runs() -> None:
    """Flow runs left RUNNING by a dead process (``kill -9``, a lost machine) marked CRASHED,
    each said on stderr (:mod:`benchforge.flows.liveness`). Housekeeping: when it fails, the
    command says so and goes on."""
    from benchforge.flows.liveness import mark_dead_runs as mark

    try:
        crashed = mark()
    except Exception as err:  # never the command's failure
        print(
            f"benchforge: warning: zombie flow runs not checked: {_one_line(err)}", file=sys.stderr
        )
        return
    for run in crashed:
        print(f"benchforge: flow run {run.name} marked CRASHED: {run.reason}", file=sys.stderr)


def quiet_prefect(verbose: bool) -> None:
    """Flow logs still reach the Prefect API (and UI); the terminal shows them only with -v.
    Environment variables, set before Prefect is first imported, so its settings see them."""
    if not verbose:
        os.environ.setdefault("PREFECT_LOGGING_HANDLERS_CONSOLE_LEVEL", "CRITICAL")
    os.environ.setdefault("PREFECT_LOGGING_TO_API_WHEN_MISSING_FLOW", "ignore")


def startup_timeout() -> int:
    """The ephemeral server's start-up timeout, in seconds: the user's if they set it anywhere
    Prefect reads settings from, else :data:`STARTUP_TIMEOUT_S`, which this sets for the rest
    of the process (and the processes it starts)."""
    import prefect.context
    from prefect.settings import get_current_settings

    ephemeral = get_current_settings().server.ephemeral
    if "startup_timeout_seconds" in ephemeral.model_fields_set:
        return int(ephemeral.startup_timeout_seconds)
    os.environ[STARTUP_TIMEOUT_SETTING] = str(STARTUP_TIMEOUT_S)
    prefect.context.refresh_global_settings_context()  # settings were read at import
    return STARTUP_TIMEOUT_S


def start_api(timeout: int, *, verbose: bool = False, has_no_prefect: bool = False) -> None:
    """Nothing to start when ``PREFECT_API_URL`` names a server. Else Prefect's ephemeral
    server, the one instance every Prefect client of this process uses
    (``SubprocessASGIServer()``): started with ``timeout``, stopped and started once more if it
    does not answer, :class:`PrefectUnavailable` if it still does not."""
    from prefect.settings import get_current_settings

    settings = get_current_settings()
    if settings.api.url:
        return
    if not settings.server.ephemeral.enabled:
        raise PrefectUnavailable(
            "no Prefect API: PREFECT_API_URL is not set and Prefect's ephemeral server is "
            "disabled (PREFECT_SERVER_EPHEMERAL_ENABLED=false): set one of them"
            + (", or rerun with --no-prefect" if has_no_prefect else "")
        )
    from prefect.server.api.server import SubprocessASGIServer

    reason = ""
    for attempt in range(1, ATTEMPTS + 1):
        server = SubprocessASGIServer()
        try:
            server.start(timeout=timeout)
            return
        except Exception as err:  # timed out, no free port, an error status: all retried
            server.stop()  # a failed start leaves its process running: the retry starts afresh
            reason = _one_line(err)
            if verbose and attempt < ATTEMPTS:
                print(f"benchforge: {reason}; starting it once more", file=sys.stderr)
    raise PrefectUnavailable(advice(timeout, ATTEMPTS, reason, has_no_prefect))


def startup_failure(err: BaseException) -> str | None:
    """The one-line message for ``err`` if it is Prefect's own (lazy) start-up timeout."""
    if not (isinstance(err, RuntimeError) and str(err).startswith(TIMED_OUT)):
        return None
    from prefect.settings import get_current_settings

    timeout = get_current_settings().server.ephemeral.startup_timeout_seconds
    return advice(int(timeout), 1, _one_line(err))


def advice(timeout: int, attempts: int, reason: str, has_no_prefect: bool = False) -> str:
    """One line: what failed, and the ways on."""
    tries = {1: "once", 2: "twice"}.get(attempts, f"{attempts} times")
    why = "" if reason.startswith(TIMED_OUT) else f" ({reason})"
    ways = [
        "rerun when the machine is less busy",
        f"allow it longer ({STARTUP_TIMEOUT_SETTING}={max(300, 2 * timeout)})",
        "point PREFECT_API_URL at a running `prefect server start`",
    ]
    if has_no_prefect:
        ways.append("rerun with --no-prefect (the same steps without Prefect)")
    return (
        f"Prefect's ephemeral API server did not start within {timeout} s (tried {tries}){why}: "
        + ", ".join(ways[:-1])
        + f" or {ways[-1]}"
    )


def _one_line(err: BaseException) -> str:
    return " ".join(str(err).split())[:300] or type(err).__name__
