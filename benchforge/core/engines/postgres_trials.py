"""One PostgreSQL database per trial, so parallel trials never touch each other's data:
``<prefix>_<trial digest>``, copied from the dataset's template database (``CREATE DATABASE
... TEMPLATE``: a file copy, fast), readable by the read-only role only, dropped after.

The read-only role (:data:`READER_ROLE`) is made once per server by the admin user: it logs in
and has nothing else (no superuser, CREATEDB, CREATEROLE, replication, inherited roles); its
sessions default to read-only transactions and a statement timeout. Each trial database
grants it CONNECT, USAGE on its schemas and SELECT on their tables, and takes every right from
PUBLIC (so no TEMP either): a query that escapes the read-only transaction still may not write.
One role serves every trial; which database a trial reads is fixed by its connection, and
PostgreSQL has no query that reaches another database."""

from __future__ import annotations

import contextlib
import hashlib
import re
import time
from collections.abc import Iterator, Mapping
from typing import Any

import psycopg
from psycopg import sql
from psycopg.conninfo import make_conninfo

from benchforge.core.engines.models import DbConfig, PostgresEntry
from benchforge.core.errors import BenchforgeError

READER_ROLE = "benchforge_reader"
DEFAULT_PREFIX = "bf_trial"
DIGEST_CHARS = 20
MAX_IDENTIFIER = 63  # PostgreSQL's NAMEDATALEN - 1
READER_STATEMENT_TIMEOUT = "10min"  # a backstop: each query sets its own, shorter one
_PREFIX = re.compile(r"^[a-z][a-z0-9_]*$")


class TrialDatabaseError(BenchforgeError):
    """A trial's PostgreSQL database could not be made ready or dropped."""


def trial_database_name(prefix: str, trial_id: str) -> str:
    """``<prefix>_<digest of trial_id>``: the same trial, the same name; two trials, two."""
    if not _PREFIX.match(prefix) or len(prefix) + 1 + DIGEST_CHARS > MAX_IDENTIFIER:
        raise TrialDatabaseError(
            f"database prefix {prefix!r}: lower-case letters, digits and '_', starting with a "
            f"letter, at most {MAX_IDENTIFIER - 1 - DIGEST_CHARS} characters"
        )
    digest = hashlib.sha256(trial_id.encode()).hexdigest()[:DIGEST_CHARS]
    return f"{prefix}_{digest}"


READER_SETTINGS = {
    "default_transaction_read_only": "on",
    "statement_timeout": READER_STATEMENT_TIMEOUT,
}
# Role changes write shared catalogue rows, and PostgreSQL fails the second of two sessions
# updating one at once ('tuple concurrently updated'): trials of every process take turns.
_ROLE_LOCK_KEY = int.from_bytes(hashlib.sha256(b"benchforge reader role").digest()[:7], "big")


def ensure_reader_role(admin_url: str, role: str = READER_ROLE) -> None:
    """Creates the read-only role with its settings unless it has them; trials racing to do
    it (threads, processes, machines on one server) take turns on an advisory lock."""
    with psycopg.connect(admin_url, autocommit=True) as con:
        con.execute("SELECT pg_advisory_lock(%s)", (_ROLE_LOCK_KEY,))
        try:
            _create_reader_role(con, role)
        finally:
            con.execute("SELECT pg_advisory_unlock(%s)", (_ROLE_LOCK_KEY,))


def _create_reader_role(con: psycopg.Connection[Any], role: str) -> None:
    exists = con.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (role,)).fetchone()
    if not exists:
        con.execute(
            sql.SQL(
                "CREATE ROLE {} LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOINHERIT "
                "NOREPLICATION NOBYPASSRLS"
            ).format(sql.Identifier(role))
        )
    row = con.execute(
        "SELECT s.setconfig FROM pg_db_role_setting s JOIN pg_roles r ON r.oid = s.setrole "
        "WHERE r.rolname = %s AND s.setdatabase = 0",
        (role,),
    ).fetchone()
    items: list[str] = list(row[0]) if row and row[0] else []
    current = dict(item.partition("=")[::2] for item in items)
    for setting, value in READER_SETTINGS.items():
        if current.get(setting) == value:
            continue
        con.execute(
            sql.SQL("ALTER ROLE {} SET {} = {}").format(
                sql.Identifier(role), sql.Identifier(setting), sql.Literal(value)
            )
        )


COPY_ATTEMPTS = 25  # trials copying one template at once take turns


def create_trial_database(
    admin_url: str, template: str, name: str, *, role: str = READER_ROLE
) -> None:
    """``name`` copied from ``template`` and opened to ``role`` for reading only. A database
    left by an earlier attempt of the same trial is dropped first."""
    ensure_reader_role(admin_url, role)
    ident, reader = sql.Identifier(name), sql.Identifier(role)
    with psycopg.connect(admin_url, autocommit=True) as con:
        con.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(ident))
        create = sql.SQL("CREATE DATABASE {} TEMPLATE {}").format(ident, sql.Identifier(template))
        for attempt in range(COPY_ATTEMPTS):
            try:
                con.execute(create)
                break
            except psycopg.Error as err:
                # another trial copying the same template at this moment holds it: wait, retry
                busy = "being accessed by other users" in str(err.diag.message_primary or "")
                if busy and attempt < COPY_ATTEMPTS - 1:
                    time.sleep(0.2 * (attempt + 1))
                    continue
                raise TrialDatabaseError(
                    f"could not copy template database {template!r} to {name!r}: "
                    f"{err.diag.message_primary or err}"
                ) from None
        con.execute(sql.SQL("REVOKE ALL ON DATABASE {} FROM PUBLIC").format(ident))
        con.execute(sql.SQL("GRANT CONNECT ON DATABASE {} TO {}").format(ident, reader))
    with psycopg.connect(make_conninfo(admin_url, dbname=name), autocommit=True) as con:
        schemas = [
            row[0]
            for row in con.execute(
                "SELECT nspname FROM pg_namespace "
                "WHERE nspname !~ '^pg_' AND nspname <> 'information_schema'"
            ).fetchall()
        ]
        for schema in schemas:
            s = sql.Identifier(schema)
            con.execute(sql.SQL("REVOKE CREATE ON SCHEMA {} FROM PUBLIC").format(s))
            con.execute(sql.SQL("GRANT USAGE ON SCHEMA {} TO {}").format(s, reader))
            con.execute(sql.SQL("GRANT SELECT ON ALL TABLES IN SCHEMA {} TO {}").format(s, reader))


def drop_trial_database(admin_url: str, name: str) -> None:
    """Drops ``name`` (its open connections closed first); nothing when it is gone already."""
    with psycopg.connect(admin_url, autocommit=True) as con:
        con.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))


def reader_conninfo(admin_url: str, database: str, role: str = READER_ROLE) -> str:
    """The conninfo of ``admin_url``'s server, as ``role``, on ``database``."""
    return make_conninfo(admin_url, dbname=database, user=role, password=None)


@contextlib.contextmanager
def trial_postgres(
    config: DbConfig,
    admin_url: str,
    trial_id: str,
    *,
    prefix: str = DEFAULT_PREFIX,
    role: str = READER_ROLE,
) -> Iterator[Mapping[str, str]]:
    """The trial's own copy of each PostgreSQL database of ``config``, for the length of the
    block: yields logical name -> the read-only role's conninfo; drops them all after."""
    made: list[str] = []
    targets: dict[str, str] = {}
    try:
        for logical, entry in config.databases.items():
            if not isinstance(entry, PostgresEntry):
                continue
            name = trial_database_name(prefix, f"{trial_id}\0{logical}")
            made.append(name)
            create_trial_database(admin_url, entry.template, name, role=role)
            targets[logical] = reader_conninfo(admin_url, name, role)
        yield targets
    finally:
        for name in made:
            drop_trial_database(admin_url, name)
