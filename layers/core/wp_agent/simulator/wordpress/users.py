"""User lookups as WP-CLI's user fetcher does them, and password hashing for stored users."""

from __future__ import annotations

import base64
import hashlib
import re

from wp_agent.simulator.model import Network, UserRow

_EMAIL = re.compile(r"^[a-zA-Z0-9.!#$%&'*+/=?^_`{|}~-]+@[a-zA-Z0-9-]+(\.[a-zA-Z0-9-]+)+$")
_PHPASS_ALPHABET = str.maketrans("+/=", "./.")


def hash_password(plain: str) -> str:
    """A phpass-shaped hash ($P$B + 30 chars), deterministic for a given password."""
    digest = base64.b64encode(hashlib.sha256(plain.encode("utf-8")).digest()).decode("ascii")
    return "$P$B" + digest.translate(_PHPASS_ALPHABET)[:30]


def is_email(value: str) -> bool:
    return bool(_EMAIL.match(value)) and len(value) >= 6


def find_user(network: Network, reference: str) -> UserRow | None:
    """`WP_CLI\\Fetchers\\User::get`: numeric → ID, email-looking → email then login, else login."""
    if reference.strip().isdigit():
        return network.user(int(reference))
    if is_email(reference):
        for user in network.users:
            if user["user_email"] == reference:
                return user
    for user in network.users:
        if user["user_login"] == reference:
            return user
    return None


def user_roles(user: UserRow, blog_id: int) -> list[str]:
    return list(user["roles"].get(str(blog_id), []))


def is_member(user: UserRow, blog_id: int) -> bool:
    return str(blog_id) in user["roles"]


ROLES: dict[str, str] = {
    "administrator": "Administrator",
    "editor": "Editor",
    "author": "Author",
    "contributor": "Contributor",
    "subscriber": "Subscriber",
}

USER_LEVELS = {"administrator": 10, "editor": 7, "author": 2, "contributor": 1, "subscriber": 0}
