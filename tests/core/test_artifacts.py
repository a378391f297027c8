"""Artifact store tests; most run identically against a local folder and moto's S3 server."""

from __future__ import annotations

import hashlib
import json
import os
import re
import socket
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from benchforge.core.artifacts import (
    ArtifactInfo,
    ArtifactStore,
    LocalArtifactStore,
    S3ArtifactStore,
    open_store,
)
from benchforge.core.errors import ArtifactError, ArtifactNotFound, ChecksumMismatch
from benchforge.core.settings import BenchforgeSettings, load_settings

pytestmark = pytest.mark.slow  # tests/README.md: the fast and the full loop

S3_PREFIX = "some/prefix"
BIG = 12 * 1024 * 1024  # above the 8 MiB multipart threshold


def s3_settings(endpoint: str) -> BenchforgeSettings:
    return load_settings(
        s3_endpoint_url=endpoint,
        s3_region="us-east-1",
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
    )


@dataclass
class Backend:
    name: str
    store: ArtifactStore
    corrupt: Callable[[str], None]  # change stored bytes behind the store's back


def _local_backend(root: Path) -> Backend:
    store = LocalArtifactStore(root)

    def corrupt(key: str) -> None:
        path = root / key
        with open(path, "r+b") as fh:  # same inode, same size: only the sha256 can tell
            first = fh.read(1)
            fh.seek(0)
            fh.write(bytes([first[0] ^ 0xFF]) if first else b"x")

    return Backend("local", store, corrupt)


def _s3_backend(endpoint: str, bucket: str, client: Any) -> Backend:
    store = open_store(f"s3://{bucket}/{S3_PREFIX}", s3_settings(endpoint))

    def corrupt(key: str) -> None:
        okey = f"{S3_PREFIX}/{key}"
        old = client.get_object(Bucket=bucket, Key=okey)
        data = old["Body"].read()
        bad = bytes([data[0] ^ 0xFF]) + data[1:] if data else b"x"
        client.put_object(Bucket=bucket, Key=okey, Body=bad, Metadata=old["Metadata"])

    return Backend("s3", store, corrupt)


@pytest.fixture(params=["local", "s3"])
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Backend:
    if request.param == "local":
        return _local_backend(tmp_path / "store")
    return _s3_backend(
        request.getfixturevalue("s3_server"),
        request.getfixturevalue("s3_bucket"),
        request.getfixturevalue("s3_client"),
    )


@pytest.fixture
def store(backend: Backend) -> ArtifactStore:
    return backend.store


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def make_tree(root: Path, files: dict[str, bytes]) -> Path:
    for rel, data in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    return root


def no_temp_files(folder: Path) -> bool:
    return not [p for p in folder.rglob("*") if p.name.startswith(".bf-tmp-")]


# -- roundtrips -------------------------------------------------------------------------


def test_put_get_bytes_roundtrip(store: ArtifactStore) -> None:
    key = "datasets/crm/v1/warehouse.duckdb"
    info = store.put_bytes(key, b"hello world")
    assert info == ArtifactInfo(key=key, size=11, sha256=sha(b"hello world"), uri=store.uri(key))
    assert store.get_bytes(key) == b"hello world"
    assert store.exists(key)
    assert store.info(key) == info


def test_empty_artifact(store: ArtifactStore) -> None:
    info = store.put_bytes("empty", b"")
    assert (info.size, info.sha256) == (0, sha(b""))
    assert store.get_bytes("empty") == b""


def test_overwrite_replaces_content(store: ArtifactStore) -> None:
    store.put_bytes("k", b"first")
    info = store.put_bytes("k", b"second version")
    assert store.get_bytes("k") == b"second version"
    assert store.info("k") == info


def test_large_file_roundtrip(store: ArtifactStore, tmp_path: Path) -> None:
    src = tmp_path / "big.bin"
    data = os.urandom(BIG + 12345)
    src.write_bytes(data)
    info = store.put_file("big/blob.bin", src)
    assert (info.size, info.sha256) == (len(data), sha(data))
    assert store.info("big/blob.bin") == info
    dest = tmp_path / "out" / "nested" / "blob.bin"
    assert store.get_file("big/blob.bin", dest) == dest
    assert dest.read_bytes() == data
    assert no_temp_files(dest.parent)
    assert store.get_bytes("big/blob.bin") == data


def test_s3_large_file_is_multipart(
    s3_server: str, s3_bucket: str, s3_client: Any, tmp_path: Path
) -> None:
    backend = _s3_backend(s3_server, s3_bucket, s3_client)
    data = os.urandom(BIG)
    backend.store.put_file("multi", make_tree(tmp_path, {"f": data}) / "f")
    head = s3_client.head_object(Bucket=s3_bucket, Key=f"{S3_PREFIX}/multi")
    assert "-" in head["ETag"]  # multipart ETags look like "<md5>-<parts>"
    assert head["Metadata"]["sha256"] == sha(data)
    assert backend.store.get_bytes("multi") == data


def test_get_file_replaces_existing_dest(store: ArtifactStore, tmp_path: Path) -> None:
    store.put_bytes("a.txt", b"new")
    dest = tmp_path / "a.txt"
    dest.write_bytes(b"old content")
    store.get_file("a.txt", dest)
    assert dest.read_bytes() == b"new"


def test_put_file_missing_source(store: ArtifactStore, tmp_path: Path) -> None:
    with pytest.raises(ArtifactError, match=r"nope\.bin"):
        store.put_file("x", tmp_path / "nope.bin")
    assert not store.exists("x")


# -- listing ----------------------------------------------------------------------------

TREE_KEYS = ["b/2.txt", "a/x/1.txt", "ab/3.txt", "a/0.txt", "top.txt", "a/x/y/z.bin"]


def fill(store: ArtifactStore) -> None:
    for i, key in enumerate(TREE_KEYS):
        store.put_bytes(key, f"content {i} of {key}".encode() * (i + 1))


def test_list_is_recursive_and_sorted(store: ArtifactStore) -> None:
    fill(store)
    infos = store.list()
    assert [i.key for i in infos] == sorted(TREE_KEYS)
    assert all(i == store.info(i.key) for i in infos)


def test_list_prefix_is_folder_like(store: ArtifactStore) -> None:
    fill(store)
    assert [i.key for i in store.list("a")] == ["a/0.txt", "a/x/1.txt", "a/x/y/z.bin"]
    assert store.list("a/") == store.list("a")
    assert [i.key for i in store.list("a/x/y")] == ["a/x/y/z.bin"]
    assert store.list("missing") == []
    assert store.list("top.txt") == []  # a key is not a folder


def test_list_empty_store(store: ArtifactStore) -> None:
    assert store.list() == []


def test_listing_identical_across_backends(
    tmp_path: Path, s3_server: str, s3_bucket: str, s3_client: Any
) -> None:
    local = _local_backend(tmp_path / "store").store
    s3 = _s3_backend(s3_server, s3_bucket, s3_client).store
    for store in (local, s3):
        fill(store)

    def view(infos: list[ArtifactInfo]) -> list[tuple[str, int, str]]:
        return [(i.key, i.size, i.sha256) for i in infos]

    assert view(local.list()) == view(s3.list())
    assert view(local.list("a/x")) == view(s3.list("a/x"))
    assert [i.uri for i in s3.list("b")] == [f"s3://{s3_bucket}/{S3_PREFIX}/b/2.txt"]
    assert [i.uri for i in local.list("b")] == [str(tmp_path / "store" / "b" / "2.txt")]


# -- exists / info / delete -------------------------------------------------------------


def test_missing_key(store: ArtifactStore, tmp_path: Path) -> None:
    assert not store.exists("no/such/key")
    with pytest.raises(ArtifactNotFound, match="no/such/key"):
        store.info("no/such/key")
    with pytest.raises(ArtifactNotFound, match="no/such/key"):
        store.get_bytes("no/such/key")
    dest = tmp_path / "dl" / "f"
    with pytest.raises(ArtifactNotFound):
        store.get_file("no/such/key", dest)
    assert not dest.exists()


def test_folder_is_not_an_artifact(store: ArtifactStore) -> None:
    store.put_bytes("dir/file", b"x")
    assert not store.exists("dir")
    with pytest.raises(ArtifactNotFound):
        store.get_bytes("dir")


def test_delete(store: ArtifactStore) -> None:
    fill(store)
    store.delete("a/x/1.txt")
    assert not store.exists("a/x/1.txt")
    store.delete("a/x/1.txt")  # idempotent
    assert "a/x/1.txt" not in [i.key for i in store.list()]
    assert store.exists("a/x/y/z.bin")


def test_delete_prefix(store: ArtifactStore) -> None:
    fill(store)
    assert store.delete_prefix("a") == 3
    assert [i.key for i in store.list()] == ["ab/3.txt", "b/2.txt", "top.txt"]
    assert store.delete_prefix("a") == 0
    assert store.delete_prefix("b/") == 1
    with pytest.raises(ArtifactError, match="non-empty"):
        store.delete_prefix("")


def test_local_delete_prunes_folders(tmp_path: Path) -> None:
    store = LocalArtifactStore(tmp_path / "s")
    store.put_bytes("x/y/z", b"1")
    store.delete("x/y/z")
    assert sorted(p.name for p in (tmp_path / "s").iterdir()) == [".checksums"]
    # Only the writers' fixed set of lock files stays.
    assert [p.name for p in (tmp_path / "s" / ".checksums").iterdir()] == [".writer-locks"]
    store.put_bytes("x", b"a file where a folder was")  # works since the folder is gone
    assert store.get_bytes("x") == b"a file where a folder was"


def test_local_layout_sidecars_hidden(tmp_path: Path) -> None:
    store = LocalArtifactStore(tmp_path / "s")
    store.put_bytes("d/k.txt", b"data")
    assert (tmp_path / "s" / "d" / "k.txt").read_bytes() == b"data"
    record = json.loads((tmp_path / "s" / ".checksums" / "d" / "k.txt.json").read_text())
    assert record["sha256"] == sha(b"data")
    assert [i.key for i in store.list()] == ["d/k.txt"]


# -- put_dir / get_dir ------------------------------------------------------------------

DIR_FILES = {
    "warehouse.duckdb": b"duck" * 1000,
    "models/a.sql": b"select 1",
    "models/sub/b.sql": b"select 2",
    "README": b"",
}


def test_put_dir_writes_marker_last(store: ArtifactStore, tmp_path: Path) -> None:
    src = make_tree(tmp_path / "src", DIR_FILES)
    marker_key = "builds/run1/_SUCCESS"
    order: list[str] = []
    base = type(store)

    class Recording(base):  # type: ignore[valid-type,misc]
        def put_file(self, key: str, path: Path) -> ArtifactInfo:
            assert not self.exists(marker_key), "marker written before data"
            order.append(key)
            return super().put_file(key, path)

        def put_bytes(self, key: str, data: bytes) -> ArtifactInfo:
            order.append(key)
            return super().put_bytes(key, data)

    store.__class__ = Recording
    infos = store.put_dir("builds/run1", src, marker="_SUCCESS")

    expected = sorted(f"builds/run1/{rel}" for rel in DIR_FILES)
    assert order == [*expected, marker_key]
    assert [i.key for i in infos] == order
    assert [i.key for i in store.list("builds/run1")] == sorted(order)
    manifest = json.loads(store.get_bytes(marker_key))
    assert [f["key"] for f in manifest["files"]] == expected
    assert {f["key"]: f["sha256"] for f in manifest["files"]} == {
        f"builds/run1/{rel}": sha(data) for rel, data in DIR_FILES.items()
    }


def test_put_dir_without_marker_and_get_dir(store: ArtifactStore, tmp_path: Path) -> None:
    src = make_tree(tmp_path / "src", DIR_FILES)
    infos = store.put_dir("art/v1", src)
    assert [i.key for i in infos] == sorted(f"art/v1/{rel}" for rel in DIR_FILES)
    dest = tmp_path / "dest"
    paths = store.get_dir("art/v1", dest)
    assert sorted(paths) == sorted(dest / rel for rel in DIR_FILES)
    for rel, data in DIR_FILES.items():
        assert (dest / rel).read_bytes() == data
    assert no_temp_files(dest)


def test_get_dir_requires_marker(store: ArtifactStore, tmp_path: Path) -> None:
    src = make_tree(tmp_path / "src", DIR_FILES)
    store.put_dir("p", src)
    with pytest.raises(ArtifactNotFound, match="_DONE"):
        store.get_dir("p", tmp_path / "d", marker="_DONE")
    store.put_dir("q", src, marker="_DONE")
    paths = store.get_dir("q", tmp_path / "d2", marker="_DONE")
    assert tmp_path / "d2" / "_DONE" in paths


def test_put_dir_rejects_bad_input(store: ArtifactStore, tmp_path: Path) -> None:
    with pytest.raises(ArtifactError, match="not a directory"):
        store.put_dir("p", tmp_path / "missing")
    src = make_tree(tmp_path / "src", {"f": b"1"})
    with pytest.raises(ArtifactError, match="invalid artifact key"):
        store.put_dir("p", src, marker="../escape")


def test_put_dir_uploads_its_own_marker_file_last(store: ArtifactStore, tmp_path: Path) -> None:
    src = make_tree(tmp_path / "src", {"a/z.bin": b"1", "record.json": b'{"done": true}'})
    infos = store.put_dir("ds", src, marker="record.json")
    assert [i.key for i in infos] == ["ds/a/z.bin", "ds/record.json"]
    assert store.get_bytes("ds/record.json") == b'{"done": true}'


# -- checksums --------------------------------------------------------------------------


def test_checksum_mismatch_detected(backend: Backend, tmp_path: Path) -> None:
    store = backend.store
    store.put_bytes("data/x.bin", b"trustworthy content")
    backend.corrupt("data/x.bin")
    with pytest.raises(ChecksumMismatch, match=r"data/x\.bin"):
        store.get_bytes("data/x.bin")
    dest = tmp_path / "dl" / "x.bin"
    dest.parent.mkdir()
    dest.write_bytes(b"previous")
    with pytest.raises(ChecksumMismatch):
        store.get_file("data/x.bin", dest)
    assert dest.read_bytes() == b"previous"  # dest untouched on failure
    assert no_temp_files(dest.parent)
    with pytest.raises(ChecksumMismatch):
        store.get_dir("data", tmp_path / "dir")


def test_checksum_mismatch_large_file(backend: Backend, tmp_path: Path) -> None:
    src = tmp_path / "big"
    src.write_bytes(os.urandom(BIG))
    backend.store.put_file("big", src)
    backend.corrupt("big")
    with pytest.raises(ChecksumMismatch):
        backend.store.get_file("big", tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_s3_object_without_checksum(s3_server: str, s3_bucket: str, s3_client: Any) -> None:
    store = _s3_backend(s3_server, s3_bucket, s3_client).store
    s3_client.put_object(Bucket=s3_bucket, Key=f"{S3_PREFIX}/foreign", Body=b"x")
    assert store.exists("foreign")
    with pytest.raises(ArtifactError, match="no recorded sha256"):
        store.get_bytes("foreign")


# -- keys -------------------------------------------------------------------------------

BAD_KEYS = [
    "",
    "/abs/key",
    "a/../b",
    "..",
    "../escape",
    "a//b",
    "trailing/",
    "a\\b",
    "./a",
    ".checksums/x",
    "a/.bf-tmp-123",
]


@pytest.mark.parametrize("key", BAD_KEYS)
def test_bad_keys_rejected(store: ArtifactStore, key: str, tmp_path: Path) -> None:
    src = tmp_path / "f"
    src.write_bytes(b"1")
    operations: list[Callable[[], object]] = [
        lambda: store.put_bytes(key, b"x"),
        lambda: store.put_file(key, src),
        lambda: store.get_bytes(key),
        lambda: store.get_file(key, tmp_path / "out"),
        lambda: store.exists(key),
        lambda: store.info(key),
        lambda: store.delete(key),
        lambda: store.uri(key),
    ]
    for op in operations:
        with pytest.raises(ArtifactError, match="invalid artifact key"):
            op()
    assert store.list() == []


@pytest.mark.parametrize("prefix", ["/abs", "../up", "a/../b", "a//b", "x\\y"])
def test_bad_prefixes_rejected(store: ArtifactStore, prefix: str, tmp_path: Path) -> None:
    with pytest.raises(ArtifactError, match="invalid artifact key"):
        store.list(prefix)
    with pytest.raises(ArtifactError, match="invalid artifact key"):
        store.delete_prefix(prefix)
    with pytest.raises(ArtifactError, match="invalid artifact key"):
        store.put_dir(prefix, make_tree(tmp_path / "t", {"f": b""}))


# -- S3 failures ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "operation",
    ["put_bytes", "put_file", "get_bytes", "get_file", "exists", "info", "list", "delete"],
)
def test_missing_bucket_names_uri(s3_server: str, operation: str, tmp_path: Path) -> None:
    store = open_store("s3://no-such-bucket-bf/pre", s3_settings(s3_server))
    src = tmp_path / "f"
    src.write_bytes(b"1")
    calls: dict[str, Callable[[], object]] = {
        "put_bytes": lambda: store.put_bytes("k", b"x"),
        "put_file": lambda: store.put_file("k", src),
        "get_bytes": lambda: store.get_bytes("k"),
        "get_file": lambda: store.get_file("k", tmp_path / "out"),
        "exists": lambda: store.exists("k"),
        "info": lambda: store.info("k"),
        "list": lambda: store.list(),
        "delete": lambda: store.delete("k"),
    }
    with pytest.raises(ArtifactError) as excinfo:
        calls[operation]()
    message = str(excinfo.value)
    assert "s3://no-such-bucket-bf/pre" in message
    assert "bucket 'no-such-bucket-bf' does not exist" in message
    assert "\n" not in message
    assert not isinstance(excinfo.value, ArtifactNotFound)


def test_unreachable_endpoint(tmp_path: Path) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    endpoint = f"http://127.0.0.1:{port}"
    store = open_store("s3://bkt/p", s3_settings(endpoint))
    with pytest.raises(ArtifactError) as excinfo:
        store.put_bytes("k", b"x")
    message = str(excinfo.value)
    assert "s3://bkt/p/k" in message
    assert endpoint in message and "unreachable" in message
    assert "\n" not in message


def test_s3_store_at_bucket_root(s3_server: str, s3_bucket: str) -> None:
    store = open_store(f"s3://{s3_bucket}", s3_settings(s3_server))
    assert isinstance(store, S3ArtifactStore)
    assert (store.bucket, store.prefix) == (s3_bucket, "")
    assert store.uri("a/b") == f"s3://{s3_bucket}/a/b"
    store.put_bytes("a/b", b"root-level prefix")
    assert store.get_bytes("a/b") == b"root-level prefix"


@pytest.mark.parametrize("uri", ["s3://", "s3:///x", "s3://b/../x", "s3://b//x"])
def test_bad_s3_uris(uri: str) -> None:
    with pytest.raises(ArtifactError, match="invalid S3 URI"):
        open_store(uri, load_settings(s3_endpoint_url="http://127.0.0.1:9"))


# -- open_store / local root ------------------------------------------------------------


def test_open_store_local_creates_folder(tmp_path: Path) -> None:
    root = tmp_path / "new" / "root"
    store = open_store(str(root), load_settings())
    assert isinstance(store, LocalArtifactStore)
    assert root.is_dir()
    assert store.uri("k/v") == str(root / "k" / "v")
    file_store = open_store(f"file://{tmp_path / 'f'}", load_settings())
    assert isinstance(file_store, LocalArtifactStore) and (tmp_path / "f").is_dir()


def test_open_store_defaults_to_settings_root(tmp_path: Path) -> None:
    store = open_store(settings=load_settings(artifact_root=str(tmp_path / "from-settings")))
    assert isinstance(store, LocalArtifactStore)
    assert store.root == tmp_path / "from-settings"


def test_open_store_rejects_unknown_scheme() -> None:
    with pytest.raises(ArtifactError, match="gs"):
        open_store("gs://bucket/x", load_settings())


def test_unusable_local_root(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_bytes(b"")
    with pytest.raises(ArtifactError, match=re.escape(str(blocker / "root"))):
        open_store(str(blocker / "root"), load_settings())


def test_local_write_over_folder_fails_clearly(tmp_path: Path) -> None:
    store = LocalArtifactStore(tmp_path / "s")
    store.put_bytes("d/f", b"1")
    with pytest.raises(ArtifactError, match="folder"):
        store.put_bytes("d", b"2")
    with pytest.raises(ArtifactError):
        store.put_bytes("d/f/g", b"3")  # "d/f" is a file


# -- concurrency ------------------------------------------------------------------------


@pytest.fixture
def stop_event() -> Iterator[threading.Event]:
    event = threading.Event()
    yield event
    event.set()


def test_local_racing_writers_leave_data_and_checksum_from_one_writer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two writers of different content to one key (two rescorings at once): without a lock,
    A writes its sidecar, B writes its sidecar and data, A swaps its data in, and A's data
    lies under B's checksum for good. The window is widened here so the race is certain."""
    store = LocalArtifactStore(tmp_path / "s")
    write_sidecar = store._write_sidecar

    def slow_write_sidecar(key: str, record: Any) -> None:
        write_sidecar(key, record)
        if record.size == len(b"first writer"):  # the first writer is slow to swap its data
            time.sleep(0.5)

    monkeypatch.setattr(store, "_write_sidecar", slow_write_sidecar)
    first = threading.Thread(target=store.put_bytes, args=("k.json", b"first writer"))
    first.start()
    time.sleep(0.1)
    store.put_bytes("k.json", b"second writer, longer")
    first.join()
    assert store.get_bytes("k.json") in (b"first writer", b"second writer, longer")


def test_local_reader_never_sees_partial_file(tmp_path: Path, stop_event: threading.Event) -> None:
    store = LocalArtifactStore(tmp_path / "s")
    key = "big/artifact.bin"
    path = tmp_path / "s" / "big" / "artifact.bin"
    sizes = [8 * 1024 * 1024, 20 * 1024 * 1024, 3 * 1024 * 1024]
    payloads = [bytes([i + 1]) * size for i, size in enumerate(sizes)]
    src_files = []
    for i, payload in enumerate(payloads):
        src_files.append(tmp_path / f"src{i}")
        src_files[-1].write_bytes(payload)

    seen_sizes: set[int] = set()
    problems: list[str] = []
    reads = 0

    def reader() -> None:
        nonlocal reads
        while not stop_event.is_set():
            try:
                size = path.stat().st_size
            except FileNotFoundError:
                continue
            seen_sizes.add(size)
            if size not in sizes:
                problems.append(f"stat saw partial size {size}")
            keys = [i.key for i in store.list()]
            if keys != [key]:
                problems.append(f"listing showed {keys}")
            info = store.info(key)
            if info.size not in sizes:
                problems.append(f"info saw partial size {info.size}")
            try:
                data = store.get_bytes(key)
            except ArtifactError as exc:  # includes ChecksumMismatch
                problems.append(f"get_bytes failed: {exc}")
                continue
            reads += 1
            if data not in payloads:
                problems.append(f"get_bytes returned {len(data)} mixed bytes")

    thread = threading.Thread(target=reader, daemon=True)
    thread.start()
    try:
        for round_ in range(8):
            for i, payload in enumerate(payloads):
                if round_ % 2:
                    store.put_file(key, src_files[i])
                else:
                    store.put_bytes(key, payload)
    finally:
        stop_event.set()
        thread.join(timeout=30)
    assert not problems, problems[:5]
    assert reads > 0
    assert seen_sizes <= set(sizes)
    assert no_temp_files(tmp_path / "s")
