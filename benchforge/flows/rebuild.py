"""Flow ``rebuild_datasets``: for every shipped domain, synthesize and validate the dataset,
then build and test the gold dbt repository on it (the weekly ``dataset-rebuild`` deployment;
``benchforge rebuild``). The README's main job, ``scripts/pipeline.sh``, is the ``nightly``
flow, which reuses these datasets and gold builds.
"""

from __future__ import annotations

from prefect import flow
from pydantic import BaseModel

from benchforge.core.errors import ConfigError
from benchforge.core.records import DatasetRecord
from benchforge.flows.anonymize import anonymize
from benchforge.flows.gold import build_gold
from benchforge.flows.synthesize import Scale, Seed, synthesize
from benchforge.synthesis.spec.loader import shipped_domains


class DomainResult(BaseModel):
    dataset: DatasetRecord
    gold: str
    release: DatasetRecord | None = None


class RebuildResult(BaseModel):
    domains: list[DomainResult]

    def summary_lines(self) -> list[str]:
        lines = []
        for result in self.domains:
            d = result.dataset
            checks = (
                f"{d.validation_expectations} expectations passed"
                if d.validation_success
                else "not validated"
            )
            lines.append(
                f"{d.domain:<12} {d.total_rows:>10,} rows  {d.anomaly_total:>7,} anomalies  "
                f"{checks}  -> {d.location}"
            )
            lines.append(f"{'':<12} gold dbt build passed -> {result.gold}")
            if result.release is not None:
                lines.append(f"{'':<12} anonymized release published -> {result.release.location}")
        return lines


@flow(name="rebuild_datasets")
def rebuild_datasets(
    scale: Scale = 1.0,
    seed: Seed = 7,
    domains: list[str] | None = None,
    anonymize_after: bool = False,
) -> RebuildResult:
    """Rebuilds every domain's dataset and gold dbt build.

    Args:
        scale: size multiplier of every dataset (1.0: the domains' reference sizes).
        seed: the seed every dataset is generated from.
        domains: shipped domains to rebuild; default all.
        anonymize_after: also anonymize each dataset under the domain's shipped policy (the
            ``anonymize`` flow: release, report, gold build and task verification on it) into
            <artifact_root>/releases/DOMAIN/scale-S/seed-N. The secret comes from the
            environment variable the policy names.
    """
    unknown = set(domains or []) - set(shipped_domains())
    if unknown:
        raise ConfigError(
            f"unknown domains: {', '.join(sorted(unknown))} (shipped: "
            f"{', '.join(shipped_domains())})"
        )
    results = []
    for name in domains or shipped_domains():
        record = synthesize(domain=name, scale=scale, seed=seed)
        gold = build_gold(domain=name, dataset=record.location)
        release = anonymize(dataset=record.location) if anonymize_after else None
        results.append(DomainResult(dataset=record, gold=gold, release=release))
    return RebuildResult(domains=results)
