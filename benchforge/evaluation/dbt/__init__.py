"""Running dbt projects in subprocesses and reading their artifacts."""

from benchforge.evaluation.dbt.errors import dbt_error_summary
from benchforge.evaluation.dbt.manifest import (
    DbtManifest,
    ModelNode,
    assign_layers,
    load_manifest,
)
from benchforge.evaluation.dbt.project import DbtProjectError, parse_project
from benchforge.evaluation.dbt.runner import DbtInvocation, DbtRunError, run_dbt

__all__ = [
    "DbtInvocation",
    "DbtManifest",
    "DbtProjectError",
    "DbtRunError",
    "ModelNode",
    "assign_layers",
    "dbt_error_summary",
    "load_manifest",
    "parse_project",
    "run_dbt",
]
