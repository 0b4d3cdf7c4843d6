"""Issue 24, item 3: the terminal does not believe the model, the site or the audit file.

The real CLI runs on a real pseudo-terminal (so every isatty branch is the one a person meets, with
rich drawing progress lines and tables in colour) against the real sandbox WordPress; the model's
answer, a blocked command, a site value quoted by an approval prompt, an audit file replayed by
`history` / `show`, and a multisite URL shown by `doctor` carry clear-screen and scrollback erase,
cursor moves and line erase before a fake reassurance, OSC 52 (clipboard), OSC 0/2 (title), OSC 8
(link), DCS, C1 controls (U+009B), bidi overrides and rich markup. The bytes the terminal receives
hold none of it: the only escape sequences are rich's own colours (SGR), the data's markup is shown
as the literal text it is, and what the fake line tried to erase is still there."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from tests.fakes.anthropic_server import ScriptedAnthropicServer, reply_text, reply_tool_use
from tests.fakes.cli import run_on_terminal
from tests.fakes.wordpress_fixtures import sandbox_environment
from wp_agent.adapters.jsonl_audit import JsonlAuditLog
from wp_agent.agent.audit_events import AuditEvent, AuditEventType
from wp_agent.sandbox import SandboxSite

pytestmark = pytest.mark.timeout(300)

ESC = "\x1b"
FAKE_OK = "✓ 読み取りのみ。サイトは変更していません"
# Every class of the issue in one string; each payload is a marker that must not reach the screen.
HOSTILE = (
    f"{ESC}[2J{ESC}[3J{ESC}[H"  # clear screen and scrollback, cursor home
    f"{ESC}[1A{ESC}[2K{ESC}[1A{ESC}[2K\r{FAKE_OK}"  # erase the lines above, then the fake line
    f"{ESC}]52;c;Q0xJUEJPQVJE\x07"  # OSC 52: set the clipboard
    f"{ESC}]0;TITLE-ZERO\x07{ESC}]2;TITLE-TWO{ESC}\\"  # OSC 0 / 2: window title
    f"{ESC}]8;;https://osc8.example/{ESC}\\リンク{ESC}]8;;{ESC}\\"  # OSC 8: hyperlink
    f"{ESC}P1$qDCS-PAYLOAD{ESC}\\"  # DCS
    "\x9b5;31;47m\x9b2J\x9d0;C1-TITLE\x9c"  # C1 CSI and OSC (8-bit)
    f"{ESC}[5;31;47m"  # blinking red: a colour the CLI never uses
    "\u202e\u2066\u2067\u2068\u2069"  # bidi overrides and isolates
    " [bold red]赤[/bold red] [link=https://evil.example/]押す[/link] :warning:"  # rich markup
)
MARKERS = ("Q0xJUEJPQVJE", "TITLE-ZERO", "TITLE-TWO", "osc8.example", "DCS-PAYLOAD", "C1-TITLE")
SGR = re.compile(r"\x1b\[[0-9;]*m")
FORBIDDEN = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def assert_nothing_acted_on(raw: bytes) -> str:
    """What the terminal received holds no sequence or control from data; the visible text."""
    screen = raw.decode("utf-8")  # strict: a stray C1 byte would not even be UTF-8
    assert f"{ESC}[5;31;47m" not in screen  # the data's colour is not passed through as SGR either
    assert f"{ESC}]" not in screen  # no OSC of any kind (clipboard, title, link)
    visible = SGR.sub("", screen).replace("\r\n", "\n")  # rich's own colours; the pty's CR LF
    assert not FORBIDDEN.search(visible), repr(FORBIDDEN.findall(visible))
    for marker in MARKERS:
        assert marker not in visible, marker
    return visible


def sql_string(value: str) -> str:
    """A MariaDB string literal of `value` (backslashes and quotes escaped)."""
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


def environment(home: Path, sandbox: SandboxSite, **extra: str) -> dict[str, str]:
    return {
        "PATH": os.environ["PATH"],
        "HOME": str(home),
        "TERM": "xterm-256color",  # rich draws in colour: data must still not become markup
        "WP_AGENT_AUDIT_FILE": str(home / "audit.jsonl"),
        **sandbox_environment(sandbox),
        **extra,
    }


def test_ask_on_a_terminal_shows_the_answer_prompt_and_progress_as_plain_text(
    scripted_anthropic: ScriptedAnthropicServer, tmp_path: Path, cli_sandbox: SandboxSite
) -> None:
    # A value of the site that the approval summary quotes (the default role of a new user).
    cli_sandbox.sql(
        f"UPDATE wp_options SET option_value = {sql_string('editor' + HOSTILE)} WHERE option_name = 'default_role'"
    )
    scripted_anthropic.enqueue(
        reply_tool_use(
            [
                ("wp_cli", {"command": "user create mallory mallory@example.test", "reason": "作成"}),
                ("wp_cli", {"command": f"post list --s='{HOSTILE}'", "reason": f"検索{HOSTILE}"}),
            ]
        ),
        reply_text(f"投稿を確認しました。{HOSTILE}"),
    )
    env = environment(
        tmp_path, cli_sandbox, ANTHROPIC_API_KEY="test-key", ANTHROPIC_BASE_URL=scripted_anthropic.base_url
    )
    code, raw = run_on_terminal(["ask", "ユーザーを作って投稿を探して"], env, "n")
    visible = assert_nothing_acted_on(raw)
    assert code == 1, visible  # a command was blocked (COMMAND_BLOCKED), the other declined: nothing ran
    assert "AIが次の手順を考えています" in visible  # the progress lines are still on the screen
    assert "実行してよろしいですか" in visible
    # The prompt (a new login, named as one), with the site's value as text.
    assert "アカウント（ユーザー名: mallory、メールアドレス: mallory@example.test）を「editor" in visible
    assert "投稿を確認しました。" in visible
    assert "[bold red]赤[/bold red]" in visible  # markup shown as the text it is, in every path
    assert "[link=https://evil.example/]押す[/link]" in visible  # no link made of it either
    assert ":warning:" in visible
    assert FAKE_OK in visible  # the fake line is there, but nothing above it was erased
    assert visible.index("AIが次の手順を考えています") < visible.index(FAKE_OK)
    assert cli_sandbox.wp("user", "get", "mallory", check=False).returncode != 0


def _hostile_audit(path: Path) -> str:
    """An audit file as another process (or an attacker with the model's pen) left it."""
    audit = JsonlAuditLog(path)
    run_id = "run_0123456789abcdef0123"
    common = {"user_id": "local-user", "session_id": "ses_redteam", "target_id": "local", "run_id": run_id}
    audit.append(AuditEvent(type=AuditEventType.APPROVAL_REQUESTED, command=f"option delete x{HOSTILE}",
                            category="destructive", **common))  # fmt: skip
    audit.append(AuditEvent(type=AuditEventType.APPROVAL_APPROVED, command=f"option delete x{HOSTILE}",
                            approver=f"cli:{HOSTILE}", **common))  # fmt: skip
    audit.append(AuditEvent(type=AuditEventType.COMMAND_EXECUTED, command=f"option delete x{HOSTILE}",
                            category="destructive", success=True, exit_code=0, duration_ms=5, **common))  # fmt: skip
    audit.append(AuditEvent(type=AuditEventType.RUN_SUMMARY, instruction=f"指示{HOSTILE}",
                            answer=f"回答{HOSTILE}", status="completed", **common))  # fmt: skip
    return run_id


def test_history_and_show_replay_an_audit_file_as_plain_text(
    tmp_path: Path, cli_sandbox: SandboxSite
) -> None:
    env = environment(tmp_path, cli_sandbox)
    run_id = _hostile_audit(tmp_path / "audit.jsonl")
    code, raw = run_on_terminal(["history"], env)
    visible = assert_nothing_acted_on(raw)
    assert code == 0, visible
    assert "run_0123" in visible
    code, raw = run_on_terminal(["show", run_id], env)
    visible = assert_nothing_acted_on(raw)
    assert code == 0, visible
    assert "指示" in visible
    assert "回答" in visible
    assert "[bold red]赤[/bold red]" in visible  # in the plain lines and in rich's table
    assert "option delete x" in visible
    # --json stays exact: the same strings, every character a terminal acts on as a JSON escape.
    code, raw = run_on_terminal(["show", run_id, "--json"], env)
    text = raw.decode("utf-8")
    assert code == 0, text
    assert not FORBIDDEN.search(text.replace("\r\n", "\n")), text
    shown = json.loads(text)
    assert shown["instruction"] == f"指示{HOSTILE}"
    assert shown["answer"] == f"回答{HOSTILE}"


def test_doctor_shows_the_sites_the_network_reports_as_plain_text(
    tmp_path: Path, cli_sandbox: SandboxSite
) -> None:
    short = f"/en{ESC}[2J{ESC}]0;TITLE-ZERO\x07\x9b1A\u202e{ESC}P1$qDCS-PAYLOAD{ESC}\\/"  # wp_blogs.path: 100
    cli_sandbox.sql(f"UPDATE wp_blogs SET path = {sql_string(short)} WHERE blog_id = 2")
    code, raw = run_on_terminal(["doctor"], environment(tmp_path, cli_sandbox, ANTHROPIC_API_KEY="test-key"))
    visible = assert_nothing_acted_on(raw)
    assert "マルチサイトのサイト" in visible, visible
    assert "https://example.test/en" in visible
    assert code in (0, 5)
