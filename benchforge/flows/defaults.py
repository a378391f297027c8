"""Defaults of the flows' parameters, importable without Prefect (the CLI checks a request
with them before Prefect starts)."""

NIGHTLY_SUITES = ["de-crm"]
NIGHTLY_AGENTS = ["oracle", "null", "react-de"]
MOCK_MODEL = "mock-script:react-de-crm-sla-solve"
REAL_MODEL = "gpt-4.1-mini"


def nightly_models(has_api_key: bool) -> list[str]:
    """A real model with an API key, else the mock server's scripted react-de."""
    return [REAL_MODEL if has_api_key else MOCK_MODEL]


NIGHTLY_DA_SUITES = ["da-crm"]
NIGHTLY_DA_AGENTS = ["oracle", "null", "react-da"]
MOCK_DA_MODEL = "mock-script:react-da-report"


def nightly_da_models(has_api_key: bool) -> list[str]:
    """A real model with an API key, else the mock server's scripted react-da."""
    return [REAL_MODEL if has_api_key else MOCK_DA_MODEL]
