"""Fault decisions: server-wide rates from FaultConfig, overridable per request by the
``x-mock-fault`` header.

Header grammar (tokens separated by commas or semicolons)::

    none                      no faults and no latency (other tokens may add some back)
    429 | 500 | timeout       this fault on every arrival of this request
    429*N | 500*N | timeout*N this fault on the first N arrivals of this exact request (same
                              body and header), then none: a retry succeeds after N failures
    latency=MS | latency=MIN-MAX
    retry-after=S             Retry-After of 429s (seconds; 'none' sends no header)
    rate-429=X | rate-500=X | rate-timeout=X
    timeout-sleep=S
"""

from __future__ import annotations

import random
import threading
from collections import Counter
from dataclasses import dataclass
from typing import Any, Literal

from benchforge.agents.mock_llm.config import FaultConfig

FAULT_HEADER = "x-mock-fault"

FaultKind = Literal["none", "429", "500", "timeout"]


@dataclass(frozen=True)
class FaultOverride:
    config_update: dict[str, Any]
    forced: FaultKind | None = None
    forced_times: int | None = None  # None: every arrival


@dataclass(frozen=True)
class FaultDecision:
    kind: FaultKind
    latency_s: float
    retry_after_s: float | None
    timeout_sleep_s: float
    arrival: int


def parse_fault_header(value: str) -> FaultOverride:
    """Parse ``x-mock-fault``; ValueError explains a bad token."""
    update: dict[str, Any] = {}
    forced: FaultKind | None = None
    forced_times: int | None = None
    for raw in value.replace(";", ",").split(","):
        token = raw.strip().lower()
        if not token:
            continue
        if token == "none":
            update.update(
                rate_429=0.0, rate_500=0.0, rate_timeout=0.0, latency_ms=0.0, latency_ms_max=None
            )
            continue
        kind, _, times = token.partition("*")
        if kind in {"429", "500", "timeout"}:
            forced = kind  # type: ignore[assignment]
            forced_times = _int(times, token) if times else None
            continue
        name, eq, arg = token.partition("=")
        if not eq:
            raise ValueError(f"unknown {FAULT_HEADER} token {raw.strip()!r}")
        if name == "latency":
            low, dash, high = arg.partition("-")
            update["latency_ms"] = _float(low, token)
            update["latency_ms_max"] = _float(high, token) if dash else None
        elif name == "retry-after":
            update["retry_after_s"] = None if arg == "none" else _float(arg, token)
        elif name in {"rate-429", "rate-500", "rate-timeout"}:
            update[name.replace("-", "_")] = _float(arg, token)
        elif name == "timeout-sleep":
            update["timeout_sleep_s"] = _float(arg, token)
        else:
            raise ValueError(f"unknown {FAULT_HEADER} token {raw.strip()!r}")
    return FaultOverride(update, forced, forced_times)


def _float(text: str, token: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise ValueError(f"bad number in {FAULT_HEADER} token {token!r}") from None


def _int(text: str, token: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise ValueError(f"bad count in {FAULT_HEADER} token {token!r}") from None


class FaultPlanner:
    """Decides each request's fault from (seed, arrival number): deterministic for a given
    order of arrivals."""

    def __init__(self, config: FaultConfig) -> None:
        self.config = config
        self._lock = threading.Lock()
        self._arrivals = 0
        self._seen: Counter[str] = Counter()

    def reset(self) -> None:
        with self._lock:
            self._arrivals = 0
            self._seen.clear()

    def decide(self, header: str | None, fingerprint: str) -> FaultDecision:
        """ValueError (from pydantic or the header parser) when the header is invalid."""
        override = parse_fault_header(header) if header else FaultOverride({})
        config = self.config
        if override.config_update:
            config = FaultConfig.model_validate({**config.model_dump(), **override.config_update})
        with self._lock:
            arrival = self._arrivals
            self._arrivals += 1
            seen = self._seen[fingerprint]
            self._seen[fingerprint] += 1
        rng = random.Random(f"{config.seed}:{arrival}")
        latency_ms = config.latency_ms
        if config.latency_ms_max is not None:
            latency_ms = rng.uniform(config.latency_ms, config.latency_ms_max)
        u = rng.random()
        kind: FaultKind = "none"
        if override.forced is not None:
            if override.forced_times is None or seen < override.forced_times:
                kind = override.forced
        elif u < config.rate_timeout:
            kind = "timeout"
        elif u < config.rate_timeout + config.rate_429:
            kind = "429"
        elif u < config.rate_timeout + config.rate_429 + config.rate_500:
            kind = "500"
        return FaultDecision(
            kind=kind,
            latency_s=latency_ms / 1000.0,
            retry_after_s=config.retry_after_s,
            timeout_sleep_s=config.timeout_sleep_s,
            arrival=arrival,
        )
