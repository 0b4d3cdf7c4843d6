"""Which names carry secrets or privileges, in any table prefix, blog id, case or separator style.

One classifier for the policy (what may be read or written) and the masker (what is shown).
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

# Whole words of a name (`smtp_pass`, `apiKey`, `client-secret` → pass / api, key / client, secret).
_SECRET_WORDS = frozenset(
    {
        "pass",
        "passwd",
        "password",
        "passwords",
        "passphrase",
        "pwd",
        "secret",
        "secrets",
        "token",
        "tokens",
        "salt",
        "credential",
        "credentials",
        "apikey",
        "privatekey",
        "license",
        "licence",
        "totp",
        "hotp",
        "otp",
        "2fa",
        "mfa",
        "authorization",
    }
)
# Run-together spellings (`smtppassword`, `accesstoken`) and 2FA / reset material.
_SECRET_PARTS = (
    "password",
    "passwd",
    "passphrase",
    "secret",
    "token",
    "credential",
    "apikey",
    "privatekey",
    "twofactor",
    "two_factor",
    "googleauthenticator",
    "backup_codes",
    "recovery_codes",
    "activation_key",
)
# `…_key` names are keys (auth_key, license_key, stripe_live_key) except these field names.
_NOT_SECRET_KEYS = frozenset(
    {"key", "meta_key", "meta_compare_key", "cap_key", "sort_key", "cache_key", "option_key"}
)
# User meta that grants rights (any table prefix: wp_capabilities, wp_2_capabilities, x_user_level).
_PRIVILEGE_SUFFIXES = ("capabilities", "user_level")


def folded(value: str) -> str:
    """Width/accent/case-folded and trimmed, as a MySQL *_ci collation plus WordPress's trim() see it."""
    decomposed = unicodedata.normalize("NFKD", value)
    return "".join(c for c in decomposed if not unicodedata.combining(c)).casefold().strip()


def _spellings(name: str) -> tuple[str, ...]:
    """The name as the database compares it (case-folded), and with camelCase split into words
    (`apiKey` → `api_key`). Both count: MariaDB's `*_ci` collations match `wp_cAPABILITIES` to
    `wp_capabilities`, which the camelCase split alone would read as `wp_c_apabilities`."""
    return folded(name), folded(re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", name))


@lru_cache(maxsize=4096)  # outputs repeat the same few field names thousands of times
def is_secret_key(name: str) -> bool:
    """True for names whose values are secrets: passwords, tokens, keys, salts, licences, 2FA."""
    return any(_is_secret_spelling(spelling) for spelling in _spellings(name))


def _is_secret_spelling(snake: str) -> bool:
    words = [w for w in re.split(r"[^a-z0-9]+", snake) if w]
    if any(w in _SECRET_WORDS for w in words) or any(part in snake for part in _SECRET_PARTS):
        return True
    return len(words) > 1 and words[-1] in {"key", "keys"} and snake.strip("_") not in _NOT_SECRET_KEYS


def is_privilege_key(name: str) -> bool:
    """User meta / option names that define what a user may do (`*capabilities`, `*user_level`,
    `*user_roles`): changing one is a grant."""
    return any(key.endswith((*_PRIVILEGE_SUFFIXES, "user_roles")) for key in _spellings(name))
