"""Output that is not one document, line by line: YAML `key: value` entries (a name/value pair being the
entries of one mapping, in any order), JSON lines, and `name,value` rows printed without a header."""

from __future__ import annotations

import re
from typing import NamedTuple

from wp_agent.masking.pairs import hidden, names_a_thing, secret_pair
from wp_agent.masking.secret_names import is_secret_key
from wp_agent.masking.secret_values import MASK
from wp_agent.masking.values import mask_value, parses

_YAML_PAIR = re.compile(r"^(\s*(?:-[ \t]+)?)([A-Za-z_][A-Za-z0-9_\-.]{0,79}):([ \t]*)(.*)$")
_YAML_BLOCK = re.compile(r"^[|>][-+0-9]*$")
# `post_password,Hunter2` / `post_password<TAB>Hunter2`: a name/value row without its header line.
_HEADERLESS_ROW = re.compile(r"^([A-Za-z_][A-Za-z0-9_\-.]{0,79})([,\t])(.*)$")


class _YamlEntry(NamedTuple):
    """One `key: value` line of YAML and the lines its value goes on over."""

    at: int
    end: int  # the first line after the value (block scalar, nested content, quoted lines)
    indent: str  # with a list item's `- `
    key: str
    space: str
    value: str

    @property
    def opens_item(self) -> bool:
        return "-" in self.indent

    @property
    def column(self) -> int:
        return len(self.indent)


def mask_lines(lines: list[str]) -> list[str]:
    """Line by line: JSON lines, headerless `name,value` rows, and YAML `key: value` entries,
    a name/value pair being the entries of one mapping (list item) in any order."""
    out: list[str | None] = list(lines)  # None: a line of a masked value, left out
    _mask_region(lines, 0, len(lines), out)
    return [line for line in out if line is not None]


def _mask_region(lines: list[str], start: int, stop: int, out: list[str | None]) -> None:
    entries: list[_YamlEntry | None] = []  # None: a line that ends a mapping
    index = start
    while index < stop:
        line = lines[index]
        match = _YAML_PAIR.match(line)
        if match is not None:
            indent, key, space, value = match.groups()
            end = _value_end(lines, index, stop, len(indent), value)
            entries.append(_YamlEntry(index, end, indent, key, space, value))
            index = end
            continue
        if line.strip() and not line.lstrip().startswith("#"):
            entries.append(None)
        index = _mask_plain_line(lines, index, stop, out)
    for mapping in _mappings(entries):
        pair = secret_pair(
            (_yaml_name(lines, e) for e in mapping if names_a_thing(e.key)), [e.key for e in mapping]
        )
        for entry in mapping:
            rest = range(entry.at + 1, entry.end)
            if hidden(entry.key, pair) and (entry.value.strip() or any(lines[i].strip() for i in rest)):
                # quoted: a bare `***` would read as a YAML alias and break the document
                out[entry.at] = f"{entry.indent}{entry.key}:{entry.space or ' '}'{MASK}'"
                for i in rest:
                    out[i] = None
                continue
            out[entry.at] = f"{entry.indent}{entry.key}:{entry.space}{_mask_yaml_scalar(entry.value)}"
            _mask_region(lines, entry.at + 1, entry.end, out)


def _yaml_name(lines: list[str], entry: _YamlEntry) -> str:
    """A name's text: quoted, plain, or a block scalar (`option_name: |-` then the name)."""
    value = entry.value.strip()
    if _YAML_BLOCK.match(value):
        return " ".join(lines[i].strip() for i in range(entry.at + 1, entry.end)).strip()
    return value.strip("'\"")


def _value_end(lines: list[str], at: int, stop: int, column: int, value: str) -> int:
    """Where a YAML value ends: after its closing quote, or before the next line that is not more
    indented than its key (a `- ` line at the key's indent continues an empty value: `key:\\n- a`)."""
    quote = _unclosed_quote(value)
    end = at + 1
    if quote is not None:
        while end < stop:
            end += 1
            if _quote_closes(lines[end - 1], quote):
                break
        return end
    while end < stop:
        line = lines[end]
        depth = len(line) - len(line.lstrip())
        nested_list = not value.strip() and depth == column and line.lstrip().startswith("-")
        if line.strip() and depth <= column and not nested_list:
            break
        end += 1
    while end > at + 1 and not lines[end - 1].strip():  # trailing blank lines are nobody's
        end -= 1
    return end


def _unclosed_quote(value: str) -> str | None:
    """The quote a YAML scalar opens and does not close on its first line."""
    stripped = value.strip()
    if stripped[:1] not in ("'", '"'):
        return None
    return None if _quote_closes(stripped[1:], stripped[0]) else stripped[0]


def _quote_closes(text: str, quote: str) -> bool:
    """Whether `text` (inside a quoted scalar) holds its closing quote: `\\"` and `''` are escapes."""
    index = 0
    while index < len(text):
        char = text[index]
        if quote == '"' and char == "\\":
            index += 2
            continue
        if char == quote:
            if quote == "'" and text[index + 1 : index + 2] == "'":
                index += 2
                continue
            return True
        index += 1
    return False


def _mappings(entries: list[_YamlEntry | None]) -> list[list[_YamlEntry]]:
    """Entries grouped by mapping: a list item's `- `, another indent or another line ends one."""
    groups: list[list[_YamlEntry]] = []
    group: list[_YamlEntry] = []
    for entry in entries:
        if entry is None or (group and (entry.opens_item or entry.column != group[0].column)):
            if group:
                groups.append(group)
            group = []
        if entry is not None:
            group.append(entry)
    if group:
        groups.append(group)
    return groups


def _mask_plain_line(lines: list[str], index: int, stop: int, out: list[str | None]) -> int:
    """A line that is not YAML `key: value`: JSON, or a `name,value` row printed without its header
    (whose quoted value may go on over lines); returns the index of the next line."""
    line = lines[index]
    stripped = line.strip()
    if stripped[:1] in "[{" and parses(stripped):
        out[index] = line.replace(stripped, mask_value(stripped), 1)
        return index + 1
    row = _HEADERLESS_ROW.match(line)
    if row is None or not is_secret_key(row.group(1)) or not row.group(3).strip():
        out[index] = mask_value(line) if stripped else line
        return index + 1
    out[index] = row.group(1) + row.group(2) + MASK
    index += 1
    if row.group(3).count('"') % 2:  # a quoted CSV cell goes on until a line closes it
        while index < stop:
            out[index] = None
            index += 1
            if lines[index - 1].count('"') % 2:
                break
    return index


def _mask_yaml_scalar(value: str) -> str:
    """A YAML scalar, unquoted first (`'a:1:{…}'` holds a serialized value; '' is a quote)."""
    if len(value) >= 2 and value[0] == value[-1] == "'":
        inner = value[1:-1].replace("''", "'")
        return "'" + mask_value(inner).replace("'", "''") + "'"
    if len(value) >= 2 and value[0] == value[-1] == '"':
        return '"' + mask_value(value[1:-1]) + '"'
    return mask_value(value)
