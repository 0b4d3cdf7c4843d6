"""`wp-agent <args>` in a process of its own, started by forking the test's process.

A new interpreter spends about 1.3 s of CPU importing the CLI, the SDK and the policy before its
first line runs; the suite starts a few hundred of them, and the two cores CI has are its budget. A
child forked from the pytest worker has those modules already and starts in milliseconds. It is
still a process of its own, set up as a new one would be: its environment is exactly the one given,
its stdin, stdout and stderr are pipes (or /dev/null), its signal handlers, logging and warnings are
the interpreter's defaults, `sys.argv` is what `python -m wp_agent.cli.main` would see, the
policy's name lookups use this machine's resolver (not the tests' documentation zone), and it ends
with the exit code `main()` gives, or 1 and a traceback from our excepthook.

`WP_AGENT_TESTS_NEW_INTERPRETER=1` starts a new interpreter for every run instead (what a person's
shell does); tests/e2e/test_cli_process.py checks that both give the same answers. Tests whose subject
is the process itself (a terminal, Ctrl-C, faketime's clock, an installed copy) start one always.
"""

from __future__ import annotations

import contextlib
import io
import logging
import os
import selectors
import signal
import subprocess
import sys
import tempfile
import time
import traceback
import warnings
from collections.abc import Mapping, Sequence
from typing import Literal

from wp_agent.policy import host_resolution

NEW_INTERPRETER_ENV = "WP_AGENT_TESTS_NEW_INTERPRETER"
# What the child's imports would cost it; imported here once per worker instead (the CLI imports the
# SDK and the executors only when a command needs them).
_WARM = (
    "wp_agent.cli.main",
    "anthropic",
    "paramiko",
    "wp_agent.agent.model_client",
    "wp_agent.executors.factory",
    "wp_agent.executors.ssh",
    "wp_agent.executors.sandbox",
    "wp_agent.executors.local",
)
# The machine's resolver, as this module found it before any test replaced it.
_MACHINE_RESOLVER = host_resolution.system_resolver
_DEFAULT_WARNINGS: tuple[tuple[Literal["default", "ignore"], type[Warning], str | None], ...] = (
    ("default", DeprecationWarning, "__main__"),
    ("ignore", DeprecationWarning, None),
    ("ignore", PendingDeprecationWarning, None),
    ("ignore", ImportWarning, None),
    ("ignore", ResourceWarning, None),
)


def run_wp_agent(
    args: Sequence[str],
    *,
    env: Mapping[str, str],
    stdin_text: str | None = None,
    timeout: float,
    prefix: Sequence[str] = (),
) -> subprocess.CompletedProcess[str]:
    """`[prefix…] python -m wp_agent.cli.main <args>` with exactly `env`, as subprocess.run would give
    it back (text, both streams captured). A prefix (faketime) needs a new interpreter."""
    argv = [*prefix, sys.executable, "-m", "wp_agent.cli.main", *args]
    if prefix or os.environ.get(NEW_INTERPRETER_ENV) == "1":
        return subprocess.run(
            argv, capture_output=True, text=True, env=dict(env), timeout=timeout, check=False,
            **({"input": stdin_text} if stdin_text is not None else {"stdin": subprocess.DEVNULL}),
        )  # fmt: skip
    return _forked(argv, args, env, stdin_text, timeout)


def _forked(
    argv: list[str], args: Sequence[str], env: Mapping[str, str], stdin_text: str | None, timeout: float
) -> subprocess.CompletedProcess[str]:
    for name in _WARM:
        __import__(name)
    stdout_read, stdout_write = os.pipe()
    stderr_read, stderr_write = os.pipe()
    stdin_read, stdin_write = os.pipe() if stdin_text is not None else (os.open(os.devnull, os.O_RDONLY), -1)
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:  # the child: never returns
        for fd in (stdin_write, stdout_read, stderr_read):  # the parent's ends: EOF must reach the child
            if fd >= 0:
                os.close(fd)
        _child(list(args), dict(env), stdin_read, stdout_write, stderr_write)
    for fd in (stdin_read, stdout_write, stderr_write):
        os.close(fd)
    try:
        out, err = _collect(stdout_read, stderr_read, stdin_write, stdin_text, timeout, argv)
    except BaseException:  # its timeout, the test's own, Ctrl-C: the child does not outlive the wait
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        raise
    _, status = os.waitpid(pid, 0)
    return subprocess.CompletedProcess(argv, os.waitstatus_to_exitcode(status), out, err)


def _collect(
    stdout_read: int,
    stderr_read: int,
    stdin_write: int,
    stdin_text: str | None,
    timeout: float,
    argv: list[str],
) -> tuple[str, str]:
    """Both streams until the child closes them, feeding stdin meanwhile; TimeoutExpired after `timeout`."""
    chunks: dict[int, list[bytes]] = {stdout_read: [], stderr_read: []}
    feed = _Feed(stdin_write, (stdin_text or "").encode())
    selector = selectors.DefaultSelector()
    for fd in chunks:
        selector.register(fd, selectors.EVENT_READ)
    feed.register(selector)
    deadline = time.monotonic() + timeout
    try:
        while selector.get_map():
            left = deadline - time.monotonic()
            if left <= 0:  # the caller kills the child
                raise subprocess.TimeoutExpired(argv, timeout)
            for key, _ in selector.select(left):
                if key.fd == feed.fd:
                    feed.write(selector)
                elif data := os.read(key.fd, 65536):
                    chunks[key.fd].append(data)
                else:
                    selector.unregister(key.fd)
    finally:
        selector.close()
        feed.close()
        for fd in chunks:
            os.close(fd)
    out, err = (b"".join(chunks[fd]).decode("utf-8", errors="replace") for fd in (stdout_read, stderr_read))
    return out, err


class _Feed:
    """The child's stdin: `data`, then end of file (none at all when it reads /dev/null: fd -1)."""

    def __init__(self, fd: int, data: bytes) -> None:
        self.fd, self.data = fd, data

    def register(self, selector: selectors.BaseSelector) -> None:
        if self.fd < 0:
            return
        os.set_blocking(self.fd, False)
        if self.data:
            selector.register(self.fd, selectors.EVENT_WRITE)
        else:
            self.close()

    def write(self, selector: selectors.BaseSelector) -> None:
        try:
            self.data = self.data[os.write(self.fd, self.data) :]
        except BrokenPipeError:  # the child stopped reading: what it did not read is not its input
            self.data = b""
        if not self.data:
            selector.unregister(self.fd)
            self.close()

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


def _child(args: list[str], env: dict[str, str], stdin_fd: int, stdout_fd: int, stderr_fd: int) -> None:
    code = 1
    try:
        for fd, standard in ((stdin_fd, 0), (stdout_fd, 1), (stderr_fd, 2)):
            os.dup2(fd, standard)
            os.close(fd)
        os.environ.clear()
        os.environ.update(env)
        time.tzset()
        tempfile.tempdir = None
        sys.stdin = io.TextIOWrapper(
            io.FileIO(0, "r", closefd=False), encoding="utf-8", errors="surrogateescape"
        )
        sys.stdout = io.TextIOWrapper(
            io.FileIO(1, "w", closefd=False), encoding="utf-8", errors="surrogateescape"
        )
        sys.stderr = io.TextIOWrapper(
            io.FileIO(2, "w", closefd=False), encoding="utf-8", errors="backslashreplace", line_buffering=True
        )
        _fresh_interpreter_state()
        from wp_agent.cli import main as cli_main

        sys.argv = [str(cli_main.__file__), *args]
        try:
            code = _exit_code(cli_main.main())
        except SystemExit as ended:
            code = _exit_code(ended.code)
        except BaseException:  # noqa: BLE001 - as the interpreter: the excepthook says it, exit 1
            sys.excepthook(*sys.exc_info())
            code = 1
    except BaseException:  # noqa: BLE001 - the set-up failed: said where the test looks, never raised on
        traceback.print_exc()
    finally:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):  # a closed pipe: nothing more can be said
                stream.flush()
        os._exit(code)  # the child never returns into the test's process


def _fresh_interpreter_state() -> None:
    """What a new interpreter would have where this worker's tests changed it."""
    for number in (signal.SIGTERM, signal.SIGALRM, signal.SIGHUP, signal.SIGUSR1, signal.SIGUSR2):
        signal.signal(number, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGPIPE, signal.SIG_IGN)
    sys.excepthook = sys.__excepthook__
    warnings.resetwarnings()
    for action, category, module in reversed(_DEFAULT_WARNINGS):
        warnings.filterwarnings(action, category=category, module=module or "")
    logging.root.handlers.clear()
    logging.root.setLevel(logging.WARNING)
    for logger in list(logging.root.manager.loggerDict.values()):
        if isinstance(logger, logging.Logger):
            logger.handlers.clear()
            logger.setLevel(logging.NOTSET)
            logger.propagate = True
            logger.disabled = False
    host_resolution.system_resolver = _MACHINE_RESOLVER


def _exit_code(value: object) -> int:
    """As the interpreter ends on `sys.exit(value)`: None is 0, a number itself, anything else is said on
    stderr and is 1."""
    if value is None:
        return 0
    if isinstance(value, int):
        return value & 0xFF
    sys.stderr.write(f"{value}\n")
    return 1
