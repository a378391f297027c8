"""Finding a task's dataset on local disk (dbt and DuckDB need files): the visible dataset an
agent works on, the held-out one its trials are scored on, and a run's resolution of both.

A missing default dataset is synthesized by the ``synthesize`` callable the caller passes (the
flows pass their ``synthesize`` flow; a test or a script can pass the library's builder), so
this module needs no orchestrator.
"""

from __future__ import annotations

import hashlib
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from benchforge.core.artifacts import LAYOUT, open_store
from benchforge.core.errors import BenchforgeError
from benchforge.core.heldout import heldout_secret, heldout_seed
from benchforge.core.scratch import folder_lock, publish_once
from benchforge.core.settings import load_settings
from benchforge.evaluation.families import family_of

if TYPE_CHECKING:
    from benchforge.evaluation.tasks import LoadedTask
    from benchforge.evaluation.tasks.models import DatasetRef


class Synthesizer(Protocol):
    """Builds the dataset of (domain, scale, seed) and publishes it to ``out``."""

    def __call__(self, *, domain: str, scale: float, seed: int, out: str) -> object: ...


def default_dataset_location(domain: str, scale: float, seed: int) -> str:
    root = load_settings().artifact_root.rstrip("/")
    return f"{root}/{LAYOUT.dataset(domain, scale, seed)}"


def local_dataset(
    domain: str,
    dataset: str | None,
    scratch: Path,
    scale: float = 1.0,
    seed: int = 7,
    *,
    synthesize: Synthesizer,
) -> Path:
    """A local folder holding ``dataset`` (downloaded from S3 if needed). With no dataset given,
    the default one for (domain, scale, seed) is used, synthesized first if it does not exist."""
    location = dataset or default_dataset_location(domain, scale, seed)
    missing = synthesize if dataset is None else None
    return _fetch(location, scratch, domain, scale, seed, missing)


def heldout_dataset(
    domain: str, scratch: Path, scale: float, visible_seed: int, *, synthesize: Synthesizer
) -> Path:
    """The held-out dataset of (domain, scale, visible seed): same spec and scale, a seed derived
    from the held-out secret (:mod:`benchforge.core.heldout`); synthesized once, then reused. Its
    location names a digest, not the seed."""
    settings = load_settings()
    seed = heldout_seed(heldout_secret(settings), domain, scale, visible_seed)
    tag = hashlib.sha256(f"{domain}|{scale:g}|{seed}".encode()).hexdigest()[:16]
    location = f"{settings.artifact_root.rstrip('/')}/{LAYOUT.heldout_dataset(domain, tag)}"
    return _fetch(location, scratch, domain, scale, seed, synthesize)


def _fetch(
    location: str,
    scratch: Path,
    domain: str,
    scale: float,
    seed: int,
    synthesize: Synthesizer | None,
) -> Path:
    """``synthesize``: how to build the dataset when it is missing; None: a missing one is an
    error (a dataset the user named)."""
    # One process of this machine synthesizes or downloads a dataset; concurrent runs wait
    # for it and then read the finished folder (a download lands whole: private, then renamed).
    if location.startswith("s3://"):
        parent, _, name = location.rstrip("/").rpartition("/")
        store = open_store(parent)
        with folder_lock(scratch):
            if synthesize is not None and not store.exists(LAYOUT.dataset_record(name)):
                synthesize(domain=domain, scale=scale, seed=seed, out=location)
            if not LAYOUT.dataset_record_file(scratch).exists():
                if scratch.exists():
                    shutil.rmtree(scratch)  # a download an older version left unfinished
                publish_once(
                    scratch, lambda dest: store.get_dir(name, dest, marker=LAYOUT.DATASET_RECORD)
                )
        return scratch
    folder = Path(location)
    if not LAYOUT.dataset_record_file(folder).exists():
        if synthesize is None:
            raise BenchforgeError(f"{folder} is not a dataset (no {LAYOUT.DATASET_RECORD})")
        with folder_lock(folder):
            if not LAYOUT.dataset_record_file(folder).exists():
                synthesize(domain=domain, scale=scale, seed=seed, out=str(folder))
    return folder


def task_dataset(
    loaded: LoadedTask, override: str | None, scratch: Path, *, synthesize: Synthesizer
) -> Path:
    """The local folder of one task's dataset (its primary role's): ``override`` (a folder or
    s3:// prefix the user named) if given, else the spec's ``location``, else its domain at its
    scale and seed (synthesized if missing). A named location that is not a dataset is an
    error."""
    return ref_dataset(loaded, loaded.spec.dataset, override, scratch, synthesize=synthesize)


def ref_dataset(
    loaded: LoadedTask,
    ref: DatasetRef,
    override: str | None,
    scratch: Path,
    *,
    synthesize: Synthesizer,
) -> Path:
    """The local folder of ``ref``, one of ``loaded``'s datasets (:func:`task_dataset`)."""
    location = override or ref.resolve_location(catalogue_root_of(loaded))
    return local_dataset(ref.domain, location, scratch, ref.scale, ref.seed, synthesize=synthesize)


def catalogue_root_of(loaded: LoadedTask) -> Path:
    """The folder holding the task's tasks folder (``<root>/task_specs/<suite>/<id>``), which
    relative paths of a spec (``repo``, ``dataset.location``) start from."""
    return loaded.folder.resolve().parents[2]


ROLE_SEPARATOR = "#"


def role_keys(loaded: LoadedTask) -> dict[str, str]:
    """role -> the key of its dataset in a run's dataset maps (``RunSpec.datasets``,
    ``heldout_datasets`` and the identity's): ``<task key>`` for a task's lone dataset, as in
    runs stored before roles; ``<task key>#<role>`` for each role of a task with several (whose
    primary role is also under the task key, where scoring and the oracle read it)."""
    roles = loaded.spec.dataset_roles()
    if len(roles) == 1:
        return {role: loaded.key for role in roles}
    return {role: f"{loaded.key}{ROLE_SEPARATOR}{role}" for role in roles}


def keyed_by_role(loaded: LoadedTask, folders: Mapping[str, str]) -> dict[str, str]:
    """``folders`` (role -> folder, some of the task's roles) as entries of a run's dataset
    map (:func:`role_keys`)."""
    keys = role_keys(loaded)
    out = {keys[role]: folder for role, folder in folders.items()}
    primary = loaded.spec.primary_role
    if primary in folders:
        out[loaded.key] = folders[primary]
    return out


def roles_of(loaded: LoadedTask, dataset_map: Mapping[str, str]) -> dict[str, str]:
    """role -> folder: the task's entries of a run's dataset map, the inverse of
    :func:`keyed_by_role` (roles absent from the map are left out)."""
    return {role: dataset_map[key] for role, key in role_keys(loaded).items() if key in dataset_map}


def resolve_datasets(
    tasks: list[LoadedTask],
    overrides: dict[str, str],
    scratch: Path,
    *,
    synthesize: Synthesizer,
) -> dict[str, str]:
    """The run's dataset map: task key -> local folder of its (primary) dataset, and, for a
    task with several datasets by role, ``<task key>#<role>`` -> each role's folder
    (:func:`role_keys`). Synthesized once per (domain, scale, seed); a spec's ``location`` is
    fetched once per location; ``overrides``: domain -> a dataset folder or s3:// prefix used
    instead, for every role of that domain."""
    by_ref: dict[tuple[str, ...], str] = {}
    out: dict[str, str] = {}
    for loaded in tasks:
        folders = {}
        for role, ref in loaded.spec.dataset_roles().items():
            location = overrides.get(ref.domain) or ref.resolve_location(catalogue_root_of(loaded))
            ident = (
                (ref.domain, location) if location else (ref.domain, str(ref.scale), str(ref.seed))
            )
            if ident not in by_ref:
                tag = hashlib.sha256("|".join(ident).encode()).hexdigest()[:8]
                folder = ref_dataset(
                    loaded,
                    ref,
                    location,
                    scratch / "datasets" / f"{ref.domain}-{tag}"
                    if location
                    else scratch / "datasets" / ref.domain,
                    synthesize=synthesize,
                )
                by_ref[ident] = str(Path(folder).resolve())
            folders[role] = by_ref[ident]
        out |= keyed_by_role(loaded, folders)
    return out


def resolve_heldout(
    tasks: list[LoadedTask],
    overrides: dict[str, str],
    scratch: Path,
    *,
    synthesize: Synthesizer,
) -> dict[str, str]:
    """The run's held-out dataset map (keyed as :func:`resolve_datasets`'): for each task whose
    family scores on a held-out dataset, the held-out twin of every role on its domain's
    generated dataset (a custom dataset, given for a domain or as the role's ``location``, has
    no spec to regenerate it from)."""
    by_ref: dict[tuple[str, float, int], str] = {}
    out: dict[str, str] = {}
    for loaded in tasks:
        if not family_of(loaded).heldout:
            continue
        folders = {}
        for role, ref in loaded.spec.dataset_roles().items():
            if ref.domain in overrides or ref.location:
                continue
            ident = (ref.domain, ref.scale, ref.seed)
            if ident not in by_ref:
                folder = heldout_dataset(
                    ref.domain,
                    scratch / "heldout" / ref.domain,
                    ref.scale,
                    ref.seed,
                    synthesize=synthesize,
                )
                by_ref[ident] = str(Path(folder).resolve())
            folders[role] = by_ref[ident]
        out |= keyed_by_role(loaded, folders)
    return out


def datasets_by_domain(tasks: list[LoadedTask], dataset_dirs: dict[str, str]) -> dict[str, str]:
    """domain -> the resolved dataset folder of the domain's first task (what a per-domain stage,
    such as a gold build, runs on), from :func:`resolve_datasets`' answer."""
    found: dict[str, str] = {}
    for loaded in tasks:
        found.setdefault(loaded.spec.dataset.domain, dataset_dirs[loaded.key])
    return found
