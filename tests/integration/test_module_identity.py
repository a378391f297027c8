"""One path per module: the code lives in benchforge/, the top-level folders are links into it,
and a package refuses to be imported under any name but its own (README, "What is here")."""

import subprocess
import sys

import pytest

from tests.paths import REPO_ROOT

PACKAGES = ["agents", "anonymize", "cli", "evaluation", "flows", "harness", "infra", "synthesis"]


@pytest.mark.parametrize("name", PACKAGES)
def test_a_top_level_folder_is_a_link_into_benchforge(name: str) -> None:
    folder = REPO_ROOT / name
    assert folder.is_symlink()
    assert folder.resolve() == (REPO_ROOT / "benchforge" / name).resolve()
    assert not (REPO_ROOT / "benchforge" / name).is_symlink()


def test_importing_a_package_by_its_folder_name_fails_with_the_root_on_the_path() -> None:
    script = (
        "import sys\n"
        f"sys.path.insert(0, {str(REPO_ROOT)!r})\n"
        "failed = []\n"
        f"for name in {PACKAGES!r}:\n"
        "    try:\n"
        "        __import__(name)\n"
        "    except ImportError as error:\n"
        "        failed.append(str(error))\n"
        "print('\\n'.join(failed))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, cwd=REPO_ROOT
    ).stdout.splitlines()
    assert out == [f"import benchforge.{name}, not {name}" for name in PACKAGES]


def test_every_module_file_is_under_benchforge() -> None:
    import benchforge.agents.registry
    import benchforge.evaluation.families
    import benchforge.harness.store

    for module in (
        benchforge.agents.registry,
        benchforge.evaluation.families,
        benchforge.harness.store,
    ):
        path = module.__file__
        assert path is not None
        assert path.startswith(str(REPO_ROOT / "benchforge") + "/"), path
