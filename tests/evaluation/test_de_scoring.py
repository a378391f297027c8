"""The DE scorer on the mini gold repo: known scores, mutations, hostile candidates."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import duckdb
import pytest

from benchforge.evaluation.dbt.manifest import load_manifest
from benchforge.evaluation.de.compare import compare_relations
from benchforge.evaluation.de.mutations import apply_mutation, load_catalogue, predict
from benchforge.evaluation.de.scoring import (
    MIN_BUILD_S,
    MIN_NODE_S,
    TIME_FACTOR,
    ScoringError,
    score_candidate,
    time_limits,
)
from benchforge.evaluation.gold import build_gold, load_gold
from benchforge.evaluation.tasks.models import DeScoring
from benchforge.synthesis.dataset import build_dataset
from benchforge.synthesis.spec import load_spec
from tests.paths import FIXTURES

pytestmark = pytest.mark.slow  # tests/README.md: the fast and the full loop

GOLD_REPO = FIXTURES / "mini_dbt"
CATALOGUE = load_catalogue(FIXTURES / "mini_mutations.yaml")


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("ds") / "mini"
    build_dataset(
        load_spec(FIXTURES / "mini_domain.yaml"), scale=1, seed=7, out=str(out), validate=False
    )
    return out


@pytest.fixture(scope="module")
def gold(dataset: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("gold") / "mini"
    build = build_gold("mini", GOLD_REPO, dataset, folder)
    assert build.models == 7 and build.tests >= 2
    assert (folder / "docs" / "index.html").is_file() and (folder / "catalog.json").is_file()
    return folder


def score(candidate: Path, gold: Path, dataset: Path, work: Path, **kw: object):  # type: ignore[no-untyped-def]
    return score_candidate(candidate, gold, dataset, work, DeScoring(), **kw)  # type: ignore[arg-type]


def test_gold_scores_100_on_itself(gold: Path, dataset: Path, tmp_path: Path) -> None:
    result = score(GOLD_REPO, gold, dataset, tmp_path / "w")
    assert (result.cs, result.cfs, result.sr) == (100.0, 100.0, 100.0)
    assert all(n.cs.matched and n.cfs.matched for n in result.nodes)
    # every node built exactly the gold on exactly the gold's inputs: no node ran alone
    assert result.cs_from_cfs == sorted(n.name for n in result.nodes)
    assert "cs_sandbox" not in result.seconds


def test_cleaning_the_raw_data_in_a_hook_earns_no_component_score(
    gold: Path, dataset: Path, tmp_path: Path
) -> None:
    """An on-run-start hook normalizes the raw contacts, so a staging model that does no
    cleaning builds the gold's output end to end; alone, on the dataset's raw table, it does
    not, and its CS must say so (the raw table it read is not the dataset's any more)."""
    repo = tmp_path / "cand"
    shutil.copytree(GOLD_REPO, repo)
    project = repo / "dbt_project.yml"
    project.write_text(
        project.read_text()
        + 'on-run-start:\n  - "update raw.contacts set account_id = upper(trim(account_id))"\n'
    )
    contacts = "models/staging/stg_mini__contacts.sql"
    write_model(repo, contacts, (GOLD_REPO / contacts).read_text().replace(
        "upper(trim(account_id)) as account_id", "account_id"
    ))  # fmt: skip
    result = score(repo, gold, dataset, tmp_path / "w")
    by_name = {n.name: n for n in result.nodes}
    assert by_name["stg_mini__contacts"].cfs.exact  # the whole build is right
    assert by_name["stg_mini__contacts"].cs.status == "data_mismatch"  # the model alone is not
    assert "stg_mini__contacts" not in result.cs_from_cfs
    assert {"stg_mini__accounts", "stg_mini__opportunities"} <= set(result.cs_from_cfs)
    assert (result.cfs, result.sr) == (100.0, 100.0) and result.cs < 100.0


def test_cs_is_taken_from_cfs_only_where_the_inputs_are_exactly_the_golds(
    gold: Path, dataset: Path, tmp_path: Path
) -> None:
    """A node built right end to end keeps its isolated run when a parent is only equal
    within the comparison's rules (another type), and when it reads a relation the isolated
    run does not give it (a grandparent): there CS must still fail."""
    repo = tmp_path / "cand"
    shutil.copytree(GOLD_REPO, repo)
    contacts = "models/staging/stg_mini__contacts.sql"
    write_model(repo, contacts, (GOLD_REPO / contacts).read_text().replace(
        "        age,", "        cast(age as double) as age,"
    ))  # fmt: skip
    write_model(
        repo,
        "models/marts/dim_accounts.sql",
        (GOLD_REPO / "models/marts/dim_accounts.sql")
        .read_text()
        .replace(
            "contacts as (select * from {{ ref('int_contacts_counted') }}),",
            "contacts as (select account_id, count(*) as contacts "
            "from {{ ref('stg_mini__contacts') }} group by account_id),",
        ),
    )
    result = score(repo, gold, dataset, tmp_path / "w")
    by_name = {n.name: n for n in result.nodes}
    assert all(n.cfs.matched for n in result.nodes)
    assert by_name["stg_mini__contacts"].cfs.exact is False  # equal values, another type
    assert by_name["int_contacts_counted"].cfs.exact  # exactly the gold, on a parent that is not
    assert by_name["dim_accounts"].cfs.exact
    assert by_name["dim_accounts"].cs.status == "build_error"  # its grandparent is not given
    assert set(result.cs_from_cfs) == {
        "stg_mini__accounts",
        "stg_mini__opportunities",
        "int_opportunities_enriched",
        "fct_won_revenue_by_country",
    }
    assert (result.cfs, result.sr) == (100.0, 100.0)
    assert result.cs == pytest.approx(100 - 60 / 2)  # the marts layer (60) loses one of two


def test_empty_candidate_scores_0(gold: Path, dataset: Path, tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    shutil.copytree(GOLD_REPO, empty, ignore=shutil.ignore_patterns("*.sql"))
    shutil.copytree(GOLD_REPO / "macros", empty / "macros", dirs_exist_ok=True)
    result = score(empty, gold, dataset, tmp_path / "w")
    assert (result.cs, result.cfs, result.sr) == (0.0, 0.0, 0.0)
    assert {n.cs.status for n in result.nodes} == {"missing"}
    nothing = score(tmp_path / "does-not-exist", gold, dataset, tmp_path / "w2")
    assert (nothing.cs, nothing.cfs, nothing.sr) == (0.0, 0.0, 0.0)
    assert "no dbt_project.yml" in nothing.candidate_errors[0]


@pytest.mark.parametrize("mutation", CATALOGUE.mutations, ids=lambda m: m.id)
def test_each_mutation_gets_its_predicted_score(
    mutation, gold: Path, dataset: Path, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    manifest = load_manifest(gold / "manifest.json")
    repo = apply_mutation(GOLD_REPO, manifest, mutation, tmp_path / "repo")
    result = score(repo, gold, dataset, tmp_path / "w")
    expected = predict(manifest, DeScoring(), mutation.node)
    assert (result.cs, result.cfs, result.sr) == pytest.approx(
        (expected.cs, expected.cfs, expected.sr)
    ), [(n.name, n.cs.reason, n.cfs.reason) for n in result.nodes if not n.cfs.matched]
    failing = {n.name for n in result.nodes if not n.cs.matched}
    assert failing == {mutation.node}


def test_known_numbers_for_the_mini_dag(gold: Path) -> None:
    """15/25/60 over 3 staging, 2 intermediate, 2 mart nodes, pinned by hand."""
    manifest = load_manifest(gold / "manifest.json")
    renamed = predict(manifest, DeScoring(), "stg_mini__accounts")
    # CS: 15*(2/3) + 25 + 60 = 95; CFS: descendants int_opportunities_enriched, dim_accounts
    # and fct_won_revenue_by_country fail too: 15*(2/3) + 25*(1/2) + 0 = 22.5.
    assert (renamed.cs, renamed.cfs, renamed.sr) == pytest.approx((95.0, 22.5, 0.0))
    leaf = predict(manifest, DeScoring(), "dim_accounts")
    assert (leaf.cs, leaf.cfs) == pytest.approx((70.0, 70.0))


def write_model(repo: Path, rel: str, sql: str) -> None:
    path = repo / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(sql)


def test_hostile_candidates_are_scored_not_crashing(
    gold: Path, dataset: Path, tmp_path: Path
) -> None:
    repo = tmp_path / "bad"
    shutil.copytree(GOLD_REPO, repo)
    # SQL error in one node, a model that writes into the raw schema, and a helper model.
    write_model(repo, "models/marts/dim_accounts.sql", "select * from nowhere_at_all")
    write_model(
        repo,
        "models/staging/stg_mini__contacts.sql",
        "{{ config(schema='raw') }}\n"
        + (GOLD_REPO / "models/staging/stg_mini__contacts.sql").read_text(),
    )
    result = score(repo, gold, dataset, tmp_path / "w")
    by_name = {n.name: n for n in result.nodes}
    assert by_name["dim_accounts"].cfs.status == "build_error"
    assert by_name["dim_accounts"].cs.status == "build_error"
    assert by_name["stg_mini__contacts"].cfs.status == "schema_mismatch"
    assert by_name["stg_mini__contacts"].cs.matched  # right SQL, wrong place: CS still runs it
    assert 0 < result.cfs < result.cs < 100
    # The gold build is untouched.
    con = duckdb.connect(str(gold / "gold.duckdb"), read_only=True)
    tables = con.execute(
        "SELECT count(*) FROM duckdb_tables() WHERE schema_name = 'raw'"
    ).fetchone()
    assert tables is not None and tables[0] == 5


def test_cycle_and_jinja_errors_score_zero(gold: Path, dataset: Path, tmp_path: Path) -> None:
    repo = tmp_path / "cycle"
    shutil.copytree(GOLD_REPO, repo)
    write_model(
        repo, "models/staging/stg_mini__accounts.sql", "select * from {{ ref('dim_accounts') }}"
    )
    result = score(repo, gold, dataset, tmp_path / "w")
    assert (result.cs, result.cfs, result.sr) == (0.0, 0.0, 0.0)
    assert result.candidate_errors and "dbt run" in result.candidate_errors[0]
    jinja = tmp_path / "jinja"
    shutil.copytree(GOLD_REPO, jinja)
    write_model(jinja, "models/marts/fct_won_revenue_by_country.sql", "select {{ broken( }}")
    result = score(jinja, gold, dataset, tmp_path / "w2")
    assert result.cfs == 0.0 and result.candidate_errors


def test_compare_handles_tolerance_types_and_multisets() -> None:
    con = duckdb.connect()
    con.execute(
        "CREATE TABLE g AS SELECT range AS id, range * 1.1 AS v, 'x' || range AS s FROM range(500)"
    )
    con.execute(
        "CREATE TABLE shuffled AS SELECT CAST(id AS DOUBLE) AS ID, v * (1 + 1e-12) AS v, "
        "s FROM g ORDER BY hash(id)"
    )
    assert compare_relations(con, "g", "shuffled").matched
    con.execute("CREATE TABLE dup AS SELECT * FROM g UNION ALL SELECT * FROM g WHERE id = 3")
    dup = compare_relations(con, "g", "dup")
    assert dup.status == "data_mismatch" and "delta +1" in dup.reason
    con.execute("CREATE TABLE loose AS SELECT id, v * (1 + 1e-6) AS v, s FROM g")
    assert compare_relations(con, "g", "loose").status == "data_mismatch"
    assert compare_relations(con, "g", "loose", rel_tol=1e-5).matched
    con.execute("CREATE TABLE texty AS SELECT id, CAST(v AS VARCHAR) AS v, s FROM g")
    texty = compare_relations(con, "g", "texty")
    assert texty.status == "schema_mismatch" and "v" in texty.type_mismatches
    con.execute("CREATE TABLE nulls_a AS SELECT NULL::INTEGER AS a UNION ALL SELECT 1")
    con.execute("CREATE TABLE nulls_b AS SELECT 1 AS a UNION ALL SELECT NULL")
    assert compare_relations(con, "nulls_a", "nulls_b").matched


def test_scoring_is_sandboxed_unless_explicitly_not(
    gold: Path, dataset: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    boxed = score(GOLD_REPO, gold, dataset, tmp_path / "boxed")
    assert boxed.isolation is not None and boxed.isolation.backend == "namespace"
    assert boxed.isolation.filesystem == "confined" and not boxed.unsandboxed
    loose = score(GOLD_REPO, gold, dataset, tmp_path / "loose", unsandboxed=True)
    assert (loose.cs, loose.cfs, loose.sr) == (100.0, 100.0, 100.0)
    assert loose.unsandboxed and loose.isolation is not None
    assert loose.isolation.backend == "process" and loose.isolation.filesystem == "host"
    assert "WITHOUT a sandbox" in caplog.text


def test_time_limits_scale_with_the_gold(gold: Path) -> None:
    manifest = load_manifest(gold / "manifest.json")
    limits = time_limits(gold, manifest, None)
    results = json.loads((gold / "run_results.json").read_text())["results"]
    sql_s = sum(
        r["execution_time"] for r in results if r["unique_id"].startswith(("model.", "seed."))
    )
    # dbt's start-up is not multiplied: a busy machine's slow gold start leaves the limit alone
    assert 0 < sql_s < load_gold(gold).seconds
    assert limits.build_s == pytest.approx(MIN_BUILD_S + TIME_FACTOR * sql_s)
    assert set(limits.nodes) == set(manifest.models)
    assert all(v >= MIN_NODE_S for v in limits.nodes.values())
    fixed = time_limits(gold, manifest, 5.0)
    assert fixed.nodes == {} and fixed.node_s("dim_accounts") == 5.0
    (gold / "run_results.json").rename(gold / "run_results.json.kept")
    try:  # without run results: the whole recorded build, scaled
        unsized = time_limits(gold, manifest, None)
        assert unsized.build_s == max(MIN_BUILD_S, TIME_FACTOR * load_gold(gold).seconds)
    finally:
        (gold / "run_results.json.kept").rename(gold / "run_results.json")


def test_a_relative_work_folder_inside_the_candidate_is_refused(
    gold: Path, dataset: Path, tmp_path: Path
) -> None:
    candidate = tmp_path / "cand"
    shutil.copytree(GOLD_REPO, candidate)
    with pytest.raises(ScoringError, match="inside the candidate"):
        score(candidate, gold, dataset, candidate / "work")
