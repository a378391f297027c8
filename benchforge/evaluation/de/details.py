"""Why each node of a DE score matched or not, in the bounded form a ``TrialScore`` keeps (its
breakdown, :class:`DeNodes`): a score stays small however wide or wrong the tables are."""

from __future__ import annotations

from benchforge.evaluation.de.breakdown import DeNodes, NodeCheck, NodeDetail
from benchforge.evaluation.de.compare import NodeComparison
from benchforge.evaluation.de.scoring import DeScore, NodeScore

# Bounds of the per-node detail kept in a score.
EXAMPLE_ROWS = 3  # example rows per side
EXAMPLE_COLUMNS = 16  # columns per example row: the key and differing ones first
VALUE_CHARS = 120  # characters per example value
REASON_CHARS = 600
LIST_ITEMS = 50  # columns named per list (missing, extra, mismatching)


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def node_check(comparison: NodeComparison) -> NodeCheck:
    """The stored form of a comparison: at most ``EXAMPLE_ROWS`` example rows a side, of at
    most ``EXAMPLE_COLUMNS`` columns (the pairing key and the differing columns kept first,
    then gold's order), values cut to ``VALUE_CHARS``."""
    c = comparison
    names = list(dict.fromkeys(k for row in [*c.examples_gold, *c.examples_candidate] for k in row))
    wanted = [k for k in (c.mismatch_key, *c.column_mismatches) if k is not None and k in names]
    kept = set(list(dict.fromkeys([*wanted, *names]))[:EXAMPLE_COLUMNS])

    def rows(examples: list[dict[str, str]]) -> list[dict[str, str]]:
        return [
            {k: _cut(v, VALUE_CHARS) for k, v in row.items() if k in kept}
            for row in examples[:EXAMPLE_ROWS]
        ]

    return NodeCheck(
        status=c.status,
        reason=_cut(c.reason, REASON_CHARS),
        missing_columns=c.missing_columns[:LIST_ITEMS],
        extra_columns=c.extra_columns[:LIST_ITEMS],
        type_mismatches=dict(list(c.type_mismatches.items())[:LIST_ITEMS]),
        gold_rows=c.gold_rows,
        candidate_rows=c.candidate_rows,
        differing_rows=c.differing_rows,
        column_mismatches=dict(list(c.column_mismatches.items())[:LIST_ITEMS]),
        mismatch_key=c.mismatch_key,
        examples_gold=rows(c.examples_gold),
        examples_candidate=rows(c.examples_candidate),
        omitted_columns=len(names) - len(kept),
        examples_withheld=c.examples_withheld,
    )


def node_detail(node: NodeScore) -> NodeDetail:
    return NodeDetail(
        name=node.name,
        layer=node.layer,
        weight=node.weight,
        cs_matched=node.cs.matched,
        cfs_matched=node.cfs_score,
        cs=node_check(node.cs),
        cfs=node_check(node.cfs),
        cfs_blocked_by=node.cfs_blocked_by[:LIST_ITEMS],
    )


def node_details(score: DeScore) -> list[NodeDetail]:
    """Why each node of ``score`` matched or not, in the scorer's (topological) order."""
    return [node_detail(n) for n in score.nodes]


def de_breakdown(score: DeScore) -> DeNodes:
    """The breakdown a DE trial score keeps: :func:`node_details`."""
    return DeNodes(nodes=node_details(score))
