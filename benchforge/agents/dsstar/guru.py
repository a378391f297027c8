"""The DS-Guru baseline (KramaBench's reference system): one call shown the question, the lake's
file names and the start of each file, answered with a JSON step plan and one script; the script
runs in the sandbox (as ds-star's do: alone, lake read-only, no network, limited), and when it
fails or prints no answer the model is shown the error in the same conversation and asked again,
``error_retries`` times at most. The script prints its answers as one JSON object; the value of
``main-task`` is the agent's answer."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from benchforge.agents.dsstar.config import DsGuruConfig
from benchforge.agents.dsstar.lake import ScriptRun, lake_files, lake_root, run_script
from benchforge.agents.dsstar.replies import ReplyError, extract_code, extract_json
from benchforge.agents.protocol import AgentOutcome, TaskEnvironment
from benchforge.core.llm import LlmRequestError

ROLE = "guru"

SYSTEM = (
    "You are a data-science assistant answering a question over a folder of data files. "
    "Break the question into subtasks and write one Python script that solves them all. "
    "Reply with two blocks: first a ```json block holding the plan, an object whose keys are "
    "'main-task' and 'subtask-1', 'subtask-2', ..., each an object with 'query' (what it "
    "answers) and 'data_sources' (the files it reads); then a ```python block with the script. "
    "The script runs with the data folder as its working directory (read-only, files named by "
    "the paths listed), no network, nothing kept between runs; pandas and numpy are available. "
    "Its last line of output must be one JSON object mapping 'main-task' and every subtask to "
    "its answer."
)


def file_sample(path: Path, rows: int, chars: int) -> str:
    """The first ``rows`` lines of a text file (at most ``chars`` characters), or what a
    binary file is."""
    with path.open("rb") as handle:
        head = handle.read(chars)
    if b"\0" in head:
        return f"(binary file, {path.stat().st_size} bytes)"
    lines = head.decode("utf-8", errors="replace").splitlines()[:rows]
    return "\n".join(lines)


def lake_overview(root: Path, files: list[str], config: DsGuruConfig) -> str:
    parts = []
    for index, name in enumerate(files):
        if index < config.max_files:
            sample = file_sample(root / name, config.sample_rows, config.sample_chars)
            parts.append(f"## {name}\n```\n{sample}\n```")
        else:
            parts.append(f"## {name}")
    return "\n\n".join(parts) or "(no data files)"


def main_answer(run: ScriptRun) -> str:
    """``main-task`` of the JSON object on the script's last non-empty output line."""
    lines = [line for line in run.stdout.splitlines() if line.strip()]
    if not lines:
        raise ReplyError("the script printed nothing")
    try:
        answers = json.loads(lines[-1])
    except ValueError:
        raise ReplyError("the last line of output is not a JSON object") from None
    if not isinstance(answers, dict) or "main-task" not in answers:
        raise ReplyError("the last line of output has no 'main-task' answer")
    value: Any = answers["main-task"]
    return value if isinstance(value, str) else json.dumps(value)


class DsGuruAgent:
    uses_model = True

    def __init__(self, config: DsGuruConfig | None = None, *, name: str = "ds-guru") -> None:
        self.name = name
        self._config = config or DsGuruConfig()

    @property
    def config(self) -> DsGuruConfig:
        return self._config

    def supports_toolset(self, name: str) -> bool:
        return name in self._config.toolsets

    async def run(self, env: TaskEnvironment) -> AgentOutcome:
        llm = env.llm
        if llm is None:
            raise ValueError(f"{self.name} needs a model")
        config = self._config
        root = lake_root(env)
        overview = lake_overview(root, lake_files(root), config)
        messages: list[dict[str, Any]] = [
            {"role": "system", "content": SYSTEM},
            {"role": "user", "content": f"# Question\n{env.prompt}\n\n# Data files\n{overview}"},
        ]
        problem = "no attempt"
        for _ in range(config.error_retries + 1):
            try:
                response = await llm.complete(messages, role=ROLE, temperature=config.temperature)
            except LlmRequestError as exc:
                return AgentOutcome(termination="agent_error", error=str(exc))
            reply = response.content or ""
            messages.append({"role": "assistant", "content": reply})
            try:
                extract_json(reply.split("```python")[0])  # the plan comes first
                code = extract_code(reply)
            except ReplyError as exc:
                problem = str(exc)
                messages.append(
                    {"role": "user", "content": f"{problem}. Reply again, both blocks."}
                )
                continue
            run = await run_script(env, code, role=ROLE, limits=config.scripts)
            try:
                if not run.ok:
                    raise ReplyError("the script failed")
                return AgentOutcome(termination="finished", answer=main_answer(run))
            except ReplyError as exc:
                problem = str(exc)
                output = run.report(config.scripts.output_chars)
                messages.append(
                    {
                        "role": "user",
                        "content": f"{problem}:\n{output}\n\nFix it; reply with the plan and the "
                        "whole script again.",
                    }
                )
        return AgentOutcome(termination="round_limit", error=f"no answer: {problem}")
