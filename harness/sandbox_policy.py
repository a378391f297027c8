"""What a trial's sandbox must not see, and where a run's scratch space lives.

A security policy, kept apart from the flows so it is tested (and read) on its own: every
sandboxed command of a run masks the artifact store, the scratch space (gold builds, other
trials' workspaces), the gold repositories and the task folders (overlays, hidden checks).
"""

from __future__ import annotations

from pathlib import Path

from benchforge.core.catalogue import catalogue
from benchforge.core.settings import BenchforgeSettings
from benchforge.evaluation.tasks import LoadedTask


def work_root(settings: BenchforgeSettings) -> Path:
    """Scratch space (workspaces, gold builds): beside local artifacts, else a user cache."""
    root = settings.artifact_root
    if root.startswith("s3://"):
        return Path.home() / ".cache" / "benchforge" / "work"
    return Path(root).resolve() / "work"


def hidden_paths(settings: BenchforgeSettings, tasks: list[LoadedTask], work: Path) -> list[str]:
    """Masked in every sandbox: artifacts, scratch (gold builds, other trials' workspaces),
    the gold repositories and the task folders (overlays, hidden checks)."""
    paths = {work, *catalogue(settings).protected()}
    if not settings.artifact_root.startswith("s3://"):
        paths.add(Path(settings.artifact_root).resolve())
    for loaded in tasks:
        paths.add(loaded.repo.resolve())
        paths.add(loaded.folder.parent.resolve())
    return sorted(str(p) for p in paths)
