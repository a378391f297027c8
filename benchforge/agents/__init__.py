"""Agents: the LLM client every agent and judge uses, and a local mock LLM server.

A library package: plain Python, no Prefect imports. Flows compose it.
"""

if not __name__.startswith("benchforge."):  # one name per module (README, "Layout")
    raise ImportError(f"import benchforge.{__name__}, not {__name__}")
