"""Running dbt projects in subprocesses and reading their artifacts."""

from benchforge.evaluation.dbt.manifest import DbtManifest, ModelNode, load_manifest
from benchforge.evaluation.dbt.runner import DbtInvocation, DbtRunError, run_dbt

__all__ = ["DbtInvocation", "DbtManifest", "DbtRunError", "ModelNode", "load_manifest", "run_dbt"]
