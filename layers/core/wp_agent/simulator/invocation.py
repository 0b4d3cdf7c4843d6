"""One simulated `wp` invocation: argv in; stdout, stderr and exit code out.

Order of events follows WP-CLI's Runner: parse arguments, find the command, check there is a
WordPress install (here: a site file), pick the site (`--url`), set the user (`--user`),
validate arguments against the synopsis, run. Faults and the bootstrap delay are applied
before the command runs; mutating commands run under the site's write lock.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn
from urllib.parse import urlsplit

from wp_agent.simulator.args import ParsedArgs, parse_argv
from wp_agent.simulator.context import Context, StdinReader
from wp_agent.simulator.faults import consume, flood_text, matching_fault
from wp_agent.simulator.model import Blog, JSONDict, Network
from wp_agent.simulator.output import Halt, Output, Terminal
from wp_agent.simulator.registry import Command, Node, resolve, usage_lines
from wp_agent.simulator.seed import build_site
from wp_agent.simulator.site import SiteStore, locate_site_file
from wp_agent.simulator.synopsis import validate
from wp_agent.simulator.wordpress.clock import Clock
from wp_agent.simulator.wordpress.users import find_user

BOOTSTRAP_ENV = "WP_SIM_BOOTSTRAP_MS"
CLOCK_ENV = "WP_SIM_NOW"
NOT_WORDPRESS = "This does not seem to be a WordPress installation.\nPass --path=`path/to/wordpress` or run `wp core download`."

Sleeper = Callable[[float], None]


@dataclass(frozen=True)
class SimResult:
    stdout: str
    stderr: str
    exit_code: int

    @property
    def ok(self) -> bool:
        return self.exit_code == 0


def run_wp(
    argv: Sequence[str],
    *,
    env: Mapping[str, str] | None = None,
    stdin: str = "",
    tty: bool = False,
    columns: int = 80,
    sleep: Sleeper = time.sleep,
) -> SimResult:
    """Run the simulator in-process (what tests use); `argv` excludes the leading `wp`."""
    environment = dict(os.environ if env is None else env)
    terminal = Terminal(piped=detect_piped(environment, default=not tty), columns=columns)
    out = Output(terminal=terminal)
    code = execute(list(argv), environment, out, lambda: stdin, sleep)
    return SimResult(out.stdout, out.stderr, code)


def detect_piped(env: Mapping[str, str], *, default: bool) -> bool:
    """php-cli-tools Shell::isPiped: SHELL_PIPE, when set, overrides TTY detection."""
    raw = env.get("SHELL_PIPE")
    if raw is None:
        return default
    return raw.strip().lower() in ("1", "true", "on", "yes")


def _sleep_ms(sleep: Sleeper, milliseconds: object) -> None:
    try:
        value = float(str(milliseconds))
    except ValueError:
        return
    if value > 0:
        sleep(value / 1000.0)


def execute(
    argv: list[str], env: Mapping[str, str], out: Output, read_stdin: StdinReader, sleep: Sleeper
) -> int:
    try:
        _execute(argv, env, out, read_stdin, sleep)
    except Halt as halt:
        return halt.code
    except Exception as problem:  # shown the way PHP reports an uncaught exception
        if env.get("WP_SIM_DEBUG"):
            raise
        out.write_err(f"PHP Fatal error:  Uncaught {type(problem).__name__}: {problem} in wp-sim\n")
        return 255
    return 0


def _back_compat(parsed: ParsedArgs) -> None:
    """The few Runner::back_compat_conversions the simulated commands need."""
    words = parsed.positional
    if words and words[0] in ("post-meta", "comment-meta", "user-meta"):
        words[0:1] = [words[0].split("-")[0], "meta"]
    if "help" in parsed.assoc:
        del parsed.assoc["help"]
        words.insert(0, "help")
    if len(words) > 1 and words[0] in ("post", "user") and words[1] == "list" and "ids" in parsed.assoc:
        del parsed.assoc["ids"]
        parsed.assoc["format"] = "ids"
    if "json" in parsed.assoc:
        del parsed.assoc["json"]
        parsed.assoc["format"] = "json"
    if len(words) > 1 and words[0] in ("plugin", "theme") and words[1] == "update-all":
        words[1] = "update"
        parsed.assoc["all"] = True


def _execute(
    argv: list[str], env: Mapping[str, str], out: Output, read_stdin: StdinReader, sleep: Sleeper
) -> None:
    _sleep_ms(sleep, env.get(BOOTSTRAP_ENV, "0"))
    parsed = parse_argv(argv)
    out.quiet = parsed.global_flag("quiet")
    _back_compat(parsed)
    words = parsed.positional or ["help"]

    wp_path = parsed.globals.get("path")
    if wp_path is True or wp_path == "":
        out.error("The --path parameter cannot be empty when provided")
    resolution = resolve(words)

    if words[0] == "help":
        from wp_agent.simulator.commands.help import show_help

        show_help(out, words[1:])
        return

    site_file = locate_site_file(dict(env), wp_path if isinstance(wp_path, str) else None)
    if site_file is None or (
        isinstance(wp_path, str) and "WP_SIM_SITE" not in env and not Path(wp_path).is_dir()
    ):
        if isinstance(resolution, str):
            out.warning(
                "No WordPress installation found. If the command '"
                + " ".join(words)
                + "' is in a plugin or theme, pass --path=`path/to/wordpress`."
            )
            out.error(resolution)
        if isinstance(resolution.target, Node):
            _show_composite_usage(out, resolution.target)
        out.error(NOT_WORDPRESS)
    if isinstance(resolution, str):
        out.error(resolution)
    if isinstance(resolution.target, Node):
        _show_composite_usage(out, resolution.target)
    command = resolution.target

    store = SiteStore(site_file)
    data = store.ensure()
    if BOOTSTRAP_ENV not in env:
        _sleep_ms(sleep, data.get("bootstrap_ms", 0))
    _apply_fault(store, data, command.path, out, sleep)

    network = Network(data)
    blog = _select_blog(network, parsed, out)
    args, assoc = resolution.args, dict(parsed.assoc)
    validate(out, command.path, command.synopsis, command.params, args, assoc)
    request = _Request(parsed, out, read_stdin, str(wp_path or ""), env, blog.blog_id)
    if not command.mutates:
        _run(command, network, request, args, assoc)
        return
    with store.locked():
        fresh = store.read() or build_site()
        try:
            _run(command, Network(fresh), request, args, assoc)
        except Halt:
            store.write(fresh)  # WordPress had already written whatever happened before the exit
            raise
        store.write(fresh)


def _show_composite_usage(out: Output, node: Node) -> NoReturn:
    if not node.path:
        from wp_agent.simulator.commands.help import show_help

        show_help(out, [])
        out.halt(0)
    for line in usage_lines(node):
        out.line(line)
    out.halt(0)


@dataclass(frozen=True)
class _Request:
    """Everything about the invocation a command needs besides its own arguments."""

    parsed: ParsedArgs
    out: Output
    read_stdin: StdinReader
    wp_path: str
    env: Mapping[str, str]
    blog_id: int


def _run(
    command: Command, network: Network, request: _Request, args: list[str], assoc: dict[str, str | bool]
) -> None:
    out = request.out
    context = Context(
        out=out,
        network=network,
        blog=network.blog(request.blog_id),
        clock=Clock.pinned_or_real(request.env.get(CLOCK_ENV) or network.raw.get("fixed_now_gmt")),
        command_path=command.path,
        wp_path=request.wp_path or "/var/www/html",
        assume_yes=assoc.get("yes") is True,
        read_stdin=request.read_stdin,
    )
    user_ref = request.parsed.global_str("user")
    if user_ref is not None:
        user = find_user(network, user_ref)
        if user is None:
            out.error(f"Invalid user ID, email or login: '{user_ref}'")
        context.current_user_id = user["ID"]
    command.handler(context, args, assoc)


def _select_blog(network: Network, parsed: ParsedArgs, out: Output) -> Blog:
    """`--url` picks a site of a multisite network, the way ms-settings.php matches domain+path."""
    url = parsed.global_str("url")
    if not network.multisite or not url:
        return network.blog(1)
    parts = urlsplit(url if "://" in url else f"http://{url}")
    domain = (parts.hostname or "").lower()
    request_path = parts.path or "/"
    best: tuple[int, int] | None = None
    for site in network.sites:
        if site["domain"].lower() != domain or site["deleted"]:
            continue
        if request_path.rstrip("/") + "/" == site["path"] or request_path.startswith(site["path"]):
            length = len(site["path"])
            if best is None or length > best[1]:
                best = (site["blog_id"], length)
    if best is None or not network.has_blog(best[0]):
        out.error(f"Site '{domain}{parts.path}' not found. Verify `--url=<url>` matches an existing site.")
    return network.blog(best[0])


def _apply_fault(store: SiteStore, data: JSONDict, command_path: str, out: Output, sleep: Sleeper) -> None:
    fault = matching_fault(Network(data).faults, command_path)
    if fault is None:
        return
    if fault.get("times") is not None:
        with store.locked():
            fresh = store.read() or data
            fault = consume(Network(fresh).faults, int(fault.get("id", 0)))
            store.write(fresh)
        if fault is None:
            return
    _sleep_ms(sleep, fault.get("delay_ms", 0))
    flood = int(fault.get("stdout_bytes") or 0)
    if flood > 0:
        out.write(flood_text(flood))
    error = fault.get("error")
    if error:
        out.error(str(error), int(fault.get("exit_code", 1)))
    if flood > 0:
        out.halt(0)
