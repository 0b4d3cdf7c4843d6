"""Lists as tables: drawn with `rich` in a terminal; plain, stable tab-separated lines otherwise
(one header line, then one line per row) so scripts and tests can read them."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import TextIO


def print_table(
    headers: Sequence[str],
    rows: Sequence[Sequence[str]],
    *,
    title: str | None = None,
    out: TextIO | None = None,
) -> None:
    stream = out or sys.stdout
    if stream.isatty():
        from rich.console import Console
        from rich.table import Table

        table = Table(title=title, title_justify="left")
        for header in headers:
            table.add_column(header, overflow="fold")
        for row in rows:
            table.add_row(*row)
        Console(file=stream).print(table)
        return
    if title:
        print(f"{title}:", file=stream)
    print("\t".join(headers), file=stream)
    for row in rows:
        print("\t".join(cell.replace("\t", " ").replace("\n", " ") for cell in row), file=stream)
