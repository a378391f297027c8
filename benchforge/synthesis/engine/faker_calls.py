"""Calling Faker reproducibly: a pinned "today" and arguments of the types Faker expects.

Faker's date providers (``date_of_birth``, ``date_between('-30y', 'today')``, ``past_date``,
``date_this_year``...) read ``datetime.now()`` / ``date.today()``, so the same seed gives other
values on another day. ``pinned_today`` makes every loaded Faker module see a fixed date (the
spec's reference date) for the duration of a block; nothing else in the process is affected.

A few Faker providers keep lists built from sets, whose order follows Python's per-process string
hash seed (``PYTHONHASHSEED``): ``canonical_faker`` sorts those on an instance, so a pool is the
same in every process.

Spec arguments come from YAML: a date may arrive as ``datetime.date`` (unquoted) or as a string
(quoted), and Faker parses strings only in its relative form (``-30y``). ``resolve_args`` turns ISO
date strings given to date parameters into dates, and rejects arguments the provider does not take.
"""

from __future__ import annotations

import datetime as dt
import inspect
import re
import sys
import threading
import types
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from functools import cache
from typing import Any

from faker import Faker

from benchforge.synthesis.spec.suggest import did_you_mean

_LOCK = threading.RLock()
_ISO_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_ISO_DATETIME = re.compile(r"^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?$")


class FakerCallError(ValueError):
    """A Faker provider that cannot be called as the spec asks (the message says why)."""


class _RealTypeCheck(type):
    """Pinned classes still recognize real dates: Faker's ``isinstance(value, date)`` checks
    must accept the dates a spec passes in."""

    real: type

    def __instancecheck__(cls, obj: object) -> bool:
        return isinstance(obj, cls.real)

    def __subclasscheck__(cls, sub: type) -> bool:
        return issubclass(sub, cls.real)


def _pinned_types(today: dt.date) -> tuple[type, type]:
    class PinnedDate(dt.date, metaclass=_RealTypeCheck):
        real = dt.date

        @classmethod
        def today(cls) -> PinnedDate:
            return cls(today.year, today.month, today.day)

    class PinnedDateTime(dt.datetime, metaclass=_RealTypeCheck):
        real = dt.datetime

        @classmethod
        def now(cls, tz: dt.tzinfo | None = None) -> PinnedDateTime:
            return cls(today.year, today.month, today.day, tzinfo=tz)

        @classmethod
        def today(cls) -> PinnedDateTime:
            return cls.now()

        @classmethod
        def utcnow(cls) -> PinnedDateTime:
            return cls.now()

    return PinnedDate, PinnedDateTime


def _replacement(value: Any, date_cls: type, datetime_cls: type) -> Any:
    if isinstance(value, type) and issubclass(value, dt.datetime):
        return datetime_cls
    if isinstance(value, type) and issubclass(value, dt.date):
        return date_cls
    if isinstance(value, types.ModuleType) and value.__name__ == "datetime":
        proxy = types.ModuleType("datetime")
        proxy.__dict__.update(vars(dt))
        proxy.date = date_cls  # type: ignore[attr-defined]
        proxy.datetime = datetime_cls  # type: ignore[attr-defined]
        return proxy
    return None


@contextmanager
def pinned_today(today: dt.date) -> Iterator[None]:
    """Within the block, every loaded ``faker`` module sees ``today`` (midnight) as the current
    date and time: the names ``date``, ``datetime`` (classes or the module) they imported are
    swapped for pinned ones and restored afterwards. Create ``Faker(locale)`` instances before
    entering, so their provider modules are loaded. Serialized by a lock (module globals)."""
    with _LOCK:
        date_cls, datetime_cls = _pinned_types(today)
        saved: list[tuple[types.ModuleType, str, Any]] = []
        try:
            for name, module in list(sys.modules.items()):
                if module is None or (name != "faker" and not name.startswith("faker.")):
                    continue
                for attr, value in list(vars(module).items()):
                    new = _replacement(value, date_cls, datetime_cls)
                    if new is not None:
                        saved.append((module, attr, value))
                        setattr(module, attr, new)
            yield
        finally:
            for module, attr, value in reversed(saved):
                setattr(module, attr, value)


HASH_ORDERED: dict[str, tuple[str, ...]] = {
    # it_IT: ``cities = list({c[0] for ... in cap_city_province})``
    "faker.providers.address.it_IT": ("cities",),
}
"""Provider module -> list attributes that Faker builds from a set (hash-seed order)."""


def canonical_faker(locale: str) -> Faker:
    """A new ``Faker(locale)`` whose set-built lists (``HASH_ORDERED``) are sorted on its own
    provider instances (the classes, shared by other Faker users, are left alone)."""
    try:
        fake = Faker(locale)
    except AttributeError as err:
        raise FakerCallError(f"unknown Faker locale '{locale}'") from err
    for provider in fake.factories[0].providers:
        for name in HASH_ORDERED.get(type(provider).__module__, ()):
            value = getattr(provider, name, None)
            if isinstance(value, list | tuple):
                setattr(provider, name, sorted(value))
    return fake


@cache
def faker_for(locale: str) -> Faker:
    """One Faker per locale for checks (pools make and seed their own instances)."""
    return canonical_faker(locale)


def provider_method(fake: Faker, provider: str) -> Callable[..., Any]:
    method = getattr(fake, provider, None)
    if not callable(method):
        names = [n for n in dir(fake.factories[0]) if not n.startswith("_")]
        raise FakerCallError(f"unknown Faker provider '{provider}'{did_you_mean(provider, names)}")
    return method


def _takes_dates(param: inspect.Parameter) -> bool:
    text = str(param.annotation)
    return "datetime.date" in text or "DateParseType" in text


def _as_date(value: Any) -> Any:
    if isinstance(value, str) and _ISO_DATE.match(value):
        return dt.date.fromisoformat(value)
    if isinstance(value, str) and _ISO_DATETIME.match(value):
        return dt.datetime.fromisoformat(value)
    return value


def resolve_args(
    method: Callable[..., Any], provider: str, args: Mapping[str, Any]
) -> dict[str, Any]:
    """The provider's keyword arguments as Faker expects them: ISO strings given to date
    parameters become ``date`` / ``datetime``; an argument the provider does not take is an
    error naming the nearest one."""
    signature = inspect.signature(method)
    params = signature.parameters
    open_kwargs = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())
    for name in args:
        if name not in params and not open_kwargs:
            hint = did_you_mean(name, params)
            raise FakerCallError(f"Faker provider '{provider}' takes no argument '{name}'{hint}")
    try:
        signature.bind(**args)
    except TypeError as err:
        raise FakerCallError(f"Faker provider '{provider}': {err}") from err
    return {
        name: _as_date(value) if name in params and _takes_dates(params[name]) else value
        for name, value in args.items()
    }


def sample_values(
    provider: str, args: Mapping[str, Any], locale: str, today: dt.date, n: int
) -> list[str]:
    """``n`` values of the provider as a pool would hold them (text), under the pinned date;
    any failure is a ``FakerCallError`` saying what Faker said."""
    fake = faker_for(locale)
    method = provider_method(fake, provider)
    resolved = resolve_args(method, provider, args)
    try:
        with pinned_today(today):
            fake.seed_instance(0)
            return [str(method(**resolved)) for _ in range(n)]
    except Exception as err:  # Faker raises anything from ParseError to TypeError
        shown = ", ".join(f"{k}={v!r}" for k, v in args.items())
        raise FakerCallError(
            f"Faker provider '{provider}'({shown}) fails: {type(err).__name__}: {err}"
        ) from err
