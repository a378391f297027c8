"""The analysis database, anchors and rendering of ``da_open`` tasks on real gold builds, and
the authoring errors they report (file and field named, before any judge is called)."""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import duckdb
import pytest
import yaml

from benchforge.core.llm import LlmClientView, LlmConfig, LlmLedger, LlmResponse
from benchforge.evaluation.da.analysis import ANALYSIS_DB, analysis_db
from benchforge.evaluation.da.anchors import evaluate_anchors, perturbed
from benchforge.evaluation.da.gold import DaGold
from benchforge.evaluation.da.render import render_report, resolve_rubric, wrong_anchor_report
from benchforge.evaluation.da.spec import DaOpenTask
from benchforge.evaluation.families import VerifyOptions, family_of
from benchforge.evaluation.judges.client import Judge
from benchforge.evaluation.judges.models import ANCHOR_PLACEHOLDER
from benchforge.evaluation.tasks import LoadedTask, TaskSpecError, load_task
from tests.evaluation.da.conftest import SEEDS, DaData
from tests.paths import REPO_ROOT

pytestmark = pytest.mark.slow  # tests/README.md: the fast and the full loop

TASK = "crm-da-bookings-2024"


class NoCallLlm:
    """A judge client that fails the test if anything calls it."""

    calls = 0

    def __init__(self) -> None:
        self.ledger = LlmLedger()

    @property
    def config(self) -> LlmConfig:
        return LlmConfig(role="judge", model="never-called", base_url="http://127.0.0.1:9")

    async def complete(self, messages: Sequence[Any], **kwargs: Any) -> LlmResponse:
        NoCallLlm.calls += 1
        raise AssertionError("a judge was called before the anchors were checked")


def copy_task(tmp_path: Path, task_id: str, edit: Any = None) -> Path:
    """The task folder copied into a catalogue of its own under ``tmp_path`` (its repo a link
    to the shipped one); ``edit(spec_dict)`` changes ``task.yaml`` first."""
    root = tmp_path / "catalogue"
    folder = root / "task_specs" / "da-crm" / task_id
    shutil.copytree(REPO_ROOT / "task_specs" / "da-crm" / task_id, folder)
    if not (root / "dbt_projects").exists():
        (root / "dbt_projects").symlink_to(REPO_ROOT / "dbt_projects")
    if edit is not None:
        data = yaml.safe_load((folder / "task.yaml").read_text())
        edit(data)
        (folder / "task.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    return folder


def prepared(task: LoadedTask, data: DaData, seed: int) -> DaGold:
    gold = family_of(task).prepare_gold(task, data.datasets[seed], data.work)
    assert isinstance(gold, DaGold)
    return gold


# --------------------------------------------------------------------------- analysis database


def test_analysis_db_holds_exactly_the_marts(
    da_data: DaData, da_tasks: dict[str, LoadedTask]
) -> None:
    task = da_tasks[TASK]
    assert isinstance(task.spec, DaOpenTask)
    folder = analysis_db(task, da_data.datasets[7], da_data.work)
    assert folder.parent == da_data.work / "agent-data"
    con = duckdb.connect(str(folder / ANALYSIS_DB), read_only=True)
    try:
        tables = con.execute(
            "select table_schema, table_name from information_schema.tables order by 2"
        ).fetchall()
        rows = con.execute("select count(*) from fct_opportunities").fetchone()
    finally:
        con.close()
    assert tables == [("main", name) for name in sorted(task.spec.marts)]
    assert rows is not None and rows[0] > 100
    # Cached: the same folder, not rebuilt; no temporary folder left behind.
    stamp = (folder / ANALYSIS_DB).stat().st_mtime_ns
    assert analysis_db(task, da_data.datasets[7], da_data.work) == folder
    assert (folder / ANALYSIS_DB).stat().st_mtime_ns == stamp
    assert not [p for p in folder.parent.iterdir() if p.name.endswith(".tmp")]
    # Another dataset, another database.
    assert analysis_db(task, da_data.datasets[11], da_data.work) != folder


def test_concurrent_builds_of_one_analysis_db_agree(
    da_data: DaData, da_tasks: dict[str, LoadedTask]
) -> None:
    task = da_tasks[TASK]
    spec = task.spec.model_copy(update={"marts": ["dim_accounts"]})  # a key no test built
    one = LoadedTask(spec=spec, folder=task.folder)
    with ThreadPoolExecutor(max_workers=3) as pool:
        folders = list(
            pool.map(lambda _: analysis_db(one, da_data.datasets[7], da_data.work), range(3))
        )
    assert len(set(folders)) == 1
    con = duckdb.connect(str(folders[0] / ANALYSIS_DB), read_only=True)
    try:
        assert con.execute("select count(*) from dim_accounts").fetchone() == (
            con.execute("select count(distinct account_id) from dim_accounts").fetchone()
        )
    finally:
        con.close()
    assert not [p for p in folders[0].parent.iterdir() if p.name.endswith(".tmp")]


def test_a_mart_missing_from_the_gold_build_names_the_field(
    da_data: DaData, tmp_path: Path
) -> None:
    folder = copy_task(tmp_path, TASK)
    task = load_task(folder)
    spec = task.spec.model_copy(update={"marts": ["fct_opportunities", "dim_no_such_mart"]})
    with pytest.raises(TaskSpecError) as err:
        analysis_db(LoadedTask(spec=spec, folder=folder), da_data.datasets[7], da_data.work)
    assert str(folder / "task.yaml") in str(err.value)
    assert "marts[1]" in str(err.value) and "dim_no_such_mart" in str(err.value)


def test_a_mart_that_is_no_model_is_a_load_error(tmp_path: Path) -> None:
    folder = copy_task(tmp_path, TASK, lambda d: d["marts"].append("fct_nothing"))
    with pytest.raises(TaskSpecError) as err:
        load_task(folder)
    assert "marts[2]: 'fct_nothing' is not a model of dbt_projects/crm" in str(err.value)


# --------------------------------------------------------------------------- anchors


def test_every_anchor_evaluates_and_differs_between_seeds(
    da_data: DaData, da_tasks: dict[str, LoadedTask]
) -> None:
    assert len(da_tasks) == 5
    for task in da_tasks.values():
        spec = task.spec
        assert isinstance(spec, DaOpenTask)
        a, b = (prepared(task, da_data, seed) for seed in SEEDS)
        assert set(a.anchors) == set(b.anchors) == set(spec.anchors), spec.id
        for name in spec.anchors:
            va, vb = a.anchors[name], b.anchors[name]
            assert isinstance(va.value, float), (spec.id, name)
            assert va.text == spec.anchors[name].format.format(va.value)
            assert va.text != vb.text, f"{spec.id}: anchor {name} is {va.text} on both seeds"
        assert a.rubric.version != b.rubric.version, spec.id
        criteria_a = [i.criterion for i in a.rubric.items]
        criteria_b = [i.criterion for i in b.rubric.items]
        assert criteria_a != criteria_b, spec.id
        assert not any(ANCHOR_PLACEHOLDER.search(c) for c in criteria_a), spec.id
        assert not ANCHOR_PLACEHOLDER.search(a.reference), spec.id
        assert a.reference != b.reference, spec.id
        assert set(a.baselines) == {Path(p).stem for p in spec.baselines}


def test_resolved_items_carry_their_anchor(
    da_data: DaData, da_tasks: dict[str, LoadedTask]
) -> None:
    task = da_tasks[TASK]
    gold = prepared(task, da_data, 7)
    item = next(i for i in gold.rubric.items if i.id == "R1.S1.P1.a1")
    assert item.anchor is not None and item.anchor.name == "bookings_2024"
    assert item.anchor.text in item.criterion
    assert item.standard_id == "R1.S1" and item.path_id == "R1.S1.P1"
    # A growth anchor with its own tolerance keeps it.
    growth = next(i for i in gold.rubric.items if i.anchor and i.anchor.name == "growth_pct")
    assert growth.anchor is not None and growth.anchor.tolerance == 0.02
    assert gold.rubric.task_key == task.key and gold.question == task.spec.instructions


def test_wrong_anchor_report_misstates_every_number(
    da_data: DaData, da_tasks: dict[str, LoadedTask]
) -> None:
    task = da_tasks[TASK]
    spec = task.spec
    assert isinstance(spec, DaOpenTask)
    gold = prepared(task, da_data, 7)
    template = task.file(spec.reference).read_text()
    wrong = wrong_anchor_report(template, gold.anchors, spec.anchors, claims=gold.claims)
    for name, anchor in perturbed(gold.anchors, spec.anchors, 1.37).items():
        original = gold.anchors[name]
        assert isinstance(anchor.value, float) and isinstance(original.value, float)
        assert anchor.value == pytest.approx(original.value * 1.37)
        assert anchor.text in wrong and original.text not in wrong, name
    assert wrong.replace(" ", "") != gold.reference.replace(" ", "")
    assert render_report(template, gold.anchors, claims=gold.claims) == gold.reference


def test_an_unknown_placeholder_in_a_template_names_the_file(
    da_data: DaData, da_tasks: dict[str, LoadedTask]
) -> None:
    gold = prepared(da_tasks[TASK], da_data, 7)
    with pytest.raises(TaskSpecError) as err:
        render_report("Bookings were {{bookings_2024}} and {{nope}}.", gold.anchors, "x/r.md")
    assert "x/r.md" in str(err.value) and "{{nope}}" in str(err.value)


LEVEL_COUNT = {"unit": "count", "kind": "level"}


@pytest.mark.parametrize(
    ("sql", "fmt", "problem"),
    [
        ("select sum(amount_usd_clean) from no_such_table", "{:.1f}", "SQL failed"),
        ("select amount_usd_clean from fct_opportunities", "{:.1f}", "more than one row"),
        ("select 1 from fct_opportunities where false", "{:.1f}", "no row"),
        ("select 1, 2 from fct_opportunities limit 1", "{:.1f}", "one column"),
        ("select null::double from fct_opportunities limit 1", "{:.1f}", "NULL"),
        ("select 'AMER' from fct_opportunities limit 1", "{:.1f}%", "does not apply"),
        ("select 12.46", "{:.0f}%", "off by more than the tolerance 0.01"),
        ("select 12.46", "{:.2f}", "does not read as unit 'percent', kind 'level'"),
    ],
)
def test_a_broken_anchor_names_file_and_field_before_any_judge_call(
    da_data: DaData, tmp_path: Path, sql: str, fmt: str, problem: str
) -> None:
    def edit(data: dict[str, Any]) -> None:
        data["anchors"]["q4_share"] = {
            "sql": sql,
            "format": fmt,
            "unit": "percent",
            "kind": "level",
        }

    folder = copy_task(tmp_path, TASK, edit)
    task = load_task(folder)
    NoCallLlm.calls = 0
    judge = Judge(LlmClientView(NoCallLlm()))
    with pytest.raises(TaskSpecError) as err:
        family_of(task).verify(task, da_data.datasets[7], da_data.work, VerifyOptions(), judge)
    message = str(err.value)
    assert f"{folder / 'task.yaml'}: anchors.q4_share:" in message, message
    assert problem in message, message
    assert NoCallLlm.calls == 0
    # evaluate_anchors alone says the same.
    db = analysis_db(task, da_data.datasets[7], da_data.work) / ANALYSIS_DB
    with pytest.raises(TaskSpecError, match=r"anchors\.q4_share"):
        evaluate_anchors(task, db)


def test_an_anchor_without_unit_and_kind_is_a_load_error(tmp_path: Path) -> None:
    def edit(data: dict[str, Any]) -> None:
        data["anchors"]["q4_share"].pop("unit")
        data["anchors"]["q4_share"]["kind"] = "delta"
        data["anchors"]["growth_pct"]["kind"] = "text"

    folder = copy_task(tmp_path, TASK, edit)
    with pytest.raises(TaskSpecError) as err:
        load_task(folder)
    problems = dict(err.value.problems)
    assert err.value.file == folder / "task.yaml"
    assert problems["anchors.q4_share.unit"] == "Field required"
    assert "'level', 'change', 'gap' or 'text'" in problems["anchors.q4_share.kind"]
    assert "a text anchor has both unit and kind 'text'" in problems["anchors.growth_pct"]


def test_a_rubric_citing_an_undefined_anchor_is_a_load_error(tmp_path: Path) -> None:
    def edit(data: dict[str, Any]) -> None:
        del data["anchors"]["q4_share"]

    folder = copy_task(tmp_path, TASK, edit)
    with pytest.raises(TaskSpecError) as err:
        load_task(folder)
    message = str(err.value)
    assert str(folder / "task.yaml") in message
    assert "rubric cites anchors with no SQL in 'anchors': q4_share" in message


def test_a_template_citing_an_undefined_anchor_is_a_load_error(tmp_path: Path) -> None:
    folder = copy_task(tmp_path, TASK)
    baseline = folder / "baselines" / "narrative.md"
    baseline.write_text(baseline.read_text() + "\nQ4 brought {{q4_total}}.\n")
    with pytest.raises(TaskSpecError) as err:
        load_task(folder)
    problems = dict(err.value.problems)
    assert "cites {{q4_total}}, which no anchor or claim defines" in problems["baselines[2]"]


def test_points_that_do_not_add_up_are_a_load_error(tmp_path: Path) -> None:
    def edit(data: dict[str, Any]) -> None:
        data["rubric"]["requirements"][0]["standards"][1]["max_points"] = 5

    folder = copy_task(tmp_path, TASK, edit)
    with pytest.raises(TaskSpecError) as err:
        load_task(folder)
    message = str(err.value)
    assert f"{folder / 'task.yaml'}: rubric.requirements[0].standards[1]:" in message
    assert "add up to 4, not the standard's max_points 5" in message


def test_authoring_problems_found_at_load(tmp_path: Path) -> None:
    def edit(data: dict[str, Any]) -> None:
        data["anchors"]["unused"] = {"sql": "select 1", "format": "{:d}", **LEVEL_COUNT}
        data["anchors"]["bad_format"] = {"sql": "select 1", "format": "{:.1f}{}", **LEVEL_COUNT}
        data["baselines"].append("baselines/missing.md")

    folder = copy_task(tmp_path, TASK, edit)
    (folder / "reference.md").write_text(
        (folder / "reference.md").read_text().replace("{{win_rate_2024}}", "two in five")
        + "\nAlso {{bad_format}}.\n"
    )
    with pytest.raises(TaskSpecError) as err:
        load_task(folder)
    problems = dict(err.value.problems)
    assert "cited neither by the rubric nor by the reference" in problems["anchors.unused"]
    assert "formats no value" in problems["anchors.bad_format"]
    assert "missing file 'baselines/missing.md'" in problems["baselines[3]"]
    assert "item R1.S2.P1.a1 needs it stated" in problems["anchors.win_rate_2024"]


def test_resolving_needs_every_cited_anchor(
    da_data: DaData, da_tasks: dict[str, LoadedTask]
) -> None:
    task = da_tasks[TASK]
    gold = prepared(task, da_data, 7)
    partial = {k: v for k, v in gold.anchors.items() if k != "avg_deal_2024"}
    with pytest.raises(TaskSpecError, match=r"rubric\.requirements\[0\]\.standards\[1\]"):
        resolve_rubric(task, partial)
