"""Property: no command string the policy lets through can make a shell run anything but `wp argv`.

Checked against a real /bin/sh: the argv the policy returns is sent the way the SSH executor sends
it (every argument quoted), and the shell must hand exactly that argv to `wp` and do nothing else.
"""

from __future__ import annotations

import os
import shlex
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from wp_agent.command_line.shell_syntax import find_shell_hazards
from wp_agent.policy import CommandPolicy, PolicyCategory

POLICY = CommandPolicy()
SHELL_SPECIALS = ";&|<>()`$\\'\"\n\r\t *?[]{}#~=!-"
ALLOWED_PREFIXES = [
    "post list",
    "post create",
    "post update 45",
    "term create category",
    "option update posts_per_page",
    "post meta update 45 description",
    "wp post get 45",
]

_free_text = st.text(alphabet=st.sampled_from(list(SHELL_SPECIALS) + list("abcAZ09あ漢/.,:@")), max_size=24)


@st.composite
def _word(draw: st.DrawFn) -> str:
    body = draw(_free_text)
    style = draw(st.sampled_from(["bare", "single", "double", "mixed"]))
    name = draw(st.sampled_from(["--post_title=", "--post_content=", "--s=", ""]))
    if style == "single":
        return name + "'" + body.replace("'", "") + "'"
    if style == "double":
        return name + '"' + body.replace('"', "") + '"'
    if style == "mixed":
        return name + body
    return name + body.replace(" ", "")


@st.composite
def command_strings(draw: st.DrawFn) -> str:
    if draw(st.booleans()):
        words = draw(st.lists(_word(), min_size=0, max_size=4))
        return " ".join([draw(st.sampled_from(ALLOWED_PREFIXES)), *words])
    return draw(st.text(alphabet=st.sampled_from(list(SHELL_SPECIALS) + list("postlie wdrb")), max_size=40))


def _shell_argv(command_line: str, workdir: Path) -> list[str]:
    """What a POSIX shell passes to `wp` for this command line (wp is a function printing its args)."""
    script = 'wp() { printf "%s\\0" "$@"; }\nset -f\n' + command_line + "\n"
    completed = subprocess.run(
        ["/bin/sh", "-c", script],
        capture_output=True,
        cwd=workdir,
        env={"PATH": "/nonexistent"},
        timeout=10,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr
    out = completed.stdout.decode("utf-8", "surrogateescape")
    return out.split("\0")[:-1] if out else []


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(command=command_strings())
def test_allowed_argv_reaches_wp_unchanged_through_a_shell(command: str, tmp_path: Path) -> None:
    decision = POLICY.classify(command)
    if decision.category is PolicyCategory.BLOCKED:
        return
    # The SSH executor quotes every argument; the remote shell must rebuild exactly this argv.
    remote_line = shlex.join(["wp", *decision.argv])
    assert _shell_argv(remote_line, tmp_path) == list(decision.argv)
    assert list(tmp_path.iterdir()) == []  # no redirection created a file


# Characters whose meaning differs between "no shell" and "shell" without being operators
# (expansions, globs, comments, tilde) are left out so the two readings can be compared exactly.
_COMPARABLE = st.text(alphabet=st.sampled_from(list(";&|<>()`\\'\" \tabcあ-=.,")), max_size=40)


@settings(max_examples=1000, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(tail=_COMPARABLE, prefix=st.sampled_from(ALLOWED_PREFIXES))
def test_hazard_free_text_means_the_same_to_the_policy_and_to_a_shell(
    prefix: str, tail: str, tmp_path: Path
) -> None:
    command = f"{prefix} {tail}"
    if find_shell_hazards(command):
        return
    argv = shlex.split(command)
    if argv[0] != "wp":
        argv = ["wp", *argv]
        command = "wp " + command
    # Without hazards the shell sees one simple command: the same words the policy saw.
    assert _shell_argv(command, tmp_path) == argv[1:]


@pytest.mark.parametrize(
    "command",
    [
        'post create --post_title="A & B" --post_content="<p>x | y</p>"',
        "post create --post_content='$(id) `id` ${HOME} ; rm -rf / && echo pwned'",
        'post create --post_title="x; y" --post_content="a > b < c || d"',
        "post create --post_title='it'\"'\"'s'",
        'post create --post_content="line1\nline2"',
    ],
)
def test_tricky_allowed_commands_round_trip_through_a_shell(command: str, tmp_path: Path) -> None:
    decision = POLICY.classify(command)
    assert decision.category is PolicyCategory.WRITE
    assert _shell_argv(shlex.join(["wp", *decision.argv]), tmp_path) == list(decision.argv)


def test_shell_is_available() -> None:
    assert os.path.exists("/bin/sh")
