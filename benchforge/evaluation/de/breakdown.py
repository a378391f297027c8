"""What a DE score keeps of its scoring: per node, why it matched or not (CS: the model run
alone on its gold parents; CFS: the end-to-end build). Small and bounded (a few example rows,
truncated values), so a run browser shows the diff without rescoring."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from benchforge.core.records.scores import ScoreBreakdown, register_breakdown


class NodeCheck(BaseModel):
    """One comparison of a node's output with its gold (CS: the model run alone on its gold
    parents; CFS: the end-to-end build). Values are rendered as the scorer shows them (SQL
    NULL as ``NULL``, text quoted); example rows hold only some columns of wide tables."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    status: str = Field(description="match, missing, build_error, schema_mismatch, data_mismatch")
    reason: str = ""
    missing_columns: list[str] = Field(default_factory=list)
    extra_columns: list[str] = Field(default_factory=list)
    type_mismatches: dict[str, tuple[str, str]] = Field(
        default_factory=dict, description="column -> (gold type, candidate type)"
    )
    gold_rows: int | None = None
    candidate_rows: int | None = None
    differing_rows: int | None = None
    column_mismatches: dict[str, int] = Field(
        default_factory=dict, description="column -> rows that differ in it"
    )
    mismatch_key: str | None = Field(default=None, description="the key rows were paired on")
    examples_gold: list[dict[str, str]] = Field(
        default_factory=list, description="gold rows missing from the candidate (a few)"
    )
    examples_candidate: list[dict[str, str]] = Field(
        default_factory=list, description="candidate rows not in the gold (a few)"
    )
    omitted_columns: int = Field(default=0, description="columns left out of the examples")
    examples_withheld: bool = Field(
        default=False,
        description="example rows left out: held-out data, shown only when the operator asks "
        "(--show-heldout-examples)",
    )

    @property
    def matched(self) -> bool:
        return self.status == "match"


class NodeDetail(BaseModel):
    """Why one node of a DE task scored what it did."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    layer: str
    weight: float = Field(description="0: not scored (de_evol scores the changed nodes only)")
    cs_matched: bool
    cfs_matched: bool = Field(description="matched end to end and every gold ancestor matched")
    cs: NodeCheck
    cfs: NodeCheck
    cfs_blocked_by: list[str] = Field(
        default_factory=list, description="failed gold ancestors that zero this node in CFS"
    )


@register_breakdown
class DeNodes(ScoreBreakdown):
    """A DE score's breakdown: its nodes in the scorer's (topological) order."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: Literal["de_nodes"] = "de_nodes"
    nodes: list[NodeDetail] = Field(default_factory=list)

    def withheld(self) -> DeNodes:
        """Without example rows (see ``NodeCheck.examples_withheld``): what a score on a
        held-out dataset keeps unless the operator asks for its rows."""

        def check(c: NodeCheck) -> NodeCheck:
            if not (c.examples_gold or c.examples_candidate):
                return c
            update = {"examples_gold": [], "examples_candidate": [], "examples_withheld": True}
            return c.model_copy(update=update)

        nodes = [n.model_copy(update={"cs": check(n.cs), "cfs": check(n.cfs)}) for n in self.nodes]
        return self.model_copy(update={"nodes": nodes})


def nodes_of(score: object) -> list[NodeDetail]:
    """The DE nodes of a score (a trial's, a submission's) or breakdown; none for any other
    family's."""
    breakdown = score if isinstance(score, ScoreBreakdown) else getattr(score, "breakdown", None)
    return breakdown.nodes if isinstance(breakdown, DeNodes) else []
