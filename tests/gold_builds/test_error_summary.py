"""dbt's own error lines survive into reports: gold builds, ``dbt parse`` and scoring's
candidate errors (which used to say only "dbt run: Runtime Error")."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchforge.evaluation.dbt.errors import dbt_error_summary
from benchforge.evaluation.dbt.project import DbtProjectError, parse_project
from benchforge.evaluation.dbt.runner import DbtInvocation
from benchforge.evaluation.de.scoring import _last_error
from tests.gold_builds.project import write_project

MISSING_PROFILE = """\x1b[0m23:22:53  Running with dbt=1.11.16
\x1b[0m23:22:53  Encountered an error:
Runtime Error
  Could not find profile named 'shop_local'
"""

MODEL_FAILED = """23:23:12  4 of 7 START sql table model main.bad_sql ...................... [RUN]
23:23:12  4 of 7 ERROR creating sql table model main.bad_sql ............. [ERROR in 0.03s]
23:23:12  Finished running 1 seed, 6 table models in 0 hours 0 minutes and 0.49 seconds.
23:23:12
23:23:12  Completed with 2 errors, 0 partial successes, and 0 warnings:
23:23:12
23:23:12  Failure in model bad_sql (models/staging/bad_sql.sql)
23:23:12    Runtime Error in model bad_sql (models/staging/bad_sql.sql)
  Binder Error: Referenced column "nonexistent_col" not found in FROM clause!
  Candidate bindings: "id"

  LINE 10:       select nonexistent_col from "gold"."main"."stg_orders"
                        ^
23:23:12
23:23:12    compiled code at /tmp/w2/target/compiled/shop/models/staging/bad_sql.sql
23:23:12
23:23:12  Failure in test unique_stg_orders_country (models/staging/_t.yml)
23:23:12    Got 1 result, configured to fail if != 0
23:23:12
23:23:12  Done. PASS=5 WARN=0 ERROR=2 SKIP=0 NO-OP=0 TOTAL=7
"""

PARSING = """23:23:52  Encountered an error:
Parsing Error
  Error reading shop: staging/_t.yml - Runtime Error
    Syntax error near line 4
    ------------------------------
    1  | version: 2
"""


def invocation(output: str, returncode: int = 1) -> DbtInvocation:
    return DbtInvocation(
        command=["dbt", "run"],
        returncode=returncode,
        seconds=1.0,
        target_dir=Path("/nonexistent"),
        results=[],
        log_tail=output,
    )


def test_the_heading_keeps_its_reason() -> None:
    assert dbt_error_summary(invocation(MISSING_PROFILE)) == (
        "Runtime Error: Could not find profile named 'shop_local'"
    )
    assert dbt_error_summary(invocation(MODEL_FAILED)) == (
        "Runtime Error in model bad_sql (models/staging/bad_sql.sql): Binder Error: "
        'Referenced column "nonexistent_col" not found in FROM clause! Candidate bindings: "id"; '
        "Failure in test unique_stg_orders_country (models/staging/_t.yml): "
        "Got 1 result, configured to fail if != 0"
    )
    assert dbt_error_summary(invocation(PARSING)) == (
        "Parsing Error: Error reading shop: staging/_t.yml - Runtime Error Syntax error near line 4"
    )


def test_no_heading_gives_the_last_lines_and_success_gives_nothing() -> None:
    crash = invocation("23:00:00  Running with dbt=1.11\nKilled\n", returncode=-9)
    assert dbt_error_summary(crash) == "Running with dbt=1.11; Killed"
    assert dbt_error_summary(invocation("", returncode=2)) == (
        "dbt exited with status 2 and no output"
    )
    assert dbt_error_summary(invocation("Done. PASS=3 WARN=0 ERROR=0", returncode=0)) == ""


def test_scoring_reports_the_reason_not_the_heading() -> None:
    """The candidate error of a failed ``dbt run`` used to be "Runtime Error" (or the
    "Done. PASS=..." line)."""
    assert "Could not find profile named 'shop_local'" in _last_error(invocation(MISSING_PROFILE))
    assert "nonexistent_col" in _last_error(invocation(MODEL_FAILED))


def test_parse_project_raises_with_dbt_line(tmp_path: Path) -> None:
    repo = write_project(
        tmp_path / "shop", {"models/orders_summary.sql": "select * from {{ ref('nope') }}\n"}
    )
    with pytest.raises(DbtProjectError) as err:
        parse_project(repo, tmp_path / "parse")
    assert "depends on a node named 'nope' which was not found" in str(err.value)
