"""Putting anchor values into text: the rubric a judge sees and the reports it compares.

Rubric criteria, the reference report and the baseline reports are templates citing anchors
and claims as ``{{name}}``; on each dataset they are rendered with that dataset's values (an
anchor's formatted number, a claim's words, :mod:`benchforge.evaluation.da.claims`), so the
rubric the judge applies and the reference it is validated with always agree with the data. A
placeholder naming neither is an authoring error (``TaskSpecError`` naming the template file),
never a literal ``{{name}}`` shown to a judge.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from benchforge.evaluation.da.anchors import perturbed
from benchforge.evaluation.da.claims import ClaimValue
from benchforge.evaluation.da.errors import spec_error
from benchforge.evaluation.da.spec import AnchorSpec, DaOpenTask
from benchforge.evaluation.judges.models import (
    ANCHOR_PLACEHOLDER,
    AnchorValue,
    ResolvedItem,
    ResolvedRubric,
    RubricItemSpec,
    RubricPathSpec,
    RubricRequirementSpec,
    RubricStandardSpec,
    content_hash,
)
from benchforge.evaluation.tasks.models import LoadedTask

WRONG_ANCHOR_FACTOR = 1.37


def placeholders(text: str) -> list[str]:
    """The anchor names ``text`` cites, in order of first use."""
    return list(dict.fromkeys(ANCHOR_PLACEHOLDER.findall(text)))


def substitute(
    text: str,
    anchors: Mapping[str, AnchorValue],
    source: Path,
    field: str,
    claims: Mapping[str, ClaimValue] | None = None,
) -> str:
    """``text`` with every ``{{name}}`` replaced by the anchor's text (or the claim's words);
    an unknown name is an error naming ``source`` and ``field``."""
    texts = {name: claim.text for name, claim in (claims or {}).items()}
    texts.update({name: anchor.text for name, anchor in anchors.items()})
    missing = [name for name in placeholders(text) if name not in texts]
    if missing:
        raise spec_error(
            source,
            field,
            f"cites {', '.join('{{' + m + '}}' for m in missing)}, which no anchor or claim "
            "defines",
        )
    return ANCHOR_PLACEHOLDER.sub(lambda m: texts[m.group(1)], text)


def render_report(
    template_text: str,
    anchors: Mapping[str, AnchorValue],
    source: Path | str = "report",
    claims: Mapping[str, ClaimValue] | None = None,
) -> str:
    """A reference or baseline report template rendered with one dataset's anchor values and
    claims."""
    return substitute(template_text, anchors, Path(source), "(template)", claims)


def wrong_anchor_report(
    reference_template: str,
    anchors: Mapping[str, AnchorValue],
    specs: Mapping[str, AnchorSpec],
    factor: float = WRONG_ANCHOR_FACTOR,
    source: Path | str = "reference.md",
    claims: Mapping[str, ClaimValue] | None = None,
) -> str:
    """The reference with every numeric anchor multiplied by ``factor`` (and formatted as the
    task formats it): well written, wrong numbers (its claims keep the dataset's words).
    Verification checks that it loses exactly the accuracy items citing those anchors."""
    return render_report(reference_template, perturbed(anchors, specs, factor), source, claims)


def resolve_rubric(
    task: LoadedTask,
    anchors: Mapping[str, AnchorValue],
    claims: Mapping[str, ClaimValue] | None = None,
) -> ResolvedRubric:
    """The task's rubric on one dataset: criteria (and titles, approaches) with anchors and
    claims substituted, each accuracy item carrying its anchor's value and tolerance.
    ``version`` covers the rubric spec, the anchor values and the claims' words."""
    spec = task.spec
    if not isinstance(spec, DaOpenTask):
        raise TypeError(f"{task.key} is a {spec.family} task, not a da_open task")
    source = task.folder / "task.yaml"
    requirements: list[RubricRequirementSpec] = []
    items: list[ResolvedItem] = []
    for r, requirement in enumerate(spec.rubric.requirements):
        standards: list[RubricStandardSpec] = []
        for s, standard in enumerate(requirement.standards):
            where = f"rubric.requirements[{r}].standards[{s}]"
            paths: list[RubricPathSpec] = []
            for p, path in enumerate(standard.paths):
                path_items: list[RubricItemSpec] = []
                for i, item in enumerate(path.items):
                    field = f"{where}.paths[{p}].items[{i}]"
                    criterion = substitute(
                        item.criterion, anchors, source, f"{field}.criterion", claims
                    )
                    path_items.append(item.model_copy(update={"criterion": criterion}))
                    items.append(
                        ResolvedItem(
                            id=item.id,
                            standard_id=standard.id,
                            path_id=path.id,
                            type=item.type,
                            points=item.points,
                            criterion=criterion,
                            anchor=_item_anchor(item, anchors, source, field),
                        )
                    )
                approach = substitute(path.approach, anchors, source, f"{where}.paths[{p}]", claims)
                paths.append(path.model_copy(update={"approach": approach, "items": path_items}))
            title = substitute(standard.title, anchors, source, f"{where}.title", claims)
            standards.append(standard.model_copy(update={"title": title, "paths": paths}))
        title = substitute(
            requirement.title, anchors, source, f"rubric.requirements[{r}].title", claims
        )
        requirements.append(requirement.model_copy(update={"title": title, "standards": standards}))
    content: dict[str, object] = {
        "rubric": spec.rubric.model_dump(mode="json"),
        "anchors": {n: a.model_dump(mode="json") for n, a in sorted(anchors.items())},
    }
    cited = _rubric_claims(spec, claims or {})
    if cited:  # only claims the rubric shows change what the judge applies
        content["claims"] = cited
    version = content_hash(content)
    return ResolvedRubric(
        task_key=task.key,
        requirements=requirements,
        items=items,
        anchors=dict(sorted(anchors.items())),
        version=version,
    )


def _item_anchor(
    item: RubricItemSpec, anchors: Mapping[str, AnchorValue], source: Path, field: str
) -> AnchorValue | None:
    if item.anchor is None:
        return None
    anchor = anchors.get(item.anchor)
    if anchor is None:
        raise spec_error(source, field, f"cites anchor {item.anchor!r}, which has no value")
    if item.tolerance is not None:
        anchor = anchor.model_copy(update={"tolerance": item.tolerance})
    return anchor


def _rubric_claims(spec: DaOpenTask, claims: Mapping[str, ClaimValue]) -> dict[str, str]:
    """The words of the claims the rubric's texts cite, by name."""
    texts = [spec.rubric.model_dump_json()]
    names = set(placeholders(" ".join(texts)))
    return {n: claims[n].text for n in sorted(names) if n in claims}
