"""A task family Benchforge does not ship, added as a plugin (``BENCHFORGE_PLUGINS=
tests.plugins.engine_answer``): its module, its template and its toolset are the only
additions, and no file of Benchforge names it (``tests/integration/test_task_families.py``
follows it through every surface; ``docs/adding-a-family.md`` is written against it).

An ``engine_answer`` task asks one question over **two databases of different engines** (a
DuckDB file and a SQLite file, one dataset per role) whose join keys do not agree, has **no
repository**, and is scored on the **answer** the agent returns: a number, compared with the
gold computed by the task's ``gold.py`` over the same two databases (so a new dataset gives a
new answer). The agent acts through the ``engine_sql`` toolset: ``query`` (read-only, in the
sandbox, on the database of a role) and ``answer``."""

from __future__ import annotations

import json
import re
import sqlite3
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

import duckdb
from pydantic import BaseModel, Field

from benchforge.agents.protocol import TaskEnvironment
from benchforge.agents.tools.de import sandbox_request, sandboxed_outcome
from benchforge.agents.tools.tool import ToolError, ToolOutcome, tool
from benchforge.agents.tools.toolsets import Toolset, register_toolset
from benchforge.core.records.scores import ScoreBreakdown, register_breakdown
from benchforge.core.records.trials import SOLUTION_ANSWER_FILE
from benchforge.core.records.verification import (
    EMPTY,
    REFERENCE,
    TaskVerification,
    VerificationCheck,
)
from benchforge.core.sandbox import SandboxBackend
from benchforge.evaluation.families import (
    FamilyBase,
    SubmissionScore,
    VerifyOptions,
    register,
    spec_as,
)
from benchforge.evaluation.families.run_report import RunReportContext, RunReportSection
from benchforge.evaluation.judges.client import Judge
from benchforge.evaluation.tasks.models import LoadedTask, TaskSpecBase

FAMILY = "engine_answer"
ENGINES = {".duckdb": "duckdb", ".sqlite": "sqlite"}
TOLERANCE = 1e-6  # relative: the answer is a count or a sum


class EngineAnswerTask(TaskSpecBase):
    family: Literal["engine_answer"]
    question: str = Field(default="question.md", description="The question, in markdown.")
    gold: str = Field(
        default="gold.py",
        description="Python defining gold(db) -> float, where db(role) is a read-only "
        "connection (DuckDB or sqlite3) to that role's database; never shown to agents.",
    )


def database_of(folder: Path) -> Path:
    """A role's database: the one ``*.duckdb`` or ``*.sqlite`` file of its dataset folder."""
    found = sorted(p for p in folder.iterdir() if p.suffix in ENGINES)
    if len(found) != 1:
        raise ValueError(f"{folder}: expected one .duckdb or .sqlite file, found {len(found)}")
    return found[0]


def read_only(database: Path) -> Any:
    if ENGINES[database.suffix] == "duckdb":
        return duckdb.connect(str(database), read_only=True)
    return sqlite3.connect(f"file:{database}?mode=ro", uri=True)


class EngineGold(BaseModel):
    """The gold of a task on one dataset: the number, and the engine of each role."""

    value: float
    engines: dict[str, str]


@register_breakdown
class EngineAnswerDetail(ScoreBreakdown):
    """This family's score detail: the answer as given, read, and the gold it is held to."""

    kind: Literal["engine_answer"] = "engine_answer"
    given: str | None
    read_as: float | None
    expected: float
    engines: dict[str, str]  # role -> engine the gold was computed on


NUMBER = re.compile(r"[-+]?\d[\d,]*(?:\.\d+)?")


def read_number(answer: str | None) -> float | None:
    """The answer's number when it states exactly one (thousands separators allowed); a
    hedge naming two numbers reads as none."""
    if answer is None:
        return None
    found = NUMBER.findall(answer)
    if len(found) != 1:
        return None
    return float(found[0].replace(",", ""))


class EngineAnswerFamily(FamilyBase):
    name = FAMILY
    spec_type = EngineAnswerTask
    toolset = "engine_sql"
    submission = "answer"
    heldout = False
    detail_template = "engine_answer_detail.html.j2"

    def file_problems(self, spec: Any, folder: Path, root: Path) -> list[tuple[str, str]]:
        return [
            (field, f"missing file '{rel}' in {folder}")
            for field, rel in (("question", spec.question), ("gold", spec.gold))
            if not (folder / rel).is_file()
        ]

    def materials(self, task: LoadedTask, dest: Path) -> None:
        spec = spec_as(task, EngineAnswerTask)
        (dest / "question.md").write_text(task.file(spec.question).read_text())
        (dest / self.submission).mkdir()

    def prepare_gold(
        self,
        task: LoadedTask,
        dataset_dir: Path,
        work: Path,
        datasets: Mapping[str, Path] | None = None,
    ) -> EngineGold:
        roles = dict(datasets or {task.spec.primary_role: dataset_dir})
        missing = set(task.spec.dataset_roles()) - set(roles)
        if missing:
            raise ValueError(f"{task.key}: no dataset for role {', '.join(sorted(missing))}")
        databases = {role: database_of(folder) for role, folder in roles.items()}
        namespace: dict[str, Any] = {}
        source = task.file(spec_as(task, EngineAnswerTask).gold)
        exec(compile(source.read_text(), str(source), "exec"), namespace)
        connections: dict[str, Any] = {}
        try:

            def db(role: str) -> Any:
                if role not in connections:
                    connections[role] = read_only(databases[role])
                return connections[role]

            value = float(namespace["gold"](db))
        finally:
            for connection in connections.values():
                connection.close()
        return EngineGold(value=value, engines={r: ENGINES[d.suffix] for r, d in databases.items()})

    def score(
        self,
        task: LoadedTask,
        submission: Path,
        gold: Any,
        dataset_dir: Path,
        work: Path,
        sandbox: SandboxBackend | None = None,
        unsandboxed: bool = False,
        judge: Judge | None = None,
        answer: str | None = None,
        datasets: Mapping[str, Path] | None = None,
    ) -> SubmissionScore:
        expected: EngineGold = gold
        value = read_number(answer)
        right = value is not None and abs(value - expected.value) <= TOLERANCE * max(
            1.0, abs(expected.value)
        )
        return SubmissionScore(
            metrics={"exact": 100.0 if right else 0.0},
            primary="exact",
            success=right,
            detail=None if right else "no answer, or not the gold number",
            breakdown=EngineAnswerDetail(
                given=answer,
                read_as=value,
                expected=expected.value,
                engines=expected.engines,
            ),
        )

    def solution(
        self,
        task: LoadedTask,
        work: Path,
        dataset_dir: Path | None = None,
        datasets: Mapping[str, Path] | None = None,
    ) -> Path | None:
        """No files: the reference answer (``ANSWER``), the gold number on the trial's data."""
        if dataset_dir is None:
            return None
        gold = self.prepare_gold(task, dataset_dir, work, datasets)
        folder = work / "engine-answer-solutions" / task.spec.suite / task.spec.id
        folder.mkdir(parents=True, exist_ok=True)
        (folder / SOLUTION_ANSWER_FILE).write_text(f"{gold.value:,.0f}\n")
        return folder

    def verify(
        self, task: LoadedTask, dataset_dir: Path, work: Path, options: VerifyOptions
    ) -> TaskVerification:
        gold = self.prepare_gold(task, dataset_dir, work, options.datasets or None)

        def scored(answer: str | None) -> float:
            return self.score(task, work, gold, dataset_dir, work, answer=answer).metrics["exact"]

        hedge = f"{gold.value:g} or maybe {gold.value + 1:g}"
        checks = [
            VerificationCheck.of_score("gold", REFERENCE, scored(f"{gold.value:,.0f}"), 100.0),
            VerificationCheck.of_score("empty", EMPTY, scored(None), 0.0),
            VerificationCheck.of_score("hedge", "reward hacks", scored(hedge), 0.0),
        ]
        return TaskVerification(
            task=task.key,
            dataset=str(dataset_dir),
            checks=checks,
            problems=[f"{c.name} scores {c.observed}" for c in checks if not c.passed],
        )

    def run_report(self, context: RunReportContext) -> RunReportSection:
        """Per agent, how many of its trials returned a number (appended to the leaderboard's
        markdown, and written beside it as ``engine-answer-report.md``)."""
        answered: dict[str, list[bool]] = {}
        for score, result in context.trials():
            number = read_number(result.answer) if result is not None else None
            answered.setdefault(score.key.agent, []).append(number is not None)
        lines = [
            f"- {agent}: {sum(given)} of {len(given)} trials answered a number"
            for agent, given in sorted(answered.items())
        ]
        markdown = "\n".join(["## Engine answers", "", *lines]) + "\n"
        return RunReportSection(markdown=markdown, pages={"engine-answer-report.md": markdown})


register(EngineAnswerFamily())


# -- the toolset --------------------------------------------------------------------------

_QUERY = """
import json, sqlite3, sys
import duckdb
request = json.loads(sys.stdin.read())
path = request["db"]
if path.endswith(".duckdb"):
    con = duckdb.connect(path, read_only=True)
else:
    con = sqlite3.connect("file:" + path + "?mode=ro", uri=True)
cur = con.execute(request["sql"])
names = [d[0] for d in cur.description or []]
print(" | ".join(names))
for row in cur.fetchmany(50):
    print(" | ".join(str(v) for v in row))
"""


@tool
async def query(env: TaskEnvironment, role: str, sql: str) -> ToolOutcome:
    """Run one read-only SQL query on the database of a role (the roles are listed in the
    task; each is a DuckDB or a SQLite database). Returns at most 50 rows."""
    folder = env.data_dirs.get(role)
    if folder is None:
        raise ToolError(f"no database {role!r} (roles: {', '.join(sorted(env.data_dirs))})")
    payload = json.dumps({"db": str(database_of(folder)), "sql": sql})
    result = await env.sandbox.run_async(
        sandbox_request(env, [sys.executable, "-c", _QUERY], stdin=payload)
    )
    return sandboxed_outcome(env, result, (result.stdout + result.stderr)[-4000:])


@tool
def answer(env: TaskEnvironment, value: str) -> ToolOutcome:
    """Give the final answer (one number) and finish."""
    return ToolOutcome(output="finished", ok=True, terminate=True, answer=value)


register_toolset(
    Toolset(
        "engine_sql",
        (query, answer),
        "You answer a question from several databases, one per role; query them with the "
        "query tool (read-only) and finish with answer. Join keys may be formatted "
        "differently in each database.",
    )
)
