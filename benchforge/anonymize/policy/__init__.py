"""The anonymization policy: its model, loading with actionable errors, the check against a
warehouse, the HMAC secret, the PII detector and the drafter."""

from benchforge.anonymize.policy.check import PolicyCheck, check_policy
from benchforge.anonymize.policy.draft import draft_policy
from benchforge.anonymize.policy.loader import (
    LoadedPolicy,
    load_policy,
    parse_policy,
    policy_json_schema,
    shipped_policies,
    write_policy_json_schema,
)
from benchforge.anonymize.policy.models import Policy, PolicyError
from benchforge.anonymize.policy.pii import detect_pii
from benchforge.anonymize.policy.secret import read_secret

__all__ = [
    "LoadedPolicy",
    "Policy",
    "PolicyCheck",
    "PolicyError",
    "check_policy",
    "detect_pii",
    "draft_policy",
    "load_policy",
    "parse_policy",
    "policy_json_schema",
    "read_secret",
    "shipped_policies",
    "write_policy_json_schema",
]
