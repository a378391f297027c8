"""Deployments: how the flows are scheduled and exposed in the Prefect UI."""
