"""The model catalog: retirement dates (kept in step with the pinned SDK's own list) and the warning."""

from __future__ import annotations

import re
from datetime import date, datetime

import pytest
from anthropic.resources.messages.messages import DEPRECATED_MODELS

from wp_agent.config import DEFAULT_MODEL
from wp_agent.model_catalog import WARNING_DAYS, catalog, catalog_key, model_info, retirement_warning


def _sdk_date(text: str) -> date:
    return datetime.strptime(re.sub(r"(\d)(st|nd|rd|th)", r"\1", text), "%B %d, %Y").date()


@pytest.mark.parametrize("model", sorted(DEPRECATED_MODELS))
def test_every_model_the_sdk_calls_deprecated_has_the_same_date_here(model: str) -> None:
    info = model_info(model)
    assert info is not None, f"{model} ({catalog_key(model)}) is missing from model_catalog.json"
    assert info.retires == _sdk_date(DEPRECATED_MODELS[model])


def test_the_default_model_is_in_the_catalog_and_not_retiring_soon() -> None:
    assert model_info(DEFAULT_MODEL) is not None
    assert retirement_warning(DEFAULT_MODEL, catalog().as_of) is None


@pytest.mark.parametrize(
    ("model", "key"),
    [
        ("claude-sonnet-4-5-20250929", "claude-sonnet-4-5"),
        ("us.anthropic.claude-sonnet-4-5-20250929-v1:0", "claude-sonnet-4-5"),
        ("anthropic.claude-3-5-haiku-20241022-v1:0", "claude-3-5-haiku"),
        ("claude-3-7-sonnet-latest", "claude-3-7-sonnet"),
        ("claude-opus-4-0", "claude-opus-4"),
        ("claude-opus-4-5", "claude-opus-4-5"),
    ],
)
def test_api_and_bedrock_names_find_the_same_entry(model: str, key: str) -> None:
    assert catalog_key(model) == key


def test_the_warning_starts_sixty_days_before_retirement() -> None:
    retires = date(2026, 11, 30)
    assert retirement_warning("claude-sonnet-4-5", date(2026, 9, 30)) is None  # 61 days
    warning = retirement_warning("claude-sonnet-4-5-20250929", date(2026, 10, 1))
    assert warning is not None
    assert f"あと{WARNING_DAYS}日" in warning
    assert "2026-11-30" in warning
    assert "あと0日" in (retirement_warning("claude-sonnet-4-5", retires) or "")
    assert "提供終了しています" in (retirement_warning("claude-sonnet-4-5", date(2026, 12, 1)) or "")


def test_unknown_models_and_unknown_dates_give_no_warning() -> None:
    assert retirement_warning("my-fine-tune", date(2026, 11, 29)) is None
    assert model_info("claude-sonnet-5-5") is not None
    assert retirement_warning("claude-sonnet-5-5", date(2030, 1, 1)) is None


def test_prices_give_a_cost_per_token_kind() -> None:
    info = model_info("claude-sonnet-4-5")
    assert info is not None
    assert info.prices is not None
    cost = info.prices.cost_usd(
        {"input_tokens": 1_000_000, "output_tokens": 100_000, "cache_read_input_tokens": 1_000_000}
    )
    assert cost == pytest.approx(3.0 + 1.5 + 0.3)
