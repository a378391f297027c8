"""``bench/dataset_import.py`` at its smoke size: it runs to the end and prints every figure
(rows/s of each source with and without validation, the DuckDB floor, the ratios, peak RSS of
each pass at both sizes and of a validated import by step)."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

from tests.paths import REPO_ROOT

pytestmark = pytest.mark.slow  # tests/README.md: the fast and the full loop

SMOKE = ["bench/dataset_import.py", "--rows", "20000", "--small-rows", "2000", "--repeat", "1"]
NUMBER = r"[\d,]+(?:\.\d+)?"


def test_the_smoke_run_prints_every_figure() -> None:
    result = subprocess.run(
        [sys.executable, *SMOKE],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        env=dict(os.environ),
        timeout=300,
        check=False,
    )
    out = result.stdout
    assert result.returncode == 0, (out + result.stderr)[-4000:]
    for source in ("csv", "parquet", "duckdb"):
        for label in ("import, validation on", "import, validation off", "DuckDB floor"):
            line = rf"^{source}\s+{re.escape(label)}\s+20,000\s+{NUMBER}\s+{NUMBER}\s+runs "
            assert re.search(line, out, re.M), f"no {source} {label!r} line in:\n{out}"
            rss = rf"^{source}\s+{re.escape(label)}\s+{NUMBER} MB\s+{NUMBER} MB\s+\d+\.\d\d$"
            assert re.search(rss, out, re.M), f"no {source} {label!r} RSS line in:\n{out}"
        for ratio in ("import / floor, validation off", "import / floor, validation on"):
            # the ratio, then the back-to-back pairs it is the median of
            pairs = r"\d+\.\d\d(?:, \d+\.\d\d)*"
            assert re.search(rf"^{source}: {re.escape(ratio)}\s+\d+\.\d\d\s+{pairs}$", out, re.M), (
                out
            )
        assert re.search(rf"^{source}: validation share of a validated import\s+\d+%$", out, re.M)
        by_step = rf"^{source}\s+load \+ export {NUMBER} / {NUMBER} MB\s+profile .+ GE suite .+ MB$"
        assert re.search(by_step, out, re.M), out
    validated = r"^a validated import from CSV runs at x\d+\.\d\d the DuckDB floor's rows/s, "
    median = r"the median of \d+ back-to-back pairs "
    assert re.search(validated + median + r"\(target >= 0\.5\) (PASS|FAIL)$", out, re.M), out
    assert re.search(r"^\s+2,000 rows\s+20,000 rows\s+ratio$", out, re.M), out
    assert re.search(
        r"^memory (does not grow|GROWS) with the data: .* x\d+\.\d\d at most ", out, re.M
    )
    assert "WARNING" not in out
