"""The ``da_open`` tasks of the ads and enterprise suites, checked without data: each spec
validates and has the authored shape (one task per category and domain, 2-3 requirements, 4-7
standards, 12-25 items, 3-8 anchors over the task's own marts, accuracy about 60% of the
points, a penalty item); the reference earns >= 90% of its rubric under THE FAITHFUL MOCK JUDGE
RULE with made-up anchor values, loses exactly its anchored items when its numbers are wrong,
copies no 8-word run of a criterion, and beats every baseline on both GSB dimensions.

The same checks on real anchor values (a gold build per domain and seed) are the script
``python -m tests.evaluation.da_catalogue.check_anchors``.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from benchforge.evaluation.da.anchors import perturbed
from benchforge.evaluation.da.checks import reference_copies
from benchforge.evaluation.da.claims import variants
from benchforge.evaluation.da.render import WRONG_ANCHOR_FACTOR
from benchforge.evaluation.judges.models import HierarchicalRubric
from tests.evaluation.da_catalogue.catalogue import (
    ALL_SUITES,
    CATEGORIES,
    SUITES,
    CatalogueTask,
    dummy_anchors,
    dummy_claims,
    load,
    task_folders,
)
from tests.evaluation.da_catalogue.faithful import (
    EXTENDED_STOP_WORDS,
    MINIMAL_STOP_WORDS,
    STOP_LISTS,
    copied_runs,
    coverage,
    gsb_features,
    gsb_raw,
    gsb_verdict,
    keywords,
    placeholders,
    render,
    score_rubric,
)
from tests.paths import REPO_ROOT

pytestmark = pytest.mark.slow  # tests/README.md: the fast and the full loop

FOLDERS = task_folders()
ALL_FOLDERS = task_folders(suites=ALL_SUITES)
IDS = [f.name for f in FOLDERS]
_TABLE = re.compile(r"\b(?:fct|dim|int|stg)_[a-z0-9_]+\b")


@pytest.fixture(scope="module", params=FOLDERS, ids=IDS)
def task(request: pytest.FixtureRequest) -> CatalogueTask:
    folder: Path = request.param
    return load(folder)


def test_one_task_per_category_and_domain() -> None:
    tasks = [load(f) for f in FOLDERS]
    for suite in SUITES:
        in_suite = [t for t in tasks if t.spec.suite == suite]
        assert sorted(t.spec.category for t in in_suite) == sorted(CATEGORIES), suite
        multi_path = [
            t.spec.id for t in in_suite if any(len(s.paths) > 1 for s in t.spec.rubric.standards())
        ]
        assert len(multi_path) >= 2, f"{suite}: only {multi_path} have a standard with 2+ paths"


def test_spec_and_files(task: CatalogueTask) -> None:
    spec, folder = task.spec, task.folder
    domain = spec.suite.removeprefix("da-")
    assert spec.family == "da_open"
    assert (spec.id, spec.suite) == (folder.name, folder.parent.name)
    assert spec.domain == domain and spec.repo == f"dbt_projects/{domain}"
    assert (spec.dataset.scale, spec.dataset.seed) == (0.1, 7)
    assert (spec.reference, spec.report) == ("reference.md", "report.md")
    assert len(spec.baselines) == 3
    for name in [spec.reference, *spec.baselines]:
        assert (folder / name).is_file(), name
    sentences = [s for s in re.split(r"(?<=[.!?])\s+", spec.instructions) if s.strip()]
    assert len(sentences) >= 2 and "report" in spec.instructions


def test_marts_and_anchors(task: CatalogueTask) -> None:
    spec = task.spec
    marts_dir = REPO_ROOT / spec.repo / "models" / "marts"
    assert 2 <= len(spec.marts) <= 5
    for mart in spec.marts:
        assert (marts_dir / f"{mart}.sql").is_file(), f"{mart} is not a mart of {spec.repo}"
    assert 3 <= len(spec.anchors) <= 8
    for name, anchor in spec.anchors.items():
        tables = set(_TABLE.findall(anchor.sql))
        assert tables and tables <= set(spec.marts), f"{name} reads {tables - set(spec.marts)}"
        assert 0.005 <= anchor.tolerance <= 0.02, name
        anchor.format.format(12.5)  # formats a number
    for name, claim in spec.claims.items():  # a claim's own SQL reads the task's marts too
        tables = set(_TABLE.findall(claim.sql or ""))
        assert tables <= set(spec.marts), f"claim {name} reads {tables - set(spec.marts)}"
    reference = placeholders(task.reference) - set(spec.claims)
    assert reference == set(spec.anchors), "the reference must show every anchor, and only those"
    for name, text in task.baselines().items():
        assert placeholders(text) <= set(spec.anchors) | set(spec.claims), name


def test_rubric_shape(task: CatalogueTask) -> None:
    rubric: HierarchicalRubric = task.spec.rubric
    items = rubric.items()
    assert 2 <= len(rubric.requirements) <= 3
    assert 4 <= len(rubric.standards()) <= 7
    assert 12 <= len(items) <= 25
    assert any(i.points < 0 for i in items), "no penalty item"
    assert {i.type for i in items if i.points > 0} == {"completeness", "accuracy", "insightfulness"}
    for standard in rubric.standards():
        ids = {i.id for p in standard.paths for i in p.items}
        assert len(ids) == sum(len(p.items) for p in standard.paths)
    accuracy = sum(
        i.points
        for s in rubric.standards()
        for i in s.paths[0].items
        if i.type == "accuracy" and i.points > 0
    )
    assert 0.5 <= accuracy / rubric.max_points <= 0.75, (
        f"accuracy {accuracy / rubric.max_points:.0%}"
    )


@pytest.mark.parametrize("stop", sorted(STOP_LISTS))
def test_reference_earns_its_rubric(task: CatalogueTask, stop: str) -> None:
    anchors, claims = dummy_anchors(task.spec), dummy_claims(task.spec)
    result = score_rubric(
        task.spec.rubric, anchors, render(task.reference, anchors, claims), STOP_LISTS[stop], claims
    )
    assert result.score >= 0.9, result.reasons(result.lost())
    assert score_rubric(task.spec.rubric, anchors, "", STOP_LISTS[stop], claims).score == 0


def test_wrong_numbers_lose_exactly_the_anchored_items(task: CatalogueTask) -> None:
    """As ``benchforge task verify`` checks it: the judge scores one path per standard, so a
    wrong-number report must still be judged on the reference's paths."""
    spec = task.spec
    anchors, claims = dummy_anchors(spec), dummy_claims(spec)
    wrong = perturbed(anchors, spec.anchors, WRONG_ANCHOR_FACTOR)
    right = score_rubric(
        spec.rubric, anchors, render(task.reference, anchors, claims), claims=claims
    )
    lost = score_rubric(spec.rubric, anchors, render(task.reference, wrong, claims), claims=claims)
    assert right.lost_against(lost) == right.anchored_in_chosen(spec.rubric)


def test_reference_paraphrases_the_rubric(task: CatalogueTask) -> None:
    anchors, claims = dummy_anchors(task.spec), dummy_claims(task.spec)
    assert copied_runs(task.reference, task.rubric_texts(), anchors, claims) == []
    assert reference_copies(task.spec, task.reference) == []


@pytest.mark.parametrize("folder", ALL_FOLDERS, ids=[f.name for f in ALL_FOLDERS])
def test_reference_earns_its_rubric_whatever_its_claims_say(folder: Path) -> None:
    """Every text each claim can render (``claims.variants``: each compare word, each rank
    position, a rank text in listed and reversed order), one claim at a time: the reference
    still earns >= 90% of its rubric under both stop lists and copies no rubric run, so its
    score does not depend on which words a seed's data picks. Every suite, crm included."""
    task = load(folder)
    spec = task.spec
    anchors = dummy_anchors(spec)
    for name, claim in spec.claims.items():
        for variant in variants(claim):
            claims = dummy_claims(spec, {name: variant})
            reference = render(task.reference, anchors, claims)
            for stop in STOP_LISTS.values():
                result = score_rubric(spec.rubric, anchors, reference, stop, claims)
                assert result.score >= 0.9, (name, variant, result.reasons(result.lost()))
            assert copied_runs(task.reference, task.rubric_texts(), anchors, claims) == [], name


def test_baselines_are_clearly_weaker(task: CatalogueTask) -> None:
    anchors, claims = dummy_anchors(task.spec), dummy_claims(task.spec)
    reference = render(task.reference, anchors, claims)
    ref = gsb_features(reference)
    ref_score = score_rubric(task.spec.rubric, anchors, reference, claims=claims).score
    for name, text in task.baselines().items():
        rendered = render(text, anchors, claims)
        base = gsb_features(rendered)
        for dim in ("readability", "depth"):
            raw = gsb_raw(getattr(ref, dim), getattr(base, dim))
            assert gsb_verdict(raw) == "good", f"{name} {dim}: {raw:g}"
            assert gsb_verdict(gsb_raw(getattr(base, dim), getattr(ref, dim))) == "bad"
        assert score_rubric(task.spec.rubric, anchors, rendered, claims=claims).score < min(
            0.6, ref_score
        )


def test_loads_through_the_registered_family() -> None:
    from benchforge.evaluation.families.registry import family_names
    from benchforge.evaluation.tasks.loader import load_task

    assert "da_open" in family_names()
    for folder in FOLDERS:
        assert load_task(folder).spec.id == folder.name


# --------------------------------------------------------------------------- the rule itself


def test_keywords_follow_the_rule() -> None:
    criterion = "Total advertising spend in 2024 is $1,204 (USD), with the fourth quarter"
    assert keywords(criterion, "$1,204", MINIMAL_STOP_WORDS) == [
        "total",
        "advertising",
        "spend",
        "fourth",
        "quarter",
    ]
    assert "with" not in keywords(criterion, "", MINIMAL_STOP_WORDS)
    assert "states" not in keywords("States the total", "", EXTENDED_STOP_WORDS)
    kws = ["advertising", "spend", "quarter"]
    assert coverage("Advertisers' spending rose each quarterly period", kws) == 1.0
    assert coverage("Spent a lot", kws) == 0.0  # 'spent' does not start with 'spend'


def test_gsb_features_count_structure_and_reasons() -> None:
    report = (
        "# Title\n\n## Part\n\n- one 12%\n- two 3.5\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n"
        "Spend fell because budgets were cut. We recommend a test. It rose."
    )
    features = gsb_features(report)
    assert (features.headings, features.list_items, features.has_table) == (2, 2, True)
    assert features.causal_sentences == 2
    assert features.distinct_numbers == 4  # 12, 3.5, 1, 2
    assert features.readability == 2 + 1 + 2
