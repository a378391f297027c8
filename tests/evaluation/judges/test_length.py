"""The word limit and GSB's length control: padding cannot win.

The faithful mock's GSB rule rewards length: it counts headings, list items and "because /
therefore / recommend" sentences (capped), repeats included, so appending a block of generic
"further considerations" lifts any report that has not reached the caps. Against ``NUMBERS`` the
honest ``CANDIDATE`` is same / bad; padded with ``FILLER`` it is good / good. The controls:
the word limit (judges read at most ``max_words`` words, so 100k words of padding cost what
1,500 do) and the length-matched check (a candidate longer than its allowance is judged again
at the baseline's length, and the lower raw score counts). By the mock's own rule a prefix
never has more features than the whole, so the length-matched verdict is at most the honest
report's: what the padding adds cannot count.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from benchforge.agents.mock_llm import MockServerHandle, Policy, PolicyReply, PolicyRequest
from benchforge.agents.mock_llm.judge_policies import (
    FaithfulJudge,
    ObedientJudge,
    parse_judge_request,
)
from benchforge.evaluation.families.de import ArchGold, DeArchFamily
from benchforge.evaluation.judges.breakdown import judge_record_of
from benchforge.evaluation.judges.client import Judge
from benchforge.evaluation.judges.gsb import LENGTH_RATIO, judge_gsb, length_matched_words
from benchforge.evaluation.judges.length import (
    DEFAULT_MAX_BLUEPRINT_WORDS,
    DEFAULT_MAX_REPORT_WORDS,
    count_words,
    limit_words,
)
from benchforge.evaluation.judges.models import GsbScore
from benchforge.evaluation.judges.record import judge_record
from benchforge.evaluation.judges.sanitize import sanitize_output
from benchforge.evaluation.tasks import load_tasks
from benchforge.evaluation.tasks.models import DeArchTask
from tests.evaluation.judges.conftest import JudgeFactory, judge_factory, start_mock
from tests.evaluation.judges.data import QUESTION
from tests.evaluation.judges.gsb_reports import CANDIDATE, DRAFT, NUMBERS, WEAK
from tests.evaluation.judges.test_architecture_and_record import BLUEPRINT, ITEMS, REQUIREMENT
from tests.paths import REPO_ROOT

DENSE = """\
## Churn
Churn: 14.2% (EMEA 21.5%, APAC 11.0%, NA 9.8%, LATAM 16.3%), from 13.1%, 12.4%, 11.7%.
At risk: $1.25M, 4,210 accounts, 1,180 in LATAM, 312 in EMEA, 95 in APAC.
Churn rose because prices went up 6% in March. We suggest a 5% discount.
"""
"""A baseline shorter than CANDIDATE (43 words to 51) but deeper (depth 7 to 5): CANDIDATE is
good on readability, bad on depth."""
BASELINES = {"weak": WEAK, "draft": DRAFT, "dense": DENSE}
EXPECTED_WORDS = 100
"""A task whose reference report is 100 words: CANDIDATE (51) is within its allowance."""
FILLER = (
    "## Further considerations\n\n"
    "- These results should be read with care because every dataset has its limits.\n"
    "- Further work is recommended, therefore the team should revisit the analysis soon.\n\n"
)
MOCKS = ("mock-judge", "mock-judge-obedient")
Recorded = Callable[[str], Judge]


def pad(report: str, words: int) -> str:
    """``report`` followed by at least ``words`` words of ``FILLER``."""
    blocks = -(-words // count_words(FILLER))
    return f"{report.rstrip()}\n\n{FILLER * blocks}"


@dataclass
class _Recording:
    """A judge policy that also keeps, per request, the word count of each material."""

    inner: Policy
    name: str = "recording"
    seen: list[dict[str, int]] = field(default_factory=list)
    texts: list[dict[str, str]] = field(default_factory=list)

    def reply(self, request: PolicyRequest) -> PolicyReply:
        view = parse_judge_request(request)
        if view.attempt == 0:
            self.texts.append(dict(view.materials))
            self.seen.append({k: count_words(v) for k, v in view.materials.items()})
        return self.inner.reply(request)


RECORDERS = {
    "mock-judge": _Recording(FaithfulJudge()),
    "mock-judge-obedient": _Recording(ObedientJudge()),
}


@pytest.fixture(scope="module")
def recording_server() -> Iterator[MockServerHandle]:
    handle = start_mock({f"rec-{model}": policy for model, policy in RECORDERS.items()})
    try:
        yield handle
    finally:
        handle.stop()


@pytest.fixture
def recorded(
    recording_server: MockServerHandle, tmp_path: Path
) -> Iterator[Callable[[str], Judge]]:
    """``recorded(model)``: an uncached judge on the recording server (the model's recorder
    emptied when the test starts)."""
    for recorder in RECORDERS.values():
        recorder.seen.clear()
        recorder.texts.clear()
    with ExitStack() as stack:
        make = judge_factory(recording_server.url, tmp_path, stack)
        yield lambda model: make(f"rec-{model}", cache=False)


# --------------------------------------------------------------------------- limit_words


def test_limit_words_keeps_short_text_and_cuts_long_text_at_a_line() -> None:
    text = "# Title\n\nOne two three four.\nFive six seven eight.\nNine ten eleven twelve.\n"
    assert count_words(text) == 13  # "#" is no word
    same = limit_words(text, 13)
    assert (same.text, same.truncated, same.flag) == (text, False, None)
    assert limit_words(text, None).text == text
    cut = limit_words(text, 10)  # the line ending at 9 words is within a tenth of 10
    assert cut.text == "# Title\n\nOne two three four.\nFive six seven eight."
    assert (cut.words, cut.kept_words, cut.flag) == (13, 9, "truncated: kept 9 of 13 words")
    words = limit_words(text, 12)  # the line would drop 3: cut after the 12th word
    assert words.text.endswith("Nine ten eleven") and words.kept_words == 12
    assert limit_words(text, 0).text == "" and limit_words(text, 0).kept_words == 0


def test_limit_words_does_not_drop_a_long_paragraph_for_a_line_break() -> None:
    """A Markdown paragraph is one line: cut at its last whole sentence, else mid-sentence."""
    paragraph = " ".join(f"Sentence {i} has five words." for i in range(40))
    text = f"# Title\n\n{paragraph}\n"
    cut = limit_words(text, 101)  # the title, then 20 sentences of five words
    assert cut.kept_words == 101 and cut.text.endswith("Sentence 19 has five words.")
    assert limit_words(text, 104).kept_words == 101  # 101 is within a tenth of 104
    words = limit_words("word " * 50, 20)
    assert words.kept_words == 20 and words.flag == "truncated: kept 20 of 50 words"
    table = "| region | churn |\n|---|---|\n| NA | 9.8% |\n"
    assert count_words(table) == 4  # pipes and rules are no words


def test_a_limit_on_the_visible_text_counts_what_a_reader_sees() -> None:
    hidden = "<!-- " + "hidden " * 500 + "-->\n\n" + CANDIDATE
    limited = sanitize_output(hidden, max_words=100)  # 500 hidden words do not count
    assert limited.truncated is None and limited.text == sanitize_output(CANDIDATE).text


# --------------------------------------------------------------------------- the allowance


def test_the_length_matched_check_starts_past_the_allowance() -> None:
    assert LENGTH_RATIO == 1.5
    assert length_matched_words(45, 30) is None  # within 1.5 x 30
    assert length_matched_words(46, 30) == 30  # longer: also judged at the baseline's 30 words
    assert length_matched_words(150, 30, expected_words=100) is None  # a 100-word answer is due
    assert length_matched_words(151, 30, expected_words=100) == 30
    assert length_matched_words(1000, 30, ratio=None) is None
    assert length_matched_words(1000, 0) is None  # nothing to match


# --------------------------------------------------------------------------- GSB


def _gsb(judge: Judge, report: str, **kwargs: Any) -> GsbScore:
    return judge_gsb(judge, report, BASELINES, question=QUESTION, **kwargs)


def _verdicts(score: GsbScore) -> dict[tuple[str, str], str | None]:
    return {(p.baseline_id, p.dimension): p.verdict for p in score.pairs}


@pytest.mark.parametrize("model", MOCKS)
def test_without_the_control_the_mock_rewards_padding(model: str, recorded: Recorded) -> None:
    honest = _gsb(recorded(model), CANDIDATE, length_ratio=None)
    padded = _gsb(recorded(model), pad(CANDIDATE, 1500), length_ratio=None)
    assert (honest.good, honest.same, honest.bad) == (5, 0, 1)
    assert _verdicts(honest)[("dense", "depth")] == "bad"
    assert (padded.good, padded.score) == (6, 1.0)  # the padding alone turned it


@pytest.mark.parametrize("model", MOCKS)
def test_padding_scores_no_higher_gsb_than_its_honest_source(
    model: str, recorded: Recorded
) -> None:
    limit = DEFAULT_MAX_REPORT_WORDS
    options = {"max_words": limit, "expected_words": EXPECTED_WORDS}
    honest_judge, within_judge, huge_judge = recorded(model), recorded(model), recorded(model)
    within_text, huge_text = pad(CANDIDATE, 1500), pad(CANDIDATE, 100_000)
    honest = _gsb(honest_judge, CANDIDATE, **options)
    within = _gsb(within_judge, within_text, **options)  # within the word limit
    huge = _gsb(huge_judge, huge_text, **options)  # 100k words: cut to 2,000

    assert (honest.good, honest.same, honest.bad, honest.length_matched) == (5, 0, 1, 0)
    assert honest.score == pytest.approx(4 / 6) and honest.truncated is None
    for padded in (within, huge):
        # The full comparison: the padding wins everything (raw 10 in both orders) ...
        assert {p.raw_first for p in padded.pairs} == {p.raw_second for p in padded.pairs} == {10.0}
        # ... but every pair is judged again at the baseline's length, where only CANDIDATE's
        # opening counts: readability good against all three, depth good / same / bad.
        assert padded.length_matched == len(BASELINES)
        for pair in padded.pairs:
            baseline = sanitize_output(BASELINES[pair.baseline_id]).text
            assert pair.matched_words == count_words(baseline)
            assert pair.matched_first is not None and pair.matched_second is not None
        assert (padded.good, padded.same, padded.bad) == (4, 1, 1)
        assert padded.score == pytest.approx(3 / 6)
        assert padded.score <= honest.score
    assert _verdicts(within) == _verdicts(huge)
    assert _verdicts(within)[("draft", "depth")] == "same"  # good for the honest report
    assert within.truncated is None
    visible = sanitize_output(within_text).text
    assert count_words(visible) == count_words(within_text) < limit  # the filler is visible
    kept = limit_words(huge_text, limit)  # so the cut falls at the same word
    assert huge.truncated == f"truncated: kept {kept.kept_words} of {count_words(huge_text)} words"
    assert 0.99 * limit < kept.kept_words <= limit  # whole lines

    # Calls: two per baseline, two more per baseline checked at its length; the same for 1,500
    # and for 100,000 words of padding, and no request carries more than the limit.
    assert judge_record(judge=honest_judge, gsb=honest).requests == 2 * len(BASELINES)
    assert judge_record(judge=within_judge, gsb=within).requests == 4 * len(BASELINES)
    assert judge_record(judge=huge_judge, gsb=huge).requests == 4 * len(BASELINES)
    seen = RECORDERS[model].seen
    assert len(seen) == 10 * len(BASELINES)
    assert max(max(words.values()) for words in seen) == kept.kept_words


def test_a_candidate_shorter_than_the_baseline_is_compared_at_the_baselines_length(
    recorded: Recorded,
) -> None:
    """What the check does not do: NUMBERS (75 words) is longer than CANDIDATE (51), so the
    length-matched candidate is CANDIDATE plus 24 words of filler, and the faithful mock, which
    counts the filler's heading, bullets and "because" sentences, prefers it to the honest
    report there (same / bad -> good / same). The two are then as long as each other: what
    the judge makes of the filler is content, judged at equal length, not length."""
    judge = recorded("mock-judge")
    options = {"max_words": DEFAULT_MAX_REPORT_WORDS, "expected_words": EXPECTED_WORDS}
    honest = judge_gsb(judge, CANDIDATE, {"numbers": NUMBERS}, question=QUESTION, **options)
    padded = judge_gsb(
        judge, pad(CANDIDATE, 1500), {"numbers": NUMBERS}, question=QUESTION, **options
    )
    assert [p.verdict for p in honest.pairs] == ["same", "bad"]
    assert [p.verdict for p in padded.pairs] == ["good", "same"]
    assert {p.matched_words for p in padded.pairs} == {75}
    shown = [m["REPORT_A"] for m in RECORDERS["mock-judge"].texts[-2:]]
    assert count_words(shown[0]) <= 75 and shown[0].startswith(CANDIDATE.split("\n")[0])


@pytest.mark.parametrize("model", MOCKS)
def test_a_report_over_the_limit_is_judged_on_its_first_words(
    model: str, recorded: Recorded
) -> None:
    report = pad(CANDIDATE, 1000)
    visible = sanitize_output(report).text
    kept = limit_words(visible, 200)
    score = _gsb(recorded(model), report, max_words=200, length_ratio=None)
    assert score.truncated == f"truncated: kept {kept.kept_words} of {count_words(visible)} words"
    assert kept.kept_words == 188  # the last whole line within 200 words (and a tenth)
    baselines = {sanitize_output(b).text.strip() for b in BASELINES.values()}
    shown = [t.strip() for m in RECORDERS[model].texts for t in m.values()]
    candidates = [t for t in shown if t not in baselines]
    assert len(candidates) == 2 * len(BASELINES)  # each baseline, both orders
    assert set(candidates) == {kept.text.strip()}


# --------------------------------------------------------------------------- de_arch


def test_a_blueprint_over_its_limit_is_judged_on_its_first_words(make_judge: JudgeFactory) -> None:
    notes = "".join(f"  - note {i}: reviewed with the team, nothing to add.\n" for i in range(60))
    head, tests = BLUEPRINT.split("tests:\n")
    late = f"{head}notes:\n{notes}tests:\n{tests}"  # the tests section after 60 lines of notes
    limit = count_words(head) + 40
    kept = limit_words(sanitize_output(late).text, limit)
    family = DeArchFamily()
    gold = ArchGold(
        items=ITEMS,
        requirement=REQUIREMENT,
        rubric_version="v",
        reference=BLUEPRINT,
        max_words=limit,
    )
    whole = family.judge_blueprint(gold.model_copy(update={"max_words": None}), late, make_judge())
    cut = family.judge_blueprint(gold, late, make_judge())
    flag = f"truncated: kept {kept.kept_words} of {count_words(sanitize_output(late).text)} words"
    assert judge_record_of(whole) is not None and judge_record_of(whole).truncated is None
    assert judge_record_of(cut) is not None and judge_record_of(cut).truncated == flag
    assert cut.detail == f"blueprint {flag}"
    earned = {i.id: i.earned for i in judge_record_of(cut).items}
    assert earned["d1"] == 0 and {i.id: i.earned for i in judge_record_of(whole).items}["d1"] == 1
    assert cut.metrics["rubric"] < whole.metrics["rubric"]


def test_de_arch_tasks_default_to_a_blueprint_limit_they_fit() -> None:
    for suite in sorted(REPO_ROOT.glob("task_specs/de-*")):
        for task in load_tasks(suite):
            if isinstance(task.spec, DeArchTask):
                assert task.spec.max_blueprint_words == DEFAULT_MAX_BLUEPRINT_WORDS
                reference = task.file(task.spec.reference).read_text()
                assert 3 * count_words(reference) < DEFAULT_MAX_BLUEPRINT_WORDS
