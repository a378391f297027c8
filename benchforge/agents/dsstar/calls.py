"""One model call per role: each role on its own model (``DsStarConfig.models``), every call
recorded by the trial's client view with the role on its model step, and debugging a script
(summarize a long traceback, ask the debugger, run again) shared by every role that writes
code."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager

from benchforge.agents.dsstar import prompts
from benchforge.agents.dsstar.config import Role, ScriptLimits
from benchforge.agents.dsstar.lake import ScriptRun, run_script
from benchforge.agents.dsstar.replies import ReplyError, extract_code
from benchforge.agents.protocol import TaskEnvironment
from benchforge.core.llm import LlmClient, LlmClientView


class RoleModels:
    """The trial's view for every role, or a view onto a client of the role's own model
    (same endpoint, key, cache and run ledger; this trial's ledger and trajectory)."""

    def __init__(self, default: LlmClientView, views: Mapping[str, LlmClientView]) -> None:
        self.default = default
        self._views = dict(views)

    def view(self, role: Role) -> LlmClientView:
        return self._views.get(role, self.default)

    async def ask(
        self, role: Role, system: str, user: str, *, temperature: float | None = None
    ) -> str:
        messages = [{"role": "system", "content": system}, {"role": "user", "content": user}]
        response = await self.view(role).complete(messages, role=role, temperature=temperature)
        return response.content or ""


@asynccontextmanager
async def role_models(
    env: TaskEnvironment, models: Mapping[Role, str]
) -> AsyncIterator[RoleModels]:
    """Views for the roles with a model of their own; their clients close on exit."""
    trial = env.llm
    if trial is None:
        raise ValueError("ds-star needs a model")
    clients: dict[str, LlmClient] = {}
    views: dict[str, LlmClientView] = {}
    try:
        for role, model in models.items():
            if model == trial.config.model:
                continue
            if model not in clients:
                config = trial.config.model_copy(update={"model": model})
                clients[model] = LlmClient(config, ledger=trial.client.ledger)
            views[role] = LlmClientView(
                clients[model], steps=trial.steps, epoch=trial.epoch, ledger=trial.ledger
            )
        yield RoleModels(trial, views)
    finally:
        for client in clients.values():
            await client.aclose()


async def run_debugged(
    env: TaskEnvironment,
    roles: RoleModels,
    code: str,
    *,
    role: Role,
    limits: ScriptLimits,
    attempts: int,
    summary_chars: int,
    files: str | None,
    args: tuple[str, ...] = (),
    temperature: float | None = None,
) -> ScriptRun:
    """Runs ``code``; while it fails and ``attempts`` are left, the debugger fixes it (a long
    traceback summarized first by its own call) and it runs again. The last run is returned,
    failed or not."""
    run = await run_script(env, code, role=role, limits=limits, args=args)
    for _ in range(attempts):
        if run.ok:
            break
        error = run.report(limits.output_chars)
        if len(error) > summary_chars:
            error = await roles.ask(
                "debugger",
                prompts.SUMMARIZER,
                prompts.summarizer_user(error),
                temperature=temperature,
            )
        reply = await roles.ask(
            "debugger",
            prompts.DEBUGGER,
            prompts.debugger_user(run.code, error, files),
            temperature=temperature,
        )
        try:
            fixed = extract_code(reply)
        except ReplyError:
            continue
        run = await run_script(env, fixed, role="debugger", limits=limits, args=args)
    return run
