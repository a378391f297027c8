"""``react-da``: a ReAct tool-calling agent for open data-analysis tasks (after DAComp's DA
baseline).

Each round the model sees the conversation and the ``da`` tools (sql, python, write_file,
read_file, finish) and answers with tool calls; the code tools run in the trial's sandbox
against the read-only analysis database. The deliverable is a markdown report at
``report/report.md`` with charts saved beside it. The stop rules are react-de's: the model
finishes, answers without a tool call, issues the same action ``repeat_limit`` times in a row,
or runs out of rounds. Model calls are recorded by the trial's client view; the agent records
its tool steps.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from benchforge.agents.builtin.react import react_loop
from benchforge.agents.protocol import AgentOutcome, TaskEnvironment
from benchforge.agents.registration import register_agent
from benchforge.agents.tools.da import DaToolbox

SYSTEM_PROMPT = """You are a data analyst answering a business question from data. The \
question is in the task; the data is a DuckDB database of analysis-ready tables, which you \
query with the sql tool (read-only) or from Python (the python tool; the database path is in \
the ANALYSIS_DB environment variable). There is no network.

Work from the data: look at the tables and their columns first, then compute every figure you \
report with a query or a script. Never estimate, invent or round away a number you could \
compute, and say which table and filter a figure comes from when it is not obvious.

Deliver a markdown report at report/report.md (write it with write_file): start with a direct \
answer to the question, then the evidence (figures, a markdown table where it helps), the \
likely causes or drivers, caveats about the data, and concrete recommendations. Save any chart \
as a PNG under report/ (matplotlib, savefig) and link it from the report with a relative path, \
e.g. ![title](chart.png). Call finish with a short summary once the report is written."""


class ReactDaConfig(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    system_prompt: str = SYSTEM_PROMPT
    temperature: float | None = Field(default=None, ge=0, le=2)
    max_tokens: int | None = Field(default=None, gt=0)


MOCK_MODEL = "mock-script:react-da-report"
"""The mock server's script react-da runs on offline when a run names no model."""


@register_agent("react-da", config=ReactDaConfig, order=25, mock_model=MOCK_MODEL)
class ReactDaAgent:
    name = "react-da"
    uses_model = True

    def __init__(self, config: ReactDaConfig | None = None) -> None:
        self._config = config or ReactDaConfig()

    @property
    def config(self) -> ReactDaConfig:
        return self._config

    async def run(self, env: TaskEnvironment) -> AgentOutcome:
        return await react_loop(env, DaToolbox(env), self._config, self.name)
