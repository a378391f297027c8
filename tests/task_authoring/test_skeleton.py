"""The de_impl skeleton of a project not laid out the shipped way: sources declared in a
YAML file that also documents models, and seeds the models read."""

from __future__ import annotations

from pathlib import Path

import yaml

from benchforge.evaluation.tasks.materials import make_skeleton

SCHEMA = """\
version: 2
sources:
  - name: raw
    tables: [{name: orders}]
models:
  - name: stg_orders
    columns:
      - {name: order_id, data_tests: [unique]}
"""


def test_the_skeleton_keeps_sources_and_seeds_but_no_model(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    for rel, text in {
        "dbt_project.yml": "name: shop\nprofile: shop\n",
        "models/schema.yml": SCHEMA,
        "models/stg_orders.sql": "select * from {{ source('raw', 'orders') }}\n",
        "models/reporting/revenue.sql": "select 1 as x from {{ ref('countries') }}\n",
        "models/reporting/revenue.yml": "version: 2\nmodels: [{name: revenue}]\n",
        "seeds/countries.csv": "code\nFR\n",
        "tests/assert_positive.sql": "select 1 where false\n",
    }.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text)
    skeleton = make_skeleton(repo, tmp_path / "skeleton")
    files = sorted(p.relative_to(skeleton).as_posix() for p in skeleton.rglob("*") if p.is_file())
    assert files == ["dbt_project.yml", "models/schema.yml", "seeds/countries.csv"]
    assert yaml.safe_load((skeleton / "models" / "schema.yml").read_text()) == {
        "version": 2,
        "sources": [{"name": "raw", "tables": [{"name": "orders"}]}],
    }
