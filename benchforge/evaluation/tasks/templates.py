"""The texts ``benchforge task new`` writes for a maintainer to edit: default instructions per
family, the authored documents (contract metadata, change request, requirement, reference
blueprint), the per-task and per-domain mutation catalogues.

A placeholder a maintainer must replace carries :data:`SCAFFOLD_MARK`; ``task validate`` warns
while a task's files still hold one. Default instructions carry none: they are a valid prompt
for the family as they are, so a scaffolded task validates (and can be verified) at once.
"""

from __future__ import annotations

from typing import get_args

from benchforge.evaluation.de.mutations import MutationKind

SCAFFOLD_MARK = "TODO(scaffold)"

INSTRUCTIONS: dict[str, str] = {
    "de_impl": (
        "repo/ is a dbt project with its project file, macros and source definitions, but no "
        "models. data_contract.yaml specifies the warehouse to build: every model with its "
        "layer, schema, materialization, grain, primary key, upstream models and sources, and "
        "its columns with types, descriptions and tests, plus metric definitions and "
        "data-quality rules. Implement every model it lists, with exactly the names, columns, "
        "column types and lineage it gives, and add the YAML (descriptions and data tests) it "
        "lists. The project must build with `dbt build`. Each model is compared with the "
        "reference on its own (with reference inputs) and end to end."
    ),
    "de_evol": (
        "The dbt project under repo/ is in production. Read change_request.md and evolve the "
        "project accordingly: add or change exactly the models, columns and tests the request "
        "describes, with the names, grains and definitions it gives. Keep every other model's "
        "output unchanged. The project must still build with `dbt build` (models and data "
        "tests passing)."
    ),
    "de_arch": (
        "You are the data engineer of the warehouse in repo/ (a dbt project). Read "
        "requirement.md and the existing project, then write design/blueprint.yaml: an "
        "engineering specification of the models to add or change (layer, grain, key, columns "
        "and their definitions, inputs and lineage), the business rules, data-quality handling "
        "and tests. Do not implement the models."
    ),
}

TASK_HEADER = """\
A {family} task, scaffolded by `benchforge task new`.
Each field is explained above it (from the task spec models, evaluation/tasks/models.py);
fields shown commented out take the default they show: uncomment one to change it.
The instructions are the family's default prompt: edit them to say what this task is about.
Check it, from the catalogue root, with: benchforge task validate {folder}
"""

CONTRACT_METADATA = """\
# Authored part of the {id} data contract. `benchforge task contract` merges it into
# data_contract.yaml with what it derives from the gold build (models, layers, schemas,
# materializations, lineage, columns, types, grains, keys, tests). Every key is optional: give
# what an agent needs and the dbt project does not say.

# Metric definitions: name, definition, unit, and the models holding the metric.
metrics: []
#  - name: revenue_usd
#    definition: "Sum of order amounts in USD over orders that are not cancelled."
#    unit: USD
#    models: [fct_orders]

# Data-quality rules: how each known defect of the data is repaired or flagged.
data_quality: []
#  - topic: keys
#    rule: "Foreign keys are normalised with upper(trim(key)) before joining."

# Per-model notes, by model name: what the model's SQL does that its YAML does not say.
models: {{}}
#  fct_orders:
#    - "Also reads customers (country) to convert amounts to USD."
"""

CHANGE_REQUEST = """\
# Change request: {title}

{mark}: describe the change as the business would ask for it. The agent gets this file and
gold v1 (the repository); gold v2 is the repository with the task's gold_v2/ overlay applied,
and only the models v2 adds or changes are scored.

## Business pain point

What goes wrong today, for whom.

## Objectives

1. What the warehouse must answer after the change.

## Implementation highlights

Per model to add or change: its name, layer, grain, new columns with their definitions, and
the tests it gets. Name every model and column the scorer will compare; say which existing
models must keep their output.
"""

REQUIREMENT = """\
# Requirement: {title}

{mark}: describe the business need the blueprint must answer, the users, the questions they
ask and the constraints (history, freshness, configurability). The agent designs the change
against the repository; it does not implement it.
"""

REFERENCE_BLUEPRINT = """\
# Reference blueprint of {id}: the oracle's answer, kept out of every workspace. The rubric's
# items are checked against it by `benchforge task verify` (it must score >= 90).
blueprint: {id}
version: 1
summary:
  - "{mark}: one line per design decision the rubric rewards."
models:
  - name: "{mark}: model name"
    layer: marts
    grain: "one row per ..."
    columns: []
    tests: []
"""

RUBRIC: list[dict[str, object]] = [
    {
        "id": "BA1",
        "dimension": "business_alignment",
        "points": 2,
        "criterion": f"{SCAFFOLD_MARK}: the blueprint answers the requirement's main question.",
    },
    {
        "id": "TF1",
        "dimension": "technical_feasibility",
        "points": 2,
        "criterion": f"{SCAFFOLD_MARK}: the design builds from models the repository has.",
    },
    {
        "id": "DQ1",
        "dimension": "design_quality",
        "points": 1,
        "criterion": f"{SCAFFOLD_MARK}: every new model states its grain and key and tests them.",
    },
]

KIND_MEANINGS: dict[str, str] = {
    "wrong_join_key": "a join on the wrong column (rows fan out or lose their match)",
    "dropped_filter": "a where / having clause left out",
    "wrong_grain": "grouped by a column too many or too few",
    "off_by_one_window": "a date or row window one unit too long or too short",
    "renamed_column": "an output column published under another name",
    "wrong_type": "an output column cast to another type",
}
REQUIRED_KINDS: tuple[str, ...] = get_args(MutationKind)

_MUTATION_TEMPLATE = """\
#  # {kind}: {meaning}
#  - id: {kind_id}
#    kind: {kind}
#    node: MODEL_NAME
#    edits:
#      - {{find: "EXACT SNIPPET OF ITS SQL", replace: "THE MISTAKE"}}
"""
_ENTRY_RULES = """\
# An entry: `id` unique in the file; `kind`; `node`, the model whose SQL the edits change;
# `edits`, each `find` an exact snippet of that SQL occurring once, replaced by `replace`.
"""


def _templates() -> str:
    return "".join(
        _MUTATION_TEMPLATE.format(
            kind=kind, kind_id=kind.replace("_", "-"), meaning=KIND_MEANINGS[kind]
        )
        for kind in REQUIRED_KINDS
    )


DOMAIN_MUTATIONS = """\
# Mutation catalogue of the {domain} gold repository: single-node edits of its models, each a
# realistic mistake that changes its node's output on the domain's dataset. `benchforge task
# verify` applies each to the gold repository of every de_impl task of the domain and checks
# it scores exactly what the DAG predicts (CS loses the node; CFS loses it and its
# descendants; SR 0). Rules: task_specs/mutations/README.md.
#
# A catalogue covers the six kinds below, at least one mutation each (the shipped domains'
# catalogues are held to it by tests/evaluation/test_shipped_tasks.py). While this file lists
# no mutation, verify checks none and `benchforge task validate` warns.
domain: {domain}
mutations: []
# Replace `[]` above with entries; one template per kind:
{rules}{templates}"""

EVOL_MUTATIONS = """\
# Mutations of {id}: single-node edits of gold v2 (the repository with gold_v2/ applied), each
# on a model v2 adds or changes (the models the task scores). `benchforge task verify` applies
# each to v2 and checks the task's score is exactly what the DAG predicts over the scored
# models. Optional: while this file lists no mutation, verify checks none and `benchforge task
# validate` warns. Any kinds; rules in task_specs/mutations/README.md.
domain: {domain}
mutations: []
# Replace `[]` above with entries, e.g.:
{rules}{template}"""


def domain_mutations(domain: str) -> str:
    return DOMAIN_MUTATIONS.format(domain=domain, rules=_ENTRY_RULES, templates=_templates())


def evol_mutations(task_id: str, domain: str) -> str:
    first = REQUIRED_KINDS[0]
    template = _MUTATION_TEMPLATE.format(
        kind=first, kind_id=first.replace("_", "-"), meaning=KIND_MEANINGS[first]
    )
    return EVOL_MUTATIONS.format(id=task_id, domain=domain, rules=_ENTRY_RULES, template=template)
