"""The attacker's test of the re-identification search: on a release made with the old rules
(exact timestamps and titles kept, amounts lsd-perturbed by the real transform), an attacker
knowing those original values re-identifies members; the report's rates equal an independent
pandas computation on the source, and the release is refused naming the combination with a
suggested rule. The same data with those columns coarsened passes."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import duckdb
import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from benchforge.anonymize.policy.check import reidentification_warnings
from benchforge.anonymize.policy.draft import draft_policy
from benchforge.anonymize.policy.loader import LoadedPolicy
from benchforge.anonymize.policy.models import Policy, Thresholds
from benchforge.anonymize.report.build import build_report
from benchforge.anonymize.report.html import render_html
from benchforge.anonymize.report.models import ReleaseReport
from benchforge.anonymize.report.reident import ReidentificationResult, search_table
from benchforge.anonymize.transform import anonymize_warehouse
from benchforge.anonymize.transform.models import TableOutcome, TransformManifest

N = 1200
TOLERANCE = 0.005
SECRET = b"reident-test-secret"
COUNTRIES = ["DE", "FR", "JP", "US", "BR"]
# 12 common titles (about 90 members each) and 40 rare ones: each title has one department
COMMON = [(f"Common role {i}", f"dept{i % 6}") for i in range(12)]
RARE = [(f"Rare role {i}", f"dept{i % 6}") for i in range(40)]


def _source() -> pd.DataFrame:
    rng = np.random.default_rng(5)
    roles = [COMMON[i % 12] for i in range(N - 80)] + [RARE[i % 40] for i in range(80)]
    order = rng.permutation(N)
    t0 = dt.datetime(2022, 1, 1)
    return pd.DataFrame(
        {
            "member_id": [f"MEM-{i:05d}" for i in range(N)],
            "full_name": [f"Person {i}" for i in range(N)],
            "title": [roles[j][0] for j in order],
            "department": [roles[j][1] for j in order],
            "country": [COUNTRIES[int(c)] for c in rng.integers(0, 5, N)],
            "registered_at": [
                t0 + dt.timedelta(seconds=int(s)) for s in rng.integers(0, 2 * 365 * 86400, N)
            ],
            "monthly_fee": np.round(rng.lognormal(7.5, 1.0, N), 2),
        }
    )


OLD_RULES = Policy.model_validate(
    {
        "domain": "club",
        "tables": {
            "members": {
                "primary_key": "member_id",
                "columns": {
                    "member_id": "pseudonymize",
                    "full_name": {"rule": "fake", "provider": "name", "pii": "direct"},
                    "title": "keep",
                    "department": "keep",
                    "country": "keep",
                    "registered_at": "keep",
                    "monthly_fee": {"rule": "perturb", "method": "lsd"},
                },
            }
        },
    }
)


def _write(path: Path, frame: pd.DataFrame) -> None:
    with duckdb.connect(str(path)) as con:
        con.execute("CREATE SCHEMA raw")
        con.register("frame", pa.Table.from_pandas(frame, preserve_index=False))
        con.execute("CREATE TABLE raw.members AS SELECT * FROM frame")


def _coarsened(src: pd.DataFrame) -> pd.DataFrame:
    """What the new rules do to these columns: the month of the timestamp, rare titles under a
    frequency floor, amounts moved by at least 2%."""
    out = src.copy()
    out["member_id"] = [f"MEM-X{i * 7919 % 100000:05d}" for i in range(N)]
    out["full_name"] = [f"Fake {i * 31 % N}" for i in range(N)]
    out["registered_at"] = out["registered_at"].dt.to_period("M").dt.to_timestamp().dt.date
    counts = out["title"].map(out["title"].value_counts())
    out["title"] = np.where(counts < 30, "Other", out["title"])
    out["department"] = np.where(counts < 30, "Other", out["department"])
    sign = np.where(np.arange(N) % 2 == 0, 1.0, -1.0)
    out["monthly_fee"] = np.round(out["monthly_fee"] * (1 + sign * 0.02), 2)
    return out


MANIFEST = TransformManifest(
    policy_sha256="cd" * 32, tables={"members": TableOutcome(rows=N, columns={})}
)


def _connect(src: Path, rel: Path) -> duckdb.DuckDBPyConnection:
    con = duckdb.connect()
    con.execute(f"ATTACH '{src}' AS src (READ_ONLY)")
    con.execute(f"ATTACH '{rel}' AS rel (READ_ONLY)")
    return con


def _report(con: duckdb.DuckDBPyConnection, manifest: TransformManifest) -> ReleaseReport:
    loaded = LoadedPolicy(policy=OLD_RULES, source="club.yaml", sha256="ab" * 32)
    return build_report(con, loaded, manifest, dataset="club", domain="club", seed=3)


@pytest.fixture(scope="module")
def old_release(tmp_path_factory: pytest.TempPathFactory) -> tuple[pd.DataFrame, Path, Path]:
    folder = tmp_path_factory.mktemp("reident")
    src, rel = folder / "src.duckdb", folder / "rel.duckdb"
    frame = _source()
    _write(src, frame)
    anonymize_warehouse(src, rel, OLD_RULES, SECRET)
    return frame, src, rel


# ------------------------------------------------------------ the independent attacker


def unique_share(src: pd.DataFrame, columns: list[str]) -> float:
    """Columns the release keeps exactly: a member is re-identified when no other source row
    shares their values."""
    sizes = src.groupby(columns, dropna=False)[columns[0]].transform("size")
    return float((sizes == 1).mean())


def amount_share(
    src: pd.DataFrame, rel: pd.DataFrame, column: str, exact: list[str] | None = None
) -> float:
    """A released amount re-identifies its row when its own original is within the tolerance
    and no other original (with the same ``exact`` values, kept unchanged) is."""
    hits = 0
    groups = src.groupby(exact) if exact else [((), src)]
    for _, part in groups:
        original = np.sort(part[column].to_numpy())
        released = rel.loc[part.index, column].to_numpy()
        band = TOLERANCE * np.abs(released)
        inside = np.searchsorted(original, released + band, side="right") - np.searchsorted(
            original, released - band, side="left"
        )
        own = np.abs(part[column].to_numpy() - released) <= band
        hits += int((own & (inside == 1)).sum())
    return hits / len(src)


def _rates(result: ReidentificationResult) -> dict[tuple[str, ...], float]:
    return {tuple(sorted(c.columns)): c.rate for c in result.combinations}


# ------------------------------------------------------------ tests


def test_search_rates_equal_the_attackers_own_count(
    old_release: tuple[pd.DataFrame, Path, Path],
) -> None:
    frame, src, rel = old_release
    con = _connect(src, rel)
    released = con.execute("SELECT * FROM rel.raw.members ORDER BY rowid").df()
    result = search_table(con, "members", OLD_RULES, sample_rows=5000, seed=3, keep_all=True)
    assert result.sampled == N and result.source_rows == N
    kept = {k.column for k in result.kept}
    # pseudonymized and faked columns are not what an attacker can match
    assert kept == {"title", "department", "country", "registered_at", "monthly_fee"}
    rates = _rates(result)
    exact_ts = unique_share(frame, ["registered_at"])
    assert exact_ts > 0.99
    assert rates[("registered_at",)] == pytest.approx(exact_ts, abs=1e-12)
    assert rates[("title",)] == pytest.approx(unique_share(frame, ["title"]), abs=1e-12)
    assert rates[("country",)] == 0.0
    fee = amount_share(frame, released, "monthly_fee")
    # lsd moved most amounts by less than the attacker's tolerance: the unique ones re-identify
    assert Thresholds().max_reidentification_rate < fee < 0.5
    assert rates[("monthly_fee",)] == pytest.approx(fee, abs=1e-12)
    # combinations whose parts stay under the threshold are measured, and equal the groupby:
    # rare titles are shared by two members, told apart by their countries
    assert rates[("title",)] == 0.0
    pair = ("country", "title")
    assert rates[pair] > 0.02
    assert rates[pair] == pytest.approx(unique_share(frame, list(pair)), abs=1e-12)
    pair = ("country", "department")
    assert rates[pair] == pytest.approx(unique_share(frame, list(pair)), abs=1e-12)
    # ranked worst first; the timestamp is the worst
    assert result.combinations[0].columns == ["registered_at"]
    assert [c.rate for c in result.combinations] == sorted(
        (c.rate for c in result.combinations), reverse=True
    )


def test_old_rules_release_is_refused_naming_the_combination(
    old_release: tuple[pd.DataFrame, Path, Path],
) -> None:
    frame, src, rel = old_release
    manifest = TransformManifest(
        policy_sha256="cd" * 32, tables={"members": TableOutcome(rows=N, columns={})}
    )
    report = _report(_connect(src, rel), manifest)
    gate = next(t for t in report.thresholds if t.name == "max_reidentification_rate")
    assert not gate.passed and not report.passed
    assert gate.value == pytest.approx(unique_share(frame, ["registered_at"]), abs=1e-12)
    assert "members: registered_at" in gate.detail
    assert "coarsen" in gate.detail  # the suggested rule for a timestamp
    (found,) = report.privacy.reidentification
    assert found.worst is not None and found.worst.columns == ["registered_at"]
    assert found.worst.suggestion.startswith("timestamp")
    page = render_html(report)
    assert "Re-identification by kept columns" in page and "registered_at" in page


def test_coarsened_release_passes(
    old_release: tuple[pd.DataFrame, Path, Path], tmp_path: Path
) -> None:
    frame, src, _ = old_release
    rel = tmp_path / "coarse.duckdb"
    _write(rel, _coarsened(frame))
    con = _connect(src, rel)
    report = _report(
        con,
        TransformManifest(
            policy_sha256="cd" * 32, tables={"members": TableOutcome(rows=N, columns={})}
        ),
    )
    gate = next(t for t in report.thresholds if t.name == "max_reidentification_rate")
    assert gate.passed, gate.detail
    (found,) = report.privacy.reidentification
    kept = {k.column for k in found.kept}
    assert "registered_at" not in kept and "monthly_fee" not in kept
    assert found.worst is not None
    assert found.worst.rate <= Thresholds().max_reidentification_rate


def test_report_only_table_is_reported_but_does_not_refuse(
    old_release: tuple[pd.DataFrame, Path, Path],
) -> None:
    _, src, rel = old_release
    policy = OLD_RULES.model_copy(
        update={
            "reidentification": OLD_RULES.reidentification.model_copy(
                update={"report_only": {"members": "a public register"}}
            )
        }
    )
    loaded = LoadedPolicy(policy=policy, source="club.yaml", sha256="ab" * 32)
    report = build_report(
        _connect(src, rel),
        loaded,
        TransformManifest(
            policy_sha256="cd" * 32, tables={"members": TableOutcome(rows=N, columns={})}
        ),
        dataset="club",
        domain="club",
    )
    gate = next(t for t in report.thresholds if t.name == "max_reidentification_rate")
    assert gate.passed
    assert "report only" in gate.detail and "a public register" in gate.detail


def test_amounts_with_other_columns_equal_the_attackers_count(
    old_release: tuple[pd.DataFrame, Path, Path],
) -> None:
    """With a lenient threshold the amount is extended: an amount known with the country, and
    with the country and the department, counted inside each group's band."""
    frame, src, rel = old_release
    con = _connect(src, rel)
    released = con.execute("SELECT * FROM rel.raw.members ORDER BY rowid").df()
    lenient = OLD_RULES.model_copy(update={"thresholds": Thresholds(max_reidentification_rate=0.9)})
    result = search_table(con, "members", lenient, sample_rows=5000, seed=3, keep_all=True)
    rates = _rates(result)
    for exact in (["country"], ["country", "department"]):
        combo = tuple(sorted([*exact, "monthly_fee"]))
        expected = amount_share(frame, released, "monthly_fee", exact)
        assert expected > rates[("monthly_fee",)]  # knowing more singles out more
        assert rates[combo] == pytest.approx(expected, abs=1e-12), combo


def test_policy_check_warns_about_kept_combinations(
    old_release: tuple[pd.DataFrame, Path, Path],
) -> None:
    """Before any release: the columns the policy keeps, searched on the source."""
    _, src, _ = old_release
    con = duckdb.connect()
    con.execute(f"ATTACH '{src}' AS src (READ_ONLY)")
    loaded = LoadedPolicy(policy=OLD_RULES, source="club.yaml", sha256="ab" * 32)
    (warning,) = reidentification_warnings(loaded, con, "src")
    assert warning.startswith("tables.members: the kept columns registered_at re-identify")
    assert "timestamp: coarsen registered_at" in warning
    # the lsd amount is not a kept column before the transform: the report measures it
    assert "monthly_fee" not in warning
    reported = OLD_RULES.model_copy(
        update={
            "reidentification": OLD_RULES.reidentification.model_copy(
                update={"report_only": {"members": "a public register"}}
            )
        }
    )
    loaded = LoadedPolicy(policy=reported, source="club.yaml", sha256="ab" * 32)
    assert reidentification_warnings(loaded, con, "src") == []


def test_drafted_policy_names_the_kept_combinations(
    old_release: tuple[pd.DataFrame, Path, Path],
) -> None:
    _, src, _ = old_release
    con = duckdb.connect()
    con.execute(f"ATTACH '{src}' AS src (READ_ONLY)")
    text = draft_policy(con, "src", "club")
    comments = text.split("# re-identification:", 1)[1]
    assert "tables.members: the kept columns registered_at re-identify" in comments
    assert "timestamp: coarsen registered_at" in comments


NEW_RULES = Policy.model_validate(
    {
        "domain": "club",
        "tables": {
            "members": {
                "primary_key": "member_id",
                "columns": {
                    "member_id": "pseudonymize",
                    "full_name": {"rule": "fake", "provider": "name", "pii": "direct"},
                    "title": {"rule": "frequency_floor", "min_count": 10, "within": ["country"]},
                    "department": "keep",
                    "country": "keep",
                    "registered_at": {
                        "rule": "shift_dates",
                        "entity": "member_id",
                        "max_days": 14,
                        "coarsen": "month",
                    },
                    "monthly_fee": {
                        "rule": "perturb",
                        "method": "lsd",
                        "min_relative_change": 0.02,
                    },
                },
            }
        },
    }
)


def test_release_with_the_new_rules_passes(
    old_release: tuple[pd.DataFrame, Path, Path], tmp_path: Path
) -> None:
    """The same members released by the transform with the rules that fix these columns."""
    _, src, _ = old_release
    rel = tmp_path / "new-rules.duckdb"
    manifest = anonymize_warehouse(src, rel, NEW_RULES, SECRET)
    loaded = LoadedPolicy(policy=NEW_RULES, source="club.yaml", sha256="ab" * 32)
    report = build_report(_connect(src, rel), loaded, manifest, dataset="club", domain="club")
    gate = next(t for t in report.thresholds if t.name == "max_reidentification_rate")
    assert gate.passed, gate.detail
    (found,) = report.privacy.reidentification
    assert {k.column for k in found.kept} == {"title", "department", "country"}


TWO_AMOUNTS = Policy.model_validate(
    {
        "domain": "club",
        "tables": {
            "members": {
                "primary_key": "member_id",
                "columns": {
                    "member_id": "pseudonymize",
                    "country": "keep",
                    "monthly_fee": "keep",
                    "annual_spend": "keep",
                },
            }
        },
        "thresholds": {"max_reidentification_rate": 0.7},
    }
)


def test_two_amounts_equal_the_attackers_count(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two amounts (and a country) known together: a row is re-identified when both its
    originals are within the tolerance and no other source row of its country has both inside
    the bands; counted pair by pair, and equal to the band join in DuckDB."""
    rng = np.random.default_rng(11)
    src = pd.DataFrame(
        {
            "member_id": [f"MEM-{i:05d}" for i in range(N)],
            "country": [COUNTRIES[int(c)] for c in rng.integers(0, 5, N)],
            # coarse amounts: many share a band, so the pair tells them apart
            "monthly_fee": np.round(rng.lognormal(5.0, 0.3, N), 0),
            "annual_spend": np.round(rng.lognormal(8.0, 0.2, N), -1),
        }
    )
    rel = src.copy()
    rel["member_id"] = [f"X{i}" for i in range(N)]
    for column in ("monthly_fee", "annual_spend"):
        rel[column] = np.round(src[column] * (1 + rng.uniform(-0.006, 0.006, N)), 2)
    _write(tmp_path / "src.duckdb", src)
    _write(tmp_path / "rel.duckdb", rel)
    con = _connect(tmp_path / "src.duckdb", tmp_path / "rel.duckdb")
    result = search_table(con, "members", TWO_AMOUNTS, sample_rows=5000, seed=3, keep_all=True)
    rates = _rates(result)

    def expected(exact: list[str]) -> float:
        inside = np.ones((N, N), dtype=bool)  # [released row, source row]
        own = np.ones(N, dtype=bool)
        for column in ("monthly_fee", "annual_spend"):
            released = rel[column].to_numpy()[:, None]
            band = TOLERANCE * np.abs(released)
            original = src[column].to_numpy()
            inside &= (original[None, :] >= released - band) & (
                original[None, :] <= released + band
            )
            own &= np.abs(src[column].to_numpy() - rel[column].to_numpy()) <= band[:, 0]
        for column in exact:
            inside &= rel[column].to_numpy()[:, None] == src[column].to_numpy()[None, :]
        return float((own & (inside.sum(axis=1) == 1)).mean())

    for exact in ([], ["country"]):
        combo = tuple(sorted([*exact, "annual_spend", "monthly_fee"]))
        assert 0.0 < rates[combo] < 1.0, combo
        assert rates[combo] == pytest.approx(expected(exact), abs=1e-12), combo
    # the band join in DuckDB (ranges too large to check in memory) counts the same
    monkeypatch.setattr("benchforge.anonymize.report.reident.BAND_JOIN_ROWS", 0)
    again = search_table(con, "members", TWO_AMOUNTS, sample_rows=5000, seed=3, keep_all=True)
    assert again == result
