"""The layers are import-linter contracts (`[tool.importlinter]` in pyproject.toml).

They pass on the checkout, and they bite: the same configuration, run on a throwaway
``benchforge`` tree that keeps the rules, reports each kind of violation put into it (a library
importing a flow, a library importing Prefect, a lower layer importing a higher one).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import grimp
import pytest

import benchforge
from tests.paths import REPO_ROOT

ROOT = REPO_ROOT
PYPROJECT = ROOT / "pyproject.toml"
CONFIG = tomllib.loads(PYPROJECT.read_text())["tool"]["importlinter"]
CONTRACTS = {contract["id"]: contract["name"] for contract in CONFIG["contracts"]}
LAYERS = next(c for c in CONFIG["contracts"] if c["id"] == "layers")["layers"]
LINT_IMPORTS = shutil.which("lint-imports", path=str(Path(sys.executable).parent))
# Where Prefect may be imported; everything else is a library or the foundation.
PREFECT_PACKAGES = ("benchforge.flows", "benchforge.cli", "benchforge.infra")
# Package data under the namespace, not Python packages (payload scripts, dbt repositories).
DATA_FOLDERS = {"task_specs", "dbt_projects"}


def lint_imports(
    config: Path, cwd: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    assert LINT_IMPORTS, "lint-imports is not installed: pip install -e '.[dev]'"
    return subprocess.run(
        [LINT_IMPORTS, "--no-cache", "--no-logo", str(config)],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def status(done: subprocess.CompletedProcess[str]) -> dict[str, str]:
    """Contract id -> KEPT or BROKEN, from the summary (a long name runs into its status)."""
    found = {}
    for cid, name in CONTRACTS.items():
        match = re.search(rf"^{re.escape(name)} ?(KEPT|BROKEN)\b", done.stdout, re.M)
        assert match, f"{name!r} not in the summary:\n{done.stdout}{done.stderr}"
        found[cid] = match[1]
    return found


def broken(done: subprocess.CompletedProcess[str]) -> set[str]:
    return {cid for cid, state in status(done).items() if state == "BROKEN"}


def subpackages(root: Path) -> list[str]:
    """The packages directly under ``root/benchforge`` (through its links), data folders aside."""
    package = root / "benchforge"
    return sorted(
        f"benchforge.{p.name}"
        for p in package.iterdir()
        if p.is_dir() and p.name not in DATA_FOLDERS and (p / "__init__.py").exists()
    )


# -- the checkout -------------------------------------------------------------------------------


def test_contracts_pass_on_the_checkout() -> None:
    done = lint_imports(PYPROJECT, ROOT)
    assert done.returncode == 0, done.stdout + done.stderr
    assert status(done) == dict.fromkeys(CONTRACTS, "KEPT"), done.stdout


def test_every_package_is_in_a_layer() -> None:
    """A new package (anonymize, ...) must be placed in the layers, or it escapes them."""
    layered = {name.strip() for layer in LAYERS for name in layer.split("|")}
    assert set(subpackages(ROOT)) == layered, (subpackages(ROOT), sorted(layered))


def test_every_package_folder_is_seen_by_the_linter() -> None:
    # import-linter skips a folder without __init__.py (a namespace package), and every import
    # in it: every folder of Python modules in the namespace must be a regular package. The
    # top-level folders are linked into benchforge/, so the walk follows links.
    blind = []
    for folder, dirs, files in os.walk(ROOT / "benchforge", followlinks=True):
        dirs[:] = [d for d in dirs if d not in DATA_FOLDERS and d != "__pycache__"]
        if any(f.endswith(".py") for f in files) and "__init__.py" not in files:
            blind.append(str(Path(folder).relative_to(ROOT)))
    assert not blind, blind


def test_only_flows_cli_and_infra_import_prefect() -> None:
    """Every module of the namespace, not only those the contract lists: none outside flows,
    the CLI and infra imports Prefect (directly; the contract also forbids chains)."""
    graph = grimp.build_graph("benchforge", include_external_packages=True, cache_dir=None)
    # The graph is built from the checkout the tests run on (editable install or not).
    assert Path(benchforge.__file__ or "").resolve().parent == ROOT / "benchforge"
    importers = {
        module
        for external in ("prefect", "prefect_dask")
        if external in graph.modules
        for module in graph.find_modules_that_directly_import(external)
    }
    assert importers, "no module imports Prefect: is the graph built from the checkout?"
    outside = sorted(m for m in importers if not m.startswith(PREFECT_PACKAGES))
    assert not outside, outside


# -- a throwaway tree under the same configuration ----------------------------------------------

# Each package imports what the layers allow it (and flows, the CLI and infra import Prefect).
ALLOWED = {
    "core": "",
    "synthesis": "import benchforge.core.mod\n",
    "evaluation": "import benchforge.core.mod\n",
    "anonymize": "import benchforge.core.mod\n",
    "agents": "import benchforge.evaluation.mod\nimport benchforge.synthesis.mod\n",
    "harness": "import benchforge.agents.mod\n",
    "flows": "import prefect\nimport prefect_dask\nimport benchforge.harness.mod\n",
    "infra": "import prefect\nimport benchforge.flows.mod\n",
    # The CLI's lazy imports of the flows, as in the real one.
    "cli": "import prefect\n\n\ndef main():\n    import benchforge.flows.mod\n",
}


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """``benchforge`` in miniature with the real pyproject.toml (its contracts verbatim), plus
    stand-ins for Prefect so the graph does not depend on what is installed."""
    (tmp_path / "benchforge").mkdir()
    (tmp_path / "benchforge" / "__init__.py").write_text("")
    for package, imports in ALLOWED.items():
        (tmp_path / "benchforge" / package).mkdir()
        (tmp_path / "benchforge" / package / "__init__.py").write_text("")
        (tmp_path / "benchforge" / package / "mod.py").write_text(imports)
    for external in ("prefect", "prefect_dask"):
        (tmp_path / external).mkdir()
        (tmp_path / external / "__init__.py").write_text("def flow(fn):\n    return fn\n")
    shutil.copy(PYPROJECT, tmp_path / "pyproject.toml")
    assert subpackages(tmp_path) == subpackages(ROOT), "the miniature misses a real package"
    return tmp_path


def lint_tree(tree: Path) -> subprocess.CompletedProcess[str]:
    # The throwaway tree comes first on the path, before the install of the checkout; the
    # reports below name its modules (bad.py exists only there), so it is the tree that is read.
    env = {**os.environ, "PYTHONPATH": str(tree)}
    return lint_imports(tree / "pyproject.toml", tree, env=env)


def test_the_miniature_tree_keeps_the_contracts(tree: Path) -> None:
    done = lint_tree(tree)
    assert done.returncode == 0, done.stdout + done.stderr
    assert not broken(done), done.stdout


@pytest.mark.parametrize("library", ["evaluation", "synthesis", "agents", "harness"])
def test_a_library_importing_a_flow_breaks_the_contracts(tree: Path, library: str) -> None:
    (tree / "benchforge" / library / "bad.py").write_text("import benchforge.flows.mod\n")
    done = lint_tree(tree)
    assert done.returncode != 0, done.stdout
    # Upward into flows, and through flows to Prefect (indirect imports count).
    assert broken(done) == {"layers", "no-prefect"}, done.stdout
    assert f"benchforge.{library}.bad -> benchforge.flows.mod" in done.stdout, done.stdout


@pytest.mark.parametrize("library", ["core", "evaluation", "synthesis", "agents", "harness"])
def test_a_library_importing_prefect_breaks_the_contracts(tree: Path, library: str) -> None:
    # Inside a function: a lazy import is an import all the same.
    (tree / "benchforge" / library / "bad.py").write_text(
        "def run():\n    from prefect import flow\n"
    )
    done = lint_tree(tree)
    assert done.returncode != 0, done.stdout
    assert broken(done) == {"no-prefect"}, done.stdout
    assert f"benchforge.{library}.bad -> prefect" in done.stdout, done.stdout


LAYERS_ONLY = {"layers"}
# harness sits under the no-prefect contract, and flows imports Prefect: both break.
AND_PREFECT = {"layers", "no-prefect"}


@pytest.mark.parametrize(
    ("lower", "higher", "expected"),
    [
        ("core", "synthesis", LAYERS_ONLY),  # the foundation importing a library
        ("synthesis", "agents", LAYERS_ONLY),
        ("agents", "harness", LAYERS_ONLY),
        ("harness", "flows", AND_PREFECT),
        ("flows", "cli", LAYERS_ONLY),
        ("evaluation", "synthesis", LAYERS_ONLY),  # independent siblings in one layer
    ],
)
def test_a_lower_layer_importing_a_higher_one_breaks_the_layers(
    tree: Path, lower: str, higher: str, expected: set[str]
) -> None:
    (tree / "benchforge" / lower / "bad.py").write_text(f"import benchforge.{higher}.mod\n")
    done = lint_tree(tree)
    assert done.returncode != 0, done.stdout
    assert broken(done) == expected, done.stdout
    assert f"benchforge.{lower}.bad -> benchforge.{higher}.mod" in done.stdout, done.stdout
