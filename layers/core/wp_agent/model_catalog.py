"""Known Claude models: retirement dates and prices (model_catalog.json), and the warning before a
configured model retires.

A model id may be given as the API names it (`claude-sonnet-4-5`, `claude-sonnet-4-5-20250929`) or as
Bedrock names it (`us.anthropic.claude-sonnet-4-5-20250929-v1:0`): both find the same entry.
"""

from __future__ import annotations

import json
import re
from datetime import date
from functools import cache
from importlib import resources

from pydantic import BaseModel, ConfigDict, Field

# How long before its retirement a configured model is warned about.
WARNING_DAYS = 60

_BEDROCK_PREFIX = re.compile(r"^(?:(?:us|eu|apac|global|jp|au)\.)?anthropic\.")
_BEDROCK_VERSION = re.compile(r"-v\d+(?::\d+)?$")
_SNAPSHOT_DATE = re.compile(r"-(?:\d{8}|latest)$")
_ZERO_MINOR = re.compile(r"(-\d+)-0$")  # claude-opus-4-0 is claude-opus-4


class Prices(BaseModel):
    """USD per million tokens."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    input: float = Field(ge=0)
    output: float = Field(ge=0)
    cache_write: float = Field(ge=0)
    cache_read: float = Field(ge=0)

    def cost_usd(self, usage: dict[str, int]) -> float:
        per_token = 1 / 1_000_000
        return per_token * (
            self.input * usage.get("input_tokens", 0)
            + self.output * usage.get("output_tokens", 0)
            + self.cache_write * usage.get("cache_creation_input_tokens", 0)
            + self.cache_read * usage.get("cache_read_input_tokens", 0)
        )


class ModelInfo(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    retires: date | None = None  # None: no retirement announced, or unknown to us
    prices: Prices | None = None  # None: unknown


class ModelCatalog(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)
    about: str = Field(alias="_about")
    as_of: date
    models: dict[str, ModelInfo]


@cache
def catalog() -> ModelCatalog:
    text = resources.files("wp_agent").joinpath("model_catalog.json").read_text(encoding="utf-8")
    return ModelCatalog.model_validate(json.loads(text))


def catalog_key(model: str) -> str:
    """The catalog's name for a model id: Bedrock's prefix and version and a snapshot date removed."""
    name = _BEDROCK_VERSION.sub("", _BEDROCK_PREFIX.sub("", model.strip().lower()))
    return _ZERO_MINOR.sub(r"\1", _SNAPSHOT_DATE.sub("", name))


def model_info(model: str) -> ModelInfo | None:
    """The catalog entry of `model`, or None when the catalog does not know it."""
    return catalog().models.get(catalog_key(model))


def retirement_warning(model: str, today: date) -> str | None:
    """A Japanese warning when `model` retires within WARNING_DAYS of `today` or has retired; else None.

    An unknown model or one without an announced date gives None (there is nothing to warn about).
    """
    info = model_info(model)
    if info is None or info.retires is None:
        return None
    days_left = (info.retires - today).days
    if days_left < 0:
        return (
            f"モデル「{model}」は {info.retires.isoformat()} に提供終了しています。"
            "ANTHROPIC_MODEL を現行のモデルに変更してください。"
        )
    if days_left <= WARNING_DAYS:
        return (
            f"モデル「{model}」は {info.retires.isoformat()} に提供終了予定です（あと{days_left}日）。"
            "ANTHROPIC_MODEL を後継のモデルに切り替え、`wp-agent eval` で評価してから移行してください。"
        )
    return None
