"""The JSON replies judges are asked for (their schemas go out as ``response_format``).

Shared by the judges (which validate replies with them) and the mock server's judge policies
(which build replies with them), so the two cannot drift apart. Unknown fields are ignored (a
model adding a "confidence" field is not a failure); missing or mistyped ones are.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class _Reply(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)


class ItemAward(_Reply):
    """One rubric item: the points given (0, or the item's points; a penalty's negative points
    when it applies) and the verbatim quotes from the output that justify them."""

    item_id: str
    awarded: float
    evidence: list[str] = Field(default_factory=list)
    reason: str = ""


class ItemsReply(_Reply):
    items: list[ItemAward]


class PathChoiceReply(_Reply):
    """Which listed path of a standard the output follows; ``path_id`` null: a valid approach
    the rubric does not list, worth ``unlisted_points`` (at most the standard's maximum), with
    quotes."""

    path_id: str | None
    unlisted_points: float | None = None
    evidence: list[str] = Field(default_factory=list)
    reason: str = ""


class DimensionJudgement(_Reply):
    """Report A against report B on one dimension: positive favours A (-10..10)."""

    score: float = Field(ge=-10, le=10)
    reason: str = ""


class GsbReply(_Reply):
    readability: DimensionJudgement
    depth: DimensionJudgement
