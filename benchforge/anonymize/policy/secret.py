"""The HMAC key every pseudonym, fake and perturbation is derived from.

It comes from an environment variable named by the policy (``secret_env``), never from the policy
file: the policy is reviewed and published with the release, the key must not be. Whoever holds
the key can re-identify by recomputing pseudonyms of guessed values, and a short key can be
brute-forced the same way, so fewer than 16 bytes is refused. Errors name the variable, never
its value.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from benchforge.anonymize.policy.loader import LoadedPolicy
from benchforge.anonymize.policy.models import PolicyError

MIN_SECRET_BYTES = 16


def read_secret(loaded: LoadedPolicy, env: Mapping[str, str] | None = None) -> bytes:
    """The key (UTF-8 bytes of the variable's value) from ``env`` (default: the process
    environment). Missing, blank or shorter than 16 bytes -> PolicyError on ``secret_env``."""
    variables = os.environ if env is None else env
    name = loaded.policy.secret_env
    value = variables.get(name)
    if value is None or not value.strip():
        raise PolicyError(
            loaded.source,
            [
                (
                    "secret_env",
                    f"environment variable {name} is not set: export a random key of at least "
                    f"{MIN_SECRET_BYTES} bytes (e.g. `export {name}=$(openssl rand -hex 32)`) "
                    "and keep it out of the release",
                )
            ],
        )
    key = value.encode("utf-8")
    if len(key) < MIN_SECRET_BYTES:
        raise PolicyError(
            loaded.source,
            [
                (
                    "secret_env",
                    f"environment variable {name} holds {len(key)} bytes; at least "
                    f"{MIN_SECRET_BYTES} are needed (a short key can be brute-forced)",
                )
            ],
        )
    return key
