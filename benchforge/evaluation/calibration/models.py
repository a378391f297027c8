"""What a calibration produces: every judgment, and per judge model its figures, cost, latency
and the gate's decision."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from benchforge.evaluation.calibration.gate import GateDecision, GateSettings
from benchforge.evaluation.calibration.stats import BootstrapSettings, KindStats

MOCK_PREFIX = "mock-"


def is_mock_model(model: str) -> bool:
    """The mock server's judges are named ``mock-...`` (``mock-judge``, ``mock-judge-noisy:..``)."""
    return model.startswith(MOCK_PREFIX)


class Judgment(BaseModel):
    """One judge's decision on one case in one repeat. ``value`` is on the statistics' scale
    (None: unscored); ``raw`` as the judge's verdict reads (points, or good/same/bad, or
    'inconsistent' when the two orders of a GSB pair disagree)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    case_id: str
    repeat: int
    status: Literal["scored", "unscored"]
    value: float | None
    raw: str
    judge_awarded: float | None = Field(default=None, description="rubric: before code checks")
    consistent: bool | None = Field(default=None, description="GSB: both orders agreed")
    orders: tuple[int, int] | None = Field(
        default=None, description="GSB: the candidate's verdict (1/0/-1) shown first, second"
    )
    flags: list[str] = Field(default_factory=list)


class JudgeCalibration(BaseModel):
    """One judge model against the humans."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    model: str
    fingerprint: str
    judgments: int
    unscored: int
    requests: int = Field(description="calls sent (cache hits aside)")
    cost_usd: float | None = Field(description="None: the model is not in the price table")
    cost_per_1000: float | None = Field(description="USD per 1,000 judgments")
    latency_p50_s: float | None
    latency_p95_s: float | None
    kinds: list[KindStats]
    gate: GateDecision
    mock: bool = Field(
        default=False, description="judged by the Benchforge mock server, not a real model"
    )
    details: list[Judgment] = Field(default_factory=list)

    def kind(self, name: str) -> KindStats | None:
        return next((k for k in self.kinds if k.kind == name), None)


class CalibrationReport(BaseModel):
    """A calibration of one or more judge models on one labelled case set."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    created_at: datetime
    cases_version: str
    cases: int
    labels: int
    raters: list[str]
    repeats: int
    gate_settings: GateSettings
    bootstrap: BootstrapSettings
    prompt_versions: dict[str, str] = Field(default_factory=dict)
    judges: list[JudgeCalibration]

    @property
    def mock_judged(self) -> bool:
        """Whether any judge of the report was the mock server's."""
        return any(j.mock for j in self.judges)

    @property
    def accepted(self) -> list[str]:
        return [j.model for j in self.judges if j.gate.accepted]

    def judge(self, model: str) -> JudgeCalibration:
        for found in self.judges:
            if found.model == model:
                return found
        raise KeyError(model)
