"""Evaluation library: dbt execution, gold builds, task specs and scorers (no Prefect imports)."""

if not __name__.startswith("benchforge."):  # one name per module (README, "Layout")
    raise ImportError(f"import benchforge.{__name__}, not {__name__}")
