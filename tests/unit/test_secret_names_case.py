"""Mixed-case names that a camelCase split reads as other words still count as what the database
sees: MariaDB's *_ci collations match `wp_cAPABILITIES` to `wp_capabilities` (on real WordPress 6.1
`user meta update 4 wp_cAPABILITIES '{"administrator":true}' --format=json` made a subscriber an
administrator while the policy allowed it)."""

from __future__ import annotations

import pytest

from wp_agent.masking.secret_names import is_privilege_key, is_secret_key
from wp_agent.policy import CommandPolicy


@pytest.mark.parametrize("name", ["wp_cAPABILITIES", "wp_2_cAPABILITIES", "wp_uSER_LEVEL", "wp_uSER_rOLES"])
def test_privilege_keys_in_any_case(name: str) -> None:
    assert is_privilege_key(name)


@pytest.mark.parametrize(
    "name", ["mAILSERVER_pASS", "sESSION_tOKENS", "smtp_pASSWORD", "apiKey", "stripeSecret"]
)
def test_secret_keys_in_any_case(name: str) -> None:
    assert is_secret_key(name)


@pytest.mark.parametrize("name", ["blogname", "nickname", "first_name", "pageOnFront", "meta_key"])
def test_ordinary_names_stay_ordinary(name: str) -> None:
    assert not is_secret_key(name)
    assert not is_privilege_key(name)


@pytest.mark.parametrize(
    "command",
    [
        "user meta update 4 wp_cAPABILITIES '{\"administrator\":true}' --format=json",
        "user meta update 4 wp_uSER_LEVEL 10",
        "option get mAILSERVER_pASS",
    ],
)
def test_the_policy_blocks_them(command: str) -> None:
    assert CommandPolicy().classify(command).blocked
