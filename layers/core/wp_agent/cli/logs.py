"""The CLI's log lines on stderr: the message plus the record's structured fields (`extra`), so
`LOG_LEVEL=debug` names the command (masked by whoever logged it), its duration, exit code, and the
retries (SSH connect attempts, the model API's retries) instead of bare messages."""

from __future__ import annotations

import json
import logging

from wp_agent.cli import terminal

# Attributes every LogRecord has; anything else on a record came from `extra=`.
_STANDARD = set(vars(logging.LogRecord("", 0, "", 0, "", None, None))) | {"message", "asctime", "taskName"}


class FieldsFormatter(logging.Formatter):
    def __init__(self) -> None:
        super().__init__("%(asctime)s %(levelname)s %(name)s: %(message)s", "%H:%M:%S")

    def format(self, record: logging.LogRecord) -> str:
        line = super().format(record)
        fields = {k: v for k, v in vars(record).items() if k not in _STANDARD and not k.startswith("_")}
        if not fields:
            return line
        shown = " ".join(
            f"{key}={json.dumps(value, ensure_ascii=False, default=str)}" for key, value in fields.items()
        )
        return f"{line} {shown}"


# Above every level: the handler drops all records (paramiko's tracebacks, library warnings, ours).
_SILENT = logging.CRITICAL + 1


def configure(level: int | None) -> None:
    """Our loggers at `level`, libraries at WARNING — except the model API's retry notices (INFO on
    the SDK's client logger; its DEBUG lines would dump request bodies, so never lower). None: no log
    line at all (LOG_LEVEL unset: what a person reads are the CLI's own Japanese lines)."""
    root = logging.getLogger()
    handler = next((h for h in root.handlers if isinstance(h.formatter, FieldsFormatter)), None)
    if handler is None:
        logging.basicConfig(level=logging.WARNING, handlers=[terminal.log_handler(FieldsFormatter())])
        handler = next((h for h in root.handlers if isinstance(h.formatter, FieldsFormatter)), None)
    if handler is not None:  # None under a test runner that has put its own handlers on the root
        handler.setLevel(logging.NOTSET if level is not None else _SILENT)
    logging.captureWarnings(True)  # Python's warnings leave through the same handler
    logging.getLogger("wp_agent").setLevel(level if level is not None else logging.WARNING)
    if level is not None and level <= logging.INFO:
        logging.getLogger("anthropic._base_client").setLevel(logging.INFO)  # "Retrying request to …"
