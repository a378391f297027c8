"""Embedded sentences rewritten through the LLM client, against the mock server over loopback
HTTP: a rewrite is kept only when the value still appears in it verbatim (else the template
sentence stays, with the reason recorded); a failed call is retried by the client, then
recorded, and the template sentence kept; replies are cached by (model, prompt version,
sentence), so a rebuild asks nothing and writes the same bytes. Off by default."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pydantic import SecretStr

from benchforge.agents.mock_llm import (
    FaultConfig,
    MockServerConfig,
    MockServerHandle,
    ScriptedScript,
    run_server,
)
from benchforge.core.llm import LlmConfig
from benchforge.synthesis.perturb import (
    HINTS_FILE,
    PROMPT_VERSION,
    RECORD_FILE,
    SentenceRewriter,
    parse_perturb_spec,
    perturb,
    read_perturb_record,
)
from tests.support.perturb import HIGH_TICKETS, read_sqlite, spec_data, tiny_dataset

KEEPS_HIGH = "The customer marked this ticket High priority."
SCRIPTS: dict[str, Any] = {
    # one reply for every sentence: it keeps "High", so it drops "Low" and "Medium"
    "rewrite-high": ScriptedScript.model_validate({"replies": [{"content": KEEPS_HIGH}]}),
}


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tiny_dataset(tmp_path_factory.mktemp("rewrite") / "shop")


@pytest.fixture(scope="module")
def mock() -> Iterator[MockServerHandle]:
    handle = run_server(config=MockServerConfig(scripts=SCRIPTS))
    try:
        yield handle
    finally:
        handle.stop()


@pytest.fixture(scope="module")
def failing() -> Iterator[MockServerHandle]:
    handle = run_server(config=MockServerConfig(faults=FaultConfig(rate_500=1.0)))
    try:
        yield handle
    finally:
        handle.stop()


def rewriter(server: MockServerHandle | None, cache: Path) -> SentenceRewriter:
    url = server.url if server is not None else "http://127.0.0.1:9/v1"  # nothing listens

    def config(model: str) -> LlmConfig:
        return LlmConfig(
            role="perturb",
            model=model,
            base_url=url,
            api_key=SecretStr("test-key"),
            max_retries=2,
            backoff_base_s=0.0,
            backoff_max_s=0.0,
            timeout_s=10.0,
        )

    return SentenceRewriter(config, cache_dir=cache)


def spec(model: str | None) -> Any:
    data = spec_data(embed=True)
    if model is not None:
        data["embed"][0]["rewrite"] = {"model": model}
    return parse_perturb_spec(data)


def descriptions(out: Path) -> list[str]:
    frame = read_sqlite(out / "databases" / "support.sqlite", "tickets")
    return [str(d) for d in frame["description"]]


def test_a_rewrite_that_keeps_the_value_is_used_one_that_drops_it_is_rejected(
    dataset: Path, mock: MockServerHandle, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    perturb(dataset, spec("mock-script:rewrite-high"), out, 1, rewriter(mock, tmp_path / "c"))
    embed = read_perturb_record(out).embeds[0]
    assert embed.rewrite_model == "mock-script:rewrite-high"
    assert embed.rewrite_prompt_version == PROMPT_VERSION
    # two templates x three priorities: six distinct sentences, 60 rows in all
    assert len(embed.rewrites) == 6 and sum(r.rows for r in embed.rewrites) == 60
    for rewrite in embed.rewrites:
        assert rewrite.rewritten == KEEPS_HIGH
        assert rewrite.accepted == (rewrite.values == ["High"]), rewrite
        if not rewrite.accepted:
            assert rewrite.reason == f"the rewrite drops {rewrite.values[0]!r}"
    texts = descriptions(out)
    assert sum(KEEPS_HIGH in t for t in texts) == HIGH_TICKETS  # every High row, rewritten
    assert not any("rated this High" in t or "Priority: High." in t for t in texts)
    # the rejected ones keep their template sentence
    assert sum("Priority: Low." in t or "rated this Low priority." in t for t in texts) == 20
    assert "reworded" in (out / HINTS_FILE).read_text()


def test_a_rebuild_reads_the_cache_and_writes_the_same_bytes(
    dataset: Path, mock: MockServerHandle, tmp_path: Path
) -> None:
    cache = tmp_path / "cache"
    first = tmp_path / "first"
    perturb(dataset, spec("mock-echo"), first, 1, rewriter(mock, cache))
    assert len(list(cache.glob("*.json"))) == 6
    entry = json.loads(next(cache.glob("*.json")).read_text())
    assert entry["model"] == "mock-echo" and entry["prompt_version"] == PROMPT_VERSION
    # the same sentences against an endpoint where nothing listens: all from the cache
    again = tmp_path / "again"
    perturb(dataset, spec("mock-echo"), again, 1, rewriter(None, cache))
    assert (again / RECORD_FILE).read_bytes() == (first / RECORD_FILE).read_bytes()
    assert descriptions(again) == descriptions(first)
    embed = read_perturb_record(again).embeds[0]
    assert all(r.accepted for r in embed.rewrites)  # the echo keeps every value


def test_a_failed_call_is_retried_recorded_and_the_template_kept(
    dataset: Path, failing: MockServerHandle, tmp_path: Path
) -> None:
    plain = tmp_path / "plain"
    perturb(dataset, spec(None), plain, 1)
    out = tmp_path / "out"
    before = failing.stats().requests
    perturb(dataset, spec("mock-echo"), out, 1, rewriter(failing, tmp_path / "cache"))
    assert failing.stats().requests - before == 6 * 3  # six sentences, three attempts each
    embed = read_perturb_record(out).embeds[0]
    assert len(embed.rewrites) == 6
    for rewrite in embed.rewrites:
        assert not rewrite.accepted and rewrite.rewritten is None
        assert rewrite.reason is not None
        assert rewrite.reason.startswith("LLM call failed after 3 attempt(s)")
    assert descriptions(out) == descriptions(plain)  # every template sentence kept
    assert not (tmp_path / "cache").exists() or not list((tmp_path / "cache").glob("*.json"))


def test_rewrites_are_off_by_default(dataset: Path, tmp_path: Path) -> None:
    assert parse_perturb_spec(spec_data(embed=True)).embed[0].rewrite is None
    out = tmp_path / "out"
    perturb(dataset, spec(None), out, 1)
    embed = read_perturb_record(out).embeds[0]
    assert embed.rewrite_model is None and embed.rewrites == []
    data = spec_data(embed=True)
    data["embed"][0]["rewrite"] = {}
    assert parse_perturb_spec(data).embed[0].rewrite is not None
