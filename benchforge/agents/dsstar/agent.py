"""The ds-star agent (after DS-STAR): describe every lake file, then grow a plan one step at a
time and a single script implementing it, until a verifier finds it sufficient.

    describe files (analyzer, cached) -> [retrieve top-k] -> plan step 1 -> code -> run
    repeat up to max_rounds: verify; sufficient: stop
                             route: "Step j is wrong" keeps steps < j, "Add Step" keeps all
                             plan the next step from the latest result -> code -> run
    finalize: a script printing the answer in the required format -> run -> the answer

Every script runs whole and alone in the sandbox (``lake.run_script``); a failing one goes to
the debugger (``calls.run_debugged``). Every model call is a model step carrying its role, every
script a ``python`` tool step carrying the role that wrote it; the number of verifier steps is
the rounds to sufficiency. The last plan's code and the final script are left in the workspace
under ``ds-star/`` for the trial record.
"""

from __future__ import annotations

from pydantic import BaseModel

from benchforge.agents.dsstar import prompts
from benchforge.agents.dsstar.calls import RoleModels, role_models, run_debugged
from benchforge.agents.dsstar.config import DsStarConfig, Role
from benchforge.agents.dsstar.descriptions import FileDescription, describe_lake
from benchforge.agents.dsstar.lake import ScriptRun, lake_files, lake_root
from benchforge.agents.dsstar.replies import ReplyError, extract_code, parse_route, parse_verdict
from benchforge.agents.dsstar.retrieval import needs_retrieval, oracle_files, retrieve
from benchforge.agents.protocol import AgentOutcome, TaskEnvironment
from benchforge.core.llm import LlmRequestError

OUTPUT_DIR = "ds-star"
"""In the workspace: ``solution.py`` (the last plan's code) and ``final.py``."""


class DsStarAgent:
    """``name``: the registered name (``ds-star``); ``config``: see :class:`DsStarConfig`."""

    uses_model = True

    def __init__(self, config: DsStarConfig | None = None, *, name: str = "ds-star") -> None:
        self.name = name
        self._config = config or DsStarConfig()

    @property
    def config(self) -> DsStarConfig:
        return self._config

    def supports_toolset(self, name: str) -> bool:
        return name in self._config.toolsets

    async def run(self, env: TaskEnvironment) -> AgentOutcome:
        if env.llm is None:
            raise ValueError(f"{self.name} needs a model")
        async with role_models(env, self._config.models) as roles:
            try:
                return await DsStarRun(env, roles, self._config).solve()
            except LlmRequestError as exc:  # the request itself was refused, e.g. too long
                return AgentOutcome(termination="agent_error", error=str(exc))


class Attempt(BaseModel):
    """The plan, the script implementing it and that script's last run."""

    plan: list[str]
    run: ScriptRun


class DsStarRun:
    """One trial's loop (see the module docstring)."""

    def __init__(self, env: TaskEnvironment, roles: RoleModels, config: DsStarConfig) -> None:
        self.env = env
        self.roles = roles
        self.config = config
        self.question = env.prompt

    async def ask(self, role: Role, system: str, user: str) -> str:
        return await self.roles.ask(role, system, user, temperature=self.config.temperature)

    async def solve(self) -> AgentOutcome:
        files = prompts.files_block([(d.path, d.text) for d in await self.descriptions()])
        attempt = await self.implement(files, [await self.next_step(files, [], None)], None)
        sufficient = False
        for _ in range(self.config.max_rounds):
            sufficient = parse_verdict(
                await self.ask(
                    "verifier",
                    prompts.VERIFIER,
                    prompts.verifier_user(
                        self.question, attempt.plan, attempt.run.code, self.result(attempt)
                    ),
                )
            )
            if sufficient:
                break
            plan = attempt.plan
            base: str | None = attempt.run.code
            if not self.config.ablations.no_router:
                route = parse_route(
                    await self.ask(
                        "router",
                        prompts.ROUTER,
                        prompts.router_user(self.question, files, plan, self.result(attempt)),
                    ),
                    len(plan),
                )
                if route.action == "truncate" and route.wrong_step is not None:
                    plan, base = plan[: route.wrong_step - 1], None
            step = await self.next_step(files, plan, self.result(attempt))
            attempt = await self.implement(files, [*plan, step], base)
        self.keep("solution.py", attempt.run.code)
        answer = await self.finalize(files, attempt)
        if answer is None:
            return AgentOutcome(
                termination="agent_error", error="the final script printed no answer"
            )
        return AgentOutcome(termination="finished" if sufficient else "round_limit", answer=answer)

    async def descriptions(self) -> list[FileDescription]:
        root = lake_root(self.env)
        files = lake_files(root)
        if self.config.retrieval == "oracle":
            wanted = set(oracle_files(self.env))
            files = [path for path in files if path in wanted]
        if self.config.ablations.no_analyzer:
            described = [FileDescription(path=path, text="") for path in files]
        else:
            described = await describe_lake(self.env, self.roles, self.config, files)
        if needs_retrieval(self.config, files):
            return await retrieve(self.env, self.roles, self.config, self.question, described)
        return described

    async def next_step(self, files: str, plan: list[str], latest: str | None) -> str:
        reply = await self.ask(
            "planner", prompts.PLANNER, prompts.planner_user(self.question, files, plan, latest)
        )
        return " ".join(reply.split()) or "(no step given)"

    async def implement(self, files: str, plan: list[str], base: str | None) -> Attempt:
        reply = await self.ask("coder", prompts.CODER, prompts.coder_user(files, plan, base))
        try:
            code = extract_code(reply)
        except ReplyError as exc:
            code = f"raise SystemExit({str(exc)!r})\n"  # the round fails visibly, not the trial
        run = await run_debugged(
            self.env,
            self.roles,
            code,
            role="coder",
            limits=self.config.scripts,
            attempts=self.config.max_debug_attempts,
            summary_chars=self.config.traceback_summary_chars,
            files=files,
            temperature=self.config.temperature,
        )
        return Attempt(plan=plan, run=run)

    def result(self, attempt: Attempt) -> str:
        return attempt.run.report(self.config.scripts.output_chars)

    async def finalize(self, files: str, attempt: Attempt) -> str | None:
        reply = await self.ask(
            "finalizer",
            prompts.FINALIZER,
            prompts.finalizer_user(
                self.question,
                files,
                attempt.run.code,
                self.result(attempt),
                self.config.answer_guidelines,
            ),
        )
        try:
            code = extract_code(reply)
        except ReplyError:
            return None
        run = await run_debugged(
            self.env,
            self.roles,
            code,
            role="finalizer",
            limits=self.config.scripts,
            attempts=self.config.max_debug_attempts,
            summary_chars=self.config.traceback_summary_chars,
            files=files,
            temperature=self.config.temperature,
        )
        self.keep("final.py", run.code)
        answer = run.stdout.strip()
        return answer if run.ok and answer else None

    def keep(self, name: str, code: str) -> None:
        folder = self.env.workspace / OUTPUT_DIR
        folder.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(code, encoding="utf-8")
