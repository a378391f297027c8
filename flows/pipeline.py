"""Flow ``pipeline``: the end-to-end run on embedded defaults (README's main command).

Today it rebuilds every shipped domain's dataset; later stages (gold builds, agent runs,
scoring, reports) are added here as they land.
"""

from __future__ import annotations

from prefect import flow
from pydantic import BaseModel

from flows.synthesize import synthesize
from synthesis.dataset import DatasetRecord
from synthesis.spec.loader import shipped_domains


class PipelineResult(BaseModel):
    datasets: list[DatasetRecord]

    def summary_lines(self) -> list[str]:
        lines = []
        for d in self.datasets:
            checks = (
                f"{d.validation_expectations} expectations passed"
                if d.validation_success
                else "not validated"
            )
            lines.append(
                f"{d.domain:<12} {d.total_rows:>10,} rows  {d.anomaly_total:>7,} anomalies  "
                f"{checks}  -> {d.location}"
            )
        return lines


@flow(name="pipeline")
def pipeline(scale: float = 1.0, seed: int = 7, domains: list[str] | None = None) -> PipelineResult:
    names = domains or shipped_domains()
    return PipelineResult(
        datasets=[synthesize(domain=name, scale=scale, seed=seed) for name in names]
    )
