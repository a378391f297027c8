"""The mock server's judge policies over real loopback HTTP: request parsing, the faithful
rule, malformed and broken judges, dispatch by model name, request headers."""

from __future__ import annotations

import json
import sys
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from benchforge.agents.mock_llm import (
    MockServerHandle,
    PolicyReply,
    PolicyRequest,
    run_server,
)
from benchforge.agents.mock_llm.judge_policies import coverage, keywords
from benchforge.evaluation.judges.models import AnchorValue, FlatRubricItem, ResolvedItem
from benchforge.evaluation.judges.prompts import (
    architecture_messages,
    gsb_messages,
    rubric_items_messages,
    rubric_path_messages,
)
from benchforge.evaluation.judges.replies import GsbReply, ItemsReply, PathChoiceReply

CHURN = AnchorValue(name="churn", value=14.2, text="14.2%")
ITEMS = [
    ResolvedItem(
        id="a1",
        standard_id="S1",
        path_id="p1",
        type="accuracy",
        points=2,
        criterion="Overall quarterly churn rate equals 14.2%",
        anchor=CHURN,
    ),
    ResolvedItem(
        id="c1",
        standard_id="S1",
        path_id="p1",
        type="completeness",
        points=1,
        criterion="Breaks churn down by customer region",
    ),
    ResolvedItem(
        id="n1",
        standard_id="S1",
        path_id="p1",
        type="accuracy",
        points=-1,
        criterion="Presents invented customer counts or fabricated survey figures",
    ),
]
REPORT = "# Churn\nChurn was high.\nOverall churn for the quarter reached 14.2% of the base.\n"


class _HeaderEcho:
    name = "headers"

    def reply(self, request: PolicyRequest) -> PolicyReply:
        return PolicyReply(content=json.dumps(request.headers, sort_keys=True))


@pytest.fixture(scope="module")
def server() -> Iterator[MockServerHandle]:
    handle = run_server("127.0.0.1", 0, policies={"header-echo": _HeaderEcho()})
    try:
        yield handle
    finally:
        handle.stop()


def _chat(
    server: MockServerHandle,
    model: str,
    messages: list[dict[str, Any]],
    headers: dict[str, str] | None = None,
) -> httpx.Response:
    return httpx.post(
        f"{server.url}/chat/completions",
        json={"model": model, "messages": messages},
        headers=headers or {},
        timeout=10,
    )


def _content(response: httpx.Response) -> str:
    assert response.status_code == 200, response.text
    return str(response.json()["choices"][0]["message"]["content"])


def _items_messages(report: str = REPORT) -> list[dict[str, Any]]:
    return rubric_items_messages(
        question="Why did churn rise?",
        standard_id="S1",
        standard_title="Churn level",
        path_id="p1",
        approach="Direct rate",
        items=ITEMS,
        output=report,
    )


def test_keywords_and_coverage_follow_the_rule() -> None:
    assert keywords("Overall quarterly churn rate equals 14.2%", "14.2%") == [
        "overall",
        "quarterly",
        "churn",
        "rate",
        "equals",
    ]
    assert keywords("Names EMEA as the region with the highest churn", "EMEA") == [
        "region",
        "highest",
        "churn",
    ]
    # "quarterly" matches "quarter" (first five letters); "rate" and "equals" do not match.
    assert (
        coverage(keywords("Overall quarterly churn rate equals"), "Overall churn per quarter")
        == 0.6
    )


def test_faithful_items_evidence_and_penalty(server: MockServerHandle) -> None:
    reply = ItemsReply.model_validate_json(_content(_chat(server, "mock-judge", _items_messages())))
    awards = {a.item_id: a for a in reply.items}
    assert awards["a1"].awarded == 2.0
    assert awards["a1"].evidence == ["Overall churn for the quarter reached 14.2% of the base."]
    assert (awards["c1"].awarded, awards["c1"].evidence) == (0.0, [])  # coverage 1/4
    assert awards["n1"].awarded == 0.0

    wrong = REPORT.replace("14.2%", "15.0%")
    reply = ItemsReply.model_validate_json(
        _content(_chat(server, "mock-judge", _items_messages(wrong)))
    )
    assert [a.awarded for a in reply.items] == [0.0, 0.0, 0.0]
    penalised = REPORT + "Customer counts are invented and the survey figures fabricated.\n"
    reply = ItemsReply.model_validate_json(
        _content(_chat(server, "mock-judge", _items_messages(penalised)))
    )
    assert reply.items[2].awarded == -1.0


def test_faithful_path_gsb_and_architecture(server: MockServerHandle) -> None:
    cohort = ITEMS[0].model_copy(update={"id": "b1", "path_id": "p2", "anchor": None})
    path = rubric_path_messages(
        question="q",
        standard_id="S1",
        standard_title="Churn level",
        max_points=3,
        paths=[("p2", "Cohorts", [cohort]), ("p1", "Direct rate", ITEMS)],
        output=REPORT,
    )
    choice = PathChoiceReply.model_validate_json(_content(_chat(server, "mock-judge", path)))
    assert choice.path_id == "p2"  # both paths earn 2 points: the first listed wins

    rich = "# A\n## B\n- one 1\n- two 2\n\nPrices rose 5% because of a 3% tax.\n"
    plain = "Prices rose."
    first = GsbReply.model_validate_json(
        _content(
            _chat(server, "mock-judge", gsb_messages(question="q", report_a=rich, report_b=plain))
        )
    )
    second = GsbReply.model_validate_json(
        _content(
            _chat(server, "mock-judge", gsb_messages(question="q", report_a=plain, report_b=rich))
        )
    )
    # readability 2 + 2/2 = 3 vs 0: 2*3 = 6; depth 4/3 + 1 vs 0: 2*(7/3).
    assert (first.readability.score, first.depth.score) == (6.0, pytest.approx(14 / 3))
    assert (second.readability.score, second.depth.score) == (-6.0, pytest.approx(-14 / 3))

    items = [
        FlatRubricItem(
            id="d1",
            dimension="design_quality",
            points=1,
            criterion="Documents freshness checks on the events source",
        )
    ]
    arch = architecture_messages(
        requirement="r", items=items, blueprint="sources:\n  events: {freshness: 12h checks}\n"
    )
    reply = ItemsReply.model_validate_json(_content(_chat(server, "mock-judge", arch)))
    assert reply.items[0].awarded == 1.0
    assert reply.items[0].evidence == ["events: {freshness: 12h checks}"]


def test_malformed_judge_reads_the_attempt_from_the_conversation(server: MockServerHandle) -> None:
    messages = _items_messages()
    contents = []
    for _ in range(3):
        content = _content(_chat(server, "mock-judge-malformed:2", messages))
        contents.append(content)
        messages = [*messages, {"role": "assistant", "content": content}]
        messages.append({"role": "user", "content": "That reply cannot be used."})
    with pytest.raises(json.JSONDecodeError):
        json.loads(contents[0])
    with pytest.raises(ValueError):
        ItemsReply.model_validate_json(contents[1])  # valid JSON, wrong shape
    assert ItemsReply.model_validate_json(contents[2]).items[0].awarded == 2.0
    # Stateless: the same conversation prefix gets the same reply again.
    assert _content(_chat(server, "mock-judge-malformed:2", _items_messages())) == contents[0]
    for turn in range(3):  # broken: never valid, whatever the turn
        broken = _content(_chat(server, "mock-judge-broken", messages[: 2 + 2 * turn]))
        with pytest.raises(json.JSONDecodeError):
            json.loads(broken)


def test_dispatch_errors_and_model_list(server: MockServerHandle) -> None:
    plain = _chat(server, "mock-judge", [{"role": "user", "content": "hello"}])
    assert plain.status_code == 400
    assert plain.json()["error"]["code"] == "not_a_judge_request"
    for model in ("mock-judge-lenient", "mock-judge-malformed:x"):
        response = _chat(server, model, _items_messages())
        assert response.status_code == 404
        assert response.json()["error"]["code"] == "model_not_found"
    names = {m["id"] for m in httpx.get(f"{server.url}/models", timeout=10).json()["data"]}
    assert {"mock-judge", "mock-judge-obedient", "mock-judge-broken"} <= names


def test_noisy_judges_go_to_their_module(
    server: MockServerHandle, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[tuple[str, str]] = []

    def reply(request: PolicyRequest, params: str, truth: Path | None = None) -> PolicyReply:
        seen.append((request.model, params))
        return PolicyReply(content="noisy")

    fake = types.ModuleType("benchforge.agents.mock_llm.noisy_judge")
    fake.reply = reply  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "benchforge.agents.mock_llm.noisy_judge", fake)
    assert _content(_chat(server, "mock-judge-noisy:sigma=0.2", _items_messages())) == "noisy"
    assert seen == [("mock-judge-noisy:sigma=0.2", "sigma=0.2")]


def test_policies_see_the_request_headers_lower_cased(server: MockServerHandle) -> None:
    content = _content(
        _chat(
            server, "header-echo", [{"role": "user", "content": "x"}], {"X-Benchforge-Case": "c7"}
        )
    )
    headers = json.loads(content)
    assert headers["x-benchforge-case"] == "c7"
    assert all(name == name.lower() for name in headers)
