"""SQL helpers shared by the evaluation modules."""

from __future__ import annotations


def quote(identifier: str) -> str:
    return '"' + identifier.replace('"', '""') + '"'


def qualified(*parts: str) -> str:
    return ".".join(quote(p) for p in parts)
