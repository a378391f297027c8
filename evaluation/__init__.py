"""Evaluation library: dbt execution, gold builds, task specs and scorers (no Prefect imports)."""
