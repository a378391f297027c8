"""Dataset derivations by name: a function that writes a folder derived from a dataset (the
perturbed databases of DataAgentBench-style tasks), registered by the library that makes it and
called by name from another.

The libraries are independent layers (evaluation never imports synthesis), so a task family
whose agents get derived data asks for the derivation here; the library registers it when
imported (``benchforge.synthesis.perturb`` registers ``perturb``), and the agents layer, which
every process running trials imports, imports that library.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Protocol

from benchforge.core.errors import BenchforgeError


class Derivation(Protocol):
    def __call__(self, dataset_dir: Path, spec_file: Path, out_dir: Path, seed: int) -> None:
        """Writes into ``out_dir`` what ``spec_file`` derives from ``dataset_dir``, seeded."""
        ...


class UnknownDerivationError(BenchforgeError):
    """No library registered a derivation of that name in this process."""


_lock = threading.Lock()
_derivations: dict[str, Derivation] = {}


def register_derivation(name: str, derivation: Derivation) -> Derivation:
    with _lock:
        _derivations[name] = derivation
    return derivation


def derivation(name: str) -> Derivation:
    with _lock:
        found = _derivations.get(name)
    if found is None:
        raise UnknownDerivationError(
            f"no dataset derivation named {name!r} is registered in this process (the library "
            "that makes it registers it when imported)"
        )
    return found
