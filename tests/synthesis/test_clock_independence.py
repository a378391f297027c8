"""Generated data is a pure function of (spec, seed, scale, pool version), never of today's date.

Faker's date providers (``date_of_birth``, ``date_between`` with relative arguments...) read
``datetime.now()`` / ``date.today()``. These tests fake that clock, the way Faker sees it, to two
different years, with a fresh Faker pool cache (disk and memory) for each run, and compare the
Parquet bytes.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from collections.abc import Iterator
from datetime import date, datetime, tzinfo
from pathlib import Path
from typing import Any

import duckdb
import pytest

from benchforge.synthesis.engine import generate_dataset, pools
from benchforge.synthesis.spec import DomainSpec, load_domain, load_spec
from tests.synthesis.hospital import column, hospital, table, write_spec

pytestmark = pytest.mark.slow  # tests/README.md: the fast and the full loop


class _RealTypeCheck(type):
    """``isinstance(real_date, FakeDate)`` stays true, as Faker's argument parsing expects."""

    real: type

    def __instancecheck__(cls, obj: object) -> bool:
        return isinstance(obj, cls.real)


def _fake_clock(day: date) -> tuple[type, type]:
    class FakeDate(date, metaclass=_RealTypeCheck):
        real = date

        @classmethod
        def today(cls) -> date:
            return date(day.year, day.month, day.day)

    class FakeDateTime(datetime, metaclass=_RealTypeCheck):
        real = datetime

        @classmethod
        def now(cls, tz: tzinfo | None = None) -> datetime:
            return datetime(day.year, day.month, day.day, 10, 30, tzinfo=tz)

        @classmethod
        def today(cls) -> datetime:
            return cls.now()

    return FakeDate, FakeDateTime


def fake_today(monkeypatch: pytest.MonkeyPatch, day: date) -> None:
    """Sets "today" for every loaded Faker module (what ``datetime.now()`` returns there)."""
    import faker.providers.date_time  # noqa: F401  (loaded before patching)

    fake_date, fake_datetime = _fake_clock(day)
    for name, module in list(sys.modules.items()):
        if name != "faker" and not name.startswith("faker."):
            continue
        for attr, value in list(vars(module).items()):
            if value is datetime:
                monkeypatch.setattr(module, attr, fake_datetime)
            elif value is date:
                monkeypatch.setattr(module, attr, fake_date)


@pytest.fixture
def fresh_pools(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[Any]:
    """A function that gives the next run its own empty pool cache (disk and memory)."""
    runs = iter(range(100))

    def isolate() -> None:
        monkeypatch.setenv("BENCHFORGE_CACHE_DIR", str(tmp_path / f"cache-{next(runs)}"))
        _clear_memory_caches()

    yield isolate
    _clear_memory_caches()


def _clear_memory_caches() -> None:
    pools.clear_memory_cache()


def parquet_digests(out: Path) -> dict[str, str]:
    return {
        p.name: hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted((out / "parquet").glob("*.parquet"))
    }


def generate_on(
    day: date, spec: DomainSpec, scale: float, out: Path, monkeypatch: pytest.MonkeyPatch
) -> dict[str, str]:
    with monkeypatch.context() as m:
        fake_today(m, day)
        generate_dataset(spec, scale=scale, seed=7, out=out)
    return parquet_digests(out)


def birth_spec(tmp_path: Path) -> DomainSpec:
    """Patients with Faker birth dates (relative to today) and a relative date_between."""
    data = hospital()
    patients = table(data, "patients")
    patients["columns"] = [c for c in patients["columns"] if c["name"] != "registered_on"]
    patients["columns"].append(
        {
            "name": "last_seen",
            "type": "date",
            "generator": {
                "kind": "faker",
                "provider": "date_between",
                "args": {"start_date": "-2y", "end_date": "today"},
                "pool_size": 100,
            },
        }
    )
    data["tables"] = [t for t in data["tables"] if t["name"] == "patients"]
    data["stressors"] = []
    assert column(data, "patients", "birth_date")["generator"]["provider"] == "date_of_birth"
    return load_spec(write_spec(tmp_path, data))


def test_faker_dates_do_not_depend_on_today(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fresh_pools: Any
) -> None:
    spec = birth_spec(tmp_path)
    fresh_pools()
    first = generate_on(date(2031, 6, 15), spec, 1, tmp_path / "a", monkeypatch)
    fresh_pools()
    second = generate_on(date(2019, 2, 3), spec, 1, tmp_path / "b", monkeypatch)
    assert first == second


def test_birth_dates_stay_within_the_spec_calendar(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fresh_pools: Any
) -> None:
    spec = birth_spec(tmp_path)
    fresh_pools()
    generate_on(date(2031, 6, 15), spec, 1, tmp_path / "a", monkeypatch)
    latest_birth, latest_seen, earliest_seen = duckdb.sql(
        "SELECT max(birth_date), max(last_seen), min(last_seen) "
        f"FROM '{tmp_path / 'a' / 'parquet' / 'patients.parquet'}'"
    ).fetchone() or (None, None, None)
    end = spec.calendars["default"].end
    assert latest_birth <= end
    assert date(2021, 12, 1) <= earliest_seen <= latest_seen <= end


def test_pool_cache_is_keyed_by_reference_date_and_pool_version(tmp_path: Path) -> None:
    spec = birth_spec(tmp_path)
    gen = spec.table_map["patients"].column_map["birth_date"].generator
    assert isinstance(gen, pools.FakerGen)
    keys = {
        pools.pool_key(gen, "en_US", date(2023, 12, 31)),
        pools.pool_key(gen, "en_US", date(2024, 12, 31)),
    }
    assert len(keys) == 2
    assert pools.POOL_VERSION >= 2
    assert spec.faker_today() == date(2023, 12, 31)


def test_shipped_domain_is_byte_identical_in_another_year(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fresh_pools: Any
) -> None:
    spec = load_domain("ads")
    fresh_pools()
    first = generate_on(date(2024, 3, 1), spec, 0.002, tmp_path / "a", monkeypatch)
    fresh_pools()
    second = generate_on(date(2037, 11, 20), spec, 0.002, tmp_path / "b", monkeypatch)
    assert len(first) == len(spec.tables)
    assert first == second


_PROCESS_SCRIPT = """
import hashlib, sys
from pathlib import Path
from benchforge.synthesis.engine import generate_dataset
from benchforge.synthesis.engine import faker_calls
from benchforge.synthesis.spec import load_domain, load_spec
from benchforge.synthesis.spec.generators import FakerGen

spec_path, out = sys.argv[1], Path(sys.argv[2])
generate_dataset(load_spec(spec_path), scale=1, seed=7, out=out)
print(hashlib.sha256((out / "parquet" / "patients.parquet").read_bytes()).hexdigest())
locales = sorted({
    loc
    for d in ("crm", "ads", "enterprise")
    for t in load_domain(d).tables
    for c in t.columns
    if isinstance(c.generator, FakerGen)
    for loc in (c.generator.locales if c.generator.locale_from else [c.generator.locale])
})
h = hashlib.sha256()
for locale in locales:
    for provider in faker_calls.canonical_faker(locale).factories[0].providers:
        for name in sorted(n for n in dir(provider) if not n.startswith("_")):
            value = getattr(provider, name, None)
            text = repr(value)  # objects without a repr show their address: skipped
            if isinstance(value, (list, tuple, dict)) and " at 0x" not in text:
                h.update(f"{locale}.{name}={text}".encode())
print(h.hexdigest())
"""


def test_pools_do_not_depend_on_the_process_hash_seed(tmp_path: Path) -> None:
    """Faker's it_IT ``cities`` is a list built from a set: its order (and so the pool) followed
    PYTHONHASHSEED. Two processes with different hash seeds and cold caches agree, and no
    provider list of the shipped domains' locales depends on the hash seed."""
    data = hospital()
    patients = table(data, "patients")
    patients["columns"] = [
        column(data, "patients", "patient_id"),
        {
            "name": "city",
            "generator": {"kind": "faker", "provider": "city", "locale": "it_IT", "pool_size": 300},
        },
    ]
    data["tables"] = [patients]
    data["stressors"] = []
    spec = write_spec(tmp_path, data)
    outputs = []
    for hash_seed in ("1", "2"):
        env = {
            **os.environ,
            "PYTHONHASHSEED": hash_seed,
            "BENCHFORGE_CACHE_DIR": str(tmp_path / f"cache-{hash_seed}"),
        }
        proc = subprocess.run(
            [sys.executable, "-c", _PROCESS_SCRIPT, str(spec), str(tmp_path / hash_seed)],
            capture_output=True,
            text=True,
            env=env,
            timeout=120,
        )
        assert proc.returncode == 0, proc.stderr
        outputs.append(proc.stdout.split())
    assert outputs[0][0] == outputs[1][0], "the it_IT city pool depends on PYTHONHASHSEED"
    assert outputs[0][1] == outputs[1][1], "a Faker provider list depends on PYTHONHASHSEED"
