"""WP-CLI output formats: table (ASCII or tab-separated), csv, json, yaml, ids, count.

Behaviour reproduced from wp-cli/wp-cli `php/WP_CLI/Formatter.php` (the 2.x stable branch),
`php/utils.php` (`write_csv`, `pick_fields`, `escape_csv_value`), wp-cli/php-cli-tools
`lib/cli/Table.php`, `lib/cli/table/Ascii.php`, `lib/cli/table/Tabular.php`, `lib/cli/Shell.php`
(`isPiped`: tab-separated output when STDOUT is not a TTY unless SHELL_PIPE=0) and Spyc's
`YAMLDump($items, 2, 0)`. JSON is PHP's `json_encode` with default flags: compact, `/` escaped as
`\\/`, non-ASCII as `\\uXXXX`. `ids`, `count` and list-`json` output carry no trailing newline.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Mapping, Sequence
from typing import Any, NoReturn

from wp_agent.simulator.output import Output

ArgValue = str | bool
Item = Mapping[str, Any]

_FORMAT_KEYS = ("format", "fields", "field")


# --------------------------------------------------------------------------- PHP value encodings


def php_json(value: Any) -> str:
    """`json_encode($value)` with PHP's default flags."""
    return json.dumps(value, ensure_ascii=True, separators=(",", ":")).replace("/", "\\/")


def php_string(value: Any) -> str:
    """PHP's string conversion of a scalar (`echo $value`)."""
    if value is None or value is False:
        return ""
    if value is True:
        return "1"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _export_key(key: Any) -> str:
    if isinstance(key, int):
        return str(key)
    return var_export(str(key))


def var_export(value: Any, indent: str = "") -> str:
    """PHP's `var_export($value, true)`."""
    if value is None:
        return "NULL"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int | float):
        return php_string(value)
    if isinstance(value, str):
        return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"
    pairs = list(value.items()) if isinstance(value, Mapping) else list(enumerate(value))
    inner = indent + "  "
    lines = ["array ("]
    for key, item in pairs:
        if isinstance(item, Mapping | list):
            lines.append(f"{inner}{_export_key(key)} => \n{inner}{var_export(item, inner)},")
        else:
            lines.append(f"{inner}{_export_key(key)} => {var_export(item, inner)},")
    lines.append(f"{indent})")
    return "\n".join(lines)


def php_serialize(value: Any) -> str:
    """PHP's `serialize()`, used where WordPress shows raw option and meta values."""
    if value is None:
        return "N;"
    if isinstance(value, bool):
        return f"b:{int(value)};"
    if isinstance(value, int):
        return f"i:{value};"
    if isinstance(value, float):
        return f"d:{php_string(value)};"
    if isinstance(value, str):
        return f's:{len(value.encode("utf-8"))}:"{value}";'
    pairs = list(value.items()) if isinstance(value, Mapping) else list(enumerate(value))
    body = "".join(php_serialize(key) + php_serialize(item) for key, item in pairs)
    return f"a:{len(pairs)}:{{{body}}}"


def raw_db_value(value: Any) -> str:
    """How a value looks in a wp_options/wp_postmeta row: arrays are serialized."""
    if isinstance(value, Mapping | list):
        return php_serialize(value)
    return php_string(value)


_NUMERIC = re.compile(r"^[ \t\n\r\v\f]*[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?[ \t\n\r\v\f]*$")


def php_is_numeric(value: Any) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, int | float):
        return True
    return isinstance(value, str) and bool(_NUMERIC.match(value))


# --------------------------------------------------------------------------- YAML (Spyc dump)

_REMPTY = "\0\0\0\0\0"
_YAML_SPECIAL = ("\n", ": ", "- ", "*", "#", "<", ">", "%", "  ", "[", "]", "{", "}", "&", "'")
_TRANSLATION_WORDS = frozenset(
    form
    for word in ("true", "on", "yes", "y", "false", "off", "no", "n", "null", "~")
    for form in (word[:1].upper() + word[1:], word.upper(), word.lower())
)
_PHP_TRIM = " \t\n\r\0\x0b"


def _yaml_literal_block(value: str, indent: int) -> str:
    if value == "\n":
        return "\\n"
    if "\n" not in value and "'" not in value:
        return f"'{value}'"
    if "\n" not in value and '"' not in value:
        return f'"{value}"'
    lines = value.split("\n")
    block = "|"
    if lines and lines[0] in ("|", "|-", ">"):
        block = lines.pop(0)
    spaces = " " * (indent + 2)
    for raw in lines:
        line = raw.strip(_PHP_TRIM)
        if len(line) >= 2 and line[0] == line[-1] and line[0] in "\"'":
            line = line[1:-1]
        block += "\n" + spaces + line
    return block


def _yaml_node(key: Any, value: Any, indent: int, in_sequence: bool) -> str:
    rendered: Any = value
    if isinstance(value, str) and (
        any(mark in value for mark in _YAML_SPECIAL) or value.startswith("!") or value.endswith(":")
    ):
        rendered = _yaml_literal_block(value, indent)
    elif isinstance(value, str) and php_is_numeric(value):
        rendered = f'"{value}"'
    if isinstance(rendered, list) and not rendered:
        rendered = "[ ]"
    if rendered == "":
        rendered = '""'
    if isinstance(rendered, str) and rendered in _TRANSLATION_WORDS:
        rendered = _yaml_literal_block(rendered, indent)
    if isinstance(rendered, str) and rendered.strip(_PHP_TRIM) != rendered:
        rendered = _yaml_literal_block(rendered, indent)
    if rendered is True or rendered is False:
        rendered = "true" if rendered else "false"
    if rendered is None:
        rendered = "null"
    if rendered == f"'{_REMPTY}'":
        rendered = ""
    spaces = " " * indent
    text = php_string(rendered)
    if in_sequence:
        return f"{spaces}- {text}\n"
    label = str(key)
    if ":" in label or "#" in label:
        label = f'"{label}"'
    return f"{spaces}{label}: {text}".rstrip() + "\n"


def _yaml_children(container: Any, indent: int) -> str:
    in_sequence = isinstance(container, list)
    pairs = list(enumerate(container)) if in_sequence else list(container.items())
    text = ""
    for key, value in pairs:
        if isinstance(value, Mapping | list):
            if not value:
                text += _yaml_node(key, [], indent, in_sequence)
                continue
            text += _yaml_node(key, _REMPTY, indent, in_sequence)
            text += _yaml_children(value, indent + 2)
        else:
            text += _yaml_node(key, value, indent, in_sequence)
    return text


def spyc_dump(value: Any) -> str:
    """`Spyc::YAMLDump($value, 2, 0)` (indent 2, no word wrap)."""
    text = "---\n"
    if isinstance(value, Mapping | list) and value:
        text += _yaml_children(value, 0)
    return text


# --------------------------------------------------------------------------- CSV (fputcsv)

_CSV_QUOTE_TRIGGERS = (",", '"', "\\", "\n", "\r", "\t", " ")


def escape_csv_value(value: Any) -> str:
    """`WP_CLI\\Utils\\escape_csv_value`: defuse spreadsheet formulas."""
    if value is None:
        return ""
    text = php_string(value)
    if text[:1] in ("=", "+", "-", "@", "\t", "\r"):
        return "'" + text
    return text


def _csv_field(text: str) -> str:
    if not any(trigger in text for trigger in _CSV_QUOTE_TRIGGERS):
        return text
    escaped = []
    after_escape = False
    for char in text:
        if char == "\\":
            after_escape = True
        elif not after_escape and char == '"':
            escaped.append('"')
        else:
            after_escape = False
        escaped.append(char)
    return '"' + "".join(escaped) + '"'


def csv_line(values: Sequence[Any]) -> str:
    return ",".join(_csv_field(escape_csv_value(value)) for value in values) + "\n"


# --------------------------------------------------------------------------- tables


def display_width(text: str) -> int:
    """php-cli-tools `strwidth`: graphemes, plus one for each East Asian wide character."""
    width = 0
    for char in text:
        if unicodedata.combining(char):
            continue
        width += 2 if unicodedata.east_asian_width(char) in ("W", "F") else 1
    return width


def _cut_to_width(text: str, width: int) -> str:
    taken = 0
    for index, char in enumerate(text):
        char_width = display_width(char)
        if taken + char_width > width:
            return text[: max(index, 1)]
        taken += char_width
    return text


def _pad(text: str, width: int) -> str:
    return text + " " * max(0, width - display_width(text))


def _constrain_widths(widths: list[int], columns: int) -> list[int]:
    """php-cli-tools Ascii::setWidths: shrink columns that exceed the terminal width."""
    count = len(widths)
    max_width = columns - max(count - 1, 0) - 2 - count * 2
    if not widths or max_width <= 0 or sum(widths) <= max_width:
        return widths
    average = max_width // count
    to_resize = [width for width in widths if width > average]
    extra = sum(average - width for width in widths if width <= average)
    if not to_resize or not extra:
        return widths
    share = extra // len(to_resize)
    result = list(widths)
    for index, width in enumerate(widths):
        if to_resize and width in to_resize:
            result[index] = average + share
            to_resize.pop(0)
            if not to_resize:
                result[index] = 0
                result[index] = max_width - sum(result)
    return result


def _wrap_cell(value: str, width: int) -> list[str]:
    lines: list[str] = []
    for segment in re.split(r"\r\n|\n", value):
        if display_width(segment) <= width:
            lines.append(segment)
            continue
        rest = segment
        while rest:
            chunk = _cut_to_width(rest, width)
            lines.append(chunk)
            rest = rest[len(chunk) :]
    return lines


def ascii_table(headers: Sequence[str], rows: Sequence[Sequence[str]], columns: int) -> list[str]:
    widths = [display_width(header) for header in headers]
    for row in rows:
        for index, cell in enumerate(row):
            widths[index] = max(widths[index], display_width(cell))
    widths = _constrain_widths(widths, columns)
    border = "+" + "".join("-" * (width + 2) + "+" for width in widths)

    def render(row: Sequence[str]) -> str:
        cells: list[list[str]] = []
        for index, raw in enumerate(row):
            value = raw.replace("\t", "    ")
            width = widths[index]
            if width and (display_width(value) > width or "\n" in value):
                cells.append(_wrap_cell(value, width))
            else:
                cells.append([value])
        height = max((len(cell) for cell in cells), default=1)
        lines = []
        for line_no in range(height):
            parts = [
                " " + _pad(cell[line_no] if line_no < len(cell) else "", widths[index]) + " "
                for index, cell in enumerate(cells)
            ]
            lines.append("|" + "|".join(parts) + "|")
        return "\n".join(lines)

    return [border, render(headers), border, *(render(row) for row in rows), border]


def tabular_row(row: Sequence[str]) -> str:
    """php-cli-tools Tabular::row, including its habit of only continuing the last column."""
    first_lines: list[str] = []
    remaining: list[str] = []
    for raw in row:
        parts = re.split(r"\r\n|\n", raw.replace("\t", "    "))
        first_lines.append(parts[0])
        remaining = parts[1:]
    lines = ["\t".join(first_lines)]
    for extra in remaining:
        lines.append("\t".join([*([""] * (len(row) - 1)), extra]))
    return "\n".join(lines).strip(_PHP_TRIM)


def render_table(out: Output, headers: Sequence[str], rows: Sequence[Sequence[str]]) -> None:
    if out.terminal.piped:
        out.line(tabular_row(headers))
        for row in rows:
            out.line(tabular_row(row))
        return
    for line in ascii_table(headers, rows, out.terminal.columns):
        out.line(line)


# --------------------------------------------------------------------------- Formatter


def print_value(out: Output, value: Any, output_format: str | None) -> None:
    """`WP_CLI::print_value`: JSON/YAML when asked, var_export for arrays, then a newline."""
    if output_format == "json":
        text = php_json(value)
    elif output_format == "yaml":
        text = spyc_dump(value)
    elif isinstance(value, Mapping | list):
        text = var_export(value)
    else:
        text = php_string(value)
    out.write(text + "\n")


def _cell(value: Any) -> str:
    if isinstance(value, Mapping | list):
        return php_json(value)
    return php_string(value)


def pick_fields(item: Item, fields: Sequence[str]) -> dict[str, Any]:
    return {field: item.get(field) for field in fields}


class Formatter:
    """`WP_CLI\\Formatter`: takes --format/--fields/--field out of the associative args."""

    def __init__(
        self,
        out: Output,
        assoc: dict[str, ArgValue],
        default_fields: Sequence[str] | None = None,
        prefix: str | None = None,
    ) -> None:
        self._out = out
        self.format = "table"
        self.field: str | None = None
        raw_fields: ArgValue | Sequence[str] | None = default_fields
        for key in _FORMAT_KEYS:
            if key in assoc:
                value = assoc.pop(key)
                if key == "format":
                    self.format = php_string(value)
                elif key == "fields":
                    raw_fields = value
                elif value is not False:
                    self.field = php_string(value)
        if isinstance(raw_fields, str):
            fields = [name.strip() for name in raw_fields.split(",")]
        elif raw_fields is None or isinstance(raw_fields, bool):
            fields = []
        else:
            fields = list(raw_fields)
        self.fields = fields
        self._prefix = prefix

    def _fail(self, message: str) -> NoReturn:
        self._out.error(message)

    def _find_key(self, item: Item, field: str) -> str:
        for candidate in (field, f"{self._prefix or ''}_{field}"):
            if candidate in item:
                return candidate
        return self._fail(f"Invalid field: {field}.")

    def display_items(self, items: Sequence[Any]) -> None:
        if self.field:
            self._show_single_field(items, self.field)
            return
        fields = self.fields
        if self.format in ("csv", "json", "table") and items and fields:
            first = items[0]
            if isinstance(first, Mapping):
                fields = [self._find_key(first, field) for field in fields]
        self._format(items, fields)

    def _format(self, items: Sequence[Any], fields: Sequence[str]) -> None:
        out = self._out
        if self.format == "count":
            out.write(str(len(items)))
        elif self.format == "ids":
            out.write(" ".join(php_string(item) for item in items))
        elif self.format == "table":
            render_table(out, fields, [[_cell(item.get(field)) for field in fields] for item in items])
        elif self.format == "csv":
            out.write(csv_line(fields) if fields else "")
            for item in items:
                out.write(csv_line([_cell(item.get(field)) for field in fields]))
        elif self.format == "json":
            out.write(php_json([pick_fields(item, fields) for item in items]))
        elif self.format == "yaml":
            out.write(spyc_dump([pick_fields(item, fields) for item in items]))
        else:
            self._fail(f"Invalid format: {self.format}")

    def _show_single_field(self, items: Sequence[Any], field: str) -> None:
        key: str | None = None
        values: list[Any] = []
        for item in items:
            if key is None:
                key = self._find_key(item, field)
            value = item.get(key)
            if self.format == "json":
                values.append(value)
            else:
                print_value(self._out, value, self.format)
        if self.format == "json":
            self._out.write(php_json(values))

    def display_item(self, item: Item) -> None:
        if self.field:
            key = self._find_key(item, self.field)
            value = item[key]
            if self.format in ("table", "csv") and isinstance(value, Mapping | list):
                value = php_json(value)
            print_value(self._out, value, self.format)
            return
        wanted = {self._find_key(item, field) for field in self.fields}
        data = {key: value for key, value in item.items() if key in wanted}
        if self.format in ("table", "csv"):
            rows = [
                [key, value if isinstance(value, str) else php_json(value)] for key, value in data.items()
            ]
            if self.format == "table":
                render_table(self._out, ["Field", "Value"], rows)
            else:
                self._out.write(csv_line(["Field", "Value"]))
                for row in rows:
                    self._out.write(csv_line(row))
        elif self.format in ("json", "yaml"):
            print_value(self._out, data, self.format)
        else:
            self._fail(f"Invalid format: {self.format}")
