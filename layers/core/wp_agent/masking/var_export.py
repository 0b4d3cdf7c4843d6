"""PHP var_export() output (`wp option get` of an array or object), masked by key and by name/value
row, an array at a time."""

from __future__ import annotations

import re
from typing import NamedTuple

from wp_agent.masking.pairs import hidden, names_a_thing, secret_pair
from wp_agent.masking.secret_values import MASK
from wp_agent.masking.values import mask_value

# var_export() of an array, a stdClass (PHP 7.3+) or another object.
VAR_EXPORT_START = re.compile(
    r"^(?:array \(|\(object\) array\(|\\?[A-Za-z_][A-Za-z0-9_\\]*::__set_state\(array\()"
)
# Values that hold nothing to hide (booleans too, as in JSON).
_PHP_EMPTY = frozenset({"NULL", "''", "true", "false"})
_PHP_ENTRY = re.compile(r"^(\s*)('(?:[^'\\]|\\.)*'|-?\d+)\s*=>\s*(.*)$")


class _PhpEntry(NamedTuple):
    """One `'key' => value,` of var_export() output and the lines its value takes."""

    at: int
    end: int  # the first line after the value's closing `,`
    indent: str
    key: str
    value: str  # what follows `=>` on the entry's own line


def mask_var_export(lines: list[str]) -> list[str]:
    """var_export() output masked by key and by name/value row, an array at a time: a secret key's
    value (scalar, multi-line string or nested array) becomes `'***'` whatever its type."""
    out: list[str | None] = list(lines)
    _mask_php_region(lines, 0, len(lines), out)
    return [line for line in out if line is not None]


def _mask_php_region(lines: list[str], start: int, stop: int, out: list[str | None]) -> None:
    entries: list[_PhpEntry] = []
    index = start
    while index < stop:
        match = _PHP_ENTRY.match(lines[index])
        if match is None:
            index += 1
            continue
        indent, key, value = match.groups()
        end = _php_value_end(lines, index, stop, match.start(3))
        entries.append(_PhpEntry(index, end, indent, _php_string(key) or key, value))
        index = end
    # Entries found at one level are the members of one array (nested ones are inside a value).
    pair = secret_pair(
        (_php_string(e.value.rstrip(",")) or "" for e in entries if names_a_thing(e.key)),
        [e.key for e in entries],
    )
    for entry in entries:
        if hidden(entry.key, pair) and entry.value.strip().rstrip(",") not in _PHP_EMPTY:
            out[entry.at] = lines[entry.at][: lines[entry.at].index("=>")] + f"=> '{MASK}',"
            for i in range(entry.at + 1, entry.end):
                out[i] = None
            continue
        shown = _php_string(entry.value.rstrip(","))
        if shown is not None and entry.value.endswith(","):
            masked = mask_value(shown)
            if masked != shown:
                escaped = masked.replace("\\", "\\\\").replace("'", "\\'")
                out[entry.at] = lines[entry.at][: -len(entry.value)] + f"'{escaped}',"
        _mask_php_region(lines, entry.at + 1, entry.end, out)


def _php_value_end(lines: list[str], at: int, stop: int, column: int) -> int:
    """The line after the `,` that ends a value starting at `column` of line `at`: the first comma
    outside strings and parentheses (strings may span lines; `\\'` and `\\\\` are escapes)."""
    depth = 0
    quote: str | None = None
    index, position = at, column
    while index < stop:
        line = lines[index]
        while position < len(line):
            char = line[position]
            if quote is not None:
                if char == "\\":
                    position += 1
                elif char == quote:
                    quote = None
            elif char in "'\"":
                quote = char
            elif char == "(":
                depth += 1
            elif char == ")":
                depth -= 1
            elif char == "," and depth <= 0:
                return index + 1
            position += 1
        index, position = index + 1, 0
    return stop  # never closed: the value runs to the end


def _php_string(literal: str) -> str | None:
    """The text of a one-line single-quoted PHP literal (`'it\\'s'`), else None."""
    literal = literal.strip()
    if len(literal) < 2 or literal[0] != "'" or literal[-1] != "'":
        return None
    inner = literal[1:-1]
    if re.search(r"(?<!\\)(?:\\\\)*'", inner):  # an unescaped quote: more than one literal
        return None
    return re.sub(r"\\([\\'])", r"\1", inner)
