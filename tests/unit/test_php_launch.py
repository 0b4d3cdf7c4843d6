"""php_launch: which WP_CLI_BIN and shebang forms start PHP with the cache, and the command lines
built from a launch (the probe against real sh and PHP: tests/integration/test_php_launch.py)."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable, Mapping

import pytest

from wp_agent.executors.php_launch import (
    LaunchReason,
    PhpLaunch,
    ShellAnswer,
    parse_shebang,
    probe_steps,
    refused_at_startup,
    run_probe,
)
from wp_agent.executors.ssh_command import build_remote_command

CACHED = PhpLaunch(
    LaunchReason.OPCACHE,
    program=("/usr/bin/env", "php"),
    script="/usr/local/bin/wp",
    shebang="#!/usr/bin/env php",
    cache_dir="/home/deploy/.cache/wp-agent/opcache",
    php_version="8.2.1",
)


@pytest.mark.parametrize(
    ("line", "program"),
    [
        ("#!/usr/bin/env php", ("/usr/bin/env", "php")),
        ("#!/usr/bin/env php8.2", ("/usr/bin/env", "php8.2")),
        ("#! /usr/bin/php8.1", ("/usr/bin/php8.1",)),
        ("#!/opt/php/bin/php", ("/opt/php/bin/php",)),
        ("#!/bin/sh", None),
        ("#!/usr/bin/env bash", None),
        ("#!/usr/bin/env -S php -d x=1", None),  # env options: not taken apart
        ("#!/usr/bin/php -q", None),  # an argument to PHP itself: not taken apart
        ("#!php", None),  # the kernel needs a path
        ("<?php", None),
        ("\x7fELF\x02\x01", None),
    ],
)
def test_shebangs_we_start_php_for(line: str, program: tuple[str, ...] | None) -> None:
    assert parse_shebang(line) == program


def probe(run: Callable[[str], ShellAnswer], wp_cli_bin: str) -> PhpLaunch:
    return run_probe(probe_steps(wp_cli_bin), run)


class ScriptedShell:
    """Answers the probe's two steps (locate, check) without a host; records what was asked."""

    def __init__(
        self, located: tuple[int, str], checked: Mapping[str, object], verified: Mapping[str, object]
    ) -> None:
        self.located = located
        self.checked = checked
        self.verified = verified
        self.commands: list[str] = []

    def __call__(self, command: str) -> tuple[int, str, str]:
        self.commands.append(command)
        if command.startswith("wpagent_bin="):
            return self.located[0], self.located[1], ""
        code = 0 if not self.checked.get("problem") else 3
        out = json.dumps(self.checked) + "\n" + (json.dumps(self.verified) + "\n" if code == 0 else "")
        return code, out, ""


GOOD_CHECK = {
    "php": "8.2.1",
    "phar": True,
    "opcache": True,
    "dir": "/h/.cache/wp-agent/opcache",
    "problem": "",
}
GOOD_VERIFY = {"enable": "1", "enable_cli": "1", "only": "1", "dir": "/h/.cache/wp-agent/opcache"}


def test_the_probe_is_a_plan_decided_from_the_answers_alone() -> None:
    steps = probe_steps("wp")
    locate = next(steps)
    assert locate.startswith("wpagent_bin=")
    check = steps.send((0, "/usr/local/bin/wp\n#!/usr/bin/env php\n", ""))
    assert '"$HOME"/.cache/wp-agent/opcache' in check
    with pytest.raises(StopIteration) as finished:
        steps.send((0, json.dumps(GOOD_CHECK) + "\n" + json.dumps(GOOD_VERIFY) + "\n", ""))
    assert finished.value.value.reason is LaunchReason.OPCACHE


def test_a_phar_on_path_is_started_by_its_shebang_with_the_cache() -> None:
    shell = ScriptedShell((0, "/usr/local/bin/wp\n#!/usr/bin/env php\n"), GOOD_CHECK, GOOD_VERIFY)
    launch = probe(shell, "wp --allow-root")
    assert launch.reason is LaunchReason.OPCACHE
    assert launch.php_argv() == [
        "/usr/bin/env", "php", "-d", "opcache.enable_cli=1", "-d", "opcache.file_cache=/h/.cache/wp-agent/opcache",
        "-d", "opcache.file_cache_only=1", "-d", "opcache.file_cache_consistency_checks=0", "/usr/local/bin/wp", "--allow-root",
    ]  # fmt: skip
    assert launch.shebang == "#!/usr/bin/env php"
    assert "/usr/bin/env php -r" in shell.commands[1]
    assert "/usr/local/bin/wp" in shell.commands[1]


def test_php_in_wp_cli_bin_gets_our_flags_before_the_operators_own() -> None:
    shell = ScriptedShell((1, ""), GOOD_CHECK, GOOD_VERIFY)
    launch = probe(shell, "php8.2 -d memory_limit=1G -c /etc/wp.ini /opt/wp-cli.phar --color")
    assert launch.reason is LaunchReason.OPCACHE
    assert launch.php_argv() == [
        "php8.2", "-d", "opcache.enable_cli=1", "-d", "opcache.file_cache=/h/.cache/wp-agent/opcache",
        "-d", "opcache.file_cache_only=1", "-d", "opcache.file_cache_consistency_checks=0", "-d", "memory_limit=1G", "-c", "/etc/wp.ini", "/opt/wp-cli.phar", "--color",
    ]  # fmt: skip
    assert launch.shebang == ""
    assert len(shell.commands) == 1  # nothing to locate


@pytest.mark.parametrize(
    ("wp_cli_bin", "located", "reason"),
    [
        ("wp", (3, ""), LaunchReason.NOT_FOUND),
        ("wp", (0, "/usr/local/bin/wp\n#!/bin/bash\n"), LaunchReason.NOT_PHP),
        ("wp", (0, "/usr/local/bin/wp\n\x7fELF\n"), LaunchReason.NOT_PHP),
        ("sudo -u www-data wp", (0, "/usr/bin/sudo\n\x7fELF\n"), LaunchReason.NOT_PHP),
        ("wp", (0, "/usr/local/bin/wp\n#!/usr/bin/env -S php -n\n"), LaunchReason.UNSUPPORTED),
        ("php -z ext.so /opt/wp.phar", (0, ""), LaunchReason.UNSUPPORTED),
        ("php -d x=1", (0, ""), LaunchReason.UNSUPPORTED),
        ("'unbalanced", (0, ""), LaunchReason.UNSUPPORTED),
    ],
)
def test_what_runs_as_configured_before_php_is_asked(
    wp_cli_bin: str, located: tuple[int, str], reason: LaunchReason
) -> None:
    shell = ScriptedShell(located, GOOD_CHECK, GOOD_VERIFY)
    launch = probe(shell, wp_cli_bin)
    assert launch.reason is reason
    assert not launch.cached
    assert all(c.startswith("wpagent_bin=") for c in shell.commands)  # PHP never ran


@pytest.mark.parametrize(
    ("checked", "verified", "reason"),
    [
        ({**GOOD_CHECK, "phar": False, "problem": "not_phar"}, GOOD_VERIFY, LaunchReason.NOT_PHAR),
        ({**GOOD_CHECK, "opcache": False, "problem": "no_opcache"}, GOOD_VERIFY, LaunchReason.NO_OPCACHE),
        ({**GOOD_CHECK, "problem": "owned by another user: /h/.cache/wp-agent/opcache"}, GOOD_VERIFY,
         LaunchReason.UNSAFE_DIR),
        ({**GOOD_CHECK, "problem": "cannot create: /var/www/.cache"}, GOOD_VERIFY, LaunchReason.NO_CACHE_DIR),
        ({**GOOD_CHECK, "problem": "missing home: /nonexistent"}, GOOD_VERIFY, LaunchReason.NO_CACHE_DIR),
        (GOOD_CHECK, {**GOOD_VERIFY, "enable": "0"}, LaunchReason.OPCACHE_OFF),  # the operator's php.ini wins
        (GOOD_CHECK, {**GOOD_VERIFY, "dir": "/tmp"}, LaunchReason.OPCACHE_OFF),  # a file_cache of their own
        ({**GOOD_CHECK, "dir": "/h/odd dir"}, GOOD_VERIFY, LaunchReason.PROBE_FAILED),
    ],
)  # fmt: skip
def test_what_php_itself_says_decides(
    checked: dict[str, object], verified: dict[str, object], reason: LaunchReason
) -> None:
    launch = probe(ScriptedShell((0, "/usr/local/bin/wp\n#!/usr/bin/env php\n"), checked, verified), "wp")
    assert launch.reason is reason
    assert not launch.cached


def test_a_probe_that_answers_nonsense_is_a_plain_launch() -> None:
    def garbage(command: str) -> tuple[int, str, str]:
        return (
            (0, "/usr/bin/wp\n#!/usr/bin/env php\n", "")
            if command.startswith("wpagent_bin")
            else (0, "]]", "x")
        )

    assert probe(garbage, "wp").reason is LaunchReason.PROBE_FAILED

    def no_php(command: str) -> tuple[int, str, str]:
        return 127, "", "env: 'php': No such file or directory"

    assert probe(no_php, "php /opt/wp.phar").reason is LaunchReason.NOT_FOUND


def test_the_remote_command_is_unchanged_without_a_cached_launch() -> None:
    plain = "exec timeout -k 5 60 wp --path=/srv/wp post list"
    assert build_remote_command("wp", "/srv/wp", ["post", "list"], 60) == plain
    assert (
        build_remote_command("wp", "/srv/wp", ["post", "list"], 60, launch=PhpLaunch(LaunchReason.NOT_PHP))
        == plain
    )


def test_the_remote_command_checks_the_launch_on_the_host_then_runs_the_same_arguments() -> None:
    hostile = ["post", "create", "--post_title=a'; touch /tmp/x; echo '", "$(id)", ""]
    command = build_remote_command("wp", "/srv/my wp", hostile, 60, wp_user="山田", launch=CACHED)
    # Both branches get exactly the arguments set once; the shell sees them only as data.
    for guard_holds in (True, False):
        script = command.replace("exec ", "printf '%s\\n' ")
        script = script.replace(CACHED.shell_guard(), "true" if guard_holds else "false")
        shown = subprocess.run(
            ["sh", "-c", script.replace("; fi; printf", "; exit; fi; printf")],
            capture_output=True, text=True, check=True,
        ).stdout.split("\n")  # fmt: skip
        words = shown[: shown.index("--path=/srv/my wp")]
        expected_start = ["timeout", "-k", "5", "60", *(CACHED.php_argv() if guard_holds else ["wp"])]
        assert words == expected_start
        assert shown[len(words) :] == ["--path=/srv/my wp", "--user=山田", *hostile, ""]


def test_a_php_that_refused_the_cache_at_start_up_is_recognised() -> None:
    stderr = "Tue Nov 25 21:10:23 2026 (32111): Fatal Error opcache.file_cache_only is set without a proper setting of opcache.file_cache\n"
    assert refused_at_startup(CACHED, 254, "", stderr)
    assert not refused_at_startup(CACHED, 254, "out", stderr)  # something ran
    assert not refused_at_startup(CACHED, 1, "", stderr)
    assert not refused_at_startup(CACHED, 254, "", "Error: " + stderr)  # WP-CLI's own output
    assert not refused_at_startup(PhpLaunch(LaunchReason.NOT_PHP), 254, "", stderr)


def test_doctor_lines_say_why_in_japanese() -> None:
    assert "/home/deploy/.cache/wp-agent/opcache" in CACHED.describe_ja()
    unsafe = PhpLaunch(LaunchReason.UNSAFE_DIR, "reachable by others (mode 755): /h/.cache/wp-agent/opcache")
    assert unsafe.describe_ja().endswith(
        "（/h/.cache/wp-agent/opcache: 他のユーザーからアクセスできます（権限 755））"
    )
    for reason in LaunchReason:
        assert PhpLaunch(reason).describe_ja()


def test_the_guard_quotes_what_it_checks() -> None:
    odd = PhpLaunch(
        LaunchReason.OPCACHE, script="/opt/it's/wp", shebang="#!/usr/bin/env php", cache_dir="/h/c"
    )
    done = subprocess.run(["sh", "-c", f"if {odd.shell_guard()}; then echo yes; else echo no; fi"],
                          capture_output=True, text=True, check=True)  # fmt: skip
    assert done.stdout == "no\n"
