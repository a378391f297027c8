"""``command``: any external agent (an OpenHands / Codex / Claude Code style CLI) through a
subprocess contract.

The contract, for authors of such a CLI:
- It is started in the sandbox, working directory = the workspace, with ``argv`` from the agent
  config, where ``{workspace}``, ``{prompt_file}`` and ``{model}`` are substituted.
- The task prompt is in ``TASK.md`` (``$BENCHFORGE_PROMPT_FILE``) and on stdin.
- Environment: ``BENCHFORGE_WORKSPACE``, ``BENCHFORGE_PROMPT_FILE``, ``BENCHFORGE_TASK_FAMILY``,
  ``BENCHFORGE_DATA`` (read-only dataset folder), ``BENCHFORGE_DBT_DB``, ``DBT_PROFILES_DIR``,
  ``DBT_PROFILE`` and ``DBT_TARGET`` (a dbt profile ``benchforge`` on a dev DuckDB in the
  workspace, used whatever profile the project names), and when a model is set
  ``BENCHFORGE_MODEL``, ``OPENAI_BASE_URL``, ``OPENAI_API_KEY``. Nothing else of the host's
  environment is passed.
- It writes its outputs in the workspace; an optional final answer goes to ``answer.txt``.
- Exit code 0 = finished, anything else = agent error (scored on what it left); running past
  ``wall_s`` = wall_clock. Network is off unless the config sets ``network: true`` (needed for a
  CLI that calls a remote model itself; recorded in the trial's isolation).
- ``read_only`` names the host paths the CLI needs (its installation). A path that is, lies
  inside or contains one the harness protects (the artifact root, the scratch space, datasets,
  the catalogue; after resolving symlinks and ``..``) is refused before the run starts, and
  again here when the sandbox request is built, unless the operator allowed it in the settings
  (``sandbox_allowed_read_only``): a config cannot widen the sandbox.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from benchforge.agents.protocol import AgentOutcome, TaskEnvironment
from benchforge.agents.registration import register_agent
from benchforge.agents.tools.de import ensure_dev_database, sandbox_request
from benchforge.core.sandbox import SandboxError
from benchforge.core.sandbox.exposure import refusals


class CommandAgentConfig(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(default="command", pattern=r"^[a-z0-9][a-z0-9_.-]*$")
    argv: list[str] = Field(min_length=1)
    env: dict[str, str] = Field(default_factory=dict, description="extra, non-secret variables")
    network: bool = False
    read_only: list[Path] = Field(
        default_factory=list,
        description="host paths the CLI needs (its installation), visible read-only; the "
        "sandbox shows only system folders, the Python runtime and the workspace, so a CLI "
        "installed anywhere else (/opt, a home folder, /tmp) must be listed here; never a "
        "protected path (artifacts, scratch, datasets, the catalogue) or a folder holding one",
    )
    wall_s: float | None = Field(default=None, gt=0, description="None: the trial's budget")
    uses_model: bool = False


@register_agent("command", config=CommandAgentConfig, config_required=True, order=1000)
class CommandAgent:
    def __init__(self, config: CommandAgentConfig) -> None:
        self._config = config
        self.name = config.name

    @property
    def config(self) -> CommandAgentConfig:
        return self._config

    @property
    def uses_model(self) -> bool:
        return self._config.uses_model

    @property
    def config_mounts(self) -> list[Path]:
        """The host paths the config asks the sandbox to show (``MountsHostPaths``)."""
        return list(self._config.read_only)

    def _argv(self, env: TaskEnvironment, model: str) -> list[str]:
        values = {
            "workspace": str(env.workspace),
            "prompt_file": str(env.workspace / "TASK.md"),
            "model": model,
        }
        return [part.format(**values) for part in self._config.argv]

    async def run(self, env: TaskEnvironment) -> AgentOutcome:
        # Checked when the run started too; again here, as a path may have changed since (a
        # symlink retargeted): an infrastructure error, never the CLI run with it.
        refused = refusals(self._config.read_only, env.hidden, env.allowed_read_only)
        if refused:
            raise SandboxError(f"agent {self.name}: refused: {'; '.join(refused)}")
        ensure_dev_database(env)
        extra = {
            **self._config.env,
            "BENCHFORGE_PROMPT_FILE": str(env.workspace / "TASK.md"),
            "BENCHFORGE_TASK_FAMILY": env.family,
        }
        model = env.key.model
        if env.llm is not None:
            key = env.llm.config.api_key
            extra |= {
                "BENCHFORGE_MODEL": env.llm.config.model,
                "OPENAI_BASE_URL": env.llm.config.normalized_base_url,
                "OPENAI_API_KEY": key.get_secret_value() if key else "",
            }
        env.env = {**env.env, **extra}
        wall = self._config.wall_s or env.limits.wall_s
        request = sandbox_request(
            env, self._argv(env, model), wall_s=wall, stdin=env.prompt, network=self._config.network
        )
        request = request.model_copy(
            update={"read_only": [*request.read_only, *self._config.read_only]}
        )
        started = env.trajectory.start("tool", "command", arguments={"argv": request.argv})
        result = await env.sandbox.run_async(request)
        env.trajectory.step(
            "tool",
            "command",
            started,
            arguments={"argv": request.argv},
            output=(result.stdout + "\n" + result.stderr)[-6000:],
            ok=result.returncode == 0,
            exit_code=result.returncode,
            timed_out=result.timed_out,
        )
        answer_file = env.workspace / "answer.txt"
        answer = _read_answer(answer_file)
        if result.timed_out:
            return AgentOutcome(termination="wall_clock", answer=answer)
        if result.returncode != 0:
            reason = result.killed_reason or f"exit code {result.returncode}"
            return AgentOutcome(termination="agent_error", answer=answer, error=reason)
        return AgentOutcome(termination="finished", answer=answer)


def _read_answer(path: Path) -> str | None:
    resolved = path.resolve()
    if path.is_symlink() or not resolved.is_file() or resolved.parent != path.parent.resolve():
        return None
    return resolved.read_text(errors="replace")[:20000]
