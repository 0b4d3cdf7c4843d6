"""Secrets in structured WP-CLI output, masked by key at any depth and by value shape.

Covers what WP-CLI prints: JSON (`--format=json`, nested option values), PHP-serialized values
(option and meta values as stored), tab-separated tables (`--format=table` without a terminal),
CSV, YAML, and PHP var_export() (`option get` of an array). A value is masked when its key is a
secret name (`secret`, `client_secret`, `api_key`, `password`, `pass`, `token`, `license`, …), when
it is the value of a name/value row whose name is secret (`option_name` + `option_value`,
`meta_key` + `meta_value`, `key` + `value`, `Field` + `Value`, in any order: paired by row, list
item or array), or when it has a secret's shape (`sk_live_…`, PEM).
"""

from __future__ import annotations

import csv
import io
import json
import re
from typing import Any, NamedTuple

from wp_agent.masking.secret_names import is_secret_key
from wp_agent.masking.secret_values import MASK, mask_pem_blocks

_NAME_FIELDS = frozenset({"option_name", "meta_key", "key", "name", "setting", "field"})
_VALUE_FIELDS = frozenset({"option_value", "meta_value", "value"})
_MAX_DEPTH = 64
_SERIALIZED_START = re.compile(r"^(?:a:\d+:\{|O:\d+:\"|s:\d+:\"|i:-?\d+;|b:[01];|d:|N;)")
_HEADER_CELL = re.compile(r"^[A-Za-z_][A-Za-z0-9_\- ]{0,63}$")
_YAML_PAIR = re.compile(r"^(\s*(?:-[ \t]+)?)([A-Za-z_][A-Za-z0-9_\-.]{0,79}):([ \t]*)(.*)$")
# var_export() of an array, a stdClass (PHP 7.3+) or another object.
_VAR_EXPORT_START = re.compile(
    r"^(?:array \(|\(object\) array\(|\\?[A-Za-z_][A-Za-z0-9_\\]*::__set_state\(array\()"
)
# Values that hold nothing to hide (booleans too, as in JSON).
_PHP_EMPTY = frozenset({"NULL", "''", "true", "false"})
_PHP_ENTRY = re.compile(r"^(\s*)('(?:[^'\\]|\\.)*'|-?\d+)\s*=>\s*(.*)$")
_YAML_BLOCK = re.compile(r"^[|>][-+0-9]*$")
# `post_password,Hunter2` / `post_password<TAB>Hunter2`: a name/value row without its header line.
_HEADERLESS_ROW = re.compile(r"^([A-Za-z_][A-Za-z0-9_\-.]{0,79})([,\t])(.*)$")


def _has_content(value: Any) -> bool:
    return value not in (None, "", [], {}) and not isinstance(value, bool)


# -- values: JSON, serialized PHP, plain strings ---------------------------------------------------


def mask_value(text: str, depth: int = 0) -> str:
    """One value (a cell, a JSON string, an argument): JSON and serialized PHP inside it are
    walked by key. Shapes (`sk_live_…`) are left to mask_text(), which callers run once over the
    whole text."""
    if depth > _MAX_DEPTH or not text:
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
    if _SERIALIZED_START.match(stripped):
        rewritten = _mask_serialized(stripped, depth + 1)
        if rewritten is not None:
            return rewritten
    return text


def _role(key: object) -> str:
    """What a column or key is for, in any case (`Field`/`Value` as `wp <thing> get` prints them)."""
    return str(key).strip().casefold()


def _pair_is_secret(row: dict[str, Any]) -> bool:
    names = [v for k, v in row.items() if _role(k) in _NAME_FIELDS and isinstance(v, str)]
    return any(is_secret_key(name) for name in names) and any(_role(k) in _VALUE_FIELDS for k in row)


def _mask_json(value: Any, depth: int) -> Any:
    if depth > _MAX_DEPTH:
        return MASK
    if isinstance(value, dict):
        secret_pair = _pair_is_secret(value)
        out: dict[str, Any] = {}
        for key, item in value.items():
            hidden = is_secret_key(str(key)) or (secret_pair and _role(key) in _VALUE_FIELDS)
            out[key] = MASK if hidden and _has_content(item) else _mask_json(item, depth + 1)
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
        if level > _MAX_DEPTH:
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


def _mask_serialized(text: str, depth: int) -> str | None:
    parser = _Serialized(text.encode("utf-8"), depth)
    try:
        rewritten, _ = parser.value()
    except (_SerializedError, ValueError):
        return None
    if parser.pos != len(parser.data):
        return None
    return rewritten.decode("utf-8", "replace")


# -- documents: whole outputs -----------------------------------------------------------------------


def mask_document(text: str) -> tuple[str, bool]:
    """A whole WP-CLI output (JSON, serialized PHP, TSV/CSV tables, YAML, var_export, plain text)
    masked by key; the flag says whether it was one structured document (then no key/value pairs
    are left for text patterns to find)."""
    if not text:
        return text, False
    text = mask_pem_blocks(text)
    stripped = text.strip()
    whole: str | None = None
    if stripped[:1] in "[{" and _parses(stripped):
        whole = mask_value(stripped)
    elif _SERIALIZED_START.match(stripped):
        whole = _mask_serialized(stripped, 0)
    if whole is not None:
        return text.replace(stripped, whole, 1), True
    lines = text.split("\n")
    if _VAR_EXPORT_START.match(stripped):
        return "\n".join(_mask_var_export(lines)), False
    first = next((line for line in lines if line.strip()), "")
    if "\t" in first and _is_header(first.split("\t")):
        return _mask_table(lines, "\t"), False
    if "," in first and _is_header(next(csv.reader([first]))):
        masked = _mask_csv(text)
        if masked is not None:
            return masked, False
    return "\n".join(_mask_lines(lines)), False


def _parses(text: str) -> bool:
    try:
        json.loads(text)
    except ValueError:
        return False
    return True


def _is_header(cells: list[str]) -> bool:
    return len(cells) >= 2 and all(_HEADER_CELL.match(c.strip()) for c in cells)


def _header_shown(header: list[str]) -> list[str]:
    """A first row `post_password,Hunter2Secret` may be a name/value row printed without a header:
    the cell after a secret name is masked unless it names a value column (a real header like
    `user_pass,user_login` only loses a column name)."""
    roles = [_role(cell) for cell in header]
    if len(header) == 2 and is_secret_key(header[0].strip()) and roles[1] not in _VALUE_FIELDS:
        return [header[0], MASK]
    return header


def _mask_rows(header: list[str], rows: list[list[str]]) -> list[list[str]]:
    """Data rows masked by column name and by name/value row (`Field`+`Value`, `option_name`+
    `option_value`, … in any order and case). A multi-line cell spreads over several lines in a
    tab-separated table: older WP-CLI printed it raw (lines with fewer cells than the header), newer
    WP-CLI prints its further lines as rows whose other cells are empty; both are masked with the
    row they continue."""
    columns = [cell.strip() for cell in header]
    roles = [_role(column) for column in columns]
    names_at = [index for index, role in enumerate(roles) if role in _NAME_FIELDS]
    pair_layout = bool(names_at) and any(role in _VALUE_FIELDS for role in roles)
    out: list[list[str]] = []
    hidden_rows: list[bool | None] = []  # None: a short line, decided by its neighbours below
    pair_secret = False
    for row in rows:
        if len(row) < len(header):
            out.append(row)
            hidden_rows.append(None)
            continue
        names = [row[index].strip() for index in names_at]
        if not pair_layout or any(names):  # else: the further lines of the previous row's value
            pair_secret = pair_layout and any(is_secret_key(name) for name in names)
        masked: list[str] = []
        row_hidden = False
        for index, cell in enumerate(row):
            at = min(index, len(header) - 1)  # extra cells (a tab inside a value) spill from the last
            hidden = bool(cell) and (
                is_secret_key(columns[at]) or (pair_secret and roles[at] in _VALUE_FIELDS)
            )
            masked.append(MASK if hidden else mask_value(cell))
            row_hidden = row_hidden or hidden
        out.append(masked)
        hidden_rows.append(row_hidden)
    for index in _short_lines_to_hide(hidden_rows):
        out[index] = [MASK]
    for index, decided in enumerate(hidden_rows):
        if decided is None and out[index] != [MASK]:
            out[index] = [mask_value(cell) for cell in out[index]]
    return out


def _short_lines_to_hide(hidden_rows: list[bool | None]) -> set[int]:
    """Short lines (None) whose nearest whole row before or after had a masked cell; one pass each
    way, as a big post_content table may have thousands of them."""
    hide: set[int] = set()
    for order in (range(len(hidden_rows)), range(len(hidden_rows) - 1, -1, -1)):
        nearest = False
        for index in order:
            decided = hidden_rows[index]
            if decided is None and nearest:
                hide.add(index)
            elif decided is not None:
                nearest = decided
    return hide


def _mask_table(lines: list[str], separator: str) -> str:
    start = next(index for index, line in enumerate(lines) if line.strip())
    header = lines[start].split(separator)
    body = [(index, line) for index, line in enumerate(lines) if index > start and line.strip()]
    masked_rows = _mask_rows(header, [line.split(separator) for _, line in body])
    out = list(lines)
    out[start] = separator.join(_header_shown(header))
    for (index, _), row in zip(body, masked_rows, strict=True):
        out[index] = separator.join(row)
    return "\n".join(out)


def _mask_csv(text: str) -> str | None:
    try:
        rows = list(csv.reader(io.StringIO(text)))
    except csv.Error:
        return None
    if not rows:
        return None
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(_header_shown(rows[0]))
    writer.writerows(_mask_rows(rows[0], rows[1:]))
    result = buffer.getvalue()
    return result if text.endswith("\n") else result.rstrip("\n")


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


def _mask_lines(lines: list[str]) -> list[str]:
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
        secret_pair = any(
            _role(e.key) in _NAME_FIELDS and is_secret_key(_yaml_name(lines, e)) for e in mapping
        ) and any(_role(e.key) in _VALUE_FIELDS for e in mapping)
        for entry in mapping:
            hidden = is_secret_key(entry.key) or (secret_pair and _role(entry.key) in _VALUE_FIELDS)
            rest = range(entry.at + 1, entry.end)
            if hidden and (entry.value.strip() or any(lines[i].strip() for i in rest)):
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
    if stripped[:1] in "[{" and _parses(stripped):
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


# -- PHP var_export(): `wp option get` of an array or object ----------------------------------------


class _PhpEntry(NamedTuple):
    """One `'key' => value,` of var_export() output and the lines its value takes."""

    at: int
    end: int  # the first line after the value's closing `,`
    indent: str
    key: str
    value: str  # what follows `=>` on the entry's own line


def _mask_var_export(lines: list[str]) -> list[str]:
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
    secret_pair = any(
        _role(e.key) in _NAME_FIELDS and is_secret_key(_php_string(e.value.rstrip(",")) or "")
        for e in entries
    ) and any(_role(e.key) in _VALUE_FIELDS for e in entries)
    for entry in entries:
        hidden = is_secret_key(entry.key) or (secret_pair and _role(entry.key) in _VALUE_FIELDS)
        if hidden and entry.value.strip().rstrip(",") not in _PHP_EMPTY:
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
