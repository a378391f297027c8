"""Calendars: day weights (trend x weekly x monthly x holidays) sampled by inverse CDF.

A calendar becomes two small DuckDB tables: ``bins`` maps BINS equal-probability slots to days
(so drawing a day is one integer join), ``cdf`` gives the cumulative weight before each day (so
a draw can be conditioned on "not before" a date while keeping the calendar's shape).
"""

from __future__ import annotations

from datetime import date, timedelta

import duckdb
import numpy as np
import pyarrow as pa

from benchforge.synthesis.spec.models import Calendar

BINS = 1 << 16


def day_weights(cal: Calendar, start: date, end: date) -> tuple[list[date], np.ndarray]:
    days = [start + timedelta(days=i) for i in range((end - start).days + 1)]
    years = np.array([(d - cal.start).days / 365.25 for d in days])
    weights = (1.0 + cal.yearly_growth) ** years
    weights *= np.array([cal.weekly[d.weekday()] for d in days])
    weights *= np.array([cal.monthly[d.month - 1] for d in days])
    holidays = {(h.month, h.day) for h in cal.holidays}
    weights *= np.array([cal.holiday_factor if (d.month, d.day) in holidays else 1.0 for d in days])
    if weights.sum() <= 0:
        raise ValueError("calendar has zero total weight")
    return days, weights


def register_calendar(
    con: duckdb.DuckDBPyConnection, name: str, cal: Calendar, start: date, end: date
) -> tuple[str, str]:
    """Creates ``_cal.<name>_bins`` and ``_cal.<name>_cdf``; returns their qualified names."""
    days, weights = day_weights(cal, start, end)
    cdf = np.concatenate([[0.0], np.cumsum(weights) / weights.sum()])
    # Slot b covers quantile (b + 0.5) / BINS: the day whose [cdf_lo, cdf_hi) contains it.
    quantiles = (np.arange(BINS) + 0.5) / BINS
    day_index = np.searchsorted(cdf, quantiles, side="right") - 1
    day_index = np.clip(day_index, 0, len(days) - 1)
    day_values = np.array(days, dtype="datetime64[D]")
    bins = pa.table({"bin": np.arange(BINS, dtype=np.int64), "day": day_values[day_index]})
    cdf_table = pa.table({"day": day_values, "cdf_lo": cdf[:-1], "cdf_hi": cdf[1:]})
    con.execute("CREATE SCHEMA IF NOT EXISTS _cal")
    bins_name, cdf_name = f"_cal.{name}_bins", f"_cal.{name}_cdf"
    con.register("_bins_src", bins)
    con.execute(f"CREATE OR REPLACE TABLE {bins_name} AS SELECT * FROM _bins_src")
    con.unregister("_bins_src")
    con.register("_cdf_src", cdf_table)
    con.execute(f"CREATE OR REPLACE TABLE {cdf_name} AS SELECT * FROM _cdf_src")
    con.unregister("_cdf_src")
    return bins_name, cdf_name
