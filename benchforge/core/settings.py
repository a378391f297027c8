"""Benchforge settings: explicit kwargs > environment (``BENCHFORGE_*``) > TOML file > defaults.

The TOML file is a flat table of field names, e.g.::

    artifact_root = "s3://my-bucket/benchforge"
    s3_region = "eu-west-1"

It is taken from the ``config_file`` argument of :func:`load_settings`, else from the
``BENCHFORGE_CONFIG`` environment variable, else ``./benchforge.toml`` when it exists.
"""

from __future__ import annotations

import os
import tomllib
from contextvars import ContextVar
from pathlib import Path
from typing import Annotated, Any, cast

from pydantic import Field, SecretStr, TypeAdapter, ValidationError
from pydantic.fields import FieldInfo
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
)

from benchforge.core.errors import ConfigError

CONFIG_ENV_VAR = "BENCHFORGE_CONFIG"
DEFAULT_CONFIG_NAME = "benchforge.toml"

# Config file chosen by load_settings(); None means "resolve from env / cwd".
_explicit_config: ContextVar[Path | None] = ContextVar("benchforge_config_file", default=None)


class BenchforgeSettings(BaseSettings):
    """Runtime configuration; secrets are ``SecretStr`` and never shown in repr."""

    model_config = SettingsConfigDict(
        env_prefix="BENCHFORGE_",
        extra="forbid",
        env_ignore_empty=True,
        frozen=True,
    )

    artifact_root: str = "./artifacts"
    s3_endpoint_url: str | None = None
    s3_region: str = "us-east-1"
    aws_access_key_id: SecretStr | None = None
    aws_secret_access_key: SecretStr | None = None
    openai_base_url: str | None = None
    openai_api_key: SecretStr | None = None
    mock_scripts_dir: Path | None = None
    """More scripts for the mock server a run starts when it has no API key (``*.yaml`` named
    by file stem, answered as ``mock-script:<stem>``, over the shipped ones): a plugin's or a
    task author's scripted agents, run offline."""
    postgres_url: str | None = None
    """The PostgreSQL server a run's trials read from, as an admin URL
    (``postgresql://USER@HOST:PORT/postgres``): for tasks whose agent data places databases on
    PostgreSQL, the run loads their templates there and gives each trial its own copy. Not
    set: such a run starts a server of its own on 127.0.0.1 (the ``postgres`` extra) and stops
    it at the end."""
    heldout_secret: SecretStr | None = None
    """Derives the held-out seeds DE tasks are scored on; default: a random key created once
    in the artifact store (``secrets/heldout.key``), out of every sandbox's sight."""
    catalogue_root: str | None = None
    """Folder holding ``task_specs/`` and ``dbt_projects/``; default: the installed package's
    (see :mod:`benchforge.core.catalogue`)."""
    sandbox_allowed_read_only: list[Path] = []
    """Host paths an agent config may expose read-only in its sandbox (``command``'s
    ``read_only``) even though they collide with a path the harness protects (the artifact
    root, the scratch space, datasets, the catalogue): the operator's explicit exception, given
    here (``BENCHFORGE_SANDBOX_ALLOWED_READ_ONLY='["/opt/agent"]'``), never by an agent
    config. A requested path passes when it is one of these or lies inside one (after
    resolving symlinks and ``..``)."""
    max_infra_error_share: Annotated[float, Field(ge=0, le=1)] = 0.2
    """A run whose finished trials are more than this share infrastructure errors (or all of
    them, whatever this is) fails: its flow runs end FAILED and ``benchforge run`` /
    ``score-run`` / ``nightly`` exit 3 (see :mod:`benchforge.harness.infra_errors` for why
    0.2). The commands' ``--max-infra-error-share`` and the flows' parameter override it."""

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        return (init_settings, env_settings, _TomlFileSource(settings_cls))


class _TomlFileSource(PydanticBaseSettingsSource):
    """Settings source reading the resolved benchforge TOML file."""

    def get_field_value(self, field: FieldInfo, field_name: str) -> tuple[Any, str, bool]:
        return None, field_name, False  # unused: __call__ returns the whole mapping

    def __call__(self) -> dict[str, Any]:
        path = resolve_config_file(_explicit_config.get())
        return read_config_file(path) if path is not None else {}


def resolve_config_file(explicit: Path | None = None) -> Path | None:
    """Return the config file to use, or None when there is none."""
    if explicit is not None:
        return _require_file(Path(explicit), "config file")
    from_env = os.environ.get(CONFIG_ENV_VAR, "").strip()
    if from_env:
        return _require_file(Path(from_env), f"config file from ${CONFIG_ENV_VAR}")
    default = Path.cwd() / DEFAULT_CONFIG_NAME
    return default if default.is_file() else None


def _require_file(path: Path, what: str) -> Path:
    path = path.expanduser()
    if not path.is_file():
        raise ConfigError(f"{what} {path} does not exist or is not a file")
    return path


def read_config_file(path: Path) -> dict[str, Any]:
    """Parse and validate a TOML config file; raise ConfigError naming file and field."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read config file: {exc}") from exc
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML: {exc}") from exc
    fields = BenchforgeSettings.model_fields
    for key, value in data.items():
        field = fields.get(key)
        if field is None:
            allowed = ", ".join(sorted(fields))
            raise ConfigError(f"{path}: unknown key '{key}' (allowed keys: {allowed})")
        try:
            TypeAdapter(cast(Any, field.annotation)).validate_python(value)
        except ValidationError as exc:
            reason = exc.errors()[0]["msg"]
            raise ConfigError(f"{path}: invalid value for '{key}': {reason}") from None
    return data


def load_settings(config_file: Path | None = None, **overrides: Any) -> BenchforgeSettings:
    """Build settings; ``overrides`` win over the environment, which wins over the file."""
    token = _explicit_config.set(Path(config_file) if config_file is not None else None)
    try:
        return BenchforgeSettings(**overrides)
    except ValidationError as exc:
        raise ConfigError(f"invalid benchforge settings: {_describe(exc)}") from None
    finally:
        _explicit_config.reset(token)


def _describe(exc: ValidationError) -> str:
    """Summarise a ValidationError without echoing input values (they may be secrets)."""
    parts = []
    for err in exc.errors():
        loc = ".".join(str(p) for p in err["loc"]) or "<root>"
        parts.append(f"'{loc}': {err['msg']}")
    return "; ".join(parts)
