"""The ``da_open`` tasks of the ads and enterprise suites, as the checks here read them.

Specs are validated with the ``DaOpenTask`` model directly (plus the folder rules the loader
applies: id = folder, suite = parent, named files exist), so these checks do not depend on the
``da_open`` family being registered. Reports are templates: ``dummy_anchors`` gives each anchor
a distinct made-up value in its own format, for the checks that do not need real data.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import yaml

from benchforge.evaluation.da.checks import rubric_texts
from benchforge.evaluation.da.claims import variants
from benchforge.evaluation.da.spec import DaOpenTask
from benchforge.evaluation.judges.evidence import extract_numbers
from benchforge.evaluation.judges.models import AnchorValue
from tests.paths import REPO_ROOT

SUITES = ("da-ads", "da-enterprise")
ALL_SUITES = ("da-crm", *SUITES)  # the crm suite has its own tests (tests/evaluation/da)
CATEGORIES = ("descriptive", "diagnostic", "strategic", "pattern_recognition", "profiling")


@dataclass(frozen=True)
class CatalogueTask:
    spec: DaOpenTask
    folder: Path

    @property
    def reference(self) -> str:
        return (self.folder / self.spec.reference).read_text()

    def baselines(self) -> dict[str, str]:
        return {name: (self.folder / name).read_text() for name in self.spec.baselines}

    def rubric_texts(self) -> list[str]:
        """Every rubric text a report must not copy (titles, approaches, criteria), as the
        harness lists them."""
        return [text for _, text in rubric_texts(self.spec)]


def task_folders(
    root: Path = REPO_ROOT / "task_specs", suites: tuple[str, ...] = SUITES
) -> list[Path]:
    return sorted(p.parent for suite in suites for p in (root / suite).glob("*/task.yaml"))


def load(folder: Path) -> CatalogueTask:
    spec = DaOpenTask.model_validate(yaml.safe_load((folder / "task.yaml").read_text()))
    return CatalogueTask(spec=spec, folder=folder)


def dummy_anchors(spec: DaOpenTask) -> dict[str, AnchorValue]:
    """A distinct, plausible value per anchor, formatted with the anchor's own format: a
    percent format gets a percent-sized value, a thousands format a large one. The value is
    read back from the formatted text, so text and value agree exactly."""
    out: dict[str, AnchorValue] = {}
    for i, (name, anchor) in enumerate(sorted(spec.anchors.items())):
        fmt = anchor.format
        if "%" in fmt:
            raw = 11.0 + 7.3 * i
        elif "," in fmt:
            raw = 12_345.0 * (1 + 0.61 * i)
        else:
            raw = 1.17 + 0.83 * i
        text = fmt.format(raw)
        (value,) = extract_numbers(text)
        out[name] = AnchorValue(
            name=name,
            value=value,
            text=text,
            tolerance=anchor.tolerance,
            unit=anchor.unit,
            kind=anchor.kind,
        )
    return out


def dummy_claims(spec: DaOpenTask, pick: dict[str, str] | None = None) -> dict[str, str]:
    """The words of each claim without data: its first variant (``claims.variants``), or the
    variant ``pick`` names for it."""
    out = {}
    for name, claim in spec.claims.items():
        texts = variants(claim)
        out[name] = texts[(pick or {}).get(name, next(iter(texts)))]
    return out
