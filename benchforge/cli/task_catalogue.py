"""``benchforge task catalogue [PATH] [--out FILE] [--runs STORE]``: an HTML page listing every
task under PATH (family, suite, dataset, difficulty, nodes scored) with each agent's latest
stored result.

``benchforge task`` owns the parser: it gives ``path`` (the tasks root, default
``task_specs``) and ``--out``; :func:`add_arguments` adds the options only this action has.
"""

from __future__ import annotations

import argparse
from pathlib import Path

DEFAULT_OUT = "out/catalogue.html"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The catalogue's own options, added to the ``task`` parser."""
    parser.add_argument(
        "--runs",
        metavar="STORE",
        help="catalogue: artifact store whose runs give the results (a folder holding runs/ "
        "or s3://...; default the artifact_root setting; 'none' reads no results)",
    )
    parser.add_argument(
        "--title", help="catalogue: the page's title (default 'Benchforge task catalogue')"
    )


def _runs_root(given: str | None) -> str | None:
    """``--runs`` as given; by default the configured artifact store, or none while that local
    folder does not exist yet (nothing was ever run). A folder named explicitly must exist."""
    from benchforge.core.settings import load_settings

    if given is not None:
        return None if given.lower() == "none" else given
    root = load_settings().artifact_root
    if root.startswith("s3://") or Path(root).expanduser().is_dir():
        return root
    print(f"note: no artifact store at {root} yet: the page shows no results")
    return None


def catalogue_command(args: argparse.Namespace) -> int:
    """Writes the page; ``args.path`` is the tasks root, ``args.out`` the page (or a folder:
    ``catalogue.html`` in it), ``args.runs`` the artifact store."""
    from benchforge.core.catalogue import catalogue
    from benchforge.core.errors import ConfigError
    from benchforge.evaluation.tasks.loader import discover
    from benchforge.harness.catalogue_page.page import DEFAULT_TITLE, write_catalogue_page

    tasks_root = catalogue().path(getattr(args, "path", None) or "task_specs")
    if not discover(tasks_root):
        raise ConfigError(f"no task.yaml under {tasks_root}")
    out = Path(getattr(args, "out", None) or DEFAULT_OUT)
    written = write_catalogue_page(
        tasks_root,
        out,
        runs_root=_runs_root(getattr(args, "runs", None)),
        title=getattr(args, "title", None) or DEFAULT_TITLE,
    )
    print(f"wrote {written}")
    return 0
