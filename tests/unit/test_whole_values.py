"""Every validator built with `whole()` takes its samples and nothing more: not with a line end before or
after, not with another script's digits in place of ASCII ones (a property over all of them)."""

from __future__ import annotations

import importlib
import pkgutil
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

import wp_agent
from wp_agent.whole_values import REGISTERED, WholeValue, whole


def _all_validators() -> list[WholeValue]:
    """Import every module of the package (each registers its validators as it loads)."""
    for module in pkgutil.walk_packages(wp_agent.__path__, "wp_agent."):
        if not module.name.startswith(("wp_agent.mcp_server", "wp_agent.local_api")):
            importlib.import_module(module.name)
    return list(REGISTERED)


VALIDATORS = _all_validators()
LINE_ENDS = ("\n", "\r\n", "\r", "\u2028", "\u2029", "\x85", "\x0b", "\x0c")
# Digits of other scripts that Python's \d (and PHP's (int), for some) would read: Arabic-Indic,
# Devanagari, fullwidth, Mathematical bold.
OTHER_DIGITS = ("٠١٢٣٤٥٦٧٨٩", "०१२३४५६७८९", "０１２３４５６７８９", "𝟎𝟏𝟐𝟑𝟒𝟓𝟔𝟕𝟖𝟗")


def test_the_package_registers_its_validators() -> None:
    patterns = {v.pattern.pattern for v in VALIDATORS}
    assert len(VALIDATORS) >= 30
    assert r"[a-z0-9][a-z0-9-]{0,62}" in patterns  # the new site's slug (site create --slug)


@pytest.mark.parametrize("validator", VALIDATORS, ids=lambda v: v.pattern.pattern[:40])
@given(line_end=st.sampled_from(LINE_ENDS), before=st.booleans(), sample=st.data())
def test_no_validator_takes_a_line_end(
    validator: WholeValue, line_end: str, before: bool, sample: st.DataObject
) -> None:
    value = sample.draw(st.sampled_from(validator.samples))
    assert validator.fits(value)
    assert not validator.fits(line_end + value if before else value + line_end)


@pytest.mark.parametrize(
    "validator",
    [v for v in VALIDATORS if "\\d" in v.pattern.pattern or "0-9" in v.pattern.pattern],
    ids=lambda v: v.pattern.pattern[:40],
)
@given(script=st.sampled_from(OTHER_DIGITS), sample=st.data())
def test_no_validator_takes_another_scripts_digits(
    validator: WholeValue, script: str, sample: st.DataObject
) -> None:
    value = sample.draw(st.sampled_from([s for s in validator.samples if any(c.isdigit() for c in s)]))
    changed = re.sub(r"[0-9]", lambda m: script[int(m.group())], value)
    assert not validator.fits(changed)


def test_a_validator_is_written_without_anchors_and_with_samples() -> None:
    with pytest.raises(ValueError, match="without"):
        whole(r"^[a-z]+$", "abc")
    with pytest.raises(ValueError, match="sample"):
        whole(r"[a-z]+")
    with pytest.raises(ValueError, match="do not fit"):
        whole(r"[a-z]+", "ABC")
    REGISTERED[:] = VALIDATORS  # the refused ones above were never registered; keep the list as loaded
