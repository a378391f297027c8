"""``DsStarConfig``: the ds-star agent's settings (hashed into the trial key like every agent
config), and the DS-Guru baseline's ``DsGuruConfig``."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

Role = Literal[
    "analyzer", "planner", "coder", "verifier", "router", "debugger", "finalizer", "retriever"
]
"""The parts of ds-star that call a model; each model step of its trajectory names one."""

LAKE_TOOLSETS = ("lake",)
"""The toolsets of the tasks ds-star and ds-guru are paired with by default: a folder of
files (a data lake) and a question; the answer is what the agent returns."""

ORACLE_FILES_ENV = "BENCHFORGE_LAKE_ORACLE_FILES"
"""In ``TaskEnvironment.env``: the lake files a task needs (relative paths, one a line), set
by a family that runs the oracle-retrieval setting; read only in ``retrieval: oracle``."""


class ScriptLimits(BaseModel):
    """Limits of one generated script (each runs alone in the sandbox: no kernel state, no
    network, the lake read-only); the trial's own action timeout and memory cap them too."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    wall_s: float = Field(default=120.0, gt=0)
    memory_mb: int = Field(default=2048, ge=64)
    output_chars: int = Field(
        default=6000, ge=200, description="of a script's output, the end shown to the model"
    )


class Ablations(BaseModel):
    """Switches that remove a part of ds-star (the paper's ablations)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    no_analyzer: bool = Field(
        default=False, description="no file descriptions: the roles see the file names only"
    )
    no_router: bool = Field(
        default=False, description="never truncate the plan: every insufficient round adds"
    )


class DsStarConfig(BaseModel):
    """``models``: a model per role (a role not named uses the trial's model);
    ``embedding_model``: the retriever's. ``max_rounds``: verify-route-plan-code rounds after
    the first step; ``max_debug_attempts``: debugger calls per failing script.
    ``retrieval_limit``: above this many lake files only the ``top_k`` nearest the question
    are shown (``embedding``: cosine over embeddings of the question and each description;
    ``oracle``: the files the task names in ``ORACLE_FILES_ENV``).
    ``description_cache_dir``: where descriptions are cached by file hash, shared by every
    task (None: ``$XDG_CACHE_HOME/benchforge/ds-star``)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    models: dict[Role, str] = Field(default_factory=dict)
    embedding_model: str = "text-embedding-3-small"
    max_rounds: int = Field(default=20, ge=1)
    max_debug_attempts: int = Field(default=3, ge=0)
    traceback_summary_chars: int = Field(
        default=1500, ge=100, description="a longer traceback is summarized by a model call"
    )
    retrieval: Literal["embedding", "oracle"] = "embedding"
    retrieval_limit: int = Field(default=100, ge=1)
    top_k: int = Field(default=100, ge=1)
    analyzer_concurrency: int = Field(default=4, ge=1)
    ablations: Ablations = Field(default_factory=Ablations)
    scripts: ScriptLimits = Field(default_factory=ScriptLimits)
    description_cache_dir: Path | None = None
    answer_guidelines: str = Field(
        default="Print only the answer: a number without units, a short string, or a JSON "
        "list of values for a list.",
        description="what the finalizer is told about the answer's format",
    )
    temperature: float | None = Field(default=None, ge=0, le=2)
    toolsets: tuple[str, ...] = LAKE_TOOLSETS

    def model_for(self, role: Role, default: str) -> str:
        return self.models.get(role, default)


class DsGuruConfig(BaseModel):
    """DS-Guru (KramaBench's reference system): one call with the question, the file names and
    a sample of each file, answered with a JSON step plan and code; ``error_retries`` times at
    most (five: the few-shot variant; zero: one-shot) the model is shown the error and asked
    again."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    error_retries: int = Field(default=5, ge=0)
    sample_rows: int = Field(default=5, ge=1, description="lines shown of each text file")
    sample_chars: int = Field(default=1200, ge=100, description="characters shown of each file")
    max_files: int = Field(default=200, ge=1, description="files sampled; the rest only named")
    scripts: ScriptLimits = Field(default_factory=ScriptLimits)
    temperature: float | None = Field(default=None, ge=0, le=2)
    toolsets: tuple[str, ...] = LAKE_TOOLSETS
