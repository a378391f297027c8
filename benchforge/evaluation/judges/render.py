"""A resolved rubric as markdown: what ``benchforge task prepare`` writes and a maintainer
reads (the judge gets items as JSON, not this)."""

from __future__ import annotations

from benchforge.evaluation.judges.models import ResolvedRubric


def rubric_markdown(rubric: ResolvedRubric) -> str:
    items = {i.id: i for i in rubric.items}
    lines = [f"# Rubric {rubric.task_key} (version {rubric.version})", ""]
    if rubric.anchors:
        lines += ["| anchor | value |", "|---|---|"]
        lines += [f"| {name} | {a.text} |" for name, a in sorted(rubric.anchors.items())]
        lines.append("")
    for requirement in rubric.requirements:
        lines += [f"## {requirement.id}. {requirement.title}", ""]
        for standard in requirement.standards:
            lines += [f"### {standard.id}. {standard.title} (max {standard.max_points:g})", ""]
            for path in standard.paths:
                lines.append(f"- path {path.id}: {path.approach}")
                for spec in path.items:
                    item = items.get(spec.id)
                    text = item.criterion if item is not None else spec.criterion
                    lines.append(f"  - [{spec.points:g} | {spec.type}] {spec.id}: {text}")
            lines.append("")
    return "\n".join(lines)
