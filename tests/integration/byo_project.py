"""A maintainer's own material, as the README walkthrough "Bring your own dbt project" assumes
it: a folder of CSV exports (``shop_data/``), a dbt-duckdb project (``shop_dbt/``) that was
written for its authors' laptops (its own profile name and ``profiles.yml``, a seed, marts
under ``models/reporting/`` rather than ``models/marts/``, staging models as views, an
ephemeral model, a local package of shared macros in ``shop_macros/`` it never installed, the
notebook the models were drafted in, and its git history), the files of a change
(``shop_v2/``, ``change_request.md``) and a few mutations (``shop_mutations.yaml``).

The data is a deterministic function of the row number, so the gold numbers are the same on
every machine."""

from __future__ import annotations

import csv
import json
import subprocess
from datetime import date, timedelta
from pathlib import Path
from textwrap import dedent

COUNTRIES = ["DE", "FR", "US", "JP", "BR"]
CATEGORIES = ["books", "games", "garden", "kitchen"]


def write_shop(root: Path) -> None:
    _data(root / "shop_data")
    _macros_package(root / "shop_macros")
    _project(root / "shop_dbt")
    _notebook(root / "shop_dbt")
    _change(root)
    _mutations(root / "shop_mutations.yaml")
    _evol_mutations(root / "shop_evol_mutations.yaml")
    _commit(root / "shop_dbt")


def _commit(repo: Path) -> None:
    """The project as a git checkout: its history holds every model (``git checkout HEAD --
    models/`` would restore the gold)."""
    git = ["git", "-c", "user.name=Ann", "-c", "user.email=ann@example.com", "-C", str(repo)]
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "shop models"]):
        subprocess.run([*git, *args], check=True, capture_output=True)


def _macros_package(folder: Path) -> None:
    """The team's shared macros, a local dbt package the project installs (``packages.yml``)."""
    _write(
        folder / "dbt_project.yml",
        """
        name: shop_macros
        version: "1.0.0"
        config-version: 2
        """,
    )
    _write(
        folder / "macros" / "safe_divide.sql",
        """
        {% macro safe_divide(numerator, denominator) -%}
            case when {{ denominator }} = 0 then null else {{ numerator }} / {{ denominator }} end
        {%- endmacro %}
        """,
    )


def _notebook(repo: Path) -> None:
    """The notebook the models were drafted in: a ``%%writefile`` cell per reporting model."""
    cells = []
    for model in sorted((repo / "models" / "reporting").glob("*.sql")):
        source = f"%%writefile models/reporting/{model.name}\n" + model.read_text()
        cells.append(
            {
                "cell_type": "code",
                "metadata": {},
                "execution_count": None,
                "outputs": [],
                "source": source.splitlines(keepends=True),
            }
        )
    notebook = {"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    path = repo / "notebooks" / "draft_models.ipynb"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(notebook, indent=1))


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(dedent(text).lstrip())


def _csv(path: Path, header: list[str], rows: list[list[object]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(header)
        writer.writerows(rows)


def _data(folder: Path) -> None:
    start = date(2024, 1, 1)
    customers = [
        [
            i,
            f"Customer {i:03d}",
            COUNTRIES[i % 5].lower() if i % 7 == 0 else COUNTRIES[i % 5],
            (start + timedelta(days=i)).isoformat(),
        ]
        for i in range(1, 61)
    ]
    products = [
        [
            p,
            f"Product {p:02d}",
            CATEGORIES[p % 4],
            round(4.99 + 1.37 * p, 2),
            round(2.03 + 0.61 * p, 2),
        ]
        for p in range(1, 21)
    ]
    orders, items = [], []
    item_id = 0
    for o in range(1, 241):
        status = "cancelled" if o % 11 == 0 else ("returned" if o % 17 == 0 else "completed")
        orders.append(
            [o, 1 + (o * 7) % 60, (start + timedelta(days=(o * 3) % 180)).isoformat(), status]
        )
        for line in range(1 + o % 3):
            item_id += 1
            items.append([item_id, o, 1 + (o + 5 * line) % 20, 1 + (o + line) % 4])
    _csv(folder / "customers.csv", ["customer_id", "name", "country", "signup_date"], customers)
    _csv(
        folder / "products.csv", ["product_id", "name", "category", "price", "unit_cost"], products
    )
    _csv(folder / "orders.csv", ["order_id", "customer_id", "ordered_on", "status"], orders)
    _csv(folder / "order_items.csv", ["item_id", "order_id", "product_id", "quantity"], items)


def _project(repo: Path) -> None:
    _write(
        repo / "dbt_project.yml",
        """
        name: shop
        version: "1.0.0"
        config-version: 2
        profile: shop_laptop

        models:
          shop:
            +materialized: table
            staging:
              +materialized: view
        """,
    )
    _write(
        repo / "packages.yml",
        """
        packages:
          - local: ../shop_macros
        """,
    )
    # The authors' own profile: a database in the working directory. Benchforge never uses it.
    _write(
        repo / "profiles.yml",
        """
        shop_laptop:
          target: dev
          outputs:
            dev:
              type: duckdb
              path: shop_laptop.duckdb
        """,
    )
    _csv(
        repo / "seeds" / "country_regions.csv",
        ["country", "region"],
        [["DE", "EMEA"], ["FR", "EMEA"], ["US", "AMER"], ["BR", "AMER"], ["JP", "APAC"]],
    )
    _write(
        repo / "models" / "staging" / "sources.yml",
        """
        version: 2
        sources:
          - name: shop
            schema: raw
            tables:
              - name: customers
              - name: orders
              - name: order_items
              - name: products
        """,
    )
    _write(
        repo / "models" / "staging" / "stg_customers.sql",
        """
        select customer_id, name, upper(trim(country)) as country,
               cast(signup_date as date) as signup_date
        from {{ source('shop', 'customers') }}
        """,
    )
    _write(
        repo / "models" / "staging" / "stg_orders.sql",
        """
        select order_id, customer_id, cast(ordered_on as date) as ordered_on, status
        from {{ source('shop', 'orders') }}
        where status <> 'cancelled'
        """,
    )
    _write(
        repo / "models" / "staging" / "stg_order_items.sql",
        """
        select i.item_id, i.order_id, i.product_id, i.quantity,
               i.quantity * p.price as revenue, i.quantity * p.unit_cost as cost
        from {{ source('shop', 'order_items') }} i
        join {{ source('shop', 'products') }} p using (product_id)
        """,
    )
    _write(
        repo / "models" / "intermediate" / "int_order_totals.sql",
        """
        select o.order_id, o.customer_id, o.ordered_on, o.status,
               sum(i.revenue) as revenue, sum(i.cost) as cost, count(*) as lines
        from {{ ref('stg_orders') }} o
        join {{ ref('stg_order_items') }} i on i.order_id = o.order_id
        group by all
        """,
    )
    _write(
        repo / "models" / "intermediate" / "int_customer_regions.sql",
        """
        {{ config(materialized='ephemeral') }}
        select c.customer_id, c.name, c.country, r.region
        from {{ ref('stg_customers') }} c
        left join {{ ref('country_regions') }} r on r.country = c.country
        """,
    )
    _write(
        repo / "models" / "reporting" / "fct_monthly_revenue.sql",
        """
        select date_trunc('month', t.ordered_on) as month, r.region,
               sum(t.revenue) filter (where t.status = 'completed') as revenue,
               count(*) as orders
        from {{ ref('int_order_totals') }} t
        join {{ ref('stg_customers') }} c using (customer_id)
        join {{ ref('country_regions') }} r on r.country = c.country
        group by all
        """,
    )
    _write(
        repo / "models" / "reporting" / "dim_customers.sql",
        """
        select c.customer_id, c.name, c.country, c.region,
               count(t.order_id) as orders, coalesce(sum(t.revenue), 0) as lifetime_revenue,
               round({{ shop_macros.safe_divide('sum(t.revenue)', 'count(t.order_id)') }}, 2)
                   as avg_order_revenue
        from {{ ref('int_customer_regions') }} c
        left join {{ ref('int_order_totals') }} t on t.customer_id = c.customer_id
        group by all
        """,
    )
    _write(
        repo / "models" / "reporting" / "schema.yml",
        """
        version: 2
        models:
          - name: dim_customers
            columns:
              - name: customer_id
                data_tests: [unique, not_null]
              - name: region
                data_tests: [not_null]
          - name: fct_monthly_revenue
            columns:
              - name: month
                data_tests: [not_null]
        """,
    )


def _change(root: Path) -> None:
    _write(
        root / "shop_v2" / "models" / "reporting" / "fct_category_margin.sql",
        """
        select p.category, sum(i.revenue) as revenue, sum(i.revenue - i.cost) as margin,
               round(sum(i.revenue - i.cost) / sum(i.revenue), 4) as margin_rate
        from {{ ref('stg_order_items') }} i
        join {{ source('shop', 'products') }} p using (product_id)
        join {{ ref('stg_orders') }} o using (order_id)
        where o.status = 'completed'
        group by all
        """,
    )
    _write(
        root / "change_request.md",
        """
        # Margin by product category

        Finance wants gross margin by product category for completed orders only (cancelled
        and returned orders excluded). Add a mart `fct_category_margin` with one row per
        category: `category`, `revenue`, `margin` (revenue minus cost) and `margin_rate`
        (margin / revenue, rounded to 4 decimals).
        """,
    )


def _mutations(path: Path) -> None:
    _write(
        path,
        """
        domain: shop
        mutations:
          - id: staging-keeps-cancelled
            kind: dropped_filter
            node: stg_orders
            edits:
              - find: "where status <> 'cancelled'"
                replace: "where true"
          - id: totals-join-on-customer
            kind: wrong_join_key
            node: int_order_totals
            edits:
              - find: "on i.order_id = o.order_id"
                replace: "on i.order_id = o.customer_id"
          - id: revenue-by-day
            kind: wrong_grain
            node: fct_monthly_revenue
            edits:
              - find: "date_trunc('month', t.ordered_on)"
                replace: "date_trunc('day', t.ordered_on)"
          - id: signup-a-day-late
            kind: off_by_one_window
            node: stg_customers
            edits:
              - find: "cast(signup_date as date) as signup_date"
                replace: "cast(signup_date as date) + 1 as signup_date"
          - id: lifetime-value-renamed
            kind: renamed_column
            node: dim_customers
            edits:
              - find: "as lifetime_revenue"
                replace: "as lifetime_value"
          - id: revenue-truncated
            kind: wrong_type
            node: stg_order_items
            edits:
              - find: "i.quantity * p.price as revenue"
                replace: "cast(i.quantity * p.price as integer) as revenue"
        """,
    )


def _evol_mutations(path: Path) -> None:
    _write(
        path,
        """
        domain: shop
        mutations:
          - id: margin-keeps-returns
            kind: dropped_filter
            node: fct_category_margin
            edits:
              - find: "where o.status = 'completed'"
                replace: "where o.status <> 'cancelled'"
        """,
    )


def write_other_plan(repo: Path) -> None:
    """A correct implementation of the de_impl task written another way: other joins and
    aggregation order (so other float summation orders), ``avg`` where the gold divides with
    the package's macro, tables where the gold has views and an ephemeral model."""
    models = {
        "staging/stg_customers.sql": """
            select customer_id, name, upper(trim(country)) as country,
                   signup_date::date as signup_date
            from {{ source('shop', 'customers') }}
            """,
        "staging/stg_orders.sql": """
            select order_id, customer_id, ordered_on::date as ordered_on, status
            from {{ source('shop', 'orders') }}
            where status != 'cancelled'
            """,
        "staging/stg_order_items.sql": """
            with prices as (
                select product_id, price, unit_cost from {{ source('shop', 'products') }}
            )
            select i.item_id, i.order_id, i.product_id, i.quantity,
                   prices.price * i.quantity as revenue, prices.unit_cost * i.quantity as cost
            from {{ source('shop', 'order_items') }} as i
            inner join prices on prices.product_id = i.product_id
            """,
        "intermediate/int_order_totals.sql": """
            with per_order as (
                select order_id, sum(revenue) as revenue, sum(cost) as cost, count(*) as lines
                from {{ ref('stg_order_items') }}
                group by order_id
            )
            select o.order_id, o.customer_id, o.ordered_on, o.status, p.revenue, p.cost, p.lines
            from per_order p
            inner join {{ ref('stg_orders') }} o on o.order_id = p.order_id
            """,
        "marts/dim_customers.sql": """
            with per_customer as (
                select customer_id, count(*) as orders, sum(revenue) as revenue,
                       avg(revenue) as avg_revenue
                from {{ ref('int_order_totals') }}
                group by customer_id
            )
            select c.customer_id, c.name, c.country, r.region,
                   coalesce(o.orders, 0) as orders, coalesce(o.revenue, 0) as lifetime_revenue,
                   round(o.avg_revenue, 2) as avg_order_revenue
            from {{ ref('stg_customers') }} c
            left join {{ ref('country_regions') }} r on c.country = r.country
            left join per_customer o on o.customer_id = c.customer_id
            """,
        "marts/fct_monthly_revenue.sql": """
            select date_trunc('month', t.ordered_on) as month, r.region,
                   sum(case when t.status = 'completed' then t.revenue end) as revenue,
                   count(*) as orders
            from {{ ref('int_order_totals') }} t
            inner join {{ ref('stg_customers') }} c on c.customer_id = t.customer_id
            inner join {{ ref('country_regions') }} r on r.country = c.country
            group by 1, 2
            """,
    }
    for rel, sql in models.items():
        _write(repo / "models" / rel, sql)


NO_OP_MUTATION = """
domain: shop
mutations:
  - id: orders-without-null-ids
    kind: dropped_filter
    node: stg_orders
    edits:
      - find: "where status <> 'cancelled'"
        replace: "where status <> 'cancelled' and order_id is not null"
"""
