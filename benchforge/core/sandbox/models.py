"""The sandbox's data: what to run, under which limits, and what actually happened.

Every trial result records an :class:`Isolation`, so a score can always be read together with
how contained the agent was: a backend that cannot enforce something says so in ``notes``
instead of silently running with less.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from benchforge.core.errors import BenchforgeError


class SandboxError(BenchforgeError):
    """The sandbox itself could not start or be set up (not: the command failed)."""


class SandboxLimits(BaseModel):
    """Resource limits of one sandboxed command (the whole process tree where possible)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    wall_s: float = Field(default=600.0, gt=0)
    """Wall clock; the whole process tree is killed after it."""
    memory_mb: int = Field(default=4096, gt=0)
    """For the whole sandbox (memory cgroup), else per process (``RLIMIT_AS``)."""
    max_processes: int = Field(default=256, gt=0)
    """pids cgroup, else ``RLIMIT_NPROC`` of the per-sandbox uid."""
    max_file_mb: int = Field(default=2048, gt=0)
    """Largest file a process may write (``RLIMIT_FSIZE``)."""
    max_open_files: int = Field(default=1024, gt=0)
    cpu_s: float | None = Field(default=None, gt=0)
    """CPU seconds per process (``RLIMIT_CPU``); None: unlimited."""
    output_limit_bytes: int = Field(default=65536, ge=0)
    """How much of stdout and of stderr is kept (the tail)."""


class SandboxRequest(BaseModel):
    """One command to run contained.

    Paths are host paths; inside the sandbox they appear at the same place, so a workspace at
    ``/data/trials/7/ws`` is ``/data/trials/7/ws`` for the agent too. A namespace sandbox
    shows only the system folders, the interpreter's installation, ``read_only`` and the
    workspace: any other host path is simply not there.
    """

    model_config = ConfigDict(extra="forbid")

    argv: list[str] = Field(min_length=1)
    workspace: Path
    """The only writable place (plus a private, empty ``/tmp``)."""
    cwd: Path | None = None
    """Working directory; default the workspace; relative paths are relative to it."""
    read_only: list[Path] = Field(default_factory=list)
    """Made visible read-only (files or folders), even when under a hidden path (e.g. the
    dataset folder)."""
    hidden: list[Path] = Field(default_factory=list)
    """Made empty and read-only (gold folders, the artifact root, the repository's task specs).
    The namespace sandbox needs it only for paths inside what it shows (the workspace, a
    ``read_only`` folder, the system folders); anything else is not visible anyway."""
    env: dict[str, str] = Field(default_factory=dict)
    """The only environment, on top of defaults for PATH, HOME (the workspace), TMPDIR, LANG
    and DO_NOT_TRACK; a key given here wins over its default."""
    limits: SandboxLimits = Field(default_factory=SandboxLimits)
    network: bool = False
    """Allow the host's network; by default the sandbox has only its own loopback."""
    stdin: str | None = None


class Isolation(BaseModel):
    """What the backend actually enforced (recorded with every result)."""

    model_config = ConfigDict(frozen=True)

    backend: str
    """``"namespace"`` or ``"process"`` (or a future container backend's name)."""
    network: Literal["isolated", "host"]
    filesystem: Literal["confined", "host"]
    process_tree: Literal["pid-namespace", "process-group"]
    memory: Literal["cgroup", "rlimit-per-process"]
    processes: Literal["cgroup", "rlimit-nproc", "none"]
    notes: list[str] = Field(default_factory=list)
    """Human-readable degradations and facts, e.g. why the network is the host's."""


class SandboxResult(BaseModel):
    """The outcome of one sandboxed command."""

    returncode: int | None
    """Exit status; negative: killed by that signal; None: killed by the sandbox (wall clock)."""
    stdout: str
    """Tail of stdout (``limits.output_limit_bytes``), decoded with ``errors="replace"``."""
    stderr: str
    wall_s: float
    timed_out: bool
    killed_reason: str | None
    """Best effort: ``"wall_clock"``, ``"memory"``, ``"processes"``, ``"cpu_time"``,
    ``"file_size"`` or ``"signal SIGxxx"``; None when the command ended by itself."""
    isolation: Isolation
    stdout_truncated: bool = False
    stderr_truncated: bool = False
    sandbox_uid: int | None = None
    """The unprivileged uid the command ran as (namespace backend)."""
    peak_memory_mb: float | None = None
    """Peak memory of the whole sandbox, when a memory cgroup measured it."""
