"""The README walkthrough "Bring your own dbt project", run as written on a maintainer's
material the test writes itself (tests/integration/byo_project.py): CSV exports imported, a dbt
project with its own profile, a seed, marts under models/reporting/, views, an ephemeral model,
a local package it never installed, a notebook and its git history, built as the gold; a
de_impl and a de_evol task scaffolded, validated, verified with mutations, run with the oracle
and null agents, reported and catalogued. Then: the workspace ships none of the answers, a
correct solution with another query plan scores 100, and a mutation that changes no output is
refused. Nothing is hand-written JSON, and the maintainer's dbt project is never written to."""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
from pathlib import Path

import pytest

from tests.integration.byo_project import NO_OP_MUTATION, write_other_plan, write_shop
from tests.paths import REPO_ROOT

pytestmark = pytest.mark.slow  # tests/README.md: the fast and the full loop

SECTION = "## Bring your own dbt project"


def walkthrough_commands() -> list[str]:
    """The bash commands of the README section, in order (comments stripped)."""
    readme = (REPO_ROOT / "README.md").read_text()
    section = readme.split(SECTION, 1)[1].split("\n## ", 1)[0]
    block = re.search(r"```bash\n(.*?)```", section, flags=re.S)
    assert block, f"no bash block under {SECTION!r}"
    return [
        line.split("  #")[0].strip()
        for line in block.group(1).splitlines()
        if line.split("  #")[0].strip()
    ]


def _tree_digest(folder: Path) -> dict[str, str]:
    return {
        p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def test_walkthrough_runs_end_to_end(tmp_path: Path) -> None:
    write_shop(tmp_path)
    project_before = _tree_digest(tmp_path / "shop_dbt")
    env = {
        **os.environ,
        "BENCHFORGE_ARTIFACT_ROOT": str(tmp_path / "artifacts"),
        "BENCHFORGE_CACHE_DIR": str(tmp_path / "cache"),
    }
    outputs: dict[str, str] = {}
    for command in walkthrough_commands():
        proc = subprocess.run(
            ["bash", "-c", command],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=900,
            check=False,
        )
        assert proc.returncode == 0, f"{command}\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
        assert "Traceback" not in proc.stderr, f"{command}\n{proc.stderr[-3000:]}"
        outputs[command] = proc.stdout

    def output(prefix: str) -> str:
        return next(out for cmd, out in outputs.items() if cmd.startswith(prefix))

    record = json.loads((tmp_path / "datasets" / "shop" / "dataset.json").read_text())
    assert record["origin"] == "imported" and record["total_rows"] == 60 + 20 + 240 + 480
    assert "gold shop: 6 models, 4 tests, 1 seeds" in output("benchforge gold build")
    assert "2 task(s) valid" in output("benchforge task validate")
    verified = output("benchforge task verify")
    assert "ok  de-shop/shop-impl@1: gold 100/100/100, empty 0/0/0, mutations 6/6" in verified
    assert (
        "ok  de-shop/shop-evol-margin@1: gold 100/100/100, empty 0/0/0, mutations 1/1" in verified
    )
    report = output("benchforge report")
    assert re.search(r"\| 1 \| oracle \| - \| 100\.0 \| 100\.0% \| 2/2 \|", report), report
    assert re.search(r"\| 2 \| null \| - \| 0\.0 \| 0\.0% \| 2/2 \|", report), report
    page = (tmp_path / "catalogue.html").read_text()
    assert "shop-impl" in page and "shop-evol-margin" in page and "datasets/shop" in page
    contract = (tmp_path / "task_specs/de-shop/shop-impl/data_contract.yaml").read_text()
    assert "inlined_ephemeral:\n- int_customer_regions" in contract

    def run(command: str, ok: bool = True) -> subprocess.CompletedProcess[str]:
        proc = subprocess.run(
            ["bash", "-c", command], cwd=tmp_path, env=env, capture_output=True, text=True
        )
        assert (proc.returncode == 0) == ok, (
            f"{command}\n{proc.stdout[-3000:]}{proc.stderr[-3000:]}"
        )
        return proc

    # What an agent receives: configuration, sources, the seed and the vendored package; no
    # git history, no notebook, no model, nothing quoting one.
    run("benchforge task workspace task_specs/de-shop/shop-impl --out workspace")
    workspace = tmp_path / "workspace"
    shipped = _tree_digest(workspace)
    assert "repo/dbt_packages/shop_macros/macros/safe_divide.sql" in shipped
    assert "repo/packages.yml" in shipped and "repo/seeds/country_regions.csv" in shipped
    assert not [f for f in shipped if ".git" in f.split("/") or f.endswith(".ipynb")]
    assert not [f for f in shipped if f.startswith("repo/models/") and f.endswith(".sql")]
    texts = " ".join(p.read_text() for p in workspace.rglob("*") if p.is_file())
    assert "lifetime_revenue" not in texts.replace("name: lifetime_revenue", "")
    # A correct solution written another way (float sums in other orders, avg for the
    # gold's macro, no ephemeral model) scores full marks.
    write_other_plan(workspace / "repo")
    scored = run(
        "benchforge score de --task task_specs/de-shop/shop-impl --candidate workspace/repo "
        "--report other-plan.json"
    )
    assert "CS 100.00 / CFS 100.00 / SR 100" in scored.stdout, scored.stdout
    # A mutation whose output equals the gold's is refused, computed on the data.
    (tmp_path / "task_specs/mutations/shop.yaml").write_text(NO_OP_MUTATION)
    refused = run("benchforge task verify task_specs/de-shop/shop-impl --no-hacks", ok=False)
    said = refused.stdout + refused.stderr
    assert "mutation orders-without-null-ids: stg_orders still produces the gold output" in said

    # the maintainer's project is as they wrote it: no target/, no database, no edits
    assert _tree_digest(tmp_path / "shop_dbt") == project_before
    assert not list(tmp_path.glob("*.duckdb"))
