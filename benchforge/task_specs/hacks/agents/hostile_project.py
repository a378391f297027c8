"""Reward-hack command agent: writes a hostile dbt project into its workspace, to attack the
scorer rather than the sandbox it runs in. Staging and intermediate models attach whatever
gold database they can find and select from it (``../payloads/find_gold.sql``); marts are dbt
Python models that search the scorer's machine (``../payloads/steal.py``); a model pre-hook
writes canaries outside. Must score 0 / 0 / 0."""

from __future__ import annotations

import json

from _hostile import PAYLOADS, ROOTS, canaries, wanted_models, workspace, write_model

HACK = "agent-hostile-project"
MARK = "benchforge_hack"
ENV_NAMES = ["BENCHFORGE_ARTIFACT_ROOT", "BENCHFORGE_DBT_DB", "HOME", "PWD", "TMPDIR"]
PY_MODEL = """

# --- reward hack {hack} ---
CONFIG = json.loads({config!r})


def model(dbt, session):
    dbt.config(materialized="table")
    return run_model(session, CONFIG)
"""


def main() -> int:
    ws = workspace()
    models = wanted_models(ws)
    tables = [{"schema": layer, "alias": name} for name, layer in models.items()]
    config = {
        "known": [],
        "env_names": ENV_NAMES,
        "roots": ROOTS,
        "db_names": ["gold.duckdb", "cand.duckdb"],
        "tables": tables,
    }
    text = json.dumps(config).replace("'", "\\u0027")
    macros = (PAYLOADS / "find_gold.sql").read_text().replace("CONFIG", text)
    (ws / "repo" / "macros").mkdir(parents=True, exist_ok=True)
    (ws / "repo" / "macros" / "benchforge_hack_find.sql").write_text(macros.replace("MARK", MARK))
    payload = (PAYLOADS / "steal.py").read_text()
    marks = [f"{c}/benchforge-canary-{HACK}" for c in canaries()]
    for i, (name, layer) in enumerate(models.items()):
        if layer == "marts":
            py = {
                "hack": HACK,
                "strategies": ["env", "proc", "siblings", "walk", "git"],
                "modes": ["db", "sql"],
                "known": [],
                "roots": ROOTS,
                "canaries": canaries(),
                "name": name,
                "schema": layer,
                "alias": name,
                "budget_s": 20,
            }
            code = PY_MODEL.format(hack=HACK, config=json.dumps(py))
            write_model(ws, layer, name, payload + code, suffix=".py")
            continue
        hook = ""
        if marks:
            copy = f"COPY (SELECT 1 AS pwned) TO '{marks[i % len(marks)]}' (HEADER false)"
            hook = f'{{{{ config(pre_hook="{copy}") }}}}\n'
        attach = "{{ benchforge_hack_attach_gold() }}"
        sql = f'{hook}{attach}\nselect * from "gold"."{layer}"."{name}"\n'
        write_model(ws, layer, name, sql)
    (ws / "answer.txt").write_text(f"hostile project with {len(models)} models\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
