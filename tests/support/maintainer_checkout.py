"""A gold dbt project as a maintainer keeps it: a git checkout, a notebook whose cells write
every model, a load script and a solution note quoting a mart, a README, raw data, an image and
a style guide. Everything a careless workspace would hand an agent."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

QUOTED_MART = "models/marts/fct_won_revenue_by_country.sql"


def _git(repo: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
        cwd=repo,
        check=True,
        capture_output=True,
    )


def maintainer_checkout(gold: Path, dest: Path) -> Path:
    """``gold`` copied to ``dest`` with the leaks planted and committed."""
    shutil.copytree(gold, dest)
    models = sorted((dest / "models").rglob("*.sql"))
    cells = [
        {
            "cell_type": "code",
            "metadata": {},
            "source": [f"%%writefile {m.relative_to(dest)}\n", *m.read_text().splitlines(True)],
        }
        for m in models
    ]
    (dest / "build_models.ipynb").write_text(json.dumps({"cells": cells, "nbformat": 4}))
    (dest / "scripts").mkdir()
    mart = (dest / QUOTED_MART).read_text()
    (dest / "scripts" / "load.py").write_text(f'MART_SQL = """\n{mart}"""\nprint(MART_SQL)\n')
    (dest / "README.md").write_text("# Mini CRM\n\nRun `dbt build`.\n")
    (dest / "data").mkdir()
    (dest / "data" / "accounts.csv").write_text("account_id;country\nA1;DE\n")
    (dest / "lineage.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    (dest / "docs").mkdir()
    (dest / "docs" / "style.md").write_text("Use CTEs named after their source.\n")
    (dest / "docs" / "solution.md").write_text(
        f"fct_won_revenue_by_country:\n\n```sql\n{mart}```\n"
    )
    _git(dest, "init", "-q")
    _git(dest, "add", "-A")
    _git(dest, "commit", "-qm", "gold")
    return dest
