"""The commands that run flows on a slow machine: Prefect's ephemeral server gets a start-up
timeout that suits one (unless the user set theirs), a start that still times out is retried
once and then ends the command with one line, not a traceback; and the stages that have
``--no-prefect`` (anonymize, gold build) run their steps with no Prefect API at all."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from benchforge.cli.prefect_server import STARTUP_TIMEOUT_S, STARTUP_TIMEOUT_SETTING
from benchforge.synthesis.dataset import build_dataset
from benchforge.synthesis.spec import load_spec
from tests.paths import FIXTURES, REPO_ROOT
from tests.support.datasets import write_dataset

pytestmark = pytest.mark.slow  # tests/README.md: the fast and the full loop

SECRET = "prefect-server-test-secret-0123456789"


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    """This session's environment without a Prefect API or a start-up timeout, with a fresh
    Prefect home (no profile setting it either) and artifact root."""
    unset = ("PREFECT_API_URL", STARTUP_TIMEOUT_SETTING)
    env = {k: v for k, v in os.environ.items() if k not in unset}
    home = tmp_path / "prefect-home"
    home.mkdir(exist_ok=True)
    env.update(
        PREFECT_HOME=str(home),
        BENCHFORGE_ARTIFACT_ROOT=str(tmp_path / "artifacts"),
        BENCHFORGE_ANON_SECRET=SECRET,
    )
    env.update(extra)
    return env


def _benchforge(
    *args: str, env: dict[str, str], timeout: int = 600
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "benchforge.cli", *args],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        env=env,
        timeout=timeout,
        check=False,
    )


def _no_api(tmp_path: Path) -> dict[str, str]:
    """An environment where any use of Prefect's API fails: no API URL, no ephemeral server."""
    return _env(tmp_path, PREFECT_SERVER_EPHEMERAL_ENABLED="false")


# --- the start-up timeout ----------------------------------------------------------------------

TIMEOUT_SEEN = (
    "from benchforge.cli.prefect_server import use_prefect\n"
    "use_prefect(False, start=False)\n"
    "from prefect.settings import PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS as T\n"
    "print(T.value())\n"
)


def _timeout_seen(tmp_path: Path, env: dict[str, str]) -> int:
    """The timeout Prefect's own (lazy) start would use in a command's process."""
    done = subprocess.run(
        [sys.executable, "-c", TIMEOUT_SEEN],
        cwd=tmp_path,  # no prefect.toml, .env or pyproject.toml of the user's here
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return int(done.stdout.strip())


def test_the_raised_timeout_applies_when_the_user_set_none(tmp_path: Path) -> None:
    assert STARTUP_TIMEOUT_S >= 90  # Prefect's default is 20 s
    assert _timeout_seen(tmp_path, _env(tmp_path)) == STARTUP_TIMEOUT_S


def test_a_timeout_the_user_set_is_kept(tmp_path: Path) -> None:
    assert _timeout_seen(tmp_path, _env(tmp_path, **{STARTUP_TIMEOUT_SETTING: "45"})) == 45
    # ... in a Prefect profile too, even at Prefect's default value
    env = _env(tmp_path)
    (Path(env["PREFECT_HOME"]) / "profiles.toml").write_text(
        'active = "slow"\n\n[profiles.slow]\nPREFECT_SERVER_EPHEMERAL_ENABLED = "true"\n'
        f'{STARTUP_TIMEOUT_SETTING} = "20"\n'
    )
    assert _timeout_seen(tmp_path, env) == 20


# --- a server that does not start ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("command", "has_no_prefect"),
    [
        (["anonymize", "crm", "--scale", "0.1", "--no-progress"], True),
        (["nightly", "--date", "2024-01-01", "--kind", "de"], False),
    ],
    ids=["anonymize", "nightly"],
)
def test_a_server_that_never_starts_is_retried_then_one_line(
    tmp_path: Path, command: list[str], has_no_prefect: bool
) -> None:
    """A 1 s timeout: no start can make it (a fresh database takes seconds), so both tries
    time out; the command ends before any work, with one line that says what to do."""
    done = _benchforge(*command, env=_env(tmp_path, **{STARTUP_TIMEOUT_SETTING: "1"}))
    assert done.returncode != 0
    assert "Traceback" not in done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    line = lines[0]
    assert line.startswith("benchforge: error: Prefect's ephemeral API server did not start")
    assert "within 1 s (tried twice)" in line
    assert STARTUP_TIMEOUT_SETTING in line and "PREFECT_API_URL" in line
    assert ("--no-prefect" in line) is has_no_prefect
    assert not (tmp_path / "artifacts").exists()  # nothing was synthesized or written


LEFT_BEHIND = (
    "import psutil\n"
    "from benchforge.cli.prefect_server import PrefectUnavailable, start_api\n"
    "try:\n"
    "    start_api(1)\n"
    "except PrefectUnavailable as err:\n"
    "    print(err)\n"
    "print([p.pid for p in psutil.Process().children(recursive=True)])\n"
)


def test_a_failed_start_leaves_no_server_behind(tmp_path: Path) -> None:
    """Prefect leaves a timed-out server process running; each try's is stopped before the
    next, so none is left when the command gives up."""
    done = subprocess.run(
        [sys.executable, "-c", LEFT_BEHIND],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env=_env(tmp_path),
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    error, children = done.stdout.strip().splitlines()
    assert "did not start within 1 s (tried twice)" in error
    assert children == "[]"


# --- --no-prefect ---------------------------------------------------------------------------------

SHOP = {
    "customers": (
        "SELECT 'C' || lpad(i::VARCHAR, 4, '0') AS customer_id, "
        "'person' || i || '@mail.example' AS email, ['DE', 'FR', 'IT'][i % 3 + 1] AS country, "
        "(i * 37 % 1000)::DOUBLE AS revenue FROM range(200) r(i)"
    ),
    "orders": (
        "SELECT 'O' || lpad(i::VARCHAR, 5, '0') AS order_id, "
        "'C' || lpad((i % 200)::VARCHAR, 4, '0') AS customer_id, "
        "(i * 13 % 500)::DOUBLE / 10 AS amount FROM range(1000) r(i)"
    ),
}
SHOP_POLICY = """\
domain: shop
tables:
  customers:
    primary_key: customer_id
    columns:
      customer_id: pseudonymize
      email: {rule: fake, provider: email, pii: direct}
      country: keep
      revenue: {rule: perturb, method: lsd, min_relative_change: 0.02}
  orders:
    primary_key: order_id
    foreign_keys:
      customer_id: customers.customer_id
    columns:
      order_id: pseudonymize
      customer_id: pseudonymize
      amount: {rule: perturb, method: lsd}
thresholds:
  require_benchmark: false  # no gold dbt repository for 'shop'
"""


def test_anonymize_without_prefect_publishes_a_release(tmp_path: Path) -> None:
    """``benchforge anonymize --no-prefect`` end to end where Prefect's API cannot be reached:
    policy check, transform, report, thresholds and publication, as the flow runs them."""
    source = write_dataset(tmp_path / "shop", SHOP)
    policy = tmp_path / "shop-policy.yaml"
    policy.write_text(SHOP_POLICY)
    out = tmp_path / "release"
    done = _benchforge(
        "anonymize", str(source), "--policy", str(policy), "--out", str(out),
        "--verify-suite", "none", "--sample-rows", "200", "--no-progress", "--no-prefect",
        env=_no_api(tmp_path),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-4000:]
    assert f"release shop: 1,200 rows -> {out}" in done.stdout
    assert "RELEASE PASSED" in done.stdout and "leaked identifiers 0" in done.stdout
    assert (out / "dataset.json").is_file()
    assert (out / "report" / "release-report.json").is_file()
    with duckdb.connect(str(out / "warehouse.duckdb"), read_only=True) as con:
        released = con.execute("SELECT customer_id, email FROM raw.customers").fetchall()
        joined = con.execute(
            "SELECT count(*) FROM raw.orders JOIN raw.customers USING (customer_id)"
        ).fetchone()
    assert len(released) == 200 and joined == (1000,)  # keys pseudonymized, joins kept
    assert not {"C0001", "person1@mail.example"} & {v for row in released for v in row}


def test_gold_build_without_prefect_stores_the_build(tmp_path: Path) -> None:
    dataset = tmp_path / "mini"
    build_dataset(
        load_spec(FIXTURES / "mini_domain.yaml"), scale=1, seed=7, out=str(dataset), validate=False
    )
    done = _benchforge(
        "gold", "build", "mini", "--repo", str(FIXTURES / "mini_dbt"),
        "--dataset", str(dataset), "--no-prefect",
        env=_no_api(tmp_path),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-4000:]
    assert "gold mini: 7 models" in done.stdout
    stored = tmp_path / "artifacts" / "gold" / "mini"
    assert len(list(stored.glob("*/*/run_results.json"))) == 1
