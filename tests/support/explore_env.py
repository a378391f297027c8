"""A tiny dataset for the exploration-environment tests, with known numbers: 40 companies in
4 regions (10 each, names ending in 有限公司, capital 10·i + 0.25, employees i), 320 quarterly
sales rows (each company 100 a quarter in 2022, 110 in 2023), 4 regions with Chinese names,
5 policy documents."""

from __future__ import annotations

from pathlib import Path

from tests.support.datasets import write_dataset

COMPANIES = 40
CAPITAL = 8210.0  # sum of 10·i + 0.25 over i = 1..40
REGION_COMPANIES = 10
SALES_ROWS = 320
SALES = 33600.0  # 40 · (4 · 100 + 4 · 110)
SALES_2022 = 16000.0
EMPLOYEES = 820

REGIONS = {"East": "华东", "West": "华西", "North": "华北", "South": "华南"}

TABLES = {
    "regions": (
        "SELECT * FROM (VALUES ('East', '华东'), ('West', '华西'), ('North', '华北'), "
        "('South', '华南')) t(region, region_cn)"
    ),
    "companies": (
        "SELECT 'C' || lpad(CAST(i AS VARCHAR), 2, '0') AS company_id, "
        "'企业' || i || '有限公司' AS company_name, "
        "['East', 'West', 'North', 'South'][1 + (i - 1) % 4] AS region, "
        "CAST(10.0 * i + 0.25 AS DOUBLE) AS capital, CAST(i AS INTEGER) AS employees "
        "FROM range(1, 41) t(i)"
    ),
    "sales": (
        "SELECT 'C' || lpad(CAST(c AS VARCHAR), 2, '0') AS company_id, "
        "CAST(last_day(DATE '2022-01-01' + INTERVAL (3 * q + 2) MONTH) AS DATE) AS period, "
        "CAST(CASE WHEN q < 4 THEN 100 ELSE 110 END AS DOUBLE) AS value "
        "FROM range(1, 41) a(c), range(0, 8) b(q) ORDER BY c, q"
    ),
    "policies": (
        "SELECT 'P' || i AS policy_id, '关于支持第' || i || '号产业的意见' AS title, "
        "'Ministry ' || i AS issuer, 'Article 1.\nSupport industry ' || i || '.' AS body "
        "FROM range(1, 6) t(i)"
    ),
}


def explore_dataset(folder: Path) -> Path:
    return write_dataset(folder, TABLES, domain="tiny")
