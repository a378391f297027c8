"""Which lake files the roles see when the lake is larger than ``retrieval_limit``: the
``top_k`` whose descriptions are nearest the question (cosine similarity of embeddings from
the OpenAI-compatible endpoint, one request for all), or, in oracle mode, the files the task
names (``ORACLE_FILES_ENV``): retrieval taken out of the comparison."""

from __future__ import annotations

import math
from collections.abc import Sequence

from benchforge.agents.dsstar.calls import RoleModels
from benchforge.agents.dsstar.config import ORACLE_FILES_ENV, DsStarConfig
from benchforge.agents.dsstar.descriptions import FileDescription
from benchforge.agents.protocol import TaskEnvironment


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    norms = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    return dot / norms if norms else 0.0


def oracle_files(env: TaskEnvironment) -> list[str]:
    raw = env.env.get(ORACLE_FILES_ENV)
    if raw is None:
        raise ValueError(f"retrieval 'oracle' needs the task's files in {ORACLE_FILES_ENV}")
    return [line.strip() for line in raw.splitlines() if line.strip()]


def needs_retrieval(config: DsStarConfig, files: Sequence[str]) -> bool:
    return config.retrieval == "oracle" or len(files) > config.retrieval_limit


async def retrieve(
    env: TaskEnvironment,
    roles: RoleModels,
    config: DsStarConfig,
    question: str,
    described: Sequence[FileDescription],
) -> list[FileDescription]:
    """The descriptions to show, in lake order; all of them when the lake is small enough."""
    if config.retrieval == "oracle":
        wanted = set(oracle_files(env))
        return [d for d in described if d.path in wanted]
    if len(described) <= config.retrieval_limit:
        return list(described)
    texts = [question] + [f"{d.path}\n{d.text}" for d in described]
    embedding = await roles.view("retriever").embed(
        texts, model=config.embedding_model, role="retriever"
    )
    query, *vectors = embedding.vectors
    ranked = sorted(
        range(len(described)), key=lambda i: (-cosine(query, vectors[i]), described[i].path)
    )
    keep = set(ranked[: config.top_k])
    return [d for i, d in enumerate(described) if i in keep]
