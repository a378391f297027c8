"""Task families by name.

Every module of this package (but ``base`` and ``registry``) is a family module that calls
:func:`register` when imported; they are imported on the first lookup, so a new family is one
new module and touches no other. Code elsewhere (a test's toy family, a plugin) registers its
own the same way; plugins named by ``BENCHFORGE_PLUGINS`` or entry points are imported
on the first lookup too (``benchforge.core.plugins``).

The loader validates ``task.yaml`` against :func:`spec_adapter`: the union of the registered
families' spec models, discriminated by ``family``; the union is rebuilt when the registry
changes.
"""

from __future__ import annotations

import importlib
import pkgutil
import threading
from pathlib import Path
from typing import Annotated, Any

from pydantic import Field, TypeAdapter

from benchforge.core.errors import BenchforgeError
from benchforge.core.plugins import load_plugins
from benchforge.evaluation.families.base import TaskFamily
from benchforge.evaluation.tasks.models import LoadedTask, TaskSpecBase

_NOT_FAMILIES = frozenset({"base", "registry"})
_lock = threading.RLock()
_families: dict[str, TaskFamily] = {}
_builtins_loaded = False
_builtins_done = False
_adapter: tuple[tuple[str, ...], TypeAdapter[Any]] | None = None


class UnknownFamilyError(BenchforgeError):
    """A task names a family no module registered."""


def _load_builtins() -> None:
    """The shipped family modules, then the plugins (``benchforge.core.plugins``)."""
    global _builtins_loaded, _builtins_done
    with _lock:
        if not _builtins_loaded:
            _builtins_loaded = True
            package = importlib.import_module(__package__ or "benchforge.evaluation.families")
            for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda m: m.name):
                if info.name not in _NOT_FAMILIES and not info.name.startswith("_"):
                    importlib.import_module(f"{package.__name__}.{info.name}")
            _builtins_done = True
    if _builtins_done:  # not while a shipped module registers: plugins come after them all
        load_plugins()


def register(family: TaskFamily) -> TaskFamily:
    """Registers ``family`` under ``family.name``; registering the same object again is a
    no-op, another object under a taken name an error (``unregister`` it first)."""
    _load_builtins()  # the shipped families first, whoever registers first
    if not isinstance(family, TaskFamily):
        raise TypeError(f"{family!r} does not implement the TaskFamily protocol")
    spec_family = family.spec_type.model_fields["family"].annotation
    if getattr(spec_family, "__args__", None) != (family.name,):
        raise TypeError(
            f"{family.spec_type.__name__}.family must be Literal[{family.name!r}] for the "
            f"{family.name} family"
        )
    with _lock:
        known = _families.get(family.name)
        if known is not None and known is not family:
            raise ValueError(f"a task family named {family.name!r} is already registered")
        _families[family.name] = family
    return family


def unregister(name: str) -> None:
    with _lock:
        _families.pop(name, None)


def families() -> dict[str, TaskFamily]:
    """Every registered family by name, in registration order."""
    _load_builtins()
    with _lock:
        return dict(_families)


def family_names() -> list[str]:
    return list(families())


def get_family(name: str) -> TaskFamily:
    known = families()
    if name not in known:
        raise UnknownFamilyError(
            f"unknown task family {name!r} (known: {', '.join(sorted(known)) or 'none'})"
        )
    return known[name]


def family_of(task: LoadedTask | TaskSpecBase) -> TaskFamily:
    spec = task.spec if isinstance(task, LoadedTask) else task
    return get_family(spec.family)


def workspace(task: LoadedTask, dest: Path) -> Path:
    """What the agent receives, in ``dest``: the family's materials and ``TASK.md`` (the
    title and instructions)."""
    dest.mkdir(parents=True, exist_ok=True)
    family_of(task).materials(task, dest)
    spec = task.spec
    (dest / "TASK.md").write_text(f"# {spec.title}\n\n{spec.instructions}\n")
    return dest


def spec_adapter() -> TypeAdapter[Any]:
    """Validates a task spec into its family's model (discriminated by ``family``)."""
    global _adapter
    known = families()
    names = tuple(known)
    with _lock:
        if _adapter is None or _adapter[0] != names:
            # by family name: the schema (and its file) is the same whatever imported first
            types = tuple(known[name].spec_type for name in sorted(known))
            if not types:
                raise UnknownFamilyError("no task family is registered")
            if len(types) == 1:
                _adapter = (names, TypeAdapter(types[0]))
            else:
                union: Any = Annotated[_union(types), Field(discriminator="family")]
                _adapter = (names, TypeAdapter(union))
        return _adapter[1]


def _union(types: tuple[type[TaskSpecBase], ...]) -> Any:
    from typing import Union

    return Union[types]  # noqa: UP007 (a union built at run time)
