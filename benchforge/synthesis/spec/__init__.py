"""The domain spec format (YAML validated by pydantic; JSON Schema exported)."""

from benchforge.synthesis.spec.loader import domain_spec_path, json_schema, load_domain, load_spec
from benchforge.synthesis.spec.models import Column, DomainSpec, SpecError, Table

__all__ = [
    "Column",
    "DomainSpec",
    "SpecError",
    "Table",
    "domain_spec_path",
    "json_schema",
    "load_domain",
    "load_spec",
]
