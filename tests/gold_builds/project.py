"""A maintainer's own small dbt-duckdb project and a dataset for it, written by the tests.

The project is not laid out the Benchforge way on purpose: it names its own profile (``shop``,
a ``profiles.yml`` writing ``./elsewhere.duckdb``), loads a seed, keeps its marts under
``models/reporting/`` in their own schema and one model at the root of ``models/``.

DAG::

    raw.orders ─> stg_orders ────┐
    countries (seed) ─> stg_countries ─┴─> int_orders ─┬─> rpt_revenue
                                                       └─> orders_summary (root, tag finance)
    raw.customers ─> stg_customers ─> rpt_customers
"""

from __future__ import annotations

from pathlib import Path

from tests.support import datasets

FILES = {
    "dbt_project.yml": """name: shop
version: "1.0.0"
config-version: 2
profile: shop
models:
  shop:
    +materialized: table
    reporting:
      +schema: reporting
""",
    "profiles.yml": """shop:
  target: local
  outputs:
    local:
      type: duckdb
      path: ./elsewhere.duckdb
""",
    "seeds/countries.csv": "code,name\nFR,France\nDE,Germany\nES,Spain\n",
    "models/staging/_sources.yml": """version: 2
sources:
  - name: raw
    schema: raw
    tables:
      - name: orders
      - name: customers
""",
    "models/staging/stg_orders.sql": (
        "select id as order_id, customer_id, country, amount\nfrom {{ source('raw', 'orders') }}\n"
    ),
    "models/staging/stg_customers.sql": (
        "select id as customer_id, name as customer_name\nfrom {{ source('raw', 'customers') }}\n"
    ),
    "models/staging/stg_countries.sql": (
        "select code as country, name as country_name\nfrom {{ ref('countries') }}\n"
    ),
    "models/intermediate/int_orders.sql": """select
    o.order_id, o.customer_id, o.amount, c.country_name
from {{ ref('stg_orders') }} as o
left join {{ ref('stg_countries') }} as c on o.country = c.country
""",
    "models/intermediate/_intermediate.yml": """version: 2
models:
  - name: int_orders
    columns:
      - name: order_id
        data_tests: [unique, not_null]
""",
    "models/reporting/rpt_revenue.sql": """select country_name, sum(amount) as revenue
from {{ ref('int_orders') }}
group by country_name
""",
    "models/reporting/rpt_customers.sql": """select customer_id, customer_name
from {{ ref('stg_customers') }}
""",
    "models/orders_summary.sql": """{{ config(tags=['finance']) }}
select count(*) as orders, sum(amount) as amount from {{ ref('int_orders') }}
""",
}
MODELS = {
    "stg_orders",
    "stg_customers",
    "stg_countries",
    "int_orders",
    "rpt_revenue",
    "rpt_customers",
    "orders_summary",
}


def write_project(root: Path, changes: dict[str, str | None] | None = None) -> Path:
    """The shop project under ``root``; ``changes``: files to add or replace (None: delete)."""
    return datasets.write_files(root, {**FILES, **(changes or {})})


RAW_TABLES = {
    "orders": (
        "SELECT range + 1 AS id, range % 7 AS customer_id, "
        "['FR', 'DE', 'ES', 'IT'][range % 4 + 1] AS country, "
        "round(range * 1.5, 2)::DOUBLE AS amount FROM range(40)"
    ),
    "customers": "SELECT range AS id, 'customer ' || range AS name FROM range(7)",
}


def write_dataset(folder: Path) -> Path:
    """A published dataset of the two raw tables of :data:`RAW_TABLES` (47 rows)."""
    return datasets.write_dataset(folder, RAW_TABLES)


def listing(root: Path) -> set[str]:
    """Every path under ``root``, relative (to see what a build wrote there)."""
    return {p.relative_to(root).as_posix() for p in root.rglob("*")}
