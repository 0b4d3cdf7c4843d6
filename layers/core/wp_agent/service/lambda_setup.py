"""What every handler module does once at import: JSON logs with secret masking for our loggers,
and SnapStart hooks so nothing stateful (SSH connections, SDK clients, random state) is restored."""

from __future__ import annotations

import logging
import random
from collections.abc import Callable

from aws_lambda_powertools import Logger, Tracer
from aws_lambda_powertools.logging.utils import copy_config_to_registered_loggers

from wp_agent.config import LambdaSettings
from wp_agent.log_safety import SecretMaskingFilter
from wp_agent.service.runtime import LazyRuntime


def handler_tools(settings_class: type[LambdaSettings]) -> tuple[Logger, Tracer, LazyRuntime]:
    """A handler module's logger, tracer and lazily built runtime (with the function's own settings
    class), with logging and SnapStart set up."""
    logger = Logger()
    tracer = Tracer()
    runtime = LazyRuntime(settings_class)
    configure_logging(logger)
    register_snapstart_hooks(runtime.reset)
    return logger, tracer, runtime


def configure_logging(logger: Logger) -> None:
    logging.getLogger("wp_agent")  # register the package logger; its children propagate to it
    copy_config_to_registered_loggers(source_logger=logger, include={"wp_agent"})
    logger.registered_handler.addFilter(SecretMaskingFilter())
    secure_root_handlers()


def secure_root_handlers() -> None:
    """Mask what libraries log through the root logger too (the Lambda runtime's handler):
    the SDKs' debug lines carry request bodies, and a user may write a password in prose."""
    for handler in logging.getLogger().handlers:
        if not any(isinstance(f, SecretMaskingFilter) for f in handler.filters):
            handler.addFilter(SecretMaskingFilter())


def reset_process_state(*resets: Callable[[], None]) -> None:
    """Drop pooled connections and cached clients, reseed random: a restored snapshot starts clean."""
    from wp_agent.adapters.aws.clients import reset_clients

    reset_clients()
    try:
        from wp_agent.executors.ssh import close_pooled_connections
    except ImportError:  # pragma: no cover - paramiko is in the dependency layer
        pass
    else:
        close_pooled_connections()
    random.seed()
    for reset in resets:
        reset()


def register_snapstart_hooks(*resets: Callable[[], None]) -> bool:
    """Register the after-restore hook when running under Lambda SnapStart (the module exists there)."""
    try:
        from snapshot_restore_py import register_after_restore  # type: ignore[import-not-found]
    except ImportError:
        return False
    register_after_restore(reset_process_state, *resets)
    return True
