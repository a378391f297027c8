"""Executed scores kept on disk by everything that decides them, so a submission scored once is
not built and compared again: verification's gold and do-nothing scores are the oracle's and the
null agent's (their submissions are the same bytes), a nightly's reference agents, a backfill or a
second run of unchanged agents, ``score-run --rescore`` of an unchanged run.

A key is the sha256 of the submission's content, the task's files, the gold build's record (its
repository and dataset versions), the dataset folder and the scorer's own source code
(``benchforge.evaluation`` and ``benchforge.core``): a change to any of them scores afresh.
Only scores whose candidate code ran with a confined filesystem (the namespace sandbox) are
kept, and the cache lives beside the gold build, where that sandbox shows nothing: candidate
code can neither read held-out rows from it nor plant a score. Mutation and reward-hack checks
never use it (they exist to exercise the scorer).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import tempfile
from functools import lru_cache
from pathlib import Path

from pydantic import ValidationError

import benchforge.core
import benchforge.evaluation
from benchforge.core.artifacts import LAYOUT
from benchforge.evaluation.de.scoring import DeScore

log = logging.getLogger(__name__)

CACHE_FORMAT = "1"
CACHE_SUFFIX = ".scores"


@lru_cache(maxsize=1)
def scorer_version() -> str:
    """sha256 of the scorer's source: every ``.py`` under ``benchforge.evaluation`` and
    ``benchforge.core``, by path and content."""
    h = hashlib.sha256()
    for package in (benchforge.evaluation, benchforge.core):
        root = Path(package.__path__[0]).resolve()
        for path in sorted(root.rglob("*.py")):
            h.update(f"{package.__name__}/{path.relative_to(root).as_posix()}".encode() + b"\0")
            h.update(path.read_bytes() + b"\0")
    return h.hexdigest()


class ScoreCache:
    """The kept scores against one gold build, beside it (``<gold folder>.scores/<key>.json``):
    not inside, where reward-hack checks watch the gold for changes."""

    def __init__(self, gold_folder: Path) -> None:
        self.gold_folder = gold_folder
        self.folder = gold_folder.with_name(gold_folder.name + CACHE_SUFFIX)

    def key(self, *, task: str, submission: str, dataset: Path) -> str:
        record = LAYOUT.gold_record_file(self.gold_folder)
        parts = {
            "format": CACHE_FORMAT,
            "scorer": scorer_version(),
            "task": task,
            "submission": submission,
            "dataset": str(dataset.resolve()),
            "gold": record.read_text() if record.is_file() else "",
        }
        return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()

    def get(self, key: str) -> DeScore | None:
        path = self.folder / f"{key}.json"
        try:
            score = DeScore.model_validate_json(path.read_bytes())
        except FileNotFoundError:
            return None
        except (OSError, ValidationError) as err:  # a torn or stale entry: score afresh
            log.warning("ignoring the kept score %s: %s", path, err)
            return None
        return score.model_copy(update={"reused": True})

    def put(self, key: str, score: DeScore) -> None:
        """Keeps ``score`` when its candidate code ran confined; written atomically."""
        confined = score.isolation is not None and score.isolation.filesystem == "confined"
        if score.unsandboxed or score.reused or not confined:
            return
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=self.folder, prefix=".tmp-", suffix=".json")
        except OSError as err:
            log.warning("could not keep the score %s: %s", key, err)
            return
        try:
            with os.fdopen(fd, "w") as out:
                out.write(score.model_dump_json())
            os.replace(tmp, self.folder / f"{key}.json")
        except OSError as err:
            log.warning("could not keep the score %s: %s", key, err)
            Path(tmp).unlink(missing_ok=True)
