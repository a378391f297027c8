"""The page in headless Chromium (Debian's package): its script runs without error, the DOM
holds one row per task with the stored numbers, the URL fragment filters the rows, and a
screenshot renders."""

from __future__ import annotations

import shutil
import struct
import subprocess
from pathlib import Path

import pytest

from benchforge.harness.catalogue_page import write_catalogue_page
from tests.catalogue_page.catalogue import (
    EVOL,
    IMPL,
    KEYS,
    ORACLE_IMPL,
    stored_runs,
    write_catalogue,
)
from tests.catalogue_page.dom import read_table

pytestmark = pytest.mark.slow  # tests/README.md: the fast and the full loop

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="no chromium on PATH (Debian: apt-get install chromium)"
)


def chromium(url: str, profile: Path, *args: str) -> str:
    assert CHROMIUM is not None
    done = subprocess.run(
        [
            CHROMIUM,
            "--headless",
            "--disable-gpu",
            "--no-sandbox",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            f"--user-data-dir={profile}",
            "--window-size=1400,900",
            *args,
            url,
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def test_the_page_in_headless_chromium(tmp_path: Path) -> None:
    artifacts = stored_runs(tmp_path / "artifacts")
    page = write_catalogue_page(write_catalogue(tmp_path), tmp_path / "cat.html", artifacts)
    url = page.resolve().as_uri()

    table = read_table(chromium(url + "#tiny-evol", tmp_path / "profile", "--dump-dom"))
    assert table.body_attrs.get("data-ready") == "1"  # the script ran to its end
    assert sorted(r.task for r in table.rows) == sorted(KEYS.values())
    assert table.cell(KEYS[IMPL], "oracle") == ORACLE_IMPL
    assert {r.task for r in table.rows if not r.hidden} == {KEYS[EVOL]}

    shot = tmp_path / "catalogue.png"
    chromium(url, tmp_path / "profile", f"--screenshot={shot}")
    head = shot.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n"
    assert struct.unpack(">II", head[16:24]) == (1400, 900)
