"""Task families: one module per family, registered by name (see ``base`` and ``registry``)."""

from benchforge.evaluation.families.base import (
    FamilyBase,
    PreparedTask,
    SubmissionScore,
    TaskFamily,
    VerifyOptions,
    spec_as,
)
from benchforge.evaluation.families.registry import (
    UnknownFamilyError,
    families,
    family_names,
    family_of,
    get_family,
    register,
    spec_adapter,
    unregister,
    workspace,
)

__all__ = [
    "FamilyBase",
    "PreparedTask",
    "SubmissionScore",
    "TaskFamily",
    "UnknownFamilyError",
    "VerifyOptions",
    "families",
    "family_names",
    "family_of",
    "get_family",
    "register",
    "spec_adapter",
    "spec_as",
    "unregister",
    "workspace",
]
