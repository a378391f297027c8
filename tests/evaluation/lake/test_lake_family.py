"""The lake_pipeline family on a tiny dataset: the gold of a reference pipeline on every
setting (a known number, and another on the obscured lake), the files of each setting, scores
of right, close, hedged and missing answers, the sub-task mode, and verification."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

import benchforge.synthesis.lake  # noqa: F401  (registers the lake derivations)
from benchforge.evaluation.families import family_of
from benchforge.evaluation.families.base import VerifyOptions
from benchforge.evaluation.families.lake import (
    LakeAnswerDetail,
    LakeScoreError,
    answer_text,
    close_answer,
)
from benchforge.evaluation.lake.answers import AnswerType, GoldAnswer
from benchforge.evaluation.lake.data import RECORD_FILE, LakeRecordInfo, gold_files
from benchforge.evaluation.lake.spec import DataSource
from benchforge.evaluation.tasks.loader import load_task
from benchforge.evaluation.tasks.models import LoadedTask
from benchforge.synthesis.lake import build_lake, parse_lake_spec
from tests.evaluation.judges.conftest import JudgeFactory
from tests.support.lake import ORDERS_TOTAL, tiny_dataset

LAKE_SPEC = {
    "exports": [
        {
            "table": "orders",
            "folder": "sales",
            "name": "orders_{part}",
            "splits": [{"by": "period", "column": "ordered_at", "every": "quarter"}],
            "csv": {"delimiters": [";"], "encodings": ["utf-16"], "notes": ["Orders {part}"]},
        },
        {"table": "customers", "folder": "crm", "name": "customers", "formats": ["json"]},
    ],
    "distractors": {"near_duplicates": 1, "stale_copies": 1, "unrelated": 1},
    "obscure": {
        "identifiers": ["*_id"],
        "numbers": [{"columns": ["amount"], "factor": [0.5, 2.0], "decimals": 2}],
    },
}
QUESTION = {
    "question": "What is the total amount of every order?",
    "answer_type": "numeric_approximate",
    "reference": "orders-total.py",
    "data_sources": [{"table": "orders"}],
    "key_functionalities": ["read every orders export", "sum the order amounts"],
    "subtasks": [
        {
            "id": "order_count",
            "question": "How many orders are there?",
            "answer_type": "numeric_exact",
            "reference": "order_count",
            "data_sources": [{"table": "orders"}],
        },
        {
            "id": "orders_total",
            "question": "What is the total amount of the orders?",
            "answer_type": "numeric_approximate",
            "reference": "answer",
            "data_sources": [{"table": "orders"}],
        },
    ],
}
REFERENCE = """
import pandas as pd


def order_count(lake):
    return len(lake.table("orders"))


def answer(lake):
    return float(pd.to_numeric(lake.table("orders")["amount"]).sum())
"""
ORDERS = 120


@pytest.fixture(scope="module")
def suite(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("tasks") / "task_specs" / "lake-shop"
    (root / "questions").mkdir(parents=True)
    (root / "lake.yaml").write_text(yaml.safe_dump(LAKE_SPEC))
    (root / "questions" / "orders-total.yaml").write_text(yaml.safe_dump(QUESTION))
    (root / "questions" / "orders-total.py").write_text(REFERENCE)
    for variant in ("full", "oracle", "trimmed", "obscured", "subtasks"):
        task = {
            "id": f"orders-total-{variant}",
            "suite": "lake-shop",
            "family": "lake_pipeline",
            "title": "Orders total",
            "domain": "shop",
            "dataset": {"domain": "shop", "scale": 1, "seed": 1},
            "question": "../questions/orders-total.yaml",
            "setting": "oracle" if variant == "subtasks" else variant,
            "mode": "subtasks" if variant == "subtasks" else "task",
            "trimmed_distractors": 2,
            "difficulty": "hard",
            "instructions": "How many orders are there? What is the total amount of the orders? "
            + QUESTION["question"],
            "tags": [f"setting:{variant}"],
        }
        (root / task["id"]).mkdir()
        (root / task["id"] / "task.yaml").write_text(yaml.safe_dump(task))
    return root


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tiny_dataset(tmp_path_factory.mktemp("lake-family") / "shop")


@pytest.fixture(scope="module")
def work(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("work")


def task(suite: Path, variant: str) -> LoadedTask:
    return load_task(suite / f"orders-total-{variant}")


@pytest.mark.parametrize("variant", ["full", "oracle", "trimmed"])
def test_gold_is_the_reference_on_the_gold_files(
    suite: Path, dataset: Path, work: Path, variant: str
) -> None:
    loaded = task(suite, variant)
    gold = family_of(loaded).prepare_gold(loaded, dataset, work)
    assert gold.answer.value == pytest.approx(ORDERS_TOTAL)
    assert gold.subtasks["order_count"].value == ORDERS  # the undated ones in a file of their own
    assert gold.gold_files and all(p.startswith("sales/orders_") for p in gold.gold_files)


def test_obscured_gold_is_recomputed_on_the_obscured_lake(
    suite: Path, dataset: Path, work: Path
) -> None:
    loaded = task(suite, "obscured")
    gold = family_of(loaded).prepare_gold(loaded, dataset, work)
    assert gold.answer.value != pytest.approx(ORDERS_TOTAL, rel=1e-3)
    assert 0.5 * ORDERS_TOTAL - 1 <= gold.answer.value <= 2.0 * ORDERS_TOTAL + 1


def test_each_setting_gives_its_files_and_never_the_record(
    suite: Path, dataset: Path, work: Path
) -> None:
    seen = {}
    for variant in ("full", "oracle", "trimmed"):
        loaded = task(suite, variant)
        folder = family_of(loaded).agent_data(loaded, dataset, work)
        seen[variant] = {p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()}
        assert not (folder / RECORD_FILE).exists()
    oracle = task(suite, "oracle")
    gold = set(family_of(oracle).prepare_gold(oracle, dataset, work).gold_files)
    assert seen["oracle"] == gold
    assert gold < seen["trimmed"] < seen["full"]
    assert len(seen["trimmed"]) == len(gold) + 2


def test_gold_files_follow_the_lake_seed(dataset: Path, tmp_path: Path) -> None:
    spec = parse_lake_spec(
        LAKE_SPEC
        | {
            "exports": [
                LAKE_SPEC["exports"][0]
                | {
                    "splits": [
                        {"by": "period", "column": "ordered_at", "every": "quarter"},
                        {"by": "period", "column": "ordered_at", "every": "year"},
                    ]
                }
            ]
        }
    )
    names = set()
    for seed in range(1, 6):
        record = build_lake(dataset, spec, tmp_path / f"seed-{seed}", seed=seed)
        info = LakeRecordInfo.model_validate_json(record.model_dump_json())
        names.add(tuple(gold_files(info, [DataSource(table="orders")])))
    assert len(names) == 2  # quarterly files for some seeds, yearly ones for others
    with pytest.raises(ValueError, match="no report file of table 'orders'"):
        gold_files(info, [DataSource(table="orders", role="report")])


def score(suite: Path, dataset: Path, work: Path, variant: str, answer: str | None) -> float:
    loaded = task(suite, variant)
    family = family_of(loaded)
    gold = family.prepare_gold(loaded, dataset, work)
    result = family.score(loaded, work / "none", gold, dataset, work, answer=answer)
    assert isinstance(result.breakdown, LakeAnswerDetail)
    return result.metrics["accuracy"]


def test_answers_score_by_the_answer_type(suite: Path, dataset: Path, work: Path) -> None:
    assert score(suite, dataset, work, "full", "9,075.00") == 100.0
    assert score(suite, dataset, work, "full", "9075") == 100.0
    assert score(suite, dataset, work, "full", str(ORDERS_TOTAL * 1.1)) == pytest.approx(100 / 1.1)
    assert score(suite, dataset, work, "full", "9075 or maybe 9000") == 0.0  # a hedge: unreadable
    assert score(suite, dataset, work, "full", None) == 0.0


def test_no_answer_says_so(suite: Path, dataset: Path, work: Path) -> None:
    loaded = task(suite, "full")
    family = family_of(loaded)
    gold = family.prepare_gold(loaded, dataset, work)
    result = family.score(loaded, work / "none", gold, dataset, work, answer=None)
    assert result.detail and result.detail.startswith("no_answer")
    assert not result.success


def test_subtasks_mode_scores_each_subtask(suite: Path, dataset: Path, work: Path) -> None:
    right = json.dumps({"order_count": ORDERS, "orders_total": ORDERS_TOTAL})
    half = json.dumps({"order_count": ORDERS - 1, "orders_total": ORDERS_TOTAL})
    assert score(suite, dataset, work, "subtasks", right) == 100.0
    assert score(suite, dataset, work, "subtasks", half) == 50.0
    assert score(suite, dataset, work, "subtasks", "not json") == 0.0


@pytest.mark.parametrize("variant", ["full", "oracle", "trimmed", "obscured", "subtasks"])
def test_verify_passes_on_every_setting(
    suite: Path, dataset: Path, work: Path, variant: str
) -> None:
    loaded = task(suite, variant)
    verification = family_of(loaded).verify(loaded, dataset, work, VerifyOptions())
    assert verification.problems == []
    assert {c.group for c in verification.checks} >= {"reference", "empty"}


def test_solution_is_the_reference_answer_and_code(suite: Path, dataset: Path, work: Path) -> None:
    loaded = task(suite, "full")
    folder = family_of(loaded).solution(loaded, work, dataset)
    assert folder is not None
    assert float((folder / "ANSWER").read_text()) == pytest.approx(ORDERS_TOTAL)
    assert "def answer(lake)" in (folder / "pipeline.py").read_text()


def test_close_answers_score_as_documented() -> None:
    def gold(kind: str, value: object) -> GoldAnswer:
        return GoldAnswer(answer_type=AnswerType(kind), value=value)  # type: ignore[arg-type]

    assert close_answer(gold("numeric_exact", 40.0), judged=False) == ("40.4", 0.0)
    assert close_answer(gold("string_exact", "Technology"), judged=False) == ("Technolog", 0.0)
    assert close_answer(gold("string_approximate", "Technology"), judged=False) is None
    text, expected = close_answer(gold("list_exact", ["a", "b", "c"]), judged=False) or ("", 0)
    assert json.loads(text) == ["a", "b"] and expected == pytest.approx(80.0)
    assert answer_text(4.0) == "4" and answer_text([1.0, "x"]) == '[1.0, "x"]'


def test_an_unscorable_answer_is_an_error_not_a_zero(
    suite: Path, dataset: Path, work: Path
) -> None:
    from benchforge.evaluation.families.lake import _answer_score

    gold = GoldAnswer(answer_type=AnswerType.STRING_APPROXIMATE, value="Technology")
    with pytest.raises(LakeScoreError, match="judge_failed"):
        _answer_score("the tech sector", gold, "Which industry?", None)


def test_pipeline_design_is_judged_on_the_submitted_code(
    suite: Path, dataset: Path, work: Path, tmp_path: Path, make_judge: JudgeFactory
) -> None:
    loaded = task(suite, "full")
    family = family_of(loaded)
    gold = family.prepare_gold(loaded, dataset, work)
    submission = tmp_path / "answer"
    submission.mkdir()
    judge = make_judge()
    bare = family.score(loaded, submission, gold, dataset, work, judge=judge, answer="9075")
    assert bare.metrics["pipeline_design"] == 0.0  # no code: nothing implemented
    (submission / "pipeline.py").write_text(
        "import glob\nimport pandas as pd\n"
        "orders = pd.concat(pd.read_csv(p, sep=';', encoding='utf-16', skiprows=1)\n"
        "                   for p in glob.glob('sales/orders_*.csv'))\n"
        "print(orders['amount'].sum())\n"
    )
    judged = family.score(loaded, submission, gold, dataset, work, judge=judge, answer="9075")
    assert judged.metrics == {"accuracy": 100.0, "pipeline_design": 100.0}
    assert isinstance(judged.breakdown, LakeAnswerDetail)
    assert judged.breakdown.pipeline_file == "answer/pipeline.py"
    assert judged.breakdown.pipeline is not None and judged.breakdown.pipeline.implemented == [
        True,
        True,
    ]
