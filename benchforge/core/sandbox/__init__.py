"""Run untrusted agent code and tool commands contained.

Agents run shell commands and dbt inside a per-trial workspace; their code is untrusted. A
backend runs one :class:`SandboxRequest` (argv, workspace, what to show read-only, what to
hide inside what is shown, environment, limits) and returns a :class:`SandboxResult` that
records the :class:`Isolation` actually enforced, so a degraded sandbox is never silent. The
namespace backend's filesystem is an allow-list (system directories, the Python runtime, the
request's ``read_only`` paths and its workspace; nothing else of the host)::

    from benchforge.core.sandbox import SandboxRequest, SandboxLimits, default_backend

    result = default_backend().run(
        SandboxRequest(
            argv=["dbt", "build"],
            workspace=trial_dir / "ws",
            read_only=[dataset_dir],
            hidden=[trial_dir / "ws" / "target"],
            limits=SandboxLimits(wall_s=300, memory_mb=4096),
        )
    )

``default_backend()`` probes once: :class:`NamespaceBackend` (namespaces, cgroups, a
per-sandbox uid) where it works, else :class:`ProcessBackend` (rlimits only).
"""

from benchforge.core.sandbox.backend import SandboxBackend, default_backend
from benchforge.core.sandbox.models import (
    Isolation,
    SandboxError,
    SandboxLimits,
    SandboxRequest,
    SandboxResult,
)
from benchforge.core.sandbox.namespace import NamespaceBackend
from benchforge.core.sandbox.process import ProcessBackend

__all__ = [
    "Isolation",
    "NamespaceBackend",
    "ProcessBackend",
    "SandboxBackend",
    "SandboxError",
    "SandboxLimits",
    "SandboxRequest",
    "SandboxResult",
    "default_backend",
]
