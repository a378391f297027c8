"""A maintainer's catalogue written by the tests: a tiny dbt project (two staging models, two
marts) beside ``task_specs/``, and a dataset made by hand (a DuckDB warehouse with ``raw``
tables and its ``dataset.json``), outside the catalogue.

DAG::

    raw.customers -> stg_customers --+
    raw.orders ----> stg_orders -----+-> fct_orders -> dim_customers

Gold v2 of the de_evol task (:data:`V2`) adds ``revenue_by_country`` over ``fct_orders`` and
edits ``fct_orders`` (a ``large`` flag): both are scored, and the mutation :data:`MUTATION`
of ``fct_orders`` must cost it in CS and both in CFS.
"""

from __future__ import annotations

from pathlib import Path

from tests.support import datasets

PROJECT = {
    "dbt_project.yml": (
        'name: shop\nversion: "1.0.0"\nconfig-version: 2\nprofile: shop\n'
        "models:\n  shop:\n    +materialized: table\n"
    ),
    "models/staging/_sources.yml": (
        "version: 2\nsources:\n  - name: raw\n    schema: raw\n"
        "    tables:\n      - name: customers\n      - name: orders\n"
    ),
    "models/staging/stg_customers.sql": (
        "select id as customer_id, name as customer_name, country\n"
        "from {{ source('raw', 'customers') }}\n"
    ),
    "models/staging/stg_orders.sql": (
        "select id as order_id, customer_id, amount\nfrom {{ source('raw', 'orders') }}\n"
    ),
    "models/marts/fct_orders.sql": (
        "select o.order_id, o.customer_id, c.country, o.amount\n"
        "from {{ ref('stg_orders') }} as o\n"
        "join {{ ref('stg_customers') }} as c on c.customer_id = o.customer_id\n"
    ),
    "models/marts/dim_customers.sql": (
        "select customer_id, count(*) as orders, sum(amount) as amount\n"
        "from {{ ref('fct_orders') }}\ngroup by customer_id\n"
    ),
    "models/marts/_marts.yml": (
        "version: 2\nmodels:\n  - name: fct_orders\n"
        "    description: One row per order.\n"
        "    columns:\n      - name: order_id\n        data_tests: [unique, not_null]\n"
    ),
}
MODELS = {"stg_customers", "stg_orders", "fct_orders", "dim_customers"}

V2 = {
    "models/marts/fct_orders.sql": (
        "select o.order_id, o.customer_id, c.country, o.amount, o.amount >= 20 as large\n"
        "from {{ ref('stg_orders') }} as o\n"
        "join {{ ref('stg_customers') }} as c on c.customer_id = o.customer_id\n"
    ),
    "models/marts/revenue_by_country.sql": (
        "select country, sum(amount) as revenue, count(*) filter (where large) as large_orders\n"
        "from {{ ref('fct_orders') }}\ngroup by country\n"
    ),
}
MUTATION = """\
domain: shop
mutations:
  - id: large-from-ten
    kind: off_by_one_window
    node: fct_orders
    edits:
      - {find: "o.amount >= 20", replace: "o.amount >= 10"}
"""


def write_project(repo: Path) -> Path:
    return datasets.write_files(repo, PROJECT)


RAW_TABLES = {
    "customers": (
        "select range as id, 'customer ' || range as name, "
        "['FR', 'DE', 'ES'][range % 3 + 1] as country from range(6)"
    ),
    "orders": (
        "select range + 1 as id, range % 6 as customer_id, "
        "(range * 1.5)::double as amount from range(30)"
    ),
}


def write_dataset(folder: Path) -> Path:
    """A dataset of the two raw tables of :data:`RAW_TABLES` (36 rows), made by hand."""
    return datasets.write_dataset(folder, RAW_TABLES)


def write_overlay(task_folder: Path) -> None:
    """Gold v2 of the de_evol task: whole files at their repository paths."""
    datasets.write_files(task_folder / "gold_v2", V2)
