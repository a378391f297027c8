"""A non-editable install: the wheel, in a fresh virtual environment, works from anywhere.

The wheel is built offline from a copy of the working tree (the files git tracks or would
track), installed with ``--no-deps`` into a new environment whose dependencies come from the
checkout's environment through a ``.pth`` line (a folder named there is put on ``sys.path``,
but the ``.pth`` files inside it, among them the checkout's editable finder, are not run).
Every command then runs from a folder outside the checkout: only the installed package, with
its task specs and gold repositories as package data, can serve it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import textwrap
import zipfile
from pathlib import Path

import pytest

from tests.paths import REPO_ROOT

pytestmark = pytest.mark.slow  # tests/README.md: the fast and the full loop

ROOT = REPO_ROOT
SHIPPED_TASKS = sorted(p.parent for p in (ROOT / "task_specs").rglob("task.yaml"))
# The top-level folders of the checkout: inside the wheel only as benchforge.<name>.
OLD_TOP_LEVEL = [
    "agents",
    "evaluation",
    "synthesis",
    "anonymize",
    "flows",
    "harness",
    "cli",
    "infra",
]


def checked(argv: list[str | Path], **kwargs: object) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [str(a) for a in argv],
        capture_output=True,
        text=True,
        **kwargs,  # type: ignore[call-overload]
    )
    assert done.returncode == 0, f"{argv}:\n{done.stdout}\n{done.stderr}"
    return done  # type: ignore[no-any-return]


def source_tree(dest: Path) -> Path:
    """The working tree as a fresh clone plus uncommitted work would have it: what git tracks
    or would track (nothing ignored: no build/, .venv, artifacts), links kept as links."""
    listed = checked(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT
    ).stdout
    for name in filter(None, listed.split("\0")):
        source, target = ROOT / name, dest / name
        if not source.exists() and not source.is_symlink():
            continue  # deleted in the working tree, not yet in the index
        target.parent.mkdir(parents=True, exist_ok=True)
        if source.is_symlink():
            target.symlink_to(os.readlink(source))
        elif source.is_file():
            shutil.copy2(source, target)
    return dest


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel, built offline (no build isolation: setuptools from this environment)."""
    tmp = tmp_path_factory.mktemp("wheel")
    source = source_tree(tmp / "src")
    out = tmp / "dist"
    pip_wheel = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation"]
    checked([*pip_wheel, "--no-index", "--quiet", "--wheel-dir", out, source], cwd=tmp, timeout=300)
    [built] = out.glob("benchforge-*.whl")
    return built


@pytest.fixture(scope="module")
def venv(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh environment holding the wheel; its dependencies are the checkout's."""
    env = tmp_path_factory.mktemp("venv") / "env"
    checked([sys.executable, "-m", "venv", "--without-pip", env], timeout=120)
    python = env / "bin" / "python"
    purelib = "import sysconfig; print(sysconfig.get_paths()['purelib'])"
    site = Path(checked([python, "-c", purelib]).stdout.strip())
    (site / "checkout_dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    pip_install = [sys.executable, "-m", "pip", "--python", python, "install", "--no-deps", "-q"]
    checked([*pip_install, "--no-index", "--disable-pip-version-check", wheel], timeout=300)
    return env


def clean_env(venv: Path, home: Path) -> dict[str, str]:
    """No trace of the checkout: no PYTHONPATH, no Benchforge or Prefect settings from the
    test session; the fresh environment's scripts first; Prefect's home in ``home``."""
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")
        and not k.startswith(("BENCHFORGE_", "PREFECT_"))
    }
    env["PATH"] = os.pathsep.join([str(venv / "bin"), "/usr/local/bin", "/usr/bin", "/bin"])
    env["PREFECT_HOME"] = str(home / "prefect")
    env["PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS"] = "120"
    env["HOME"] = str(home)
    return env


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A working directory outside the checkout."""
    cwd = tmp_path / "elsewhere"
    cwd.mkdir()
    assert ROOT not in cwd.resolve().parents
    return cwd


def run_in(venv: Path, cwd: Path, argv: list[str | Path], timeout: int = 600) -> str:
    env = clean_env(venv, cwd.parent)
    return checked(argv, cwd=cwd, env=env, timeout=timeout).stdout


def test_the_wheel_holds_one_namespace_and_its_data(wheel: Path) -> None:
    names = zipfile.ZipFile(wheel).namelist()
    tops = {name.split("/")[0] for name in names}
    assert tops == {"benchforge", wheel.name.split("-py3")[0] + ".dist-info"}, tops
    for folder in ("task_specs", "dbt_projects"):
        shipped = {
            name.removeprefix(f"benchforge/{folder}/")
            for name in names
            if name.startswith(f"benchforge/{folder}/")
        }
        source = {
            str(p.relative_to(ROOT / folder))
            for p in (ROOT / folder).rglob("*")
            if p.is_file()
            and "__pycache__" not in p.parts
            and p.name != ".sqlfluff"  # lint configuration of the checkout
            and not {"target", "logs"} & set(p.relative_to(ROOT / folder).parts[1:2])
        }
        assert source - shipped == set(), f"{folder}: not in the wheel"


def test_the_installed_package_is_the_wheel(venv: Path, outside: Path) -> None:
    code = textwrap.dedent(
        """
        import importlib.util, json, sys
        import benchforge.agents, benchforge.flows
        print(json.dumps({
            "benchforge": benchforge.agents.__file__,
            "flows": benchforge.flows.__file__,
            "old": {n: importlib.util.find_spec(n) is not None for n in sys.argv[1:]},
            "editable": [type(f).__name__ for f in sys.meta_path if "ditable" in type(f).__name__],
            "modules": sorted(m for m in sys.modules if "editable" in m),
        }))
        """
    )
    found = json.loads(run_in(venv, outside, [venv / "bin" / "python", "-c", code, *OLD_TOP_LEVEL]))
    site = venv.resolve()
    assert Path(found["benchforge"]).resolve().is_relative_to(site), found
    assert Path(found["flows"]).resolve().is_relative_to(site), found
    assert found["old"] == dict.fromkeys(OLD_TOP_LEVEL, False), found
    assert found["editable"] == [] and found["modules"] == [], found  # the checkout's finder
    for name in ("agents", "flows"):
        imported = subprocess.run(
            [venv / "bin" / "python", "-c", f"import {name}"],
            cwd=outside,
            env=clean_env(venv, outside.parent),
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert imported.returncode != 0 and "ModuleNotFoundError" in imported.stderr, imported


def test_task_validate_finds_every_shipped_task(venv: Path, outside: Path) -> None:
    out = run_in(venv, outside, [venv / "bin" / "benchforge", "task", "validate"])
    assert f"{len(SHIPPED_TASKS)} task(s) valid" in out, out
    assert len(SHIPPED_TASKS) >= 20
    valid = [line for line in out.splitlines() if line.startswith("ok  ")]
    assert len(valid) == len(SHIPPED_TASKS), out
    site = str(venv.resolve())
    assert all(site in line for line in valid), out  # the installed task specs


def test_the_shipped_anonymization_policies_are_installed(venv: Path, outside: Path) -> None:
    out = run_in(venv, outside, [venv / "bin" / "benchforge", "policy", "list"])
    assert out.split() == ["ads", "crm", "enterprise"], out
    schema = run_in(venv, outside, [venv / "bin" / "benchforge", "policy", "schema"])
    assert json.loads(schema)["title"] == "AnonymizationPolicy"


def test_synth_runs_on_prefect_from_anywhere(venv: Path, outside: Path) -> None:
    out_dir = outside / "crm"
    run_in(
        venv,
        outside,
        [venv / "bin" / "benchforge", "synth", "crm", "--scale", "0.01", "--out", out_dir],
    )
    assert (out_dir / "dataset.json").is_file(), sorted(out_dir.iterdir())
    assert list(out_dir.rglob("*.parquet")), sorted(out_dir.iterdir())
    assert (outside.parent / "prefect").is_dir()  # the flow ran on this Prefect home


# -- the sandbox hides the installed package ----------------------------------------------------

SANDBOXED = """
import json, os, sys
from pathlib import Path

from benchforge.core.catalogue import PACKAGE_ROOT, catalogue
from benchforge.core.sandbox import NamespaceBackend, SandboxRequest
from benchforge.core.sandbox.namespace import runtime_paths

backend = NamespaceBackend()
caps = backend.capabilities()
if not caps.usable:
    print(json.dumps({"unusable": caps.reason}))
    sys.exit(0)
gold = PACKAGE_ROOT / "dbt_projects" / "crm" / "dbt_project.yml"
stdlib = Path(os.__file__)
read = (
    "import sys\\n"
    "for p in sys.argv[1:]:\\n"
    "    try:\\n"
    "        open(p).read(); print(p, 'READ')\\n"
    "    except OSError as exc:\\n"
    "        print(p, 'DENIED', type(exc).__name__)\\n"
)
ws = Path(sys.argv[1])
argv = [sys.executable, "-c", read, str(gold), str(stdlib)]
# installed beside the package, in the same site-packages: still visible
site = next(PACKAGE_ROOT.parent.glob("benchforge-*.dist-info")) / "METADATA"
argv.append(str(site))
shown = backend.run(SandboxRequest(argv=argv, workspace=ws))
hidden = backend.run(SandboxRequest(argv=argv, workspace=ws, hidden=catalogue().protected()))
print(json.dumps({
    "gold": str(gold),
    "stdlib": str(stdlib),
    "site": str(site),
    "runtime": [str(p) for p in runtime_paths()],
    "protected": [str(p) for p in catalogue().protected()],
    "shown": [shown.returncode, shown.stdout, shown.stderr],
    "hidden": [hidden.returncode, hidden.stdout, hidden.stderr],
}))
"""


def test_a_sandbox_cannot_read_the_installed_gold_repositories(venv: Path, outside: Path) -> None:
    """Installed, the gold repositories lie in the interpreter's tree, which every sandbox
    sees read-only. The sandbox hides the installed package in every request (the plain
    request), and the catalogue's protected folders name it too (the run's hidden paths)."""
    ws = outside / "ws"
    ws.mkdir()
    found = json.loads(run_in(venv, outside, [venv / "bin" / "python", "-c", SANDBOXED, ws]))
    if "unusable" in found:
        message = f"namespace sandbox unavailable: {found['unusable']}"
        if os.environ.get("BENCHFORGE_ALLOW_NO_NAMESPACES") == "1":
            pytest.skip(message)
        pytest.fail(message + " (set BENCHFORGE_ALLOW_NO_NAMESPACES=1 to accept)")
    gold, stdlib = found["gold"], found["stdlib"]
    # The package data lies inside a read-only exposure of the sandbox (the environment) ...
    assert any(Path(gold).is_relative_to(p) for p in found["runtime"]), found
    assert any(Path(gold).is_relative_to(p) for p in found["protected"]), found
    # ... yet a request that hides nothing cannot read it, while a package installed beside
    # it in the same site-packages can be read (the control) ...
    assert found["shown"][0] == 0, found["shown"]
    assert f"{gold} DENIED" in found["shown"][1], found["shown"]
    assert f"{found['site']} READ" in found["shown"][1], found["shown"]
    # ... and with the run's hidden paths too, while the rest of the interpreter's tree is read.
    assert found["hidden"][0] == 0, found["hidden"]
    assert f"{gold} DENIED" in found["hidden"][1], found["hidden"]
    assert f"{stdlib} READ" in found["hidden"][1], found["hidden"]
