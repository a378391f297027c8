"""``oracle``: applies the gold solution. Every executable task must score it 100; a task where
it does not is a broken task, not a weak agent.

It is the only agent that sees a solution: the runner hands it a ``SolutionProvider`` (built
from the gold repositories) instead of putting anything gold into the workspace. A solution
folder holding ``ANSWER`` (``SOLUTION_ANSWER_FILE``) is a family's reference answer: the
oracle returns it as its answer.
"""

from __future__ import annotations

import shutil

from pydantic import BaseModel, ConfigDict

from benchforge.agents.protocol import AgentOutcome, TaskEnvironment
from benchforge.agents.registration import AgentResources, SolutionProvider, register_agent
from benchforge.core.records.trials import SOLUTION_ANSWER_FILE

__all__ = ["OracleAgent", "OracleConfig", "SolutionProvider", "oracle"]

# Build outputs only: a solution's dbt_packages/ are the task's vendored packages.
_IGNORED = shutil.ignore_patterns("target", "logs", ".user.yml", SOLUTION_ANSWER_FILE)


class OracleConfig(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class OracleAgent:
    name = "oracle"
    uses_model = False

    def __init__(self, solutions: SolutionProvider) -> None:
        self.solutions = solutions

    @property
    def config(self) -> OracleConfig:
        return OracleConfig()

    async def run(self, env: TaskEnvironment) -> AgentOutcome:
        solution = self.solutions(env.key)
        if solution is None:
            return AgentOutcome(
                termination="finished", answer=None, error="no reference solution for this task"
            )
        target = env.workspace / env.submission
        if target.exists():
            shutil.rmtree(target)
        shutil.copytree(solution, target, ignore=_IGNORED)
        answer_file = solution / SOLUTION_ANSWER_FILE
        if answer_file.is_file():  # a family scoring the answer: the reference answer
            return AgentOutcome(termination="finished", answer=answer_file.read_text().strip())
        return AgentOutcome(termination="finished", answer=f"applied the solution {solution.name}")


@register_agent("oracle", order=0)
def oracle(_config: None, resources: AgentResources) -> OracleAgent:
    """The oracle reads the run's solutions: a factory, not the class, is registered."""
    return OracleAgent(resources.solutions)
