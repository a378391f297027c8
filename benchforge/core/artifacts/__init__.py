"""Artifact storage over a local folder or S3, behind one :class:`ArtifactStore` interface;
where each artifact lives in it is :data:`LAYOUT`'s (:class:`ArtifactLayout`) business."""

from __future__ import annotations

from benchforge.core.artifacts.base import ArtifactInfo, ArtifactStore, validate_key
from benchforge.core.artifacts.layout import LAYOUT, ArtifactLayout
from benchforge.core.artifacts.local import LocalArtifactStore
from benchforge.core.artifacts.s3 import S3ArtifactStore, parse_s3_uri
from benchforge.core.errors import ArtifactError
from benchforge.core.settings import BenchforgeSettings, load_settings

__all__ = [
    "LAYOUT",
    "ArtifactInfo",
    "ArtifactLayout",
    "ArtifactStore",
    "LocalArtifactStore",
    "S3ArtifactStore",
    "open_store",
    "parse_s3_uri",
    "validate_key",
]


def open_store(
    location: str | None = None, settings: BenchforgeSettings | None = None
) -> ArtifactStore:
    """Open ``location`` (default ``settings.artifact_root``): ``s3://`` or a local folder."""
    settings = settings if settings is not None else load_settings()
    location = location if location is not None else settings.artifact_root
    if location.startswith("s3://"):
        return S3ArtifactStore(location, settings=settings)
    if location.startswith("file://"):
        location = location[len("file://") :]
    elif "://" in location:
        scheme = location.split("://", 1)[0]
        raise ArtifactError(f"unsupported artifact location {location!r}: scheme {scheme!r}")
    return LocalArtifactStore(location)
