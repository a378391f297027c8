"""What the scaffold writes, without a project: task.yaml explained field by field from the
spec models (and read back to the same spec), mutation catalogues that list the required
kinds, and the reading of catalogues that have no mutation yet or an invalid one."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from benchforge.core.errors import ConfigError
from benchforge.core.yamlio import read_yaml
from benchforge.evaluation.de.mutations import MutationCatalogue
from benchforge.evaluation.families.de import read_mutations
from benchforge.evaluation.tasks.models import (
    DatasetRef,
    DeArchTask,
    DeEvolTask,
    DeImplTask,
    RubricItem,
)
from benchforge.evaluation.tasks.scaffold import scaffolding_families
from benchforge.evaluation.tasks.templates import (
    INSTRUCTIONS,
    KIND_MEANINGS,
    REQUIRED_KINDS,
    RUBRIC,
    domain_mutations,
    evol_mutations,
)
from benchforge.evaluation.tasks.yamldoc import commented_yaml, explanation

SPECS = (DeImplTask, DeEvolTask, DeArchTask)


def _models(model: type[BaseModel]) -> list[type[BaseModel]]:
    """``model`` and the models its fields hold, recursively."""
    found = [model]
    for info in model.model_fields.values():
        for arg in (info.annotation, *getattr(info.annotation, "__args__", ())):
            if isinstance(arg, type) and issubclass(arg, BaseModel) and arg not in found:
                found += [m for m in _models(arg) if m not in found]
    return found


@pytest.mark.parametrize("spec", SPECS, ids=lambda s: s.__name__)
def test_every_field_a_scaffold_writes_is_explained(spec: type[BaseModel]) -> None:
    """The comment above each field says what it is (its description, or the docstring of
    the model it holds), not only its constraints: a field added without one fails here."""
    bare = [
        f"{model.__name__}.{name}"
        for model in _models(spec)
        for name, info in model.model_fields.items()
        if explanation(info).startswith("(") or not explanation(info)
    ]
    assert bare == [], "give these fields a Field(description=...) in evaluation/tasks/models.py"


def _common(family: str) -> dict[str, Any]:
    return {
        "family": family,
        "id": "shop-x",
        "suite": "de-shop",
        "title": "A title",
        "domain": "shop",
        "dataset": DatasetRef(domain="shop", location="../data/shop"),
        "repo": "shop_dbt",
        "instructions": INSTRUCTIONS[family],
    }


def test_task_yaml_reads_back_to_the_spec_it_was_written_from() -> None:
    arch = DeArchTask.model_validate(
        {
            **_common("de_arch"),
            "expected_output": "design/blueprint.yaml",
            "rubric": [RubricItem.model_validate(i) for i in RUBRIC],
            "instructions": "Line one of the prompt.\n\nA second paragraph: with: colons # and",
        }
    )
    evol = DeEvolTask.model_validate({**_common("de_evol"), "base_version": "abc123"})
    for spec in (arch, evol):
        text = commented_yaml(spec, "header", first=("family",))
        assert type(spec).model_validate(read_yaml(text)) == spec
    text = commented_yaml(evol, first=("family",))
    assert "\n# removed: []\n" in text and "\nbase_version: abc123\n" in text
    assert "\n  # scale: 0.1\n" in text  # unset beside a location: shown, commented out


def test_the_scaffolded_domain_catalogue_lists_the_six_kinds() -> None:
    assert set(KIND_MEANINGS) == set(REQUIRED_KINDS) and len(REQUIRED_KINDS) == 6
    text = domain_mutations("shop")
    assert read_yaml(text) == {"domain": "shop", "mutations": []}
    # Uncommenting the templates (what a maintainer fills in) gives one mutation per kind.
    filled = "\n".join(
        line[1:] if line.startswith("#  ") else line
        for line in text.replace("mutations: []", "mutations:").splitlines()
    )
    catalogue = MutationCatalogue.model_validate(read_yaml(filled))
    assert [m.kind for m in catalogue.mutations] == list(REQUIRED_KINDS)
    assert read_yaml(evol_mutations("shop-evol", "shop")) == {"domain": "shop", "mutations": []}


def test_a_catalogue_without_mutations_is_none_and_an_invalid_one_names_the_entry(
    tmp_path: Path,
) -> None:
    path = tmp_path / "shop.yaml"
    assert read_mutations(path) is None
    path.write_text(domain_mutations("shop"))
    assert read_mutations(path) is None
    path.write_text("domain: shop\nmutations:\n  - id: m1\n    kind: dropped_filter\n")
    with pytest.raises(ConfigError) as err:
        read_mutations(path)
    assert f"{path}: mutations[m1].node: Field required" in str(err.value)
    path.write_text("domain: shop\nmutations: [\n")
    with pytest.raises(ConfigError, match="not YAML"):
        read_mutations(path)


def test_the_scaffolding_families() -> None:
    assert scaffolding_families() == ["de_arch", "de_evol", "de_impl"]
