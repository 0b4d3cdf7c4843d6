"""Values: JSON and PHP-serialized text inside a value (a cell, a JSON string, an option as stored),
walked by key at any depth."""

from __future__ import annotations

import json
import re
from typing import Any

from wp_agent.masking.pairs import MAX_DEPTH, has_content, hidden, names_a_thing, secret_pair
from wp_agent.masking.secret_names import is_secret_key
from wp_agent.masking.secret_values import MASK

SERIALIZED_START = re.compile(r"^(?:a:\d+:\{|O:\d+:\"|s:\d+:\"|i:-?\d+;|b:[01];|d:|N;)")


def mask_value(text: str, depth: int = 0) -> str:
    """One value (a cell, a JSON string, an argument): JSON and serialized PHP inside it are
    walked by key. Shapes (`sk_live_…`) are left to mask_text(), which callers run once over the
    whole text."""
    if depth > MAX_DEPTH or not text:
        return text
    stripped = text.strip()
    if stripped[:1] in "[{":
        try:
            parsed = json.loads(stripped)
        except ValueError:
            parsed = None
        if isinstance(parsed, dict | list):
            masked = _mask_json(parsed, depth + 1)
            return text if masked == parsed else json.dumps(masked, ensure_ascii=False, separators=(",", ":"))
    if SERIALIZED_START.match(stripped):
        rewritten = mask_serialized(stripped, depth + 1)
        if rewritten is not None:
            return rewritten
    return text


def _mask_json(value: Any, depth: int) -> Any:
    if depth > MAX_DEPTH:
        return MASK
    if isinstance(value, dict):
        pair = secret_pair([v for k, v in value.items() if names_a_thing(k) and isinstance(v, str)], value)
        out: dict[str, Any] = {}
        for key, item in value.items():
            out[key] = MASK if hidden(key, pair) and has_content(item) else _mask_json(item, depth + 1)
        return out
    if isinstance(value, list):
        return [_mask_json(item, depth + 1) for item in value]
    if isinstance(value, str):
        return mask_value(value, depth + 1)
    return value


class _SerializedError(ValueError):
    pass


class _Serialized:
    """Rewrites a PHP serialize() string, replacing values under secret keys; lengths are bytes."""

    def __init__(self, data: bytes, depth: int) -> None:
        self.data = data
        self.pos = 0
        self.depth = depth

    def _expect(self, token: bytes) -> None:
        if not self.data.startswith(token, self.pos):
            raise _SerializedError(f"expected {token!r} at {self.pos}")
        self.pos += len(token)

    def _until(self, stop: bytes) -> bytes:
        end = self.data.find(stop, self.pos)
        if end < 0:
            raise _SerializedError(f"missing {stop!r}")
        chunk = self.data[self.pos : end]
        self.pos = end + len(stop)
        return chunk

    def _string(self) -> bytes:
        length = int(self._until(b":"))
        self._expect(b'"')
        raw = self.data[self.pos : self.pos + length]
        if len(raw) != length:
            raise _SerializedError("short string")
        self.pos += length
        self._expect(b'";')
        return raw

    @staticmethod
    def _emit_string(raw: bytes) -> bytes:
        return b's:%d:"%s";' % (len(raw), raw)

    def value(self, level: int = 0) -> tuple[bytes, str | None]:
        """(rewritten bytes, the string value when it was a scalar string/int key)."""
        if level > MAX_DEPTH:
            raise _SerializedError("too deep")
        kind = self.data[self.pos : self.pos + 2]
        if kind == b"N;":
            self.pos += 2
            return b"N;", None
        if kind in (b"b:", b"i:", b"d:", b"r:", b"R:"):
            start = self.pos
            self.pos += 2
            scalar = self._until(b";")
            return self.data[start : self.pos], scalar.decode("utf-8", "replace")
        if kind == b"s:":
            self.pos += 2
            raw = self._string()
            text = raw.decode("utf-8", "replace")
            masked = mask_value(text, self.depth + level + 1)
            return self._emit_string(masked.encode("utf-8") if masked != text else raw), text
        if kind == b"E:":
            self.pos += 2
            return b"E:" + self._quoted_raw(b'";'), None
        if kind == b"a:":
            self.pos += 2
            count = int(self._until(b":"))
            return b"a:%d:" % count + self._members(count, level), None
        if kind == b"O:":
            self.pos += 2
            name = self._quoted_raw(b'":')
            count = int(self._until(b":"))
            return b"O:" + name + b"%d:" % count + self._members(count, level), None
        if kind == b"C:":  # custom serialization: opaque, masked whole when it could hold anything
            raise _SerializedError("custom serialized object")
        raise _SerializedError(f"unknown type {kind!r}")

    def _quoted_raw(self, end: bytes) -> bytes:
        """`<len>:"<bytes>"` plus `end`, copied as is (enum and class names)."""
        start = self.pos
        length = int(self._until(b":"))
        self._expect(b'"')
        self.pos += length
        self._expect(end)
        return self.data[start : self.pos]

    def _members(self, count: int, level: int) -> bytes:
        self._expect(b"{")
        parts: list[bytes] = []
        for _ in range(count):
            key_bytes, key = self.value(level + 1)
            value_bytes, _scalar = self.value(level + 1)
            # Object property names carry \0Class\0 / \0*\0 prefixes: the last part is the name.
            name = (key or "").rsplit("\0", 1)[-1]
            if is_secret_key(name) and value_bytes not in (b"N;", b's:0:"";', b"b:0;", b"a:0:{}"):
                value_bytes = self._emit_string(MASK.encode())
            parts.append(key_bytes + value_bytes)
        self._expect(b"}")
        return b"{" + b"".join(parts) + b"}"


def mask_serialized(text: str, depth: int) -> str | None:
    parser = _Serialized(text.encode("utf-8"), depth)
    try:
        rewritten, _ = parser.value()
    except (_SerializedError, ValueError):
        return None
    if parser.pos != len(parser.data):
        return None
    return rewritten.decode("utf-8", "replace")


def parses(text: str) -> bool:
    try:
        json.loads(text)
    except ValueError:
        return False
    return True
