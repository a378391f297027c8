"""The records passed between stages, in one place: what each stage writes and the next reads.

- a published dataset's completion record (:class:`DatasetRecord`, ``dataset.json``) and a
  gold build's (:class:`GoldBuild`, ``build.json``): :mod:`.datasets`;
- a run's parameters (:class:`RunSpec`, ``run.json``) with its :class:`RunIdentity`, the
  :class:`LlmOptions` of its agent models and the :class:`AgentLimits` of its trials:
  :mod:`.runs` and :mod:`.trials`;
- one trial's :class:`TrialKey`, its :class:`TrialResult` (``result.json``, with the
  trajectory's :class:`Step` s) and its :class:`TrialScore` (with per-node
  :class:`NodeDetail` / :class:`NodeCheck`): :mod:`.trials` and :mod:`.scores`.

Where each record is stored is :class:`benchforge.core.artifacts.ArtifactLayout`'s business.
These are plain pydantic models with no behaviour beyond small derived values, so every layer
(libraries, harness, flows, CLI) can share them without importing one another.
"""

from benchforge.core.records.datasets import (
    GOLD_DB,
    PACKAGES_DIR,
    DatasetRecord,
    GoldBuild,
    ImportStamp,
    Origin,
    ReleaseStamp,
)
from benchforge.core.records.runs import LlmOptions, RunIdentity, RunSpec
from benchforge.core.records.scores import (
    JudgedItem,
    JudgedPair,
    JudgeRecord,
    NodeCheck,
    NodeDetail,
    ScoreStatus,
    TrialScore,
)
from benchforge.core.records.trials import AgentLimits, Step, Termination, TrialKey, TrialResult

__all__ = [
    "GOLD_DB",
    "PACKAGES_DIR",
    "AgentLimits",
    "DatasetRecord",
    "GoldBuild",
    "ImportStamp",
    "JudgeRecord",
    "JudgedItem",
    "JudgedPair",
    "LlmOptions",
    "NodeCheck",
    "NodeDetail",
    "Origin",
    "ReleaseStamp",
    "RunIdentity",
    "RunSpec",
    "ScoreStatus",
    "Step",
    "Termination",
    "TrialKey",
    "TrialResult",
    "TrialScore",
]
