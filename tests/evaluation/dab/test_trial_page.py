"""The run browser's page of a dab_query trial shows the answer given (escaped), the
validator's verdict with its reason, the validator's kind and version, and the gold."""

from __future__ import annotations

from benchforge.evaluation.dab.validators import ExactValue, Verdict
from benchforge.evaluation.families.dab import DabAnswerDetail
from benchforge.harness.browser import trial_page_html
from benchforge.harness.browser.load import trial_view
from tests.support.dab_trials import EXACT_JOIN, result, score


def test_the_trial_page_shows_answer_verdict_and_validator_version():
    trial = result(EXACT_JOIN, "<b>0</b> contacts")
    stored = score(trial, passed=False).model_copy(
        update={
            "breakdown": DabAnswerDetail(
                given="<b>0</b> contacts",
                verdict=Verdict(
                    passed=False, kind="exact", version=ExactValue.VERSION, reason="55 not stated"
                ),
                validator_kind="exact",
                validator_version=ExactValue.VERSION,
                expected="The answer is 55.",
            )
        }
    )
    html = trial_page_html(trial_view(trial, stored), "dab-run")
    assert "&lt;b&gt;0&lt;/b&gt; contacts" in html and "<b>0</b>" not in html
    assert "failed: 55 not stated" in html
    assert f"exact v{ExactValue.VERSION}" in html
    assert f"failed the exact validator (v{ExactValue.VERSION})" in html
    assert "The answer is 55." in html
