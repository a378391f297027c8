"""Authoring problems of a ``da_open`` task that can be found without data, when it is loaded.

What the spec model cannot see by itself: the files it names (reference, baselines, the gold
repository and its marts), the placeholders those templates cite, anchors whose format can
format nothing, anchors nobody cites, and standards none of whose paths the reference can earn
(an anchored item whose anchor it never states); claims that cannot work (a term naming no
anchor, a claim nobody cites) and fixed comparative words in the reference and baselines (a
comparison, ranking or direction written as fixed prose instead of a claim).
``reference_copies`` lints a reference for runs of rubric words (the judges reject evidence
quoting the rubric).
"""

from __future__ import annotations

import re
from pathlib import Path

from benchforge.evaluation.da.anchors import format_problem
from benchforge.evaluation.da.claims import comparative_words, fixed_comparatives
from benchforge.evaluation.da.render import placeholders
from benchforge.evaluation.da.spec import DaOpenTask
from benchforge.evaluation.judges.models import ANCHOR_PLACEHOLDER

COPY_RUN = 8  # consecutive rubric words a report may not repeat (the judges' evidence rule)
_WORD = re.compile(r"\w+")


def words(text: str) -> list[str]:
    """Words as the judges' copy check counts them (``\\w+``, lowercase), each ``{{anchor}}``
    as one word: rendered, an anchor is one or more words equal on both sides, so a run found
    here is a run in every rendering (no false alarm before there is data)."""
    return _WORD.findall(ANCHOR_PLACEHOLDER.sub(lambda m: f" {m.group(1)} ", text).lower())


def copied_run(text: str, source: str, run: int = COPY_RUN) -> str | None:
    """The first ``run`` consecutive words of ``source`` that ``text`` repeats, or None."""
    have = words(text)
    grams = {tuple(have[i : i + run]) for i in range(len(have) - run + 1)}
    want = words(source)
    for i in range(len(want) - run + 1):
        gram = tuple(want[i : i + run])
        if gram in grams:
            return " ".join(gram)
    return None


def rubric_texts(spec: DaOpenTask) -> list[tuple[str, str]]:
    """Every piece of rubric text a report must not copy, as (what, text)."""
    out: list[tuple[str, str]] = []
    for requirement in spec.rubric.requirements:
        out.append((f"requirement {requirement.id}", requirement.title))
        for standard in requirement.standards:
            out.append((f"standard {standard.id}", standard.title))
            for path in standard.paths:
                out.append((f"path {path.id}", path.approach))
                out += [(f"item {item.id}", item.criterion) for item in path.items]
    return out


def file_problems(spec: DaOpenTask, folder: Path, root: Path) -> list[tuple[str, str]]:
    problems: list[tuple[str, str]] = []
    repo = root / spec.repo
    if not (repo / "dbt_project.yml").is_file():
        problems.append(("repo", f"'{spec.repo}' is not a dbt project"))
    else:
        models = {p.stem for p in (repo / "models").rglob("*.sql")}
        problems += [
            (f"marts[{i}]", f"'{name}' is not a model of {spec.repo}")
            for i, name in enumerate(spec.marts)
            if name not in models
        ]
    if len(set(spec.marts)) != len(spec.marts):
        problems.append(("marts", "a mart is listed twice"))
    for name, anchor in spec.anchors.items():
        problem = format_problem(anchor)
        if problem:
            problems.append((f"anchors.{name}", problem))
    templates: dict[str, str] = {}
    for field, rel in [("reference", spec.reference)] + [
        (f"baselines[{i}]", rel) for i, rel in enumerate(spec.baselines)
    ]:
        path = folder / rel
        if not path.is_file():
            problems.append((field, f"missing file '{rel}' in {folder}"))
            continue
        templates[field] = text = path.read_text()
        if not text.strip():
            problems.append((field, f"'{rel}' is empty"))
        unknown = [n for n in placeholders(text) if n not in spec.anchors and n not in spec.claims]
        if unknown:
            names = ", ".join("{{" + n + "}}" for n in unknown)
            problems.append((field, f"'{rel}' cites {names}, which no anchor or claim defines"))
        problems += [
            (
                field,
                f"'{rel}' line {line}: '{word}' is fixed text that compares, ranks or gives a "
                f"direction ({context!r}): render it with a claim, or list the phrase under "
                "fixed_phrases if it states nothing about the data",
            )
            for line, word, context in fixed_comparatives(text, spec.fixed_phrases)
        ]
    stems = [Path(rel).stem for rel in spec.baselines]
    if len(set(stems)) != len(stems):
        problems.append(("baselines", "two baselines share a file name (their id)"))
    problems += claim_file_problems(spec, templates)
    reference = templates.get("reference")
    if reference is not None:
        problems += _reference_problems(spec, reference)
        for field, text in templates.items():
            if field != "reference" and text.strip() == reference.strip():
                problems.append((field, "is the reference itself"))
    return problems


def claim_file_problems(spec: DaOpenTask, templates: dict[str, str]) -> list[tuple[str, str]]:
    """Claims and fixed phrases that cannot work whatever the data: a name shared with an
    anchor, a term that names no anchor (without SQL of its own), an item whose ``anchor`` is
    a claim, a claim nobody cites, a fixed phrase no template holds or without a comparative
    word."""
    problems: list[tuple[str, str]] = []
    cited: set[str] = set()
    for text in templates.values():
        cited |= set(placeholders(text))
    cited |= spec.rubric.anchors_cited()
    for req in spec.rubric.requirements:
        cited |= set(placeholders(req.title))
        for std in req.standards:
            cited |= set(placeholders(std.title))
            for rubric_path in std.paths:
                cited |= set(placeholders(rubric_path.approach))
    for name, claim in spec.claims.items():
        if name in spec.anchors:
            problems.append((f"claims.{name}", "an anchor has the same name"))
        for term in claim.terms():
            other = term.split(".", 1)[0] if "." in term else None
            if other is not None and (other not in spec.claims or not spec.claims[other].sql):
                problems.append((f"claims.{name}", f"term {term!r}: no claim {other!r} with sql"))
            elif other is None and claim.sql is None and term not in spec.anchors:
                problems.append(
                    (f"claims.{name}", f"term {term!r} is not an anchor (and the claim has no sql)")
                )
        if name not in cited:
            problems.append((f"claims.{name}", "cited by no template and no rubric text"))
    for r, requirement in enumerate(spec.rubric.requirements):
        for s, standard in enumerate(requirement.standards):
            for p, path in enumerate(standard.paths):
                for i, item in enumerate(path.items):
                    if item.anchor is not None and item.anchor in spec.claims:
                        problems.append(
                            (
                                f"rubric.requirements[{r}].standards[{s}].paths[{p}].items[{i}]"
                                ".anchor",
                                f"{item.anchor!r} is a claim, not an anchor",
                            )
                        )
    for i, phrase in enumerate(spec.fixed_phrases):
        if not comparative_words(phrase):
            problems.append((f"fixed_phrases[{i}]", f"{phrase!r} holds no comparative word"))
        elif not any(phrase.lower() in text.lower() for text in templates.values()):
            problems.append((f"fixed_phrases[{i}]", f"{phrase!r} is in no report template"))
    return problems


def _reference_problems(spec: DaOpenTask, reference: str) -> list[tuple[str, str]]:
    problems: list[tuple[str, str]] = []
    stated = set(placeholders(reference))
    for standard in spec.rubric.standards():
        # The reference follows one path per standard: some path must be earnable by it.
        unstated = [
            [
                (i.id, i.anchor)
                for i in p.items
                if i.anchor and i.points > 0 and i.anchor not in stated
            ]
            for p in standard.paths
        ]
        if all(unstated):
            problems += [
                (
                    f"anchors.{anchor}",
                    f"item {item} needs it stated, but the reference never cites it",
                )
                for item, anchor in unstated[0]
            ]
    cited = spec.rubric.anchors_cited() | stated
    problems += [
        (f"anchors.{name}", "cited neither by the rubric nor by the reference")
        for name in spec.anchors
        if name not in cited
    ]
    return problems


def reference_copies(spec: DaOpenTask, reference: str) -> list[str]:
    """Where a report template repeats ``COPY_RUN`` consecutive words of the rubric, as
    "<what>: '<words>'". Not a load error: the judges reject such a line only when it is the
    evidence of an item (then verification shows the reference losing it); authors lint their
    references with it."""
    found = []
    for what, text in rubric_texts(spec):
        run = copied_run(reference, text)
        if run is not None:
            found.append(f"{what}: '{run}'")
    return found
