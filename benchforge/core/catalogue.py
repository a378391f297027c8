"""Where the task specs and the gold dbt repositories are: the catalogue.

The catalogue root holds ``task_specs/`` and ``dbt_projects/``; a task's ``repo`` and a run's
``tasks_root`` are relative to it. By default it is the installed ``benchforge`` package, which
ships both as package data (in a checkout they are the top-level folders, linked into
``benchforge/``), so a non-editable install finds them from any working directory. The
``catalogue_root`` setting (``BENCHFORGE_CATALOGUE_ROOT``) points at another folder of the same
shape, e.g. a maintainers' checkout of their own tasks.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from benchforge.core.settings import BenchforgeSettings, load_settings

PACKAGE_ROOT = Path(__file__).resolve().parents[1]
TASKS_DIR = "task_specs"
REPOS_DIR = "dbt_projects"


@dataclass(frozen=True)
class Catalogue:
    """The folder of task suites and gold repositories, and the paths inside it."""

    root: Path

    @property
    def tasks_dir(self) -> Path:
        return self.root / TASKS_DIR

    @property
    def repos_dir(self) -> Path:
        return self.root / REPOS_DIR

    @property
    def mutations_dir(self) -> Path:
        return self.tasks_dir / "mutations"

    @property
    def hacks_dir(self) -> Path:
        return self.tasks_dir / "hacks"

    def repo(self, domain: str) -> Path:
        """The gold repository of ``domain``."""
        return self.repos_dir / domain

    def path(self, relative: str | Path) -> Path:
        """A folder a user names (a ``tasks_root``, a suite): absolute as is; relative, from the
        working directory where it exists there (a checkout), else under the root (any
        directory, with a non-editable install)."""
        path = Path(relative).expanduser()
        if path.is_absolute():
            return path
        return path.absolute() if path.exists() else self.root / path

    def protected(self) -> list[Path]:
        """Folders no sandbox may see: the gold repositories, the task folders (overlays,
        hidden checks, the reward-hack catalogue) and the installed package itself (which, in
        a non-editable install, carries both as package data inside the interpreter's tree)."""
        paths = {self.repos_dir.resolve(), self.tasks_dir.resolve(), PACKAGE_ROOT.resolve()}
        return sorted(paths)


def catalogue(settings: BenchforgeSettings | None = None) -> Catalogue:
    """The configured catalogue (``catalogue_root``), else the installed package's."""
    settings = settings or load_settings()
    root = settings.catalogue_root
    return Catalogue(Path(root).expanduser().resolve() if root else PACKAGE_ROOT)
