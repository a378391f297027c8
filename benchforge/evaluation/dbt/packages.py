"""dbt packages of a maintainer's project, vendored so that agents and scorers build offline.

A project that declares packages (``packages.yml`` or ``dependencies.yml``) builds only with
them installed under its ``packages-install-path`` (default ``dbt_packages/``). Benchforge never
writes to the maintainer's project and never runs ``dbt deps`` where candidate code runs, so
the packages are installed once into a content-keyed folder of Benchforge's cache
(:func:`vendored_packages`) and copied from there into every copy of the project that is built:
the gold build, a de_impl skeleton, a de_evol working repository, and the scorer's copy of a
submission (whose own installed packages are ignored: an agent could have planted macros
there).

Where they come from, in order: the project's own install folder when it holds every declared
package (a maintainer who ran ``dbt deps``, works with no network), else ``dbt deps`` on a copy
of the project's configuration (hub packages where the hub is reachable, ``local:`` packages
resolved against the project's folder, git packages where git can reach them). Neither: an
error naming the file that declares them.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import yaml

from benchforge.core.errors import BenchforgeError
from benchforge.core.yamlio import read_yaml
from benchforge.evaluation.dbt.runner import dbt_executable

PACKAGE_FILES = ("packages.yml", "dependencies.yml")
LOCK_FILE = "package-lock.yml"
DEFAULT_INSTALL_PATH = "dbt_packages"
_SKIPPED_DIRS = frozenset({".git", "target", "logs", "__pycache__"})
_NOT_VENDORED = shutil.ignore_patterns(*_SKIPPED_DIRS, "*.duckdb")
DEPS_TIMEOUT_S = 300


class PackagesError(BenchforgeError):
    """A project's declared dbt packages cannot be installed (not in its install folder, and
    ``dbt deps`` failed): the message names the file that declares them."""


def cache_root() -> Path:
    """Where vendored packages are kept: ``$BENCHFORGE_CACHE_DIR`` or ``~/.cache/benchforge``."""
    base = os.environ.get("BENCHFORGE_CACHE_DIR") or Path.home() / ".cache" / "benchforge"
    return Path(base) / "dbt-packages"


def _read(path: Path) -> Any:
    try:
        return read_yaml(path.read_text())
    except Exception as err:  # yaml's errors carry the line
        raise PackagesError(f"{path}: not YAML dbt could read: {str(err).splitlines()[0]}") from err


def declared_packages(repo: Path) -> tuple[Path, list[dict[str, Any]]] | None:
    """The file declaring ``repo``'s packages and its entries; None when it declares none."""
    for name in PACKAGE_FILES:
        path = repo / name
        if not path.is_file():
            continue
        data = _read(path) or {}
        entries = data.get("packages") if isinstance(data, dict) else None
        if entries is None:
            continue
        if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
            raise PackagesError(f"{path}: field packages must be a list of mappings")
        if entries:
            return path, entries
    return None


def install_path(repo: Path) -> str:
    project = _read(repo / "dbt_project.yml") or {}
    value = project.get("packages-install-path") if isinstance(project, dict) else None
    return str(value).strip("/") if value else DEFAULT_INSTALL_PATH


def _installed(folder: Path) -> list[Path]:
    """The package projects installed in ``folder`` (symlinks of local packages included)."""
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.iterdir() if (p / "dbt_project.yml").is_file())


def _tree_digest(folder: Path, h: Any) -> None:
    """Adds every file under ``folder`` to ``h`` (symlinked folders followed: ``dbt deps``
    installs a local package as a link)."""
    for top, dirs, files in os.walk(folder, followlinks=True):
        dirs[:] = sorted(d for d in dirs if d not in _SKIPPED_DIRS)
        for name in sorted(files):
            path = Path(top) / name
            rel = path.relative_to(folder).as_posix()
            h.update(rel.encode() + b"\0" + path.read_bytes() + b"\0")


def _local_dirs(repo: Path, entries: list[dict[str, Any]]) -> list[Path]:
    return [(repo / str(e["local"])).resolve() for e in entries if e.get("local")]


def _key(repo: Path, declared: Path, entries: list[dict[str, Any]], installed: Path) -> str:
    """Content key: the declaration, the lock file, every local package's files and the
    project's installed packages (when they are what is vendored)."""
    h = hashlib.sha256(declared.read_bytes())
    if (repo / LOCK_FILE).is_file():
        h.update((repo / LOCK_FILE).read_bytes())
    for local in _local_dirs(repo, entries):
        if local.is_dir():
            _tree_digest(local, h)
    if len(_installed(installed)) >= len(entries):
        _tree_digest(installed, h)
    return h.hexdigest()[:24]


def vendored_packages(repo: Path) -> Path | None:
    """The folder holding ``repo``'s installed packages (one subfolder per package, symlinks
    resolved), made once per content key; None when the project declares no packages."""
    found = declared_packages(repo)
    if found is None:
        return None
    declared, entries = found
    installed = repo / install_path(repo)
    folder = cache_root() / _key(repo, declared, entries, installed)
    if folder.is_dir():
        return folder
    folder.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".vendoring-", dir=folder.parent))
    try:
        if len(_installed(installed)) >= len(entries):
            source = installed
        else:
            source = _run_deps(repo, declared, entries, staging / "project")
        packages = staging / "packages"
        packages.mkdir()
        for package in _installed(source):
            shutil.copytree(package, packages / package.name, ignore=_NOT_VENDORED)
        try:
            packages.rename(folder)
        except OSError:  # another process vendored the same key first: same content
            if not folder.is_dir():
                raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return folder


def _run_deps(repo: Path, declared: Path, entries: list[dict[str, Any]], project: Path) -> Path:
    """``dbt deps`` on a copy of the project's configuration (local paths made absolute);
    returns the install folder it filled."""
    project.mkdir(parents=True)
    for name in ("dbt_project.yml", LOCK_FILE):
        if (repo / name).is_file():
            shutil.copyfile(repo / name, project / name)
    absolute = [
        {**e, "local": str((repo / str(e["local"])).resolve())} if e.get("local") else e
        for e in entries
    ]
    data = _read(declared) or {}
    (project / declared.name).write_text(
        _dump({**data, "packages": absolute} if isinstance(data, dict) else {"packages": absolute})
    )
    try:
        proc = subprocess.run(
            [dbt_executable(), "deps", "--project-dir", str(project)],
            cwd=project,
            env={**os.environ, "DO_NOT_TRACK": "1", "DBT_SEND_ANONYMOUS_USAGE_STATS": "false"},
            capture_output=True,
            text=True,
            timeout=DEPS_TIMEOUT_S,
            check=False,
        )
        failed = proc.returncode != 0
        output = proc.stdout + proc.stderr
    except subprocess.TimeoutExpired:
        failed, output = True, f"dbt deps timed out after {DEPS_TIMEOUT_S}s"
    folder = project / install_path(repo)
    if failed or len(_installed(folder)) < len(entries):
        raise PackagesError(
            f"{declared}: the project's {len(entries)} dbt package(s) are not installed in "
            f"{repo / install_path(repo)} and `dbt deps` could not install them "
            f"({_deps_error(output)}). Run `dbt deps` in the project where the packages' source "
            "is reachable (Benchforge vendors what it finds installed), or remove the packages "
            "the models do not use"
        )
    return folder


def _deps_error(output: str) -> str:
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    for line in reversed(lines):
        if "Error" in line or "error" in line:
            return line[-400:]
    return lines[-1][-400:] if lines else "no output"


def _dump(data: dict[str, Any]) -> str:
    return yaml.safe_dump(data, sort_keys=False)


def add_packages(repo: Path, dest: Path) -> None:
    """Copies ``repo``'s vendored packages into the copy of the project at ``dest``, in place
    of any installed there; nothing when the project declares none."""
    vendored = vendored_packages(repo)
    if vendored is not None:
        install_packages(vendored, dest, install_path(repo))


def install_packages(vendored: Path, dest: Path, where: str = DEFAULT_INSTALL_PATH) -> None:
    target = dest / where
    if target.is_symlink() or target.is_file():
        target.unlink()
    elif target.exists():
        shutil.rmtree(target)
    shutil.copytree(vendored, target)


_NOT_BUILT = shutil.ignore_patterns("target", "logs", ".git", "*.duckdb", "*.duckdb.wal")


def buildable(repo: Path, dest: Path) -> Path:
    """The project dbt should run: ``repo`` itself when it declares no packages, else a copy
    at ``dest`` with the vendored packages installed (the maintainer's own install folder is
    never used as is, and never written to)."""
    vendored = vendored_packages(repo)
    if vendored is None:
        return repo
    if dest.exists():
        shutil.rmtree(dest)
    where = install_path(repo)
    shutil.copytree(repo, dest, ignore=_NOT_BUILT)
    install_packages(vendored, dest, where)
    return dest
