"""Tables: tab-separated (`--format=table` without a terminal) and CSV output, masked by column name and
by name/value row."""

from __future__ import annotations

import csv
import io
import re

from wp_agent.masking.pairs import VALUE_FIELDS, hidden, names_a_thing, role, secret_pair
from wp_agent.masking.secret_names import is_secret_key
from wp_agent.masking.secret_values import MASK
from wp_agent.masking.values import mask_value

_HEADER_CELL = re.compile(r"^[A-Za-z_][A-Za-z0-9_\- ]{0,63}$")


def is_header(cells: list[str]) -> bool:
    return len(cells) >= 2 and all(_HEADER_CELL.match(c.strip()) for c in cells)


def _header_shown(header: list[str]) -> list[str]:
    """A first row `post_password,Hunter2Secret` may be a name/value row printed without a header:
    the cell after a secret name is masked unless it names a value column (a real header like
    `user_pass,user_login` only loses a column name)."""
    roles = [role(cell) for cell in header]
    if len(header) == 2 and is_secret_key(header[0].strip()) and roles[1] not in VALUE_FIELDS:
        return [header[0], MASK]
    return header


def _mask_rows(header: list[str], rows: list[list[str]]) -> list[list[str]]:
    """Data rows masked by column name and by name/value row (`Field`+`Value`, `option_name`+
    `option_value`, … in any order and case). A multi-line cell spreads over several lines in a
    tab-separated table: older WP-CLI printed it raw (lines with fewer cells than the header), newer
    WP-CLI prints its further lines as rows whose other cells are empty; both are masked with the
    row they continue."""
    columns = [cell.strip() for cell in header]
    names_at = [index for index, column in enumerate(columns) if names_a_thing(column)]
    pair_layout = bool(names_at) and any(role(column) in VALUE_FIELDS for column in columns)
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
            pair_secret = pair_layout and secret_pair(names, columns)
        masked: list[str] = []
        row_hidden = False
        for index, cell in enumerate(row):
            at = min(index, len(header) - 1)  # extra cells (a tab inside a value) spill from the last
            masks = bool(cell) and hidden(columns[at], pair_secret)
            masked.append(MASK if masks else mask_value(cell))
            row_hidden = row_hidden or masks
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


def mask_table(lines: list[str], separator: str) -> str:
    start = next(index for index, line in enumerate(lines) if line.strip())
    header = lines[start].split(separator)
    body = [(index, line) for index, line in enumerate(lines) if index > start and line.strip()]
    masked_rows = _mask_rows(header, [line.split(separator) for _, line in body])
    out = list(lines)
    out[start] = separator.join(_header_shown(header))
    for (index, _), row in zip(body, masked_rows, strict=True):
        out[index] = separator.join(row)
    return "\n".join(out)


def mask_csv(text: str) -> str | None:
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
