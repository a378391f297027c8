"""Exception hierarchy shared by all benchforge modules."""

from __future__ import annotations


class BenchforgeError(Exception):
    """Base class for every error raised deliberately by benchforge."""


class ConfigError(BenchforgeError):
    """Settings or a config file are invalid."""


class ArtifactError(BenchforgeError):
    """An artifact store operation failed."""


class ArtifactNotFound(ArtifactError):
    """The requested artifact key does not exist."""


class ChecksumMismatch(ArtifactError):
    """Artifact content does not match the sha256 recorded at write time."""


class UnsupportedTaskError(BenchforgeError):
    """A task was asked for something its family does not do (e.g. execution scoring of a
    task that is judged)."""
