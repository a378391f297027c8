"""The trust boundary's file handling (evaluation/de/boundary.py, the collect steps of
cs_worker.py): links, hard links and odd files are refused on both sides, even where no
sandbox hides the host (the process backend), so a candidate cannot make the scorer read a
host file in place of what it produced."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from benchforge.core.sandbox import ProcessBackend
from benchforge.evaluation.de import cs_worker
from benchforge.evaluation.de.boundary import (
    ScoringFolders,
    UnsafeCollectedFile,
    collected_file_path,
    read_collected_json,
)
from benchforge.evaluation.de.collected import collect_build

MANIFEST = {
    "metadata": {"project_name": "p"},
    "nodes": {
        "model.p.m": {
            "resource_type": "model",
            "name": "m",
            "schema": "main",
            "alias": "m",
            "fqn": ["p", "m"],
            "compiled_code": "select 1 as x",
        }
    },
    "sources": {},
}


def test_collected_files_must_be_plain_regular_files(tmp_path: Path) -> None:
    folder = tmp_path / "collected"
    folder.mkdir()
    (folder / "ok.json").write_text('{"a": 1}')
    assert read_collected_json(folder, "ok.json") == {"a": 1}
    secret = tmp_path / "secret.json"
    secret.write_text('{"gold": true}')
    (folder / "link.json").symlink_to(secret)
    os.link(secret, folder / "hard.json")
    os.mkfifo(folder / "fifo.json")
    for name in ("link.json", "hard.json", "fifo.json", "missing.json", "../secret.json"):
        with pytest.raises(UnsafeCollectedFile):
            read_collected_json(folder, name)
    linked_folder = tmp_path / "linked"
    linked_folder.symlink_to(folder)
    with pytest.raises(UnsafeCollectedFile), collected_file_path(linked_folder, "ok.json"):
        pass
    with collected_file_path(folder, "ok.json") as path:
        assert path.startswith("/proc/self/fd/") and json.loads(Path(path).read_text())["a"] == 1


def test_the_collect_worker_refuses_a_link_on_any_path_component(tmp_path: Path) -> None:
    root = tmp_path / "candidate"
    (root / "run").mkdir(parents=True)
    elsewhere = tmp_path / "gold-target"
    elsewhere.mkdir()
    (elsewhere / "manifest.json").write_text(json.dumps(MANIFEST))
    (root / "run" / "target").symlink_to(elsewhere)  # a folder swapped for a link
    with pytest.raises(OSError):
        os.close(cs_worker.open_beneath(str(root), "run/target/manifest.json"))
    fd = cs_worker.open_beneath(str(elsewhere), "manifest.json")
    os.close(fd)


def test_a_linked_manifest_is_not_collected_even_without_a_sandbox(tmp_path: Path) -> None:
    """The process backend shows the whole host: the collect step itself must not follow the
    candidate's links (here to a gold-looking manifest and a host database)."""
    folders = ScoringFolders.fresh(tmp_path / "work")
    gold = tmp_path / "gold"
    gold.mkdir()
    (gold / "manifest.json").write_text(json.dumps(MANIFEST))
    target = folders.candidate / "run" / "target"
    target.mkdir(parents=True)
    (target / "manifest.json").symlink_to(gold / "manifest.json")
    (folders.candidate / "cand.duckdb").symlink_to(gold / "gold.duckdb")
    build = collect_build(
        folders, folders.collected_build, "run", ProcessBackend(), with_tables=True
    )
    assert build.manifest is None and build.relations == {}
    assert not (folders.collected_build / "manifest.json").exists()

    target.joinpath("manifest.json").unlink()
    target.joinpath("manifest.json").write_text(json.dumps(MANIFEST))
    build = collect_build(
        folders, folders.collected_build, "run", ProcessBackend(), with_tables=True
    )
    assert build.manifest is not None and list(build.manifest.models) == ["m"]
    assert any("database" in p for p in build.problems), build.problems  # the linked db
