"""A logging filter that masks secrets in every record (message and extra fields) before output.

The code already logs masked values; this is the net under it (NFR-4.1), installed on the CLI's
and the Lambda handlers' loggers.
"""

from __future__ import annotations

import logging
from typing import Any

from wp_agent.masking import mask_command_output

_STANDARD_ATTRIBUTES = frozenset(logging.LogRecord("", 0, "", 0, "", None, None).__dict__) | {
    "message",
    "asctime",
}


def _mask(value: Any) -> Any:
    if isinstance(value, str):
        return mask_command_output(value)
    if isinstance(value, dict):
        return {k: _mask(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(_mask(v) for v in value)
    return value


class SecretMaskingFilter(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        if record.args:
            record.msg = record.getMessage()
            record.args = None
        record.msg = _mask(record.msg) if isinstance(record.msg, str | dict) else record.msg
        for key, value in list(record.__dict__.items()):
            if key not in _STANDARD_ATTRIBUTES:
                record.__dict__[key] = _mask(value)
        if record.exc_info and record.exc_info[1] is not None:
            text = logging.Formatter().formatException(record.exc_info)
            masked = mask_command_output(text)
            if masked != text:  # keep normal stack traces; replace only one that carries a secret
                record.exc_info = None
                record.exc_text = masked
                record.__dict__["exception_masked"] = masked
        return True


def install(logger: logging.Logger) -> None:
    """Mask on the logger and on each of its handlers (records from child loggers pass the handlers)."""
    secret_filter = SecretMaskingFilter()
    logger.addFilter(secret_filter)
    for handler in logger.handlers:
        handler.addFilter(secret_filter)
