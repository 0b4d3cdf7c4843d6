"""The CLI's only way to the screen. Whatever it shows — answers, command output, approval prompts,
history, doctor, errors, progress, tables, log lines — is data until proven text: a model's answer,
a site's content or an audit file can carry escape sequences that clear the screen, move the
cursor, set the clipboard or the window title, or reorder a line. So every write goes through
`sanitize`, and rich (progress lines, tables) only ever gets `Text` built here, with markup and emoji
codes off. `--json` goes through `Stream.json`: the same JSON value, with the characters a terminal
would act on written as JSON escapes.

Nothing else in wp_agent prints: ruff bans `print`, `sys.stdout`, `sys.stderr` and `rich` outside
this module (pyproject.toml)."""

from __future__ import annotations

import logging
import re
import sys
import traceback
from collections.abc import Callable, Sequence
from types import TracebackType
from typing import IO, TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import Console

# Escape sequences, 7-bit (ESC …) and 8-bit (C1) forms, removed whole so their payload (a
# clipboard's base64, a window title, a link target) does not show up as text either.
_SEQUENCES = re.compile(
    r"(?:\x1b\[|\x9b)[\x30-\x3f]*[\x20-\x2f]*[\x40-\x7e]"  # CSI: cursor moves, erase, colours
    r"|(?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f])[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)"  # OSC DCS SOS PM APC
    r"|\x1b[\x20-\x2f]*[\x30-\x7e]"  # the rest: reset, save/restore cursor, character sets
)
# Bidi_Control (Unicode): they reorder what follows on the line, so a command can read as another.
_BIDI_CONTROLS = r"\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
# Whatever is left of a sequence (an unterminated one, a lone ESC), every other C0 control (newline
# and tab are kept; a carriage return would let text overwrite its own line), DEL, C1, bidi.
_CONTROLS = re.compile(rf"[\x00-\x08\x0b-\x1f\x7f-\x9f{_BIDI_CONTROLS}]")
# In a JSON document these can only be inside strings (or invalid there); escaped, the value is the same.
_JSON_UNSAFE = re.compile(rf"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f{_BIDI_CONTROLS}\u2028\u2029]")


def sanitize(text: str) -> str:
    """`text` as it may reach a terminal: no control characters but newline and tab, no escape
    sequences (CSI, OSC, DCS, SOS, PM, APC, in 7- and 8-bit form), no bidi controls."""
    return _CONTROLS.sub("", _SEQUENCES.sub("", text))


def json_for_terminal(document: str) -> str:
    """A JSON document with every character a terminal acts on written as a `\\uXXXX` escape."""
    return _JSON_UNSAFE.sub(lambda found: f"\\u{ord(found.group()):04x}", document)


class Stream:
    """stdout or stderr of the CLI, looked up at each write (so redirections and tests see it)."""

    def __init__(self, raw: Callable[[], IO[str]]) -> None:
        self._raw = raw

    def line(self, text: str = "", *, end: str = "\n", flush: bool = False) -> None:
        stream = self._raw()
        stream.write(sanitize(text) + end)
        if flush:
            stream.flush()

    def json(self, document: str) -> None:
        """One JSON document (already serialised) on its own line, exact."""
        self._raw().write(json_for_terminal(document) + "\n")

    def isatty(self) -> bool:
        return self._raw().isatty()

    def styled(self, text: str, style: str) -> None:
        """One line in a style (rich: colours where the terminal has them, never wrapped)."""
        if not self.isatty():
            self.line(text, flush=True)
            return
        from rich.text import Text

        self._console(soft_wrap=True).print(Text(sanitize(text), style=style))
        self._raw().flush()

    def table(
        self, headers: Sequence[str], rows: Sequence[Sequence[str]], *, title: str | None = None
    ) -> None:
        """A table drawn by rich in a terminal; otherwise plain, stable tab-separated lines (one
        header line, then one line per row) so scripts and tests can read them."""
        if not self.isatty():
            if title:
                self.line(f"{title}:")
            self.line("\t".join(headers))
            for row in rows:
                self.line("\t".join(cell.replace("\t", " ").replace("\n", " ") for cell in row))
            return
        from rich.table import Table
        from rich.text import Text

        table = Table(title=Text(sanitize(title)) if title else None, title_justify="left")
        for header in headers:
            table.add_column(Text(sanitize(header)), overflow="fold")
        for row in rows:
            table.add_row(*(Text(sanitize(cell)) for cell in row))
        self._console(soft_wrap=False).print(table)

    def _console(self, *, soft_wrap: bool) -> Console:
        from rich.console import Console

        # Markup, emoji codes and highlighting off: nothing in the data is read as instructions.
        return Console(file=self._raw(), markup=False, emoji=False, highlight=False, soft_wrap=soft_wrap)


out = Stream(lambda: sys.stdout)
err = Stream(lambda: sys.stderr)


def stream_for(file: object) -> Stream:
    """The Stream argparse would have written to (it passes sys.stdout, sys.stderr or None: stderr)."""
    return out if file is sys.stdout else err


def interactive() -> bool:
    """A person at a terminal can be asked: stdin and stderr (where questions go) are terminals."""
    return sys.stdin.isatty() and sys.stderr.isatty()


def log_handler(formatter: logging.Formatter) -> logging.StreamHandler[IO[str]]:
    """A handler on stderr whose every line (ours and the libraries': message, fields, traceback)
    leaves through `sanitize` like everything else."""
    handler = _SanitizedLogHandler(sys.stderr)
    handler.setFormatter(formatter)
    return handler


class _SanitizedLogHandler(logging.StreamHandler[IO[str]]):
    def format(self, record: logging.LogRecord) -> str:
        return sanitize(super().format(record))


def show_uncaught(kind: type[BaseException], error: BaseException, trace: TracebackType | None) -> None:
    """sys.excepthook: an unexpected error's traceback, sanitized (its message may quote data)."""
    err.line("".join(traceback.format_exception(kind, error, trace)), end="", flush=True)
