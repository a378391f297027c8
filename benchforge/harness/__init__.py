"""Runs at scale, without Prefect: trial matrix, resumable store, chunked executor, scoring of
stored trials, dataset resolution, model endpoints and the sandbox policy."""

if not __name__.startswith("benchforge."):  # one name per module (README, "Layout")
    raise ImportError(f"import benchforge.{__name__}, not {__name__}")
