"""Runs at scale, without Prefect: trial matrix, resumable store, chunked executor, scoring of
stored trials, dataset resolution, model endpoints and the sandbox policy."""

if not __name__.startswith("benchforge."):  # one name per module (README, "Layout")
    raise ImportError(f"import benchforge.{__name__}, not {__name__}")

# Families build what their tasks need through dataset derivations registered by name
# (benchforge.core.derivations): every process that runs, scores or verifies tasks imports the
# harness, so it registers them here (the lake_pipeline family's lakes).
import benchforge.synthesis.lake  # noqa: F401
