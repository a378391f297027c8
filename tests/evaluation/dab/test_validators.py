"""Answer validators for ``dab_query`` tasks: legitimate formats of every gold answer pass,
adversarial near-misses fail, and each kind's behaviour is pinned to its version."""

from __future__ import annotations

import hashlib

import pytest
from pydantic import ValidationError

from benchforge.evaluation.dab.normalize import normalize_text, phrase_tokens
from benchforge.evaluation.dab.quantities import read_quantities
from benchforge.evaluation.dab.validators import (
    MAX_ANSWER_CHARS,
    ExactValue,
    NumberWithin,
    OrderedList,
    ValueSet,
    parse_validator,
    validator_version,
)

# Queries in the shape of DAB's (bookreview, yelp, ...), one per validator use; the dab_query
# family's shipped queries join this table when they exist.
QUERIES = {
    "gender": ExactValue(value="MALE", other_values=["FEMALE", "UNKNOWN"]),
    "state_code": ExactValue(value="MI", other_values=["OH", "PA", "NJ"]),
    "state_name": ExactValue(value="Pennsylvania", aliases=["PA"]),
    "decade": ExactValue(value=2020, ignore_numbers=[10]),
    "review_count": ExactValue(value=1234567),
    "avg_rating": NumberWithin(value=4.5667, abs_tol=0.01),
    "wifi_share": NumberWithin(value=12.0, abs_tol=0.05, unit="percent", accept_fraction=True),
    "revenue": NumberWithin(value=1_234_567.0, rel_tol=0.005, unit="usd"),
    "perfect_books": ValueSet(
        values=["Local Honey", "Fire Cracker", "Exits, Desires, & Slow Fires", "Liza of Lambeth"],
        other_values=["The Sludge", "Kennebago Moments"],
    ),
    "top_categories": OrderedList(
        values=["Restaurants", "Food", "Nightlife"], other_values=["Bars", "Shopping"]
    ),
}

LEGITIMATE = [
    ("gender", "MALE"),
    ("gender", "male"),
    ("gender", "**Male**"),
    ("gender", "The most common gender among reviewers is male."),
    ("gender", "| answer |\n|---|\n| Male |"),
    ("gender", "Answer:\n\n`MALE`"),
    ("state_code", "MI"),
    ("state_code", "The state is **MI** (Michigan)."),
    ("state_code", "### Answer\nMI."),
    ("state_name", "Pennsylvania"),
    ("state_name", "PA"),
    ("state_name", "The state with the most WiFi businesses is _Pennsylvania_."),
    ("decade", "2020"),
    ("decade", "The 2020s"),
    ("decade", "**2020**"),
    ("decade", "Among decades with at least 10 rated books, the 2020s rate highest."),
    ("review_count", "1234567"),
    ("review_count", "1,234,567"),
    ("review_count", "1 234 567 reviews"),
    ("review_count", "There were **1,234,567** reviews in total."),
    ("review_count", "| total reviews |\n|---:|\n| 1,234,567 |"),
    ("avg_rating", "4.57"),
    ("avg_rating", "The average rating is 4.567."),
    ("avg_rating", "**4.5667** (from 1,234 reviews)"),
    ("avg_rating", "- average rating: 4.56"),
    ("wifi_share", "12%"),
    ("wifi_share", "12 %"),
    ("wifi_share", "12 percent"),
    ("wifi_share", "0.12"),
    ("wifi_share", "About **12.0%** of businesses offer WiFi."),
    ("revenue", "$1,234,567"),
    ("revenue", "1.234 million dollars"),
    ("revenue", "USD 1 234 567"),
    ("revenue", "Total revenue: **$1.23M**"),
    ("revenue", "1234567"),
    ("perfect_books", "Local Honey; Fire Cracker; Exits, Desires, & Slow Fires; Liza of Lambeth"),
    (
        "perfect_books",
        "The books are:\n- **Local Honey**\n- Fire Cracker\n- Exits, Desires and Slow Fires\n"
        "- Liza of Lambeth",
    ),
    (
        "perfect_books",
        "Liza of Lambeth, Local Honey, Fire Cracker and Exits, Desires, & Slow Fires.",
    ),
    (
        "perfect_books",
        "| title |\n|---|\n| local honey |\n| FIRE CRACKER |\n| Exits, Desires, & Slow Fires |\n"
        "| Liza of Lambeth |",
    ),
    ("top_categories", "Restaurants, Food, Nightlife"),
    ("top_categories", "1. **Restaurants**\n2. Food\n3. Nightlife"),
    ("top_categories", "The top three are Restaurants (1,234 reviews), Food (987) and Nightlife."),
]

NEAR_MISSES = [
    # substring traps: no word boundary
    ("gender", "FEMALE", "not named"),
    ("state_code", "DETERMINE", "not named"),
    ("state_code", "The state is MIchigan", "not named"),
    ("state_name", "Pennsylvanian", "not named"),
    ("decade", "20201", "no number"),
    ("review_count", "12345678", "no number"),
    # hedges and the answer among wrong values
    ("gender", "male or female", "hedged"),
    ("gender", "Male, Female, Unknown", "hedged"),
    ("state_code", "MI, OH", "hedged"),
    ("state_name", "Pennsylvania or New Jersey", "hedged"),
    ("state_name", "Pennsylvania, New Jersey, Ohio, Texas", "hedged"),
    ("decade", "either 2010 or 2020", "hedged"),
    ("decade", "2020s (possibly the 2010s)", "hedged"),
    ("avg_rating", "either 4.57 or 4.8", "hedged"),
    ("avg_rating", "4.2, 4.4, 4.57, 4.8, 4.9", "hedged"),
    ("avg_rating", "between 4.56 and 4.6", "hedged"),
    ("avg_rating", "4.56-4.6", "hedged"),
    ("wifi_share", "12% or maybe 15%", "hedged"),
    (
        "perfect_books",
        "Local Honey, Fire Cracker, Exits, Desires, & Slow Fires, Liza of Lambeth, Moby Dick, "
        "Emma, Ulysses",
        "extra values",
    ),
    (
        "perfect_books",
        "Local Honey; Fire Cracker; Exits, Desires, & Slow Fires; Liza of Lambeth; The Sludge",
        "extra values",
    ),
    # right number, wrong unit
    ("wifi_share", "12 million", "no number"),
    ("wifi_share", "12 percentage points", "wrong unit"),
    ("revenue", "1,234,567 EUR", "wrong unit"),
    ("revenue", "1,234,567%", "wrong unit"),
    ("avg_rating", "4.57%", "wrong unit"),
    ("review_count", "$1,234,567", "wrong unit"),
    # off by more than the tolerance; a decimal comma is not configured
    ("avg_rating", "4.55", "no number"),
    ("avg_rating", "4,57", "no number"),
    ("wifi_share", "12.1%", "no number"),
    ("wifi_share", "0.13", "no number"),
    ("revenue", "$1.2M", "no number"),
    # missing, and wrong order
    ("perfect_books", "Local Honey, Fire Cracker, Liza of Lambeth", "missing 1 of 4"),
    ("perfect_books", "Local Honey, Fire Cracker, Exits, Liza of Lambeth", "missing 1 of 4"),
    ("top_categories", "Nightlife, Food, Restaurants", "out of order"),
    ("top_categories", "Restaurants, Nightlife, Food", "out of order"),
    ("top_categories", "Restaurants, Food, Bars, Nightlife", "extra values"),
    # nothing to read
    ("gender", "", "empty answer"),
    ("revenue", "   \n** **\n", "empty answer"),
    ("top_categories", "`` ``", "empty answer"),
]


@pytest.mark.parametrize(("query", "answer"), LEGITIMATE)
def test_legitimate_formats_pass(query: str, answer: str) -> None:
    verdict = QUERIES[query].validate(answer)
    assert verdict.passed, verdict.reason


@pytest.mark.parametrize(("query", "answer", "reason"), NEAR_MISSES)
def test_near_misses_fail(query: str, answer: str, reason: str) -> None:
    verdict = QUERIES[query].validate(answer)
    assert not verdict.passed
    assert reason in verdict.reason


def test_every_query_has_passes_and_failures() -> None:
    assert {q for q, _ in LEGITIMATE} == set(QUERIES)
    assert {q for q, _, _ in NEAR_MISSES} == set(QUERIES)


@pytest.mark.parametrize(
    ("written", "normalized"),
    [
        ("1,234,567", "1234567"),
        ("1 234 567", "1234567"),
        ("1 234.5", "1234.5"),
        ("1\u00a0234\u00a0567", "1234567"),
        ("1,234.5", "1234.5"),
        ("3, 4, 5", "3, 4, 5"),
        ("3,4,5", "3,4,5"),
        ("1,5", "1,5"),
        ("1,234,56", "1,234,56"),
        ("12 %", "12%"),
        ("\u22123.5", "-3.5"),
        ("**bold** __strong__ *em* _em_ ~~gone~~ `code`", "bold strong em em gone code"),
        ("bid_123 and snake_case_name", "bid_123 and snake_case_name"),
        (
            "# Heading\n> quoted\n- bullet\n* star\n1. first\n2) second",
            "Heading\nquoted\nbullet\nstar\nfirst\nsecond",
        ),
        ("| a | b |\n|---|---|\n| 12 | 345 |", "\n\n 12 \n 345 \n"),
        ("[Local Honey](http://x.example)", "Local Honey"),
        ("Children\u2019s Books", "Children's Books"),
    ],
)
def test_normalize_text(written: str, normalized: str) -> None:
    assert normalize_text(written) == normalized


@pytest.mark.parametrize(
    ("written", "normalized"),
    [("1,5", "1.5"), ("1.234.567,8", "1234567.8"), ("1 234,5", "1234.5"), ("3,4,5", "3,4,5")],
)
def test_normalize_text_with_decimal_comma(written: str, normalized: str) -> None:
    assert normalize_text(written, decimal_comma=True) == normalized


def test_tokens_ignore_case_accents_apostrophes_and_ampersands() -> None:
    assert phrase_tokens("Children\u2019s Café & Bar.") == ("childrens", "cafe", "and", "bar")


@pytest.mark.parametrize(
    ("written", "read"),
    [
        ("42", [(42.0, None)]),
        ("-3.5 and \u22125", [(-3.5, None), (-5.0, None)]),
        ("40-45", [(40.0, None), (45.0, None)]),
        (
            "12%, 12 percent, 3 pp",
            [(12.0, "percent"), (12.0, "percent"), (3.0, "percentage_points")],
        ),
        ("$1.2M, 1.2 million dollars, €5bn", [(1.2e6, "usd"), (1.2e6, "usd"), (5e9, "eur")]),
        ("12 million, 3k, 2 billion", [(12e6, None), (3e3, None), (2e9, None)]),
        (
            "12 weeks, 5h, 3 days, 12km",
            [(12.0, "weeks"), (5.0, "hours"), (3.0, "days"), (12.0, "kilometers")],
        ),
        ("1.5e6", [(1.5e6, None)]),
        ("the 1980s", [(1980.0, None)]),
        ("Q3 v2 bid_123 3D H2O", []),
        ("4.6 stars from 1234 reviews", [(4.6, None), (1234.0, None)]),
    ],
)
def test_read_quantities(written: str, read: list[tuple[float, str | None]]) -> None:
    found = [(q.value, q.unit) for q in read_quantities(normalize_text(written)) if q.quantity]
    assert [unit for _, unit in found] == [unit for _, unit in read]
    assert [value for value, _ in found] == pytest.approx([value for value, _ in read])


@pytest.mark.parametrize("written", ["2016-01-31", "31/01/2016", "10:30", "3rd", "21st"])
def test_dates_times_and_ordinals_are_no_quantities(written: str) -> None:
    assert not [q for q in read_quantities(normalize_text(written)) if q.quantity]


def test_decimal_comma_when_configured() -> None:
    rating = NumberWithin(value=4.57, abs_tol=0.005, decimal_comma=True)
    assert rating.validate("4,57").passed
    assert rating.validate("Die Bewertung ist 4,57.").passed
    assert not rating.validate("4.57 or 4,8").passed


def test_unit_required_refuses_a_bare_number() -> None:
    share = NumberWithin(value=12, abs_tol=0.05, unit="percent", unit_required=True)
    assert share.validate("12%").passed
    verdict = share.validate("12")
    assert not verdict.passed
    assert "right number, no unit" in verdict.reason


def test_without_accept_fraction_a_fraction_is_not_a_percent() -> None:
    share = NumberWithin(value=12, abs_tol=0.05, unit="percent")
    assert share.validate("12%").passed
    assert not share.validate("0.12").passed


def test_numbers_the_question_states_are_no_rivals() -> None:
    assert QUERIES["decade"].validate("2020 (decades with at least 10 books)").passed
    strict = ExactValue(value=2020)
    assert strict.validate("2020 (decades with at least 10 books)").passed  # not enumerated
    assert not strict.validate("2020, 10").passed  # enumerated with the answer


def test_answer_length_is_capped() -> None:
    huge = "MALE " + "x" * MAX_ANSWER_CHARS
    verdict = QUERIES["gender"].validate(huge)
    assert not verdict.passed
    assert verdict.reason.startswith("answer too long")
    assert ExactValue(value="MALE", max_chars=10).validate("MALE").passed
    assert not ExactValue(value="MALE", max_chars=10).validate("the answer: MALE").passed


def test_other_value_inside_the_gold_is_not_named() -> None:
    city = ExactValue(value="New York City", other_values=["New York", "York"])
    assert city.validate("New York City").passed
    assert not city.validate("New York City or York").passed


def test_ordered_list_extras_allowance() -> None:
    top = OrderedList(values=["A1", "B2"], max_extra=1)
    assert top.validate("A1, B2, C3").passed
    assert not top.validate("A1, B2, C3, D4").passed
    assert not OrderedList(values=["A1", "B2"], max_extra=0).validate("A1, B2, C3").passed


def test_value_set_in_any_order_but_not_among_many_wrong() -> None:
    books = ValueSet(values=["Emma", "Ulysses"])
    assert books.validate("Ulysses and Emma").passed
    assert books.validate("Ulysses, Emma. Both have five stars.").passed  # one remark allowed
    assert not books.validate("Dracula, Ulysses, Beloved, Emma, Hamlet").passed


def test_verdict_records_kind_version_and_match() -> None:
    verdict = QUERIES["review_count"].validate("**1,234,567** reviews")
    assert verdict.model_dump() == {
        "passed": True,
        "kind": "exact",
        "version": ExactValue.VERSION,
        "reason": "states '1234567'",
        "matched": ["1234567"],
    }
    books = QUERIES["perfect_books"].validate(
        "Local Honey; Fire Cracker; Exits, Desires and Slow Fires; Liza of Lambeth"
    )
    assert books.matched == [
        "Local Honey",
        "Fire Cracker",
        "Exits, Desires and Slow Fires",
        "Liza of Lambeth",
    ]
    assert not QUERIES["gender"].validate("FEMALE").matched


@pytest.mark.parametrize("spec", list(QUERIES.values()), ids=list(QUERIES))
def test_specs_round_trip_by_kind(spec: ExactValue) -> None:
    stored = spec.model_dump(mode="json")
    assert parse_validator(stored) == spec
    assert validator_version(parse_validator(stored)) == type(spec).VERSION


@pytest.mark.parametrize(
    ("data", "problem"),
    [
        ({"kind": "fuzzy", "value": "x"}, "does not match any of the expected tags"),
        ({"kind": "number", "value": 4.5}, "give rel_tol or abs_tol"),
        (
            {"kind": "number", "value": 4.5, "abs_tol": 0.1, "accept_fraction": True},
            "unit: percent",
        ),
        ({"kind": "number", "value": 4.5, "abs_tol": 0.1, "unit_required": True}, "needs a unit"),
        ({"kind": "number", "value": 4.5, "abs_tol": 0.1, "unit": "stars"}, "unit"),
        ({"kind": "exact", "value": "..."}, "no word or number"),
        ({"kind": "exact", "value": 4.5}, "value"),
        ({"kind": "set", "values": []}, "at least 1"),
        ({"kind": "set", "values": ["a"], "aliases": {"b": ["c"]}}, "not in values"),
        ({"kind": "ordered", "values": ["a", "--"]}, "no word or number"),
        ({"kind": "exact", "value": "a", "typo_field": 1}, "Extra inputs"),
    ],
)
def test_invalid_specs_are_refused(data: dict[str, object], problem: str) -> None:
    with pytest.raises(ValidationError, match=problem):
        parse_validator(data)


# The rules each kind applies are versioned: a score records the version that gave it.
# CHANGING WHAT A KIND ACCEPTS MUST BUMP ITS VERSION (old scores keep theirs). The digests
# below are each kind's verdicts on a fixed probe set: a behaviour change without a version
# bump fails here. After bumping, put the new version and the digest the failure prints.
PINNED = {
    "exact": (2, "a7445b0615974d7d"),
    "number": (2, "e254c0680acad05a"),
    "set": (2, "57058d78a8331026"),
    "ordered": (2, "4ee7028a81977736"),
}

PROBE_SPECS = {
    "exact": [
        ExactValue(value="MALE", other_values=["FEMALE"]),
        ExactValue(value="MI"),
        ExactValue(value="Sun & Moon, Vol. 8", aliases=["Sun and Moon 8"]),
        ExactValue(value=2020),
        ExactValue(value=1234567, ignore_numbers=[10]),
    ],
    "number": [
        NumberWithin(value=4.5667, abs_tol=0.01),
        NumberWithin(value=12, abs_tol=0.05, unit="percent"),
        NumberWithin(value=12, abs_tol=0.05, unit="percent", accept_fraction=True),
        NumberWithin(value=1234567, rel_tol=0.005, unit="usd", unit_required=True),
        NumberWithin(value=-3.5, abs_tol=0.01, decimal_comma=True),
    ],
    "set": [
        ValueSet(values=["MALE", "MI", "Sun & Moon, Vol. 8"], other_values=["FEMALE"]),
        ValueSet(values=["2020", "4.57"], max_extra=0),
    ],
    "ordered": [
        OrderedList(values=["MALE", "MI", "Sun & Moon, Vol. 8"], other_values=["FEMALE"]),
        OrderedList(values=["2020", "4.57"], max_extra=0),
    ],
}

PROBES = [
    "",
    "MALE",
    "**male**",
    "FEMALE",
    "male or female",
    "Male, Female, Unknown",
    "MI",
    "DETERMINE",
    "the state is MI.",
    "Sun & Moon, Vol. 8",
    "sun and moon vol 8",
    "Sun and Moon 8",
    "MALE, MI, Sun & Moon, Vol. 8",
    "Sun & Moon, Vol. 8; MI; MALE",
    "MALE, MI, Sun & Moon, Vol. 8, FEMALE",
    "MALE, MI, Sun & Moon, Vol. 8, Extra One, Extra Two",
    "2020",
    "the 2020s",
    "2,020",
    "either 2020 or 2010",
    "2020, 4.57",
    "4.57, 2020",
    "2020; 4.57; 99",
    "1,234,567",
    "1 234 567",
    "$1,234,567",
    "$1.23M",
    "1,234,567 EUR",
    "1234567, 10",
    "1234567 (at least 10)",
    "4.57",
    "4,57",
    "4.5667 or 4.8",
    "4.55",
    "12%",
    "12 %",
    "12 percent",
    "0.12",
    "12",
    "12 million",
    "12 percentage points",
    "12% or 15%",
    "12% (maybe 13%)",
    "It is 12%; the other survey possibly says 15%.",
    "4.57 from 1,234 reviews",
    "12% of 1,234 businesses",
    "-3.5",
    "\u22123,5",
    "-3,5 or -4",
    "| answer |\n|---|\n| MALE |",
    "Answer:\n- MALE\n- MI",
    "x" * (MAX_ANSWER_CHARS + 1),
    "<!-- MALE --> FEMALE",
    "unknown <span style='display:none'>2020, 4.57</span>",
    "<!-- 12% --> unknown",
    "1,234,567 <!-- 10 -->",
]


def _fingerprint(kind: str) -> str:
    lines = [
        f"{s}:{p}:{int(v.passed)}:{'|'.join(v.matched)}"
        for s, spec in enumerate(PROBE_SPECS[kind])
        for p, probe in enumerate(PROBES)
        for v in [spec.validate(probe)]
    ]
    return hashlib.sha256("\n".join(lines).encode()).hexdigest()[:16]


@pytest.mark.parametrize("kind", sorted(PINNED))
def test_behaviour_is_pinned_to_the_version(kind: str) -> None:
    version, digest = PINNED[kind]
    specs = PROBE_SPECS[kind]
    assert {validator_version(s) for s in specs} == {version}, "pinned version changed"
    assert {spec.validate("MALE").version for spec in specs} == {version}
    assert _fingerprint(kind) == digest, (
        f"{kind} validators changed behaviour: bump {type(specs[0]).__name__}.VERSION and pin "
        f"({version + 1}, {_fingerprint(kind)!r})"
    )


# A validator reads the answer as a person reading it sees it: text hidden from readers (HTML
# comments, hidden elements, invisible Unicode) is not part of the answer.
@pytest.mark.parametrize(
    ("spec", "hidden", "visible"),
    [
        (NumberWithin(value=55, abs_tol=0.5), "<!-- 55 --> I could not determine it.", "55"),
        (
            NumberWithin(value=55, abs_tol=0.5),
            "Unknown. <span style='display:none'>55</span>",
            "It is **55**.",
        ),
        (ExactValue(value="Healthcare"), "Retail <span hidden>Healthcare</span>", "Healthcare"),
        (ExactValue(value="Healthcare"), "Retail\n\n[//]: # (Healthcare)", "`Healthcare`"),
        (ValueSet(values=["MALE", "MI"]), "MALE <!-- , MI -->", "MALE, MI"),
        (OrderedList(values=["MALE", "MI"]), "<div style='opacity:0'>MALE, MI</div>", "MALE; MI"),
    ],
)
def test_text_hidden_from_readers_is_not_read(
    spec: ExactValue | NumberWithin | ValueSet | OrderedList, hidden: str, visible: str
) -> None:
    assert not spec.validate(hidden).passed
    assert spec.validate(visible).passed


def test_invisible_characters_inside_a_value_read_as_the_reader_sees_it() -> None:
    assert NumberWithin(value=55, abs_tol=0.5).validate("5\u200b5").passed
    assert ExactValue(value="Healthcare").validate("Health\u200bcare").passed
