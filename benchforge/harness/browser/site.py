"""The run browser as files: ``write_site`` renders a stored run into a static folder, and
``serve`` serves such a folder on the loopback interface."""

from __future__ import annotations

import functools
import shutil
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from pydantic import BaseModel

from benchforge.core.errors import BenchforgeError
from benchforge.harness.browser.load import iter_trials, read_scores, run_view
from benchforge.harness.browser.render import index_page, trial_page_html
from benchforge.harness.store import RunStore

INDEX = "index.html"
TRIALS = "trials"
MARKER = ".benchforge-view"  # says a folder holds a site this module wrote (and may rewrite)


class Site(BaseModel):
    """What ``write_site`` wrote."""

    folder: Path
    index: Path
    trials: int
    scored: int


def write_site(run: RunStore, out: Path) -> Site:
    """Renders ``run`` into ``out``: a page per finished trial (one result in memory at a
    time), then the index. ``out`` must be new, empty or a site written here before (it is
    replaced); any other folder is refused rather than have its ``trials/`` overwritten."""
    run.require_spec()
    scores = read_scores(run)
    if out.is_dir() and any(out.iterdir()) and not (out / MARKER).is_file():
        raise BenchforgeError(
            f"{out} is not empty and holds no run browser site: choose a new or empty folder"
        )
    out.mkdir(parents=True, exist_ok=True)
    (out / MARKER).write_text(f"benchforge view {run.run_id}\n")
    pages = out / TRIALS
    if pages.exists():
        shutil.rmtree(pages)
    pages.mkdir()
    rows = []
    for trial in iter_trials(run, scores):
        (out / trial.row.page).write_text(trial_page_html(trial, run.run_id), encoding="utf-8")
        rows.append(trial.row)
    if not rows:
        raise BenchforgeError(f"run {run.run_id!r} has no finished trial to show yet")
    index = out / INDEX
    index.write_text(index_page(run_view(run, rows, scores)), encoding="utf-8")
    return Site(folder=out, index=index, trials=len(rows), scored=len(scores))


class _QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


def serve(folder: Path, port: int = 8000, host: str = "127.0.0.1") -> ThreadingHTTPServer:
    """A static server for ``folder`` on ``host`` (loopback by default), not yet serving: call
    ``serve_forever`` (and ``server_close`` after). ``port=0`` picks a free port."""
    handler = functools.partial(_QuietHandler, directory=str(folder))
    return ThreadingHTTPServer((host, port), handler)
