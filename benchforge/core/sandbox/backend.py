"""The backend interface, and choosing the best backend this machine supports.

A backend runs one :class:`~benchforge.core.sandbox.models.SandboxRequest` and reports, with the
result, the :class:`~benchforge.core.sandbox.models.Isolation` it really enforced.

Backends here:

* :class:`~benchforge.core.sandbox.namespace.NamespaceBackend`: Linux namespaces, cgroups and a
  per-sandbox uid (needs root and ``unshare``); the real one.
* :class:`~benchforge.core.sandbox.process.ProcessBackend`: a plain subprocess with rlimits; the
  fallback, which says in its isolation that filesystem and network are the host's.

A container backend (docker/podman/gVisor, or a remote sandbox service) plugs in by
implementing :class:`SandboxBackend`, nothing else: ``run`` starts the container with the
workspace mounted read-write at the same path, ``read_only`` paths mounted read-only,
``hidden`` paths simply not mounted, ``env`` as the whole environment, ``--network none``
unless ``request.network``, memory/pids limits from ``request.limits``; it kills the
container at ``limits.wall_s`` (and on cancellation in ``run_async``), keeps the output tails
and returns an ``Isolation(backend="container", ...)`` stating what it enforced. Callers take
any backend through this protocol, so nothing else changes.
"""

from __future__ import annotations

import logging
import threading
from typing import Protocol, runtime_checkable

from benchforge.core.sandbox.models import Isolation, SandboxRequest, SandboxResult
from benchforge.core.sandbox.namespace import NamespaceBackend
from benchforge.core.sandbox.process import ProcessBackend

log = logging.getLogger(__name__)


@runtime_checkable
class SandboxBackend(Protocol):
    """Runs untrusted commands contained; see the module doc for what a backend must do."""

    name: str

    def isolation(self) -> Isolation:
        """What a default request gets from this backend on this machine."""
        ...

    def run(self, request: SandboxRequest) -> SandboxResult:
        """Run to completion (or the wall clock), blocking the calling thread.

        Raises :class:`~benchforge.core.sandbox.models.SandboxError` when the sandbox itself cannot
        start; a failing command is a result with a nonzero ``returncode``.
        """
        ...

    async def run_async(self, request: SandboxRequest) -> SandboxResult:
        """Same as ``run`` without blocking the event loop; cancelling kills the whole tree."""
        ...


_default: SandboxBackend | None = None
_lock = threading.Lock()


def default_backend() -> SandboxBackend:
    """The best backend that works here, chosen once per process by a real probe run.

    The namespace backend when a probe sandbox runs; else the process backend, whose isolation
    notes (recorded in every result) say why the namespace one is not used.
    """
    global _default
    with _lock:
        if _default is None:
            _default = _choose()
        return _default


def _choose() -> SandboxBackend:
    namespace = NamespaceBackend()
    works, reason = namespace.probe()
    if works:
        isolation = namespace.isolation()
        log.info(
            "sandbox: namespace backend (network %s, memory %s, processes %s)%s",
            isolation.network,
            isolation.memory,
            isolation.processes,
            "".join(f"; {note}" for note in isolation.notes),
        )
        return namespace
    note = f"namespace sandbox unavailable: {reason}"
    log.warning("sandbox: falling back to the process backend (%s)", note)
    return ProcessBackend(notes=[note])
