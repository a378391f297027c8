"""A small hospital scheduling spec, written from scratch the way a new maintainer would.

Patients, doctors, appointment slots and appointments, with lower-case keys (``p-000001``),
Faker date providers with YAML-date arguments and appointments booked on a calendar of their own
(tests add the upper date bound across the foreign key, ``not_after: slot_id.starts_at``). Tests
edit a deep copy and write it to ``tmp_path``.
"""

from __future__ import annotations

import copy
import re
from pathlib import Path
from typing import Any

import yaml

_HOSPITAL: dict[str, Any] = {
    "domain": "hospital",
    "version": "1",
    "description": "Hospital scheduling: patients book slots of doctors.",
    "calendars": {
        "default": {"start": "2022-01-01", "end": "2023-12-31"},
        "booking": {"start": "2021-06-01", "end": "2023-12-31"},
    },
    "tables": [
        {
            "name": "patients",
            "rows": 400,
            "primary_key": "patient_id",
            "columns": [
                {
                    "name": "patient_id",
                    "not_null": True,
                    "unique": True,
                    "generator": {"kind": "sequence", "prefix": "p-", "width": 6},
                },
                {
                    "name": "full_name",
                    "generator": {"kind": "faker", "provider": "name", "pool_size": 200},
                },
                {
                    "name": "birth_date",
                    "type": "date",
                    "generator": {
                        "kind": "faker",
                        "provider": "date_of_birth",
                        "args": {"minimum_age": 0, "maximum_age": 95},
                        "pool_size": 300,
                    },
                },
                {
                    "name": "registered_on",
                    "type": "date",
                    "generator": {
                        "kind": "faker",
                        "provider": "date_between",
                        "args": {"start_date": "1990-01-01", "end_date": "2021-12-31"},
                        "pool_size": 200,
                    },
                },
            ],
        },
        {
            "name": "doctors",
            "rows": 12,
            "scales": False,
            "primary_key": "doctor_id",
            "columns": [
                {
                    "name": "doctor_id",
                    "not_null": True,
                    "unique": True,
                    "generator": {"kind": "sequence", "prefix": "d-", "width": 4},
                },
                {
                    "name": "specialty",
                    "generator": {
                        "kind": "categorical",
                        "values": ["cardiology", "oncology", "pediatrics", "general"],
                    },
                },
            ],
        },
        {
            "name": "slots",
            "rows": 900,
            "primary_key": "slot_id",
            "columns": [
                {
                    "name": "slot_id",
                    "not_null": True,
                    "unique": True,
                    "generator": {"kind": "sequence", "prefix": "s-", "width": 6},
                },
                {
                    "name": "doctor_id",
                    "not_null": True,
                    "generator": {"kind": "foreign_key", "table": "doctors"},
                },
                {
                    "name": "starts_at",
                    "type": "timestamp",
                    "not_null": True,
                    "generator": {"kind": "date", "calendar": "default"},
                },
            ],
        },
        {
            "name": "appointments",
            "rows": 1500,
            "primary_key": "appointment_id",
            "columns": [
                {
                    "name": "appointment_id",
                    "type": "bigint",
                    "not_null": True,
                    "unique": True,
                    "generator": {"kind": "sequence"},
                },
                {
                    "name": "patient_id",
                    "not_null": True,
                    "generator": {"kind": "foreign_key", "table": "patients"},
                },
                {
                    "name": "slot_id",
                    "not_null": True,
                    "generator": {"kind": "foreign_key", "table": "slots"},
                },
                {
                    "name": "booked_at",
                    "type": "timestamp",
                    "not_null": True,
                    "generator": {"kind": "date", "calendar": "booking"},
                },
                {
                    "name": "fee",
                    "type": "double",
                    "min": 20,
                    "max": 400,
                    "generator": {"kind": "uniform", "low": 20, "high": 400, "round": 2},
                },
                {
                    "name": "fee_label",
                    "generator": {
                        "kind": "expression",
                        "sql": "'EUR ' || CAST(fee AS VARCHAR)",
                    },
                },
            ],
        },
    ],
    "stressors": [
        {"kind": "key_drift", "table": "appointments", "column": "patient_id", "rate": 0.05},
        {"kind": "missing_values", "table": "appointments", "column": "fee", "rate": 0.02},
    ],
}


def hospital() -> dict[str, Any]:
    """A fresh deep copy of the spec (YAML-shaped: dates as ISO strings)."""
    return copy.deepcopy(_HOSPITAL)


def table(data: dict[str, Any], name: str) -> dict[str, Any]:
    return next(t for t in data["tables"] if t["name"] == name)


def column(data: dict[str, Any], table_name: str, name: str) -> dict[str, Any]:
    return next(c for c in table(data, table_name)["columns"] if c["name"] == name)


def write_spec(folder: Path, data: dict[str, Any], name: str = "hospital.yaml") -> Path:
    """Writes YAML the way a person would: ISO dates unquoted, so YAML reads them as dates."""
    path = folder / name
    text = yaml.safe_dump(data, sort_keys=False)
    # safe_dump quotes strings that look like dates; a hand-written spec does not.
    path.write_text(_unquote_dates(text))
    return path


def _unquote_dates(text: str) -> str:
    return re.sub(r"'(\d{4}-\d{2}-\d{2})'", r"\1", text)
