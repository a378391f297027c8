"""Agents: the LLM client every agent and judge uses, and a local mock LLM server.

A library package: plain Python, no Prefect imports. Flows compose it.
"""
