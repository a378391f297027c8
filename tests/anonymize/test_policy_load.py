"""Loading policies: shipped ones load, every malformed input names its file, path and line, and
misspellings get a suggestion; the HMAC secret comes from the environment and is checked."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
import yaml

from benchforge.anonymize.policy.loader import (
    SCHEMA_PATH,
    LoadedPolicy,
    load_policy,
    policy_json_schema,
    policy_path,
    shipped_policies,
)
from benchforge.anonymize.policy.models import Fake, Keep, Perturb, PolicyError, Pseudonymize
from benchforge.anonymize.policy.secret import MIN_SECRET_BYTES, read_secret

VALID = """\
domain: crm
tables:
  accounts:
    primary_key: account_id
    columns:
      account_id: pseudonymize
      email: {rule: fake, provider: email, pii: direct}
      revenue: {rule: perturb, method: lsd, digits: 2}
      name: {rule: {rule: fake, provider: company}}
"""


def _write(tmp_path: Path, text: str, name: str = "policy.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def _problems(path: Path) -> list[tuple[str, str]]:
    with pytest.raises(PolicyError) as info:
        load_policy(path)
    assert str(path) in str(info.value)  # every error names the file
    return info.value.problems


def test_valid_policy_loads_with_its_hash_and_all_three_column_forms(tmp_path: Path) -> None:
    path = _write(tmp_path, VALID)
    loaded = load_policy(path)
    assert loaded.source == str(path)
    assert loaded.sha256 == hashlib.sha256(VALID.encode()).hexdigest()
    columns = loaded.policy.tables["accounts"].columns
    assert isinstance(columns["account_id"].rule, Pseudonymize)
    assert isinstance(columns["email"].rule, Fake) and columns["email"].pii == "direct"
    assert isinstance(columns["revenue"].rule, Perturb) and columns["revenue"].rule.digits == 2
    assert isinstance(columns["name"].rule, Fake) and columns["name"].rule.provider == "company"


def test_bad_yaml_reports_the_line(tmp_path: Path) -> None:
    path = _write(tmp_path, "domain: crm\ntables:\n  accounts:\n    columns: {id: keep\n")
    [(where, message)] = _problems(path)
    assert where == "line 5"
    assert message.startswith("not valid YAML")


def test_duplicate_key_is_an_error_with_both_lines(tmp_path: Path) -> None:
    text = "domain: crm\ntables:\n  t:\n    columns:\n      a: keep\n      a: scrub\n"
    [(where, message)] = _problems(_write(tmp_path, text))
    assert where == "line 6"
    assert "duplicate key 'a' (first on line 5)" in message


def test_unknown_rule_names_the_path_and_suggests(tmp_path: Path) -> None:
    text = VALID.replace("account_id: pseudonymize", "account_id: pseudonymise")
    [(where, message)] = _problems(_write(tmp_path, text))
    assert where == "tables.accounts.columns.account_id.rule"
    assert "unknown rule 'pseudonymise'; did you mean 'pseudonymize'?" in message
    assert "(line 6)" in message


def test_unknown_rule_in_flat_form(tmp_path: Path) -> None:
    text = VALID.replace("{rule: fake, provider: email", "{rule: faker, provider: email")
    [(where, message)] = _problems(_write(tmp_path, text))
    assert where == "tables.accounts.columns.email.rule"
    assert "did you mean 'fake'?" in message


def test_unknown_key_suggests_the_parameter(tmp_path: Path) -> None:
    text = VALID.replace("provider: email", "providr: email")
    problems = dict(_problems(_write(tmp_path, text)))
    assert problems["tables.accounts.columns.email.providr"].startswith(
        "unknown key 'providr'; did you mean 'provider'?"
    )
    assert (
        "required key 'provider' is missing" in problems["tables.accounts.columns.email.provider"]
    )


def test_bad_literal_in_nested_form_keeps_the_rule_segment(tmp_path: Path) -> None:
    text = VALID.replace("provider: company", "provider: compny")
    [(where, message)] = _problems(_write(tmp_path, text))
    assert where == "tables.accounts.columns.name.rule.provider"
    assert "did you mean 'company'?" in message


def test_unknown_top_level_and_table_keys(tmp_path: Path) -> None:
    text = VALID.replace("    primary_key:", "    primary_kee: account_id\n    primary_key:")
    text += "thresholds: {min_ks: 0.9}\n"
    problems = dict(_problems(_write(tmp_path, text)))
    assert "did you mean 'primary_key'?" in problems["tables.accounts.primary_kee"]
    assert "did you mean 'min_ks_complement'?" in problems["thresholds.min_ks"]


def test_stream_needs_key_and_lsd(tmp_path: Path) -> None:
    no_key = VALID.replace("digits: 2}", "digits: 2, stream: revenue}")
    [(where, message)] = _problems(_write(tmp_path, no_key, "a.yaml"))
    assert where == "tables.accounts.columns.revenue"
    assert "stream needs key" in message
    noise = VALID.replace(
        "method: lsd, digits: 2}", "method: noise, min: 0, key: [account_id], stream: s}"
    )
    [(_, message)] = _problems(_write(tmp_path, noise, "b.yaml"))
    assert "stream works with method lsd only" in message


def test_not_a_mapping_and_missing_file(tmp_path: Path) -> None:
    [(where, _)] = _problems(_write(tmp_path, "- a\n- b\n"))
    assert where == "(root)"
    [(where, _)] = _problems(tmp_path / "absent.yaml")
    assert where == "(file)"


def test_unknown_shipped_name_lists_the_shipped_ones() -> None:
    with pytest.raises(PolicyError) as info:
        load_policy("crmm")
    [(_, message)] = info.value.problems
    assert "did you mean 'crm'?" in message
    assert "ads, crm, enterprise" in message


def test_shipped_policies_load() -> None:
    assert shipped_policies() == ["ads", "crm", "enterprise"]
    for name in shipped_policies():
        loaded = load_policy(name)
        assert loaded.policy.domain == name
        assert loaded.sha256 == hashlib.sha256(policy_path(name).read_bytes()).hexdigest()


def test_the_crm_policy_gates_every_table_about_a_person() -> None:
    """People (contacts, leads, the vendor's users) and their activity rows are gated by the
    re-identification search; only companies, the catalog and reference lists are report-only."""
    policy = load_policy("crm").policy
    about_people = {
        "contacts",
        "leads",
        "users",
        "tasks",
        "events",
        "cases",
        "case_comments",
        "campaign_members",
    }
    assert about_people <= set(policy.tables)
    assert not about_people & set(policy.reidentification.report_only)


def test_schema_file_is_up_to_date() -> None:
    # regenerate with: python -c "from benchforge.anonymize.policy import
    # write_policy_json_schema; write_policy_json_schema()"
    assert SCHEMA_PATH.read_text() == policy_json_schema()


def test_schema_accepts_shipped_policies_and_rejects_a_misspelt_rule() -> None:
    import jsonschema  # a declared test dependency (pyproject.toml, dev)

    schema = json.loads(policy_json_schema())
    for name in shipped_policies():
        jsonschema.validate(yaml.safe_load(policy_path(name).read_text()), schema)
    bad = {"domain": "x", "tables": {"t": {"columns": {"c": "pseudonymise"}}}}
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(bad, schema)


# ---------------------------------------------------------------- secret


def _loaded(tmp_path: Path) -> LoadedPolicy:
    return load_policy(_write(tmp_path, VALID + "secret_env: MY_ANON_KEY\n"))


def test_secret_is_read_from_the_named_variable(tmp_path: Path) -> None:
    key = "k" * MIN_SECRET_BYTES
    assert read_secret(_loaded(tmp_path), {"MY_ANON_KEY": key}) == key.encode()


def test_missing_secret_names_file_field_and_variable(tmp_path: Path) -> None:
    loaded = _loaded(tmp_path)
    with pytest.raises(PolicyError) as info:
        read_secret(loaded, {"BENCHFORGE_ANON_SECRET": "x" * 32})  # the default is not read
    [(where, message)] = info.value.problems
    assert where == "secret_env"
    assert "MY_ANON_KEY is not set" in message
    assert loaded.source in str(info.value)


def test_short_secret_is_refused_without_echoing_it(tmp_path: Path) -> None:
    short = "s3cr3t-value"
    with pytest.raises(PolicyError) as info:
        read_secret(_loaded(tmp_path), {"MY_ANON_KEY": short})
    [(where, message)] = info.value.problems
    assert where == "secret_env"
    assert f"holds {len(short)} bytes" in message
    assert short not in str(info.value)


def test_default_secret_variable(tmp_path: Path) -> None:
    loaded = load_policy(_write(tmp_path, VALID))
    assert isinstance(loaded.policy.tables["accounts"].columns["account_id"].rule, Pseudonymize)
    assert not isinstance(loaded.policy.tables["accounts"].columns["email"].rule, Keep)
    secret = "0123456789abcdef0123"
    assert read_secret(loaded, {"BENCHFORGE_ANON_SECRET": secret}) == secret.encode()
