"""Claims: the comparisons, rankings and directions of ``da_open`` reports, rendered from SQL.

Without data: how a claim picks its words, what the check finds (a word the printed numbers
contradict, a tie, a near tie), fixed comparative wording in templates, and the authoring errors
(file and field named). On the session's two crm datasets (scale 0.02, seeds 7 and 11): every
rendered claim of every crm task agrees with values computed here by running the anchors' and
claims' SQL directly, and ``claim_check`` finds nothing.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import duckdb
import pytest
from pydantic import ValidationError

from benchforge.core.llm import LlmClientView
from benchforge.evaluation.da.claims import (
    ClaimSpec,
    ClaimValue,
    claim_problems,
    decide,
    fixed_comparatives,
    variants,
)
from benchforge.evaluation.da.gold import DaGold, claim_check
from benchforge.evaluation.da.spec import DaOpenTask
from benchforge.evaluation.families import VerifyOptions, family_of
from benchforge.evaluation.judges.client import Judge
from benchforge.evaluation.judges.models import ANCHOR_PLACEHOLDER, AnchorValue
from benchforge.evaluation.tasks import LoadedTask, TaskSpecError, load_task
from tests.evaluation.da.conftest import SEEDS, DaData
from tests.evaluation.da.test_da_data import NoCallLlm, copy_task

pytestmark = pytest.mark.slow  # tests/README.md: the fast and the full loop

TASK = "crm-da-campaign-budget"
RANK = {"a": "alpha", "b": "beta", "c": "gamma"}


def claim(**fields: Any) -> ClaimSpec:
    return ClaimSpec.model_validate(fields)


def anchor(name: str, value: float, text: str, tolerance: float = 0.01) -> AnchorValue:
    return AnchorValue(name=name, value=value, text=text, tolerance=tolerance)


# --------------------------------------------------------------------------- deciding


def test_compare_picks_its_word_and_equal_within_the_margin() -> None:
    spec = claim(compare=["a", "b"], words={"greater": "above", "less": "below"})
    assert decide(spec, "x", {"a": 2.0, "b": 1.0}).text == "above"
    assert decide(spec, "x", {"a": 1.0, "b": 2.0}).text == "below"
    near = claim(
        compare=["a", 50], words={"greater": "most", "less": "few", "equal": "half"}, margin=0.1
    )
    assert decide(near, "x", {"a": 52.0}).outcome == "equal"
    assert decide(near, "x", {"a": 60.0}).text == "most"


def test_rank_places_labels_or_names_a_position() -> None:
    ordered = claim(rank=RANK, text="{1}, ahead of {2}")
    value = decide(ordered, "x", {"a": 1.0, "b": 3.0, "c": 2.0})
    assert value.text == "beta, ahead of gamma" and value.order == ["b", "c", "a"]
    lowest = claim(rank=RANK, text="{1}", order="ascending")
    assert decide(lowest, "x", {"a": 1.0, "b": 3.0, "c": 2.0}).text == "alpha"
    position = claim(rank=RANK, of="c", words={1: "first", 2: "second", 3: "last"})
    assert decide(position, "x", {"a": 1.0, "b": 3.0, "c": 2.0}).text == "second"
    assert variants(ordered) == {
        "listed": "alpha, ahead of beta",
        "reversed": "gamma, ahead of beta",
    }


@pytest.mark.parametrize(
    ("fields", "problem"),
    [
        ({"compare": ["a", "b"], "words": {"greater": "up"}}, "needs words for less"),
        ({"compare": ["a", "b"], "rank": RANK, "text": "{1}"}, "exactly one of"),
        ({"compare": ["a", "b"], "words": {"greater": "u", "less": "d"}, "margin": 0.1}, "equal"),
        ({"rank": RANK, "text": "{4}"}, "{1} to {3}"),
        ({"rank": RANK, "of": "z", "words": {1: "a", 2: "b", 3: "c"}}, "not a ranked term"),
        ({"rank": RANK, "of": "a", "words": {1: "a", 2: "b"}}, "each position"),
        ({"rank": "rows", "text": "{1}"}, "needs sql"),
    ],
)
def test_a_claim_that_cannot_work_is_refused(fields: dict[str, Any], problem: str) -> None:
    with pytest.raises(ValidationError, match=re.escape(problem)):
        claim(**fields)


# --------------------------------------------------------------------------- checking


def test_the_check_finds_what_the_printed_numbers_contradict() -> None:
    specs = {"x": claim(compare=["a", "b"], words={"greater": "above", "less": "below"})}
    anchors = {"a": anchor("a", 1.234, "1.23x"), "b": anchor("b", 1.231, "1.23x")}
    decided = {"x": decide(specs["x"], "x", {"a": 1.234, "b": 1.231})}
    problems, _ = claim_problems(specs, decided, anchors)
    assert problems and "prints them as 1.23x and 1.23x" in problems[0]
    decided = {"x": decide(specs["x"], "x", {"a": 1.3, "b": 1.295})}
    anchors = {"a": anchor("a", 1.3, "1.30x"), "b": anchor("b", 1.295, "1.29x")}
    problems, warnings = claim_problems(specs, decided, anchors)
    assert not problems and "near tie" in warnings[0]


def test_the_check_refuses_words_the_values_do_not_give_and_ties() -> None:
    specs = {"x": claim(compare=["a", "b"], words={"greater": "above", "less": "below"})}
    stale = ClaimValue(name="x", outcome="greater", text="above", values={"a": 1.0, "b": 2.0})
    problems, _ = claim_problems(specs, {"x": stale}, {})
    assert "give 'below'" in problems[0]
    ranked = {"r": claim(rank=RANK, text="{1}")}
    tie = decide(ranked["r"], "r", {"a": 2.0, "b": 2.0, "c": 1.0})
    problems, _ = claim_problems(ranked, {"r": tie}, {})
    assert "but both are 2" in problems[0]


def test_fixed_comparatives_skip_placeholders_idioms_and_listed_phrases() -> None:
    template = (
        "# Review\n"
        "Partner programmes return the least, {{partner_vs_outbound}} outbound.\n"
        "At least one contract; move money toward the highest-returning group.\n"
    )
    found = fixed_comparatives(template, ["the highest-returning group"])
    assert [(line, word) for line, word, _ in found] == [(2, "least")]


# --------------------------------------------------------------------------- authoring errors


def test_claim_errors_name_the_file_and_the_field(tmp_path: Path) -> None:
    def edit(data: dict[str, Any]) -> None:
        data["claims"]["partner_vs_outbound"]["words"] = {"greater": "more"}

    folder = copy_task(tmp_path, TASK, edit)
    with pytest.raises(TaskSpecError) as err:
        load_task(folder)
    problems = dict(err.value.problems)
    assert str(folder / "task.yaml") in str(err.value)
    assert "needs words for less" in problems["claims.partner_vs_outbound"]


def test_claims_that_name_nothing_and_fixed_wording_are_load_errors(tmp_path: Path) -> None:
    def edit(data: dict[str, Any]) -> None:
        data["claims"]["unused"] = {"compare": ["nope", 1], "words": {"greater": "a", "less": "b"}}
        data["fixed_phrases"] = ["a phrase no template holds, the best one"]

    folder = copy_task(tmp_path, TASK, edit)
    baseline = folder / "baselines" / "gut-feel.md"
    baseline.write_text(baseline.read_text() + "\nEvents return the most per dollar.\n")
    with pytest.raises(TaskSpecError) as err:
        load_task(folder)
    problems = err.value.problems
    text = "\n".join(f"{field}: {problem}" for field, problem in problems)
    assert "claims.unused: term 'nope' is not an anchor" in text
    assert "claims.unused: cited by no template and no rubric text" in text
    assert "fixed_phrases[0]: 'a phrase no template holds, the best one' is in no report" in text
    assert "baselines[1]: 'baselines/gut-feel.md' line 3: 'most' is fixed text" in text


def test_a_broken_claim_names_its_field_before_any_judge_call(
    da_data: DaData, tmp_path: Path
) -> None:
    def edit(data: dict[str, Any]) -> None:
        data["claims"]["smallest_group"]["sql"] = "select count(*) as events from no_such_table"

    folder = copy_task(tmp_path, TASK, edit)
    task = load_task(folder)
    NoCallLlm.calls = 0
    with pytest.raises(TaskSpecError) as err:
        judge = Judge(LlmClientView(NoCallLlm()))
        family_of(task).verify(task, da_data.datasets[7], da_data.work, VerifyOptions(), judge)
    assert f"{folder / 'task.yaml'}: claims.smallest_group.sql: SQL failed" in str(err.value)
    assert NoCallLlm.calls == 0


# --------------------------------------------------------------------------- on data


def _sql_values(db: Path, spec: DaOpenTask, claim_spec: ClaimSpec, own: str) -> dict[str, float]:
    """The claim's named terms computed here, straight from SQL: anchors by their own SQL,
    columns by the SQL of the claim that holds them."""
    con = duckdb.connect(str(db), read_only=True)
    try:
        out = {}
        for term in claim_spec.terms():
            holder, _, column = term.rpartition(".") if "." in term else (own, "", term)
            if column in spec.anchors and holder == own:
                (value,) = con.execute(spec.anchors[column].sql).fetchone() or (None,)
            else:
                sql = spec.claims[holder].sql
                assert sql is not None, term
                cursor = con.execute(sql)
                names = [d[0] for d in cursor.description or []]
                value = dict(zip(names, cursor.fetchone() or (), strict=True))[column]
            out[term] = float(value)
        if claim_spec.rank == "rows":
            assert claim_spec.sql is not None
            out = {str(k): float(v) for k, v in con.execute(claim_spec.sql).fetchall()}
        return out
    finally:
        con.close()


def _expected_text(claim_spec: ClaimSpec, values: dict[str, float]) -> str:
    """The words the SQL values call for, worked out here without ``decide``."""
    if claim_spec.compare is not None:
        a, b = (values[t] if isinstance(t, str) else float(t) for t in claim_spec.compare)
        if "equal" in claim_spec.words and abs(a - b) <= claim_spec.margin * max(abs(a), abs(b)):
            return claim_spec.words["equal"]
        return claim_spec.words["greater" if a > b else "less"]
    reverse = claim_spec.order == "descending"
    order = sorted(values, key=lambda t: values[t], reverse=reverse)
    if claim_spec.of is not None:
        return claim_spec.words[str(order.index(claim_spec.of) + 1)]
    assert claim_spec.text is not None and claim_spec.rank is not None
    labels = [t if claim_spec.rank == "rows" else claim_spec.rank[t] for t in order]
    text = claim_spec.text
    for i, label in enumerate(labels, start=1):
        text = text.replace("{" + str(i) + "}", label)
    return text


@pytest.mark.parametrize("seed", SEEDS)
def test_every_rendered_claim_agrees_with_its_sql(
    seed: int, da_data: DaData, da_tasks: dict[str, LoadedTask]
) -> None:
    """Each crm task prepared on the seed: every claim's words are the ones the values of its
    terms (run here from the anchors' and claims' SQL) call for, each appears where a template
    cites it, and ``claim_check`` (verification's check) finds no contradiction."""
    checked = 0
    for task in da_tasks.values():
        spec = task.spec
        assert isinstance(spec, DaOpenTask)
        gold = family_of(task).prepare_gold(task, da_data.datasets[seed], da_data.work)
        assert isinstance(gold, DaGold)
        for name, claim_spec in spec.claims.items():
            values = _sql_values(gold.db, spec, claim_spec, name)
            assert gold.claims[name].text == _expected_text(claim_spec, values), (spec.id, name)
            for report in (gold.reference, *gold.baselines.values()):
                assert not ANCHOR_PLACEHOLDER.search(report), spec.id
            checked += 1
        check = claim_check(task, gold)
        assert check.problems == [], (spec.id, check.problems)
    assert checked >= 40
