"""Strict anchors (``judges.anchor_rule``): number, unit, scale, currency and direction must
agree, and a report that offers a competing value anywhere does not state the anchor. Every
attack of issue 22 is a case here, next to the honest forms that must keep passing."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from benchforge.evaluation.judges.checks import checked_verdict
from benchforge.evaluation.judges.evidence import (
    anchor_in_output,
    find_numbers,
    is_hedge,
    states_anchor,
)
from benchforge.evaluation.judges.models import AnchorValue
from benchforge.evaluation.judges.replies import ItemAward

GROWTH = AnchorValue(
    name="growth", value=41.8, text="41.8%", unit="percent", kind="change", tolerance=0.02
)
DECLINE = AnchorValue(name="decline", value=-4.2, text="-4.2%", unit="percent", kind="change")
SHARE = AnchorValue(name="share", value=41.8, text="41.8%", unit="percent", kind="level")
WIN_RATE = AnchorValue(name="win_rate", value=33.2, text="33.2%", unit="percent", kind="level")
BOOKINGS = AnchorValue(
    name="bookings", value=18_256_544.0, text="$18,256,544", unit="usd", kind="level"
)
MULTIPLE = AnchorValue(name="multiple", value=1.23, text="1.23x", unit="multiple", kind="level")
SPREAD = AnchorValue(name="spread", value=12.34, text="12.34", unit="percentage_points", kind="gap")
HOURS = AnchorValue(name="lag", value=52.3, text="52.3", unit="hours", kind="level")
REVENUE_CNY = AnchorValue(name="rev", value=1_234_567.0, text="1,234,567", unit="cny")


# --------------------------------------------------------------------------- stating


@pytest.mark.parametrize(
    ("span", "anchor"),
    [
        ("Bookings declined by 41.8% against 2023.", GROWTH),  # direction: -41.8
        ("Bookings fell 41.8% year over year.", GROWTH),
        ("Bookings: a 41.8% drop on 2023.", GROWTH),
        ("The share is 0.418 percent of spend.", SHARE),  # scale: 0.418%, not 41.8%
        ("The share is 0.418 of spend.", SHARE),  # a fraction is no percent
        ("We closed 41.8 deals per rep.", SHARE),  # a count, not a percent
        ("Spend grew to 41.8x its base.", SHARE),  # a multiple
        ("The share is 41.8 pp above target.", SHARE),
        ("Bookings reached €18,256,544.", BOOKINGS),  # currency
        ("Bookings reached 18,256,544 EUR.", BOOKINGS),
        ("Bookings reached 18.3 million euros.", BOOKINGS),
        ("Bookings reached 18,256,544 deals.", BOOKINGS),
        ("Bookings were 18.3% of the plan.", BOOKINGS),
        ("Every dollar returns 1.23% of value.", MULTIPLE),
        ("Every campaign won 1.23 deals.", MULTIPLE),
        ("Late shares differ by 12.34% across classes.", SPREAD),
        ("The median lag is 52.3 days.", HOURS),
        ("Median revenue was $1,234,567.", REVENUE_CNY),
        ("Win rate fell 33.2% this year.", WIN_RATE),  # a change is not a level
        ("It ranks 33rd of 40.", AnchorValue(name="n", value=33.0, text="33", unit="count")),
    ],
)
def test_attacks_do_not_state_the_anchor(span: str, anchor: AnchorValue) -> None:
    assert not states_anchor(span, anchor)


@pytest.mark.parametrize(
    ("span", "anchor"),
    [
        ("Bookings rose by 41.8% against 2023.", GROWTH),
        ("Bookings grew 41.8%.", GROWTH),
        ("| Change 2023 to 2024 | 41.8% |", GROWTH),
        ("Bookings fell 4.2% on 2023.", DECLINE),
        ("Bookings were down 4.2%.", DECLINE),
        ("Bookings changed by -4.2%.", DECLINE),
        ("A 4.2% decline on 2023.", DECLINE),
        ("The share is 41.8 percent of spend.", SHARE),
        ("The share is 41.8 per cent.", SHARE),
        ("Bookings reached $18.3M in 2024.", BOOKINGS),  # within 1%
        ("Bookings reached USD 18.26 million.", BOOKINGS),
        ("Bookings reached 18,256,544 in 2024 (USD).", BOOKINGS),
        ("| 2024 | 18,256,544 |", BOOKINGS),
        ("Portfolio return is 1.23x.", MULTIPLE),
        ("Each dollar came back as 1.23 dollars of value.", MULTIPLE),
        ("It returns $1.23 per dollar.", MULTIPLE),
        ("Late shares differ by at most 12.34 percentage points.", SPREAD),
        ("Micro firms file late 12.34 points more often.", SPREAD),
        ("The median lag is 52.3 hours.", HOURS),
        ("Median revenue was 1,234,567 CNY.", REVENUE_CNY),
        ("Median revenue was ¥1.23 million.", REVENUE_CNY),
        ("Win rate rose from 30.1% to 33.2%.", WIN_RATE),
        ("Existing deals made up 41.8% of the value.", SHARE),
        ("By segment, the breakdown puts EMEA at 41.8%.", SHARE),
    ],
)
def test_honest_statements_state_the_anchor(span: str, anchor: AnchorValue) -> None:
    assert states_anchor(span, anchor)


def test_a_bare_table_cell_takes_its_column_unit() -> None:
    table = "| Region | Share (%) | Spend |\n|---|---|---|\n| EMEA | 41.8 | 18,256,544 |\n"
    assert states_anchor("| EMEA | 41.8 | 18,256,544 |", SHARE, context=table)
    assert not states_anchor("| EMEA | 41.8 | 18,256,544 |", SHARE)  # no header: no percent
    in_euros = table.replace("Spend", "Spend (EUR)")
    assert not states_anchor("| EMEA | 41.8 | 18,256,544 |", BOOKINGS, context=in_euros)
    capital = AnchorValue(name="capital", value=1134.3, text="1,134.3", unit="number")
    in_wan = "| Measure | Value |\n|---|---|\n| Median capital (wan CNY) | 1,134.3 |\n"
    assert states_anchor("| Median capital (wan CNY) | 1,134.3 |", capital, context=in_wan)


def test_mentions_carry_unit_direction_and_kind_of_number() -> None:
    (fell,) = find_numbers("fell by 4.2%")
    assert (fell.value, fell.unit, fell.direction) == (4.2, "percent", -1)
    (euros,) = find_numbers("€18.3M")
    assert (euros.value, euros.unit) == (18_300_000.0, "eur")
    assert [m.unit for m in find_numbers("12 deals, 3.1x, 4 pp, 5 days, 6 hrs, 7")] == [
        "count",
        "multiple",
        "percentage_points",
        "days",
        "hours",
        None,
    ]
    assert find_numbers("the 90th percentile")[0].ordinal
    assert all(m.date for m in find_numbers("on 2024-10-01 and 31 December"))


def test_unit_and_kind_default_from_the_text_and_must_agree_with_the_value() -> None:
    assert AnchorValue(name="a", value=14.0, text="14%").unit == "percent"
    assert AnchorValue(name="a", value=1.0, text="$1").unit == "usd"
    assert AnchorValue(name="a", value=1.2, text="1.20x").unit == "multiple"
    text = AnchorValue(name="a", value="EMEA", text="EMEA")
    assert (text.unit, text.kind) == ("text", "text")
    with pytest.raises(ValidationError, match="text value"):
        AnchorValue(name="a", value="EMEA", text="EMEA", unit="usd")


# --------------------------------------------------------------------------- competing values


@pytest.mark.parametrize(
    ("report", "quote"),
    [
        ("Win rate is 33.2%, or possibly 26.0%.", "Win rate is 33.2%, or possibly 26.0%."),
        ("Win rate is 26.0%, or possibly 33.2%.", "Win rate is 26.0%, or possibly 33.2%."),
        ("Win rate is 33.2% (perhaps 30.0% on a stricter basis).", "Win rate is 33.2%"),
        ("Win rate is 33.2%; 26.0% or so on all deals.", "Win rate is 33.2%"),
        (
            "# Win rate\n\nWin rate is 33.2%.\n\nUnder another definition it is 26.0%.\n",
            "Win rate is 33.2%.",
        ),
        (
            "Win rate is 33.2%.\n\nAlternatively, counting open deals, 26.0%.\n",
            "Win rate is 33.2%.",
        ),
        (
            "Win rate is 33.2%.[^1]\n\n[^1]: 26.0% when every opportunity is counted.\n",
            "Win rate is 33.2%.",
        ),
        (
            "| Definition | Win rate |\n|---|---|\n| Won over closed | 33.2% |\n"
            "| Won over all | 26.0% |\n",
            "| Won over closed | 33.2% |",
        ),
        (
            "| Measure | Value |\n|---|---|\n| Win rate (won / closed) | 33.2% |\n"
            "| Win rate (won / all) | 26.0% |\n",
            "| Win rate (won / closed) | 33.2% |",
        ),
        (
            "| Win rate | Value |\n|---|---|\n| Excluding open deals | 33.2% |\n"
            "| Including open deals | 26.0% |\n",
            "| Excluding open deals | 33.2% |",
        ),
        (
            "| Measure | Definition A | Definition B |\n|---|---|---|\n"
            "| Win rate | 33.2% | 26.0% |\n",
            "| Win rate | 33.2% | 26.0% |",
        ),
        (
            "| Region | Win rate |\n|---|---|\n| EMEA | 33.2% |\n| EMEA (all deals) | 26.0% |\n",
            "| EMEA | 33.2% |",
        ),
    ],
)
def test_a_competing_value_anywhere_is_a_hedge(report: str, quote: str) -> None:
    assert states_anchor(quote, WIN_RATE, context=report)
    assert is_hedge(quote, WIN_RATE, context=report)
    assert not anchor_in_output(report, WIN_RATE)


@pytest.mark.parametrize(
    ("report", "quote"),
    [
        ("Win rate rose from 30.1% to 33.2% this year.", "Win rate rose from 30.1% to 33.2%"),
        ("Win rate is 33.2% (down from 35.0%), on 1,204 deals.", "Win rate is 33.2%"),
        (
            "| Region | Win rate |\n|---|---|\n| EMEA | 33.2% |\n| APAC | 26.0% |\n"
            "| AMER | 30.1% |\n",
            "| EMEA | 33.2% |",
        ),
        (
            "| Region | Year | Win rate |\n|---|---|---|\n| EMEA | 2023 | 26.0% |\n"
            "| EMEA | 2024 | 33.2% |\n",
            "| EMEA | 2024 | 33.2% |",
        ),
        (
            "| Region | 2023 | 2024 |\n|---|---|---|\n| EMEA | 26.0% | 33.2% |\n",
            "| EMEA | 26.0% | 33.2% |",
        ),
        (
            "Win rate is 33.2%.\n\nNew-business deals are won 26.0% of the time.\n",
            "Win rate is 33.2%.",
        ),
        (
            "Win rate is 33.2%.\n\nUnder another definition the median deal is $12,000.\n",
            "Win rate is 33.2%.",
        ),
        ("Win rate is 33.2%.\n\nPossibly 80% of deals close in Q4.\n", "Win rate is 33.2%."),
        ("Win rate is 33.2% in 2024, possibly the best since 2019.", "Win rate is 33.2%"),
    ],
)
def test_honest_comparisons_segments_and_unrelated_hedges_pass(report: str, quote: str) -> None:
    assert not is_hedge(quote, WIN_RATE, context=report)
    assert anchor_in_output(report, WIN_RATE)


def test_another_anchor_of_the_rubric_never_competes() -> None:
    new_business = AnchorValue(name="new", value=26.0, text="26.0%", unit="percent")
    report = (
        "| Definition | Win rate |\n|---|---|\n| All closed deals | 33.2% |\n"
        "| New business only | 26.0% |\n\nPossibly the new-business rate, 26.0%, matters most.\n"
    )
    quote = "| All closed deals | 33.2% |"
    assert is_hedge(quote, WIN_RATE, context=report)
    assert not is_hedge(quote, WIN_RATE, context=report, others=[new_business])
    assert anchor_in_output(report, WIN_RATE, others=[new_business])
    # Offered as alternatives on one line, even a known value is a hedge.
    assert is_hedge("Win rate is 33.2% or 26.0%.", WIN_RATE, others=[new_business])


def test_the_judge_side_flags_the_hedge_unless_the_value_is_another_anchor() -> None:
    new_business = AnchorValue(name="new", value=26.0, text="26.0%", unit="percent")
    output = "Win rate is 33.2%.\n\nUnder another definition it is 26.0%.\n"
    award = ItemAward(item_id="a1", awarded=2, evidence=["Win rate is 33.2%."], reason="r")
    verdict = checked_verdict(award, points=2, output=output, rubric_texts=[], anchor=WIN_RATE)
    assert (verdict.earned, verdict.flags, verdict.code_found_anchor) == (0.0, ["hedge"], False)
    verdict = checked_verdict(
        award,
        points=2,
        output=output,
        rubric_texts=[],
        anchor=WIN_RATE,
        other_anchors=[WIN_RATE, new_business],
    )
    assert (verdict.earned, verdict.flags, verdict.code_found_anchor) == (2.0, [], True)
    wrong_currency = checked_verdict(
        ItemAward(item_id="a1", awarded=2, evidence=["Bookings: €18,256,544."], reason="r"),
        points=2,
        output="Bookings: €18,256,544.",
        rubric_texts=[],
        anchor=BOOKINGS,
    )
    assert wrong_currency.flags == ["anchor_missing"]
