"""The layers are import-linter contracts (`[tool.importlinter]` in pyproject.toml).

They pass on the checkout, and they catch a library importing a flow or Prefect: checked on a
throwaway package tree under the same configuration, so the contracts are seen to bite.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from tests.paths import REPO_ROOT

ROOT = REPO_ROOT
PYPROJECT = ROOT / "pyproject.toml"
CONFIG = tomllib.loads(PYPROJECT.read_text())["tool"]["importlinter"]
CONTRACTS = {contract["id"]: contract["name"] for contract in CONFIG["contracts"]}
LINT_IMPORTS = shutil.which("lint-imports", path=str(Path(sys.executable).parent))


def lint_imports(cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    assert LINT_IMPORTS, "lint-imports is not installed: pip install -e '.[dev]'"
    return subprocess.run(
        [LINT_IMPORTS, "--no-cache", "--no-logo", str(PYPROJECT)],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


def status(done: subprocess.CompletedProcess[str]) -> dict[str, str]:
    """Contract id -> KEPT or BROKEN, from the summary (a long name runs into its status)."""
    found = {}
    for cid, name in CONTRACTS.items():
        match = re.search(rf"^{re.escape(name)} ?(KEPT|BROKEN)\b", done.stdout, re.M)
        assert match, f"{name!r} not in the summary:\n{done.stdout}"
        found[cid] = match[1]
    return found


def broken(done: subprocess.CompletedProcess[str]) -> set[str]:
    return {cid for cid, state in status(done).items() if state == "BROKEN"}


def test_contracts_pass_on_the_checkout() -> None:
    done = lint_imports(ROOT)
    assert done.returncode == 0, done.stdout + done.stderr
    assert status(done) == dict.fromkeys(CONTRACTS, "KEPT"), done.stdout


def test_every_package_folder_is_seen_by_the_linter() -> None:
    # import-linter skips a folder without __init__.py (a namespace package), and every import
    # in it: every folder of Python modules in a root package must be a regular package.
    blind = [
        str(folder.relative_to(ROOT))
        for package in CONFIG["root_packages"]
        for folder in [ROOT / package, *(ROOT / package).rglob("*")]
        if folder.is_dir() and any(folder.glob("*.py")) and not (folder / "__init__.py").exists()
    ]
    assert not blind, blind


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """The root packages in miniature, each layer importing what it may, as today."""
    modules = {
        "benchforge/errors.py": "",
        # The CLI's lazy imports of flows and libraries: the contracts' one exception.
        "benchforge/cli.py": (
            "def main():\n    import agents.core, evaluation.core, flows.core, synthesis.core\n"
        ),
        "synthesis/core.py": "import benchforge.core.errors\n",
        "evaluation/core.py": "import benchforge.core.errors\n",
        "agents/core.py": "import benchforge.evaluation.core\nimport benchforge.synthesis.core\n",
        "flows/core.py": "import prefect\nimport prefect_dask\nimport benchforge.agents.core\n",
        "infra/core.py": "import prefect\nimport benchforge.flows.core\n",
    }
    for package in CONFIG["root_packages"]:
        (tmp_path / package).mkdir()
        (tmp_path / package / "__init__.py").write_text("")
    for path, text in modules.items():
        (tmp_path / path).write_text(text)
    return tmp_path


def lint_tree(tree: Path) -> subprocess.CompletedProcess[str]:
    # The throwaway tree comes first on the path, before the editable install of the checkout.
    return lint_imports(tree, env={**os.environ, "PYTHONPATH": str(tree)})


def test_the_miniature_tree_keeps_the_contracts(tree: Path) -> None:
    done = lint_tree(tree)
    assert done.returncode == 0, done.stdout + done.stderr
    assert not broken(done), done.stdout


def test_a_library_importing_a_flow_breaks_the_contracts(tree: Path) -> None:
    (tree / "evaluation" / "bad.py").write_text("import flows\n")
    done = lint_tree(tree)
    assert done.returncode != 0, done.stdout
    assert broken(done) == {"libraries-below-flows", "layers"}, done.stdout
    assert "benchforge.evaluation.bad -> flows" in done.stdout, done.stdout


def test_a_library_importing_prefect_breaks_the_contracts(tree: Path) -> None:
    (tree / "evaluation" / "bad.py").write_text("def run():\n    from prefect import flow\n")
    done = lint_tree(tree)
    assert done.returncode != 0, done.stdout
    assert broken(done) == {"no-prefect"}, done.stdout
    assert "benchforge.evaluation.bad -> prefect" in done.stdout, done.stdout


def test_an_upward_import_between_libraries_breaks_the_layers(tree: Path) -> None:
    (tree / "synthesis" / "bad.py").write_text("import benchforge.evaluation.core\n")
    done = lint_tree(tree)
    assert done.returncode != 0, done.stdout
    assert broken(done) == {"layers"}, done.stdout
    assert "benchforge.synthesis.bad -> benchforge.evaluation.core" in done.stdout, done.stdout
