"""Tests for benchforge.core.settings: sources, precedence, config-file errors, secret hiding."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from benchforge.core.errors import BenchforgeError, ConfigError
from benchforge.core.settings import BenchforgeSettings, load_settings


@pytest.fixture(autouse=True)
def _isolated(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No BENCHFORGE_* variables from the caller; cwd without a benchforge.toml."""
    for name in list(os.environ):
        if name.startswith("BENCHFORGE_"):
            monkeypatch.delenv(name)
    monkeypatch.chdir(tmp_path)


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def test_defaults() -> None:
    s = load_settings()
    assert s.artifact_root == "./artifacts"
    assert s.s3_endpoint_url is None
    assert s.s3_region == "us-east-1"
    assert s.aws_access_key_id is None and s.aws_secret_access_key is None
    assert s.openai_base_url is None and s.openai_api_key is None


def test_env_overrides_defaults(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BENCHFORGE_ARTIFACT_ROOT", "s3://bucket/prefix")
    monkeypatch.setenv("BENCHFORGE_S3_REGION", "eu-west-1")
    monkeypatch.setenv("BENCHFORGE_OPENAI_API_KEY", "sk-from-env")
    s = load_settings()
    assert s.artifact_root == "s3://bucket/prefix"
    assert s.s3_region == "eu-west-1"
    assert s.openai_api_key is not None
    assert s.openai_api_key.get_secret_value() == "sk-from-env"


def test_empty_env_value_is_ignored(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BENCHFORGE_S3_ENDPOINT_URL", "")
    assert load_settings().s3_endpoint_url is None


def test_explicit_config_file(tmp_path: Path) -> None:
    (tmp_path / "conf").mkdir()
    cfg = write(
        tmp_path / "conf" / "x.toml",
        'artifact_root = "/data/artifacts"\ns3_endpoint_url = "http://localhost:9000"\n'
        'aws_access_key_id = "AKIA"\n',
    )
    s = load_settings(cfg)
    assert s.artifact_root == "/data/artifacts"
    assert s.s3_endpoint_url == "http://localhost:9000"
    assert s.aws_access_key_id is not None
    assert s.aws_access_key_id.get_secret_value() == "AKIA"


def test_config_file_from_env_var(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cfg = write(tmp_path / "elsewhere.toml", 's3_region = "ap-south-1"\n')
    monkeypatch.setenv("BENCHFORGE_CONFIG", str(cfg))
    assert load_settings().s3_region == "ap-south-1"
    # The env var is also honoured when the model is built directly.
    assert BenchforgeSettings().s3_region == "ap-south-1"


def test_config_file_in_cwd_is_used(tmp_path: Path) -> None:
    write(tmp_path / "benchforge.toml", 'openai_base_url = "http://llm.local/v1"\n')
    assert load_settings().openai_base_url == "http://llm.local/v1"


def test_explicit_file_beats_env_var_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BENCHFORGE_CONFIG", str(write(tmp_path / "a.toml", 's3_region = "a"\n')))
    write(tmp_path / "benchforge.toml", 's3_region = "cwd"\n')
    assert load_settings().s3_region == "a"
    assert load_settings(write(tmp_path / "b.toml", 's3_region = "b"\n')).s3_region == "b"


def test_precedence_kwargs_env_file_defaults(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cfg = write(
        tmp_path / "p.toml",
        'artifact_root = "from-file"\ns3_region = "from-file"\n'
        's3_endpoint_url = "http://from-file"\n',
    )
    monkeypatch.setenv("BENCHFORGE_ARTIFACT_ROOT", "from-env")
    monkeypatch.setenv("BENCHFORGE_S3_REGION", "from-env")
    s = load_settings(cfg, artifact_root="from-kwarg")
    assert s.artifact_root == "from-kwarg"  # kwargs > env > file
    assert s.s3_region == "from-env"  # env > file
    assert s.s3_endpoint_url == "http://from-file"  # file > default
    assert s.openai_base_url is None  # default


def test_missing_explicit_config_file(tmp_path: Path) -> None:
    missing = tmp_path / "nope.toml"
    with pytest.raises(ConfigError, match=r"nope\.toml"):
        load_settings(missing)


def test_missing_config_from_env_var(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BENCHFORGE_CONFIG", str(tmp_path / "gone.toml"))
    with pytest.raises(ConfigError, match=r"BENCHFORGE_CONFIG.*gone\.toml"):
        load_settings()


@pytest.mark.parametrize(
    ("text", "field", "reason"),
    [
        ('artifact_root = "unterminated\n', None, "invalid TOML"),
        ('artifact_rot = "./x"\n', "artifact_rot", "unknown key"),
        ("s3_region = 42\n", "s3_region", "valid string"),
        ("aws_secret_access_key = [1, 2]\n", "aws_secret_access_key", "invalid value"),
        ('[s3]\nregion = "x"\n', "s3", "unknown key"),
    ],
)
def test_malformed_config_file_names_file_and_field(
    tmp_path: Path, text: str, field: str | None, reason: str
) -> None:
    cfg = write(tmp_path / "broken.toml", text)
    with pytest.raises(ConfigError) as excinfo:
        load_settings(cfg)
    message = str(excinfo.value)
    assert str(cfg) in message
    assert reason in message
    if field is not None:
        assert f"'{field}'" in message
    assert isinstance(excinfo.value, BenchforgeError)


def test_malformed_cwd_config_raises_on_direct_construction(tmp_path: Path) -> None:
    write(tmp_path / "benchforge.toml", "s3_region = 1\n")
    with pytest.raises(ConfigError, match="s3_region"):
        BenchforgeSettings()


def test_unknown_override_is_config_error() -> None:
    with pytest.raises(ConfigError, match="artifact_rot"):
        load_settings(artifact_rot="x")


def test_secrets_hidden_in_repr_str_and_dump(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cfg = write(tmp_path / "s.toml", 'aws_secret_access_key = "file-secret-123"\n')
    monkeypatch.setenv("BENCHFORGE_OPENAI_API_KEY", "env-secret-456")
    s = load_settings(cfg, aws_access_key_id="kwarg-secret-789")
    rendered = [repr(s), str(s), s.model_dump_json(), repr(s.model_dump())]
    for text in rendered:
        for secret in ("file-secret-123", "env-secret-456", "kwarg-secret-789"):
            assert secret not in text
    assert s.aws_secret_access_key is not None
    assert s.aws_secret_access_key.get_secret_value() == "file-secret-123"


def test_invalid_secret_value_not_echoed_in_error() -> None:
    with pytest.raises(ConfigError) as excinfo:
        load_settings(openai_api_key=["super-secret-value"])
    assert "openai_api_key" in str(excinfo.value)
    assert "super-secret-value" not in str(excinfo.value)


def test_settings_are_immutable() -> None:
    s = load_settings()
    with pytest.raises(ValueError):
        s.artifact_root = "elsewhere"  # type: ignore[misc]
