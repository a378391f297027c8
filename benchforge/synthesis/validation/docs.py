"""Great Expectations Data Docs for a validation run.

The runner merges chunk results into one ``ExpectationValidationResult`` per expectation; here
they become one ``ExpectationSuiteValidationResult`` per table, stored in a throwaway file-mode GE
context whose ``build_data_docs()`` renders the static site, which is then copied to ``docs_dir``.
"""

from __future__ import annotations

import shutil
import tempfile
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import great_expectations as gx
from great_expectations.core import ExpectationSuiteValidationResult, ExpectationValidationResult
from great_expectations.core.run_identifier import RunIdentifier
from great_expectations.data_context.types.base import ProgressBarsConfig
from great_expectations.data_context.types.resource_identifiers import (
    ExpectationSuiteIdentifier,
    ValidationResultIdentifier,
)
from great_expectations.expectations.expectation import Expectation

SITE = Path("gx") / "uncommitted" / "data_docs" / "local_site"


@dataclass
class TableDocs:
    name: str
    asset: str
    expectations: list[Expectation] = field(default_factory=list)
    results: list[ExpectationValidationResult] = field(default_factory=list)

    def add(self, expectation: Expectation, result: ExpectationValidationResult) -> None:
        self.expectations.append(expectation)
        self.results.append(result)


def write_data_docs(tables: list[TableDocs], docs_dir: Path, run_name: str) -> Path:
    """Renders the Data Docs site into ``docs_dir``; returns its ``index.html``."""
    docs_dir.mkdir(parents=True, exist_ok=True)
    run_id = RunIdentifier(run_name=run_name, run_time=datetime.now(UTC))
    with tempfile.TemporaryDirectory(prefix="bf-docs-") as root:
        context = gx.get_context(mode="file", project_root_dir=root)
        context.variables.progress_bars = ProgressBarsConfig(
            globally=False, metric_calculations=False
        )
        for table in tables:
            if not table.results:
                continue
            suite = gx.ExpectationSuite(
                name=table.name,
                expectations=[e.configuration for e in table.expectations],
            )
            context.suites.add(suite)
            evaluated = len(table.results)
            passed = sum(1 for r in table.results if r.success)
            result = ExpectationSuiteValidationResult(
                success=passed == evaluated,
                results=table.results,
                suite_name=table.name,
                statistics={
                    "evaluated_expectations": evaluated,
                    "successful_expectations": passed,
                    "unsuccessful_expectations": evaluated - passed,
                    "success_percent": 100.0 * passed / evaluated,
                },
                meta={
                    "great_expectations_version": gx.__version__,
                    "batch_spec": {"data_asset_name": table.asset},
                    "run_id": run_id,
                },
            )
            key = ValidationResultIdentifier(
                expectation_suite_identifier=ExpectationSuiteIdentifier(name=table.name),
                run_id=run_id,
                batch_identifier=table.name,
            )
            context.validation_results_store.set(key, result)
        context.build_data_docs()
        for stale in ("index.html", "validations", "expectations", "static"):  # earlier runs
            path = docs_dir / stale
            if path.is_dir():
                shutil.rmtree(path)
            elif path.exists():
                path.unlink()
        shutil.copytree(Path(root) / SITE, docs_dir, dirs_exist_ok=True)
    return docs_dir / "index.html"
