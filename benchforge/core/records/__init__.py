"""The records passed between stages, in one place: what each stage writes and the next reads.

- a published dataset's completion record (:class:`DatasetRecord`, ``dataset.json``) and a
  gold build's (:class:`GoldBuild`, ``build.json``): :mod:`.datasets`;
- a run's parameters (:class:`RunSpec`, ``run.json``) with its :class:`RunIdentity`, the
  :class:`LlmOptions` of its agent models and the :class:`AgentLimits` of its trials:
  :mod:`.runs` and :mod:`.trials`;
- one trial's :class:`TrialKey`, its :class:`TrialResult` (``result.json``, with the
  trajectory's :class:`Step` s) and its :class:`TrialScore` (with its family's
  :class:`ScoreBreakdown`, and its :class:`VisibleScore` when scored on a held-out seed):
  :mod:`.trials` and :mod:`.scores`;
- what ``task verify`` found for a task (:class:`TaskVerification`, a list of
  :class:`VerificationCheck` s): :mod:`.verification`.

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
    ScoreBreakdown,
    ScoreStatus,
    TrialScore,
    VisibleScore,
    register_breakdown,
)
from benchforge.core.records.trials import AgentLimits, Step, Termination, TrialKey, TrialResult
from benchforge.core.records.verification import TaskVerification, VerificationCheck

__all__ = [
    "GOLD_DB",
    "PACKAGES_DIR",
    "AgentLimits",
    "DatasetRecord",
    "GoldBuild",
    "ImportStamp",
    "LlmOptions",
    "Origin",
    "ReleaseStamp",
    "RunIdentity",
    "RunSpec",
    "ScoreBreakdown",
    "ScoreStatus",
    "Step",
    "TaskVerification",
    "Termination",
    "TrialKey",
    "TrialResult",
    "TrialScore",
    "VerificationCheck",
    "VisibleScore",
    "register_breakdown",
]
