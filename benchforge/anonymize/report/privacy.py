"""The privacy section of the release report: verbatim identifier leaks, k-anonymity and
l-diversity over the declared quasi-identifiers, distance-based record linkage, the
singling-out / linkability / inference attacks, and the search for combinations of kept columns
that re-identify rows whatever the policy declares (see each module for the method).

Works on one DuckDB connection with the source attached as ``src`` and the release as ``rel``
(rows aligned by rowid). Nothing in the section holds an original value: counts, rates and
column names only, so it can be published with the release.
"""

from __future__ import annotations

import duckdb
from pydantic import BaseModel, Field

from benchforge.anonymize.policy.models import Policy
from benchforge.anonymize.report.attacks import AttackRisk, attack_risks
from benchforge.anonymize.report.kanon import (
    KAnonymityResult,
    PrivacyInputError,
    catalog_columns,
    k_anonymity,
)
from benchforge.anonymize.report.leaks import LeakFinding, scan_leaks
from benchforge.anonymize.report.linkage import LinkageResult, record_linkage
from benchforge.anonymize.report.reident import (
    ReidentificationResult,
    hides_identity,
    search_table,
)
from benchforge.anonymize.transform.models import TransformManifest

__all__ = [
    "AttackRisk",
    "KAnonymityResult",
    "LeakFinding",
    "LinkageResult",
    "PrivacyInputError",
    "PrivacySection",
    "ReidentificationResult",
    "privacy_section",
]


class PrivacySection(BaseModel):
    leaked_identifiers: int = Field(description="Distinct original identifiers in the release.")
    identifiers_checked: int = Field(description="Distinct original identifiers searched for.")
    leaks: list[LeakFinding]
    k_anonymity: list[KAnonymityResult]
    linkage: list[LinkageResult]
    attacks: list[AttackRisk]
    reidentification: list[ReidentificationResult] = Field(
        default_factory=list,
        description="Per table whose rows carry a replaced identifier: the kept columns and "
        "their worst re-identifying combinations.",
    )
    notes: list[str]


def _released(con: duckdb.DuckDBPyConnection, table: str, manifest: TransformManifest) -> bool:
    return table in manifest.tables and bool(catalog_columns(con, "rel", table))


def reidentification_search(
    con: duckdb.DuckDBPyConnection,
    policy: Policy,
    manifest: TransformManifest,
    *,
    sample_rows: int = 5000,
    seed: int = 0,
) -> tuple[list[ReidentificationResult], list[str]]:
    """The kept-column search on every released table that hides an identity, and notes on
    the tables left out."""
    results: list[ReidentificationResult] = []
    skipped: list[str] = []
    for table in policy.tables:
        if not _released(con, table, manifest):
            continue
        if not hides_identity(policy, table):
            skipped.append(table)
            continue
        results.append(search_table(con, table, policy, sample_rows=sample_rows, seed=seed))
    notes = (
        [
            "re-identification: not searched (no column pseudonymized, faked or suppressed: "
            f"released as is): {', '.join(skipped)}"
        ]
        if skipped
        else []
    )
    return results, notes


def privacy_section(
    con: duckdb.DuckDBPyConnection,
    policy: Policy,
    manifest: TransformManifest,
    *,
    sample_rows: int = 5000,
    seed: int = 0,
) -> PrivacySection:
    """Measure the release's privacy (``sample_rows`` and ``seed`` drive the sampled linkage
    and attacks; everything else covers whole tables)."""
    notes: list[str] = []
    scan = scan_leaks(con, policy)
    notes.extend(scan.notes)

    kanon: list[KAnonymityResult] = []
    for table, qi in policy.quasi_identifiers.items():
        if not _released(con, table, manifest):
            notes.append(f"k-anonymity: {table} is not in the release; skipped")
            continue
        result = k_anonymity(con, table, qi)
        kanon.append(result)
        outcome = manifest.tables[table]
        total = result.rows + result.suppressed_rows
        if result.suppressed_rows:
            share = result.suppressed_rows / total
            over = " (over the suppression budget)" if share > qi.suppression_budget else ""
            notes.append(
                f"k-anonymity: {table} has {result.suppressed_rows} of {total} records with "
                f"every quasi-identifier NULL, left out of the classes{over}; the transform "
                f"suppressed {outcome.suppressed_rows}"
            )

    linkage: list[LinkageResult] = []
    attacks: list[AttackRisk] = []
    attacked: set[str] = set()
    for link in policy.linkage:
        if not _released(con, link.table, manifest):
            notes.append(f"linkage: {link.table} is not in the release; skipped")
            continue
        result_l, link_notes = record_linkage(con, link, sample_rows=sample_rows, seed=seed)
        linkage.append(result_l)
        notes.extend(link_notes)
        link_qi = policy.quasi_identifiers.get(link.table)
        risks, attack_notes = attack_risks(
            con,
            link.table,
            known=list(link.known),
            secret=link.secret,
            quasi_identifiers=list(link_qi.columns) if link_qi else [],
            sensitive=list(link_qi.sensitive) if link_qi else [],
            sample_rows=sample_rows,
            seed=seed,
        )
        attacks.extend(risks)
        notes.extend(attack_notes)
        attacked.add(link.table)
    # Tables with quasi-identifiers but no linkage entry are attacked too, the attacker knowing
    # the quasi-identifiers themselves (no secret: no inference attack).
    for table, qi in policy.quasi_identifiers.items():
        if table in attacked or not _released(con, table, manifest):
            continue
        risks, attack_notes = attack_risks(
            con,
            table,
            known=list(qi.columns),
            sensitive=list(qi.sensitive),
            sample_rows=sample_rows,
            seed=seed,
        )
        attacks.extend(risks)
        notes.extend(attack_notes)

    reident, reident_notes = reidentification_search(
        con, policy, manifest, sample_rows=sample_rows, seed=seed
    )
    notes.extend(reident_notes)

    return PrivacySection(
        leaked_identifiers=scan.leaked_identifiers,
        identifiers_checked=scan.identifiers_checked,
        leaks=scan.findings,
        k_anonymity=kanon,
        linkage=linkage,
        attacks=attacks,
        reidentification=reident,
        notes=notes,
    )
