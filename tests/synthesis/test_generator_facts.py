"""Generator facts (``benchforge.synthesis.spec.generators``) and the compile registry."""

from __future__ import annotations

import math
from pathlib import Path
from typing import get_args

import pytest

from benchforge.synthesis.engine.columns import SCALAR_COMPILERS, STEPS_COMPILERS
from benchforge.synthesis.spec import generators as g
from benchforge.synthesis.spec.loader import load_spec
from benchforge.synthesis.spec.models import DomainSpec

FIXTURES = Path(__file__).parents[1] / "fixtures"
GENERATOR_MODELS: tuple[type[g.GeneratorModel], ...] = get_args(get_args(g.Generator)[0])


@pytest.fixture(scope="module")
def spec() -> DomainSpec:
    return load_spec(FIXTURES / "mini_domain.yaml")


def _kind(model: type[g.GeneratorModel]) -> str:
    (kind,) = get_args(model.model_fields["kind"].annotation)
    return str(kind)


def test_every_generator_kind_has_one_compile_function() -> None:
    kinds = {_kind(m) for m in GENERATOR_MODELS}
    assert all(issubclass(m, g.GeneratorModel) for m in GENERATOR_MODELS)
    assert not set(SCALAR_COMPILERS) & set(STEPS_COMPILERS)
    assert kinds - {"derived"} == set(SCALAR_COMPILERS) | set(STEPS_COMPILERS)


def test_numeric_facts() -> None:
    uniform = g.UniformGen(kind="uniform", low=1.7, high=5.2, integer=True)
    assert uniform.bounds() == (1.0, 5.0)
    assert uniform.mean_and_spread() == g.MeanSpread(3.0, math.sqrt(2.0))
    rounded = g.UniformGen(kind="uniform", low=0, high=12, round=1)
    assert rounded.mean_and_spread() == g.MeanSpread(6.0, 12 / math.sqrt(12), 0.05)
    assert g.PoissonGen(kind="poisson", lam=4, offset=2).bounds() == (2.0, None)
    assert g.PoissonGen(kind="poisson", lam=4, offset=2).mean_and_spread() == (6.0, 2.0, 0.0)
    normal = g.NormalGen(kind="normal", mean=0, std=1, min=0)
    assert normal.mean_and_spread().mean == pytest.approx(1 / math.sqrt(2 * math.pi))
    assert g.LognormalGen(kind="lognormal", mu=1, sigma=1).median() == math.exp(1)
    assert g.LognormalGen(kind="lognormal", mu=1, sigma=1, min=3).median() is None
    assert g.BooleanGen(kind="boolean", p_true=0.3).true_share() == 0.3
    assert g.SequenceGen(kind="sequence").bounds() is None  # nothing known: no checks


def test_value_set_merges_repeats(spec: DomainSpec) -> None:
    gen = g.CategoricalGen(kind="categorical", values=["a", "b", "a"], weights=[1, 2, 1])
    assert gen.value_set(spec) == g.ValueSet(
        ["a", "b"], [0.5, 0.5], "one of its categorical generator's values"
    )
    assert gen.possible_values(spec) == {"a", "b"}


def test_may_be_null_asks_about_the_columns_it_reads(spec: DomainSpec) -> None:
    table = spec.tables[0]
    column = table.columns[1].name
    expr = g.ExpressionGen(kind="expression", sql=f"{column} || 'x'")
    assert expr.may_be_null(spec, table, lambda _t, c: c == column)
    assert not expr.may_be_null(spec, table, lambda _t, _c: False)
    assert g.ExpressionGen(kind="expression", sql="NULLIF(1, 1)").may_be_null(
        spec, table, lambda _t, _c: False
    )
    cond = g.ConditionalGen(
        kind="conditional",
        on=column,
        cases={"x": expr},
        default=g.BooleanGen(kind="boolean", p_true=0.5),
    )
    assert cond.may_be_null(spec, table, lambda _t, c: c == column)
    assert g.DerivedGen(kind="derived").may_be_null(spec, table, lambda _t, _c: False)
