"""A run's infrastructure errors, counted by reason, and when they fail the run.

An infrastructure error (the LLM endpoint unreachable after its retries, a sandbox that would
not start) is never a score: the trial is left out of every mean and run again by the next
``run`` of the same run id. A run made mostly of them has no leaderboard worth reading, so
``run_suite``, ``score_run`` and ``nightly`` end FAILED (and ``benchforge run``, ``score-run``
and ``nightly`` exit :data:`EXIT_INFRA_ERRORS`) when every finished trial of the run is one,
or when more than ``max_infra_error_share`` of them are. They fail after writing everything:
results, scores and reports are kept, and a rerun of the run id resumes it.

Why 0.2 by default (setting ``max_infra_error_share``): past a fifth of the trials missing, the
leaderboard compares agents on visibly different subsets of tasks and epochs (one agent's
missing trials are not another's), and a fault that large is an outage to fix and rerun, not
noise; the client's own retries (6 attempts with backoff) have already absorbed the transient
ones. 1.0 fails only a run where every trial is an infrastructure error.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from typing import Any, ParamSpec, TypeVar, cast

from pydantic import BaseModel, Field

from benchforge.core.errors import BenchforgeError
from benchforge.core.settings import load_settings
from benchforge.harness.store import RunStore

EXIT_INFRA_ERRORS = 3
"""Exit status of ``benchforge run`` / ``score-run`` / ``nightly`` for a run past its share of
infrastructure errors (2: a deliberate error before or during the work; 1: a bug)."""

REASON_CHARS = 300
T = TypeVar("T")
P = ParamSpec("P")


class InfraErrorTally(BaseModel):
    """The infrastructure errors among a run's finished trials, by reason."""

    run_id: str
    trials: int = Field(default=0, description="finished trials of the run")
    infra_errors: int = 0
    reasons: dict[str, int] = Field(
        default_factory=dict, description="reason -> trials, the most frequent first"
    )

    @property
    def share(self) -> float:
        return self.infra_errors / self.trials if self.trials else 0.0

    def exceeds(self, max_share: float) -> bool:
        """Every finished trial an infrastructure error, or more than ``max_share`` of them."""
        if not self.infra_errors:
            return False
        return self.infra_errors == self.trials or self.share > max_share

    def line(self) -> str:
        """``run R: 3 infrastructure errors of 3 trials (100%)`` ('' for none)."""
        if not self.infra_errors:
            return ""
        plural = "error" if self.infra_errors == 1 else "errors"
        return (
            f"run {self.run_id}: {self.infra_errors} infrastructure {plural} of "
            f"{self.trials} trials ({self.share:.0%})"
        )

    def reason_lines(self) -> list[str]:
        """One line per distinct reason, the most frequent first: count times reason."""
        return [f"{n} \N{MULTIPLICATION SIGN} {reason}" for reason, n in self.reasons.items()]


def tally_infra_errors(run: RunStore, slugs: Iterable[str] | None = None) -> InfraErrorTally:
    """Counts the infrastructure errors among the run's finished trials (only ``slugs``, when
    given), grouping them by their stored reason (whitespace folded, cut at
    :data:`REASON_CHARS`)."""
    states = run.trial_states()
    if slugs is not None:
        wanted = set(slugs)
        states = {s: state for s, state in states.items() if s in wanted}
    infra = sorted(s for s, state in states.items() if state == "infra_error")
    reasons = Counter(_reason(run.infra_error(slug)) for slug in infra)
    return InfraErrorTally(
        run_id=run.run_id,
        trials=len(states),
        infra_errors=len(infra),
        reasons=dict(sorted(reasons.items(), key=lambda item: (-item[1], item[0]))),
    )


def _reason(text: str) -> str:
    folded = " ".join(text.split()) or "no reason recorded"
    return folded if len(folded) <= REASON_CHARS else folded[: REASON_CHARS - 1] + "…"


class InfraErrorsExceeded(BenchforgeError):
    """A run past its share of infrastructure errors. Raised by a flow after it wrote
    everything, so the flow run ends FAILED; ``result`` is what the flow would have returned
    (the command prints it, then the reasons)."""

    exit_code = EXIT_INFRA_ERRORS

    def __init__(
        self, tallies: list[InfraErrorTally], max_share: float, result: Any = None
    ) -> None:
        self.tallies = tallies
        self.max_share = max_share
        self.result = result
        failing = [t for t in tallies if t.exceeds(max_share)]
        lines = "; ".join(f"{t.line()}: {' | '.join(t.reason_lines())}" for t in failing)
        super().__init__(
            f"{lines} (more than max_infra_error_share {max_share:g}, or every trial); "
            "results are kept: fix the cause and rerun the same run id to run these trials again"
        )

    def __reduce__(self) -> tuple[Any, ...]:  # pickled by Prefect with the FAILED state
        return (type(self), (self.tallies, self.max_share, self.result))


def check_infra_errors(tallies: list[InfraErrorTally], max_share: float, result: Any) -> None:
    """Raises :class:`InfraErrorsExceeded` when any of ``tallies`` is past ``max_share``."""
    if any(t.exceeds(max_share) for t in tallies):
        raise InfraErrorsExceeded(tallies, max_share, result)


def kept(fn: Callable[P, T]) -> Callable[P, T]:
    """``fn`` (a flow) returning its result even when the flow run ended FAILED on
    infrastructure errors (:class:`InfraErrorsExceeded`): a parent flow scores and reports
    before it decides (:func:`fail_on_infra_errors`), a command prints before it exits."""

    def call(*args: P.args, **kwargs: P.kwargs) -> T:
        try:
            return fn(*args, **kwargs)
        except InfraErrorsExceeded as err:
            return cast(T, err.result)

    return call


def fail_on_infra_errors(result: T) -> T:
    """``result`` (what a flow chaining runs, ``nightly``, returns once everything is
    written), or :class:`InfraErrorsExceeded` carrying it when a run it reports (every
    :class:`InfraErrorTally` in it) is past the ``max_infra_error_share`` setting."""
    check_infra_errors(run_tallies(result), load_settings().max_infra_error_share, result)
    return result


def run_tallies(result: Any) -> list[InfraErrorTally]:
    """Every run's tally in a flow's result (models holding models or lists of them), one per
    run id (its widest, when a run's summary and its scores' both hold one)."""
    return list(_tallies(result, {}).values())


def _tallies(value: Any, found: dict[str, InfraErrorTally]) -> dict[str, InfraErrorTally]:
    if isinstance(value, InfraErrorTally):
        kept_one = found.get(value.run_id)
        if kept_one is None or value.trials > kept_one.trials:
            found[value.run_id] = value
    elif isinstance(value, BaseModel):
        for name in type(value).model_fields:
            _tallies(getattr(value, name), found)
    elif isinstance(value, list | tuple):  # e.g. the nightly's runs, one per run kind
        for item in value:
            _tallies(item, found)
    return found
