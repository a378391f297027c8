"""Writing the catalogue page: collect the entries, render, write atomically."""

from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path

from benchforge.harness.catalogue_page.collect import read_catalogue
from benchforge.harness.catalogue_page.render import render_catalogue

PAGE_NAME = "catalogue.html"
DEFAULT_TITLE = "Benchforge task catalogue"


def page_path(out: Path) -> Path:
    """``out`` itself, or ``out/catalogue.html`` when ``out`` is a folder (existing, or
    named without an ``.html`` suffix)."""
    out = Path(out)
    if out.is_dir() or out.suffix.lower() not in (".html", ".htm"):
        return out / PAGE_NAME
    return out


def write_catalogue_page(
    tasks_root: Path,
    out: Path,
    runs_root: Path | str | None = None,
    title: str = DEFAULT_TITLE,
) -> Path:
    """Writes the page of every task under ``tasks_root`` with the latest results from the
    artifact store at ``runs_root`` (None: no results read) to ``out``; returns its path.
    The file is replaced whole, so a reader never sees half a page."""
    catalogue = read_catalogue(tasks_root, runs_root)
    page = render_catalogue(
        catalogue.entries,
        title,
        runs_source=catalogue.runs_source,
        generated_at=datetime.now(UTC),
    )
    target = page_path(out)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    try:
        tmp.write_text(page, encoding="utf-8")
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)
    return target
