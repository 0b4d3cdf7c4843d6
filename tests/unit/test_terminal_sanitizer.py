"""The CLI's one way to the screen (wp_agent.cli.terminal): what a terminal would act on never leaves
it — control characters, escape sequences in 7- and 8-bit form, bidi controls, rich markup — while
text, newlines and tabs stay as they are, and `--json` stays the same JSON value."""

from __future__ import annotations

import io
import json
import logging
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from wp_agent.cli import run_output, terminal
from wp_agent.cli.logs import FieldsFormatter
from wp_agent.cli.main import main
from wp_agent.errors import AgentErrorCode
from wp_agent.models.agent_io import AgentErrorInfo, AgentOutput, ExecutedCommand

# What must never reach a terminal from data: C0 but newline and tab, DEL, C1, Bidi_Control.
FORBIDDEN = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")

ESC = "\x1b"
HOSTILE = {
    "clear screen and scrollback": f"{ESC}[2J{ESC}[3J{ESC}[H",
    "erase lines, cursor up": f"{ESC}[1A{ESC}[2K{ESC}[5F{ESC}[10;1H",
    "OSC 52 clipboard (BEL)": f"{ESC}]52;c;cm0gLXJmIH4K\x07",
    "OSC 52 clipboard (ST)": f"{ESC}]52;c;cm0gLXJmIH4K{ESC}\\",
    "OSC 0 window title": f"{ESC}]0;PWNED-TITLE\x07",
    "OSC 2 window title": f"{ESC}]2;PWNED-TITLE{ESC}\\",
    "OSC 8 hyperlink": f"{ESC}]8;;https://evil.example/{ESC}\\クリック{ESC}]8;;{ESC}\\",
    "DCS": f"{ESC}P1$qm-PAYLOAD{ESC}\\",
    "APC / PM / SOS": f"{ESC}_APC-PAYLOAD{ESC}\\{ESC}^PM-PAYLOAD{ESC}\\{ESC}XSOS-PAYLOAD{ESC}\\",
    "C1 CSI (U+009B)": "\x9b2J\x9b1;31m",
    "C1 OSC (U+009D) and ST (U+009C)": "\x9d0;PWNED-TITLE\x9c",
    "reset, save/restore cursor, charset": f"{ESC}c{ESC}7{ESC}8{ESC}(0{ESC}#8",
    "carriage return overwrite": "本物\r偽物",
    "backspace and bell": "ab\x08\x08\x07",
    "bidi override": "wp post list \u202e--force\u202c \u2066x\u2069 \u2067y\u2069 \u2068z\u2069 \u200f",
}


@pytest.mark.parametrize("hostile", list(HOSTILE.values()), ids=list(HOSTILE))
def test_every_hostile_sequence_is_removed_with_its_payload(hostile: str) -> None:
    shown = terminal.sanitize(f"前{hostile}後")
    assert not FORBIDDEN.search(shown), repr(shown)
    assert shown.startswith("前")
    assert shown.endswith("後")
    for payload in ("PWNED-TITLE", "cm0gLXJmIH4K", "PAYLOAD", "evil.example", "2J", "1;31m"):
        assert payload not in shown, repr(shown)


def test_the_fake_reassurance_cannot_erase_what_came_before() -> None:
    answer = f"完了しました。{ESC}[1A{ESC}[2K{ESC}[1A{ESC}[2K\r✓ 読み取りのみ。サイトは変更していません"
    assert terminal.sanitize(answer) == "完了しました。✓ 読み取りのみ。サイトは変更していません"


def test_text_newlines_and_tabs_stay_as_they_are() -> None:
    text = "投稿一覧:\n\tID 45「秋の新メニュー」 [bold red]x[/] 🎉 ﾃｽﾄ\n"
    assert terminal.sanitize(text) == text


@given(st.text())
def test_nothing_a_terminal_acts_on_survives_and_sanitizing_twice_changes_nothing(text: str) -> None:
    shown = terminal.sanitize(text)
    assert not FORBIDDEN.search(shown)
    assert terminal.sanitize(shown) == shown


@given(
    st.text(
        st.characters(
            blacklist_categories=("Cc", "Cs"),
            blacklist_characters="\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069",
        )
    )
)
def test_text_without_controls_is_unchanged(text: str) -> None:
    assert terminal.sanitize(text) == text


@given(
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.text(),
        lambda inner: st.lists(inner) | st.dictionaries(st.text(), inner),
        max_leaves=8,
    )
)
def test_json_stays_the_same_value_and_carries_nothing_a_terminal_acts_on(value: object) -> None:
    document = json.dumps(value, ensure_ascii=False)
    shown = terminal.json_for_terminal(document)
    assert json.loads(shown) == value
    assert not FORBIDDEN.search(shown)


class _Screen(io.StringIO):
    def isatty(self) -> bool:
        return True


SGR = re.compile(r"\x1b\[[0-9;]*m")  # rich's own colours: the only sequences allowed on a terminal


def _only_our_colours(screen: str) -> str:
    rest = SGR.sub("", screen)
    assert not FORBIDDEN.search(rest), repr(rest)
    return rest


def test_rich_tables_and_progress_lines_never_read_data_as_markup(monkeypatch: pytest.MonkeyPatch) -> None:
    screen = _Screen()
    monkeypatch.setattr("sys.stdout", screen)
    monkeypatch.setenv("TERM", "xterm-256color")
    monkeypatch.setenv("FORCE_COLOR", "1")
    hostile = f"[bold red]警告[/bold red] [link=https://evil.example/]押して[/link] :warning: {HOSTILE['OSC 52 clipboard (BEL)']}"
    terminal.out.table(["コマンド", "結果"], [[hostile, "成功"]], title=f"[blink]{ESC}[2J")
    terminal.out.styled(f"▶ 実行中: wp {hostile}", "cyan")
    shown = _only_our_colours(screen.getvalue())
    assert "[bold red]" in shown
    assert "[link=https://evil.example/]" in shown
    assert ":warning:" in shown  # no emoji code replaced
    assert "[blink]" in shown
    assert "\x1b]8;" not in screen.getvalue()  # no hyperlink made
    assert "\x1b[1;31m" not in screen.getvalue()  # no bold red from the data
    assert "cm0gLXJmIH4K" not in shown


def test_plain_tables_keep_one_line_per_row(monkeypatch: pytest.MonkeyPatch) -> None:
    screen = io.StringIO()
    monkeypatch.setattr("sys.stdout", screen)
    terminal.out.table(["a", "b"], [[f"x\ty\nz{ESC}[2J", "[b]w[/b]"]], title="t")
    assert screen.getvalue() == "t:\na\tb\nx y z\t[b]w[/b]\n"


def _fail(message: str) -> None:
    raise ValueError(message)


def test_log_lines_are_sanitized_with_their_fields_and_traceback() -> None:
    screen = io.StringIO()
    handler = terminal.log_handler(FieldsFormatter())
    handler.setStream(screen)
    logger = logging.getLogger("wp_agent.test_terminal")
    logger.addHandler(handler)
    logger.propagate = False
    try:
        try:
            _fail("bad" + HOSTILE["OSC 0 window title"])
        except ValueError:
            logger.exception(
                "failed %s",
                HOSTILE["clear screen and scrollback"],
                extra={"command": HOSTILE["C1 CSI (U+009B)"]},
            )
    finally:
        logger.removeHandler(handler)
    shown = screen.getvalue()
    assert not FORBIDDEN.search(shown)
    assert "PWNED-TITLE" not in shown
    assert "ValueError: bad" in shown


def test_argparse_errors_and_help_go_through_the_sanitizer(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main([f"--x{ESC}]0;PWNED-TITLE\x07{ESC}[2J"])
    captured = capsys.readouterr()
    assert "入力エラー [USAGE_ERROR]" in captured.err
    assert not FORBIDDEN.search(captured.err + captured.out)
    assert "PWNED-TITLE" not in captured.err


def test_json_output_escapes_c1_and_bidi_but_keeps_the_value(capsys: pytest.CaptureFixture[str]) -> None:
    document = json.dumps({"answer": f"a\x9b2J\u202eb{ESC}[2J"}, ensure_ascii=False)
    terminal.out.json(document)
    shown = capsys.readouterr().out
    assert shown.endswith("\n")
    assert json.loads(shown) == {"answer": f"a\x9b2J\u202eb{ESC}[2J"}
    assert not FORBIDDEN.search(shown.rstrip("\n"))


def test_the_answer_and_the_output_of_failed_commands_are_shown_as_plain_text() -> None:
    hostile = "".join(HOSTILE.values())
    output = AgentOutput(
        success=False,
        response=f"完了{hostile}",
        executed_commands=[
            ExecutedCommand(
                command=f"post list{hostile}",
                success=False,
                error=f"Error: {hostile}\n2行目",
                executed_at="2026-01-01T00:00:00Z",
                duration_ms=3,
            ),
        ],
        error=AgentErrorInfo(code=AgentErrorCode.PARTIAL_FAILURE, message=f"一部失敗{hostile}"),
    )
    screen = io.StringIO()
    run_output.print_human(output, terminal.Stream(lambda: screen), [f"post delete 1{hostile}"], None)
    shown = screen.getvalue()
    assert not FORBIDDEN.search(shown), repr(shown)
    assert "PWNED-TITLE" not in shown
    assert "理由: Error: " in shown
    assert "完了" in shown
