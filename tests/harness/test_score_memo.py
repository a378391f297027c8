"""Identical submissions share one score: the memo keys by content, and computes once."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

from benchforge.evaluation.de.scoring import DeScore
from benchforge.harness.scoring import ScoreMemo, tree_digest


def test_digest_follows_content_names_and_symlink_targets(tmp_path: Path) -> None:
    a = tmp_path / "a"
    (a / "models").mkdir(parents=True)
    (a / "models" / "x.sql").write_text("select 1")
    first = tree_digest(a)
    assert tree_digest(a) == first
    (a / "models" / "x.sql").write_text("select 2")
    assert tree_digest(a) != first
    (a / "models" / "x.sql").write_text("select 1")
    assert tree_digest(a) == first
    (a / "models" / "x.sql").rename(a / "models" / "y.sql")
    assert tree_digest(a) != first
    (a / "models" / "y.sql").rename(a / "models" / "x.sql")
    os.symlink("/etc/passwd", a / "models" / "link.sql")
    linked = tree_digest(a)
    assert linked != first
    (a / "models" / "link.sql").unlink()
    os.symlink("/etc/hosts", a / "models" / "link.sql")
    assert tree_digest(a) != linked


def test_identical_submissions_are_scored_once_even_concurrently() -> None:
    memo = ScoreMemo()
    calls: list[str] = []

    def compute(tag: str) -> DeScore:
        calls.append(tag)
        time.sleep(0.2)
        return DeScore(cs=50.0, cfs=25.0, sr=0.0, nodes=[])

    results: list[DeScore] = []
    threads = [
        threading.Thread(
            target=lambda: results.append(memo.score(("t", "d", "h"), lambda: compute("h")))
        )
        for _ in range(4)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert calls == ["h"] and [r.cs for r in results] == [50.0] * 4
    other = memo.score(("t", "d", "other"), lambda: compute("other"))
    assert calls == ["h", "other"] and other.cfs == 25.0
