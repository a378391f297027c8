"""Held-out seeds: the data a DE task is scored on, which its agent never sees.

An agent sees its task's dataset (domain spec, scale, *visible* seed) and can query it, so it
could compute every answer table and ship it as constants. Scoring on a dataset regenerated
from the same spec and scale with another seed defeats that: a correct pipeline generalizes,
constants, row-id filters and hard-coded anomaly lists do not. The held-out seed is derived
from a secret (the ``heldout_secret`` setting, else a random key created once in the artifact
store) so that neither the task files nor the code reveal it::

    seed = heldout_seed(heldout_secret(settings), "crm", 0.1, visible_seed=7)
"""

from __future__ import annotations

import hashlib
import hmac
import secrets

from benchforge.core.artifacts import LAYOUT, open_store
from benchforge.core.settings import BenchforgeSettings

_SEED_SPACE = 2**31 - 1


def heldout_secret(settings: BenchforgeSettings) -> bytes:
    """The configured secret, else the artifact store's key (created on first use)."""
    if settings.heldout_secret is not None:
        return settings.heldout_secret.get_secret_value().encode()
    store = open_store(settings=settings)
    if not store.exists(LAYOUT.HELDOUT_SECRET):
        store.put_bytes(LAYOUT.HELDOUT_SECRET, secrets.token_hex(32).encode())
    return store.get_bytes(LAYOUT.HELDOUT_SECRET).strip()


def heldout_seed(secret: bytes, domain: str, scale: float, visible_seed: int) -> int:
    """A seed in [1, 2^31 - 1] that differs from ``visible_seed``, a pure function of its
    arguments (so the held-out gold is built once and cached)."""
    message = f"{domain}|{scale:g}|{visible_seed}".encode()
    digest = hmac.new(secret, message, hashlib.sha256).digest()
    seed = int.from_bytes(digest[:8], "big") % _SEED_SPACE + 1
    return seed if seed != visible_seed else seed % _SEED_SPACE + 1
