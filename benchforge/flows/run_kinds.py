"""The nightly's run kinds: each kind is one run of the night (a suite or some of its tasks,
run by some agents on some models), configured, not coded. Importable without Prefect: the
CLI and ``benchforge schedule add`` check a nightly's kinds before Prefect starts."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, field_validator

from benchforge.agents.registry import DEFAULT_REAL_MODEL, AgentSpelling, default_models
from benchforge.core.errors import ConfigError

KindName = Annotated[str, Field(pattern=r"^[a-z0-9][a-z0-9-]*$", max_length=40)]


class RunKind(BaseModel):
    """One run of the nightly: verified, run, scored and reported on its own. The first kind's
    run is the nightly's run (``nightly-<date>``); each other kind's is ``<that>-<name>``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: KindName = Field(description="names the kind's run: RUN_ID-NAME (the first: RUN_ID)")
    suites: list[str] = Field(min_length=1, description="task suites under task_specs/")
    task_ids: list[str] | None = Field(
        default=None, description="only these tasks of the suites; default all"
    )
    agents: list[AgentSpelling] = Field(
        min_length=1, description="oracle, null, react-de, react-da, single-call, NAME=CONFIG"
    )
    models: list[str] | None = Field(
        default=None,
        description="models for agents that call one; default a real model with an API key, "
        "else mock_models",
    )
    mock_models: list[str] | None = Field(
        default=None,
        description="the default models when no API key is configured (mock server scripts); "
        "default each model-calling agent's own mock script",
    )
    epochs: Annotated[int, Field(ge=1, le=100)] = Field(
        default=1, description="trials per (task, agent, model)"
    )
    visible_scores: bool = Field(
        default=False,
        description="also score each trial on the visible dataset (families with a held-out "
        "dataset: the _visible scores)",
    )

    @field_validator("agents", mode="before")
    @classmethod
    def _yaml_null_is_the_null_agent(cls, agents: Any) -> Any:
        # YAML reads an unquoted `null` (the do-nothing agent's name) as nothing
        if isinstance(agents, list):
            return ["null" if agent is None else agent for agent in agents]
        return agents


# The shipped nightly: the DE suite (executed and blueprint tasks), then the judged analysis
# suite as a run of its own (nightly-<date>-da), each with its agents and offline mock script.
NIGHTLY_RUN_KINDS: tuple[RunKind, ...] = (
    RunKind(
        name="de",
        suites=["de-crm"],
        agents=["oracle", "null", "react-de"],
        mock_models=["mock-script:react-de-crm-sla-solve"],
    ),
    RunKind(
        name="da",
        suites=["da-crm"],
        agents=["oracle", "null", "react-da"],
        mock_models=["mock-script:react-da-report"],
    ),
)

# The lake-crm questions (task_specs/lake-crm/questions); the lake kind runs their full and
# oracle settings, as the README's lake command does.
LAKE_QUESTIONS = (
    "emea-countries",
    "webinar-campaigns",
    "top-revenue-campaign",
    "analytics-mean-price",
    "sales-cloud-top-products",
    "won-usd-2024",
    "top-industry-won",
    "campaign-cost-2023",
    "active-amer-accounts",
    "escalated-urgent-cases",
)

# Shipped, not run by default (they would lengthen every nightly): `benchforge nightly --kind
# dab` runs one (with the defaults: `--kind de --kind da --kind dab`); `explore` runs the
# exploration suite (docs/explore-tasks.md).
OPTIONAL_RUN_KINDS: tuple[RunKind, ...] = (
    RunKind(
        name="dab",
        suites=["dab-crm"],
        agents=["oracle", "null", "react-dab"],
        mock_models=["mock-script:react-dab-crm-solve"],
        epochs=3,
    ),
    RunKind(
        name="explore",
        suites=["explore-enterprise"],
        agents=["oracle", "null", "react-explore"],
        mock_models=["mock-script:react-explore-revenue"],
        epochs=3,
    ),
    RunKind(
        name="lake",
        suites=["lake-crm"],
        task_ids=[f"crm-lake-{q}-{s}" for q in LAKE_QUESTIONS for s in ("full", "oracle")],
        agents=["oracle", "null", "ds-star", "react-lake"],
        epochs=3,
    ),
)


RUN_KINDS = TypeAdapter(list[RunKind])


def kind_models(kind: RunKind, has_api_key: bool) -> list[str]:
    """The models ``kind`` runs: its own, else a real model with an API key, else its mock
    models, else each model-calling agent's mock script."""
    if kind.models is not None:
        return list(kind.models)
    if has_api_key:
        return [DEFAULT_REAL_MODEL]
    if kind.mock_models is not None:
        return list(kind.mock_models)
    return default_models(list(kind.agents), has_api_key=False)


def kind_run_ids(run_id: str, kinds: list[RunKind]) -> list[str]:
    """The run id of each of ``kinds`` in a nightly named ``run_id``: the first kind's run is
    the nightly's own, so ``nightly-<date>`` stays the night's main leaderboard."""
    return [run_id, *(f"{run_id}-{k.name}" for k in kinds[1:])]


def checked_kinds(kinds: list[RunKind] | None) -> list[RunKind]:
    """``kinds`` (default the shipped ones), refused when empty or when two share a name
    (their runs would share a run id). Raises ConfigError."""
    found = list(NIGHTLY_RUN_KINDS if kinds is None else kinds)
    if not found:
        raise ConfigError("run_kinds: give at least one run kind")
    names = [k.name for k in found]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise ConfigError(f"run_kinds: more than one kind named {', '.join(twice)}")
    return found


def read_run_kinds(path: Path) -> list[RunKind]:
    """The run kinds listed in a YAML or JSON file (JSON is YAML). Raises ConfigError with the
    file and the field path of the first problem."""
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as err:
        raise ConfigError(f"{path}: {err}") from None
    try:
        return RUN_KINDS.validate_python(data)
    except ValidationError as err:
        first = err.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "(top)"
        raise ConfigError(f"{path}: {where}: {first['msg']}") from None
