"""The pairing rules every format of structured output shares: which keys name a thing, which hold its
value, and when a value is hidden — its own key is secret, or it is the value of a name/value row
(`option_name` + `option_value`, `meta_key` + `meta_value`, `key` + `value`, `Field` + `Value`, in any
order and case) whose name is secret."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from wp_agent.masking.secret_names import is_secret_key

NAME_FIELDS = frozenset({"option_name", "meta_key", "key", "name", "setting", "field"})
VALUE_FIELDS = frozenset({"option_value", "meta_value", "value"})
MAX_DEPTH = 64


def role(key: object) -> str:
    """What a column or key is for, in any case (`Field`/`Value` as `wp <thing> get` prints them)."""
    return str(key).strip().casefold()


def names_a_thing(key: object) -> bool:
    return role(key) in NAME_FIELDS


def secret_pair(names: Iterable[str], keys: Iterable[object]) -> bool:
    """Whether a row is a name/value pair whose name is secret: `names` are the texts under its name
    keys, `keys` all its keys (a value key must be among them)."""
    return any(is_secret_key(name) for name in names) and any(role(k) in VALUE_FIELDS for k in keys)


def hidden(key: object, in_secret_pair: bool) -> bool:
    """Whether the value under `key` is masked (its key is secret, or it is a secret pair's value)."""
    return is_secret_key(str(key)) or (in_secret_pair and role(key) in VALUE_FIELDS)


def has_content(value: Any) -> bool:
    return value not in (None, "", [], {}) and not isinstance(value, bool)
