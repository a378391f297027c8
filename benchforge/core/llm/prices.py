"""Price table: USD per 1M input / output tokens per model, from ``prices.yaml``."""

from __future__ import annotations

from functools import lru_cache
from importlib import resources
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from benchforge.core.errors import ConfigError
from benchforge.core.yamlio import read_yaml


class ModelPrice(BaseModel):
    """USD per 1M tokens."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    input: float = Field(ge=0)
    output: float = Field(ge=0)
    cached_input: float | None = Field(default=None, ge=0)


class PriceTable(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    as_of: str
    currency: str = "USD"
    models: dict[str, ModelPrice]
    prefixes: dict[str, ModelPrice] = Field(default_factory=dict)

    def price(self, *names: str | None) -> ModelPrice | None:
        """Price of the first of ``names`` the table knows: an exact entry, else the longest
        matching prefix; None when none is known."""
        for name in names:
            if name is None:
                continue
            if name in self.models:
                return self.models[name]
            matches = [prefix for prefix in self.prefixes if name.startswith(prefix)]
            if matches:
                return self.prefixes[max(matches, key=len)]
        return None

    def cost(
        self,
        model: str | None,
        prompt_tokens: int | None,
        completion_tokens: int | None,
        *,
        cached_prompt_tokens: int = 0,
        response_model: str | None = None,
    ) -> float | None:
        """USD for one call; None when the model is not in the table or usage is unknown."""
        price = self.price(model, response_model)
        if price is None or prompt_tokens is None or completion_tokens is None:
            return None
        cached = min(max(cached_prompt_tokens, 0), prompt_tokens)
        cached_rate = price.cached_input if price.cached_input is not None else price.input
        usd = (
            (prompt_tokens - cached) * price.input
            + cached * cached_rate
            + completion_tokens * price.output
        ) / 1_000_000
        return round(usd, 10)


def load_price_table(path: Path | None = None) -> PriceTable:
    """Read a price table; the default is the ``prices.yaml`` shipped next to this module."""
    if path is None:
        return _default_price_table()
    return _parse(Path(path).read_text(encoding="utf-8"), str(path))


@lru_cache(maxsize=1)
def _default_price_table() -> PriceTable:
    text = (
        resources.files("benchforge.core.llm").joinpath("prices.yaml").read_text(encoding="utf-8")
    )
    return _parse(text, "benchforge/core/llm/prices.yaml")


def _parse(text: str, where: str) -> PriceTable:
    try:
        return PriceTable.model_validate(read_yaml(text))
    except ValidationError as exc:
        raise ConfigError(f"{where}: invalid price table: {exc}") from None
