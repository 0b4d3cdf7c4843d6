"""A fleet plan's per-site values, decided without the model: which names a step may use, how a looked-up
answer becomes a value, how a step's command is filled in on a site, and whether one site's approval text
is the approved one (the canary's, looked-up values written back as `{name}`).

A value is one word of a narrow alphabet that never starts with `-`, so filling it in can neither split
a word of the command, nor add one, nor be read by WP-CLI as an option."""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping

from wp_agent.whole_values import whole

LOOKUP_NAME = whole(r"[a-z][a-z0-9_]{0,30}", "post", "term_id_2")
_VALUE = whole(r"[A-Za-z0-9_][A-Za-z0-9_.@:/+=-]{0,199}", "45", "hello-world", "https://example.test/shop/")
_PLACEHOLDER = re.compile(r"\{([a-z][a-z0-9_]{0,30})\}")
MAX_LOOKUPS = 5


class PlanStepError(ValueError):
    """A step the plan cannot take (said to the model in Japanese). `absent`: the site has nothing the
    lookup names (nothing to do there), as against an answer that is not one plain word."""

    def __init__(self, message_ja: str, *, absent: bool = False) -> None:
        super().__init__(message_ja)
        self.message_ja = message_ja
        self.absent = absent


def placeholders(command: str) -> list[str]:
    """The `{name}`s a command uses, in order of first use."""
    seen: list[str] = []
    for name in _PLACEHOLDER.findall(command):
        if name not in seen:
            seen.append(name)
    return seen


def check_lookups(command: str, lookups: Mapping[str, str]) -> None:
    """Every `{name}` the command uses has a lookup, and every lookup is used; names are plain."""
    if len(lookups) > MAX_LOOKUPS:
        raise PlanStepError(f"lookups は{MAX_LOOKUPS}件までです。")
    for name, read in lookups.items():
        if not LOOKUP_NAME.fits(name):
            raise PlanStepError(
                f"lookups の名前「{name[:40]}」は英小文字で始まる英小文字・数字・_ にしてください。"
            )
        if placeholders(read) or not read.strip():
            raise PlanStepError(f"lookups の「{name}」の読み取りコマンドが空か、{{名前}} を含んでいます。")
    used = placeholders(command)
    missing = [name for name in used if name not in lookups]
    if missing:
        raise PlanStepError(f"コマンド中の {{{missing[0]}}} に対応する lookups がありません。")
    unused = [name for name in lookups if name not in used]
    if unused:
        raise PlanStepError(
            f"lookups の「{unused[0]}」がコマンド中で {{{unused[0]}}} として使われていません。"
        )


_OPTION_VALUE = re.compile(r"--[a-z0-9][a-z0-9_-]*=\{[a-z][a-z0-9_]{0,30}\}")


def check_placement(command: str, path_length: int) -> None:
    """A per-site value stands only where a value goes: a whole argument after the command's words
    (`post delete {post}`), or the whole value of an option (`--post_parent={parent}`) — never part of a
    word, an option's name or a command word, where a site's answer would choose what the command does."""
    try:
        words = shlex.split(command)
    except ValueError:
        raise PlanStepError("コマンドの引用符が閉じていません。") from None
    words = words[1:] if words[:1] == ["wp"] else words
    for index, word in enumerate(words):
        if not placeholders(word):
            continue
        alone = _PLACEHOLDER.fullmatch(word) is not None and index >= path_length
        if not (alone or _OPTION_VALUE.fullmatch(word)):
            raise PlanStepError(
                f"「{word[:60]}」: サイトごとの値（{{名前}}）は、引数1つか --オプション=値 の値として、それだけで書いてください。"
            )


def looked_up_value(name: str, stdout: str | None) -> str:
    """A lookup's answer as a value: exactly one word (e.g. an ID); PlanStepError saying why not."""
    words = (stdout or "").split()
    if not words:
        raise PlanStepError(f"「{name}」に当たるものがこのサイトにありません。", absent=True)
    if len(words) > 1:
        raise PlanStepError(
            f"「{name}」の読み取り結果が1つに決まりません（{len(words)}件: {' '.join(words[:5])[:120]}）。"
        )
    if not _VALUE.fits(words[0]):
        raise PlanStepError(f"「{name}」の読み取り結果「{words[0][:60]}」は値として使えません。")
    return words[0]


def fill(command: str, values: Mapping[str, str]) -> str:
    """The command with each `{name}` replaced by its value (every name must have one)."""
    return _PLACEHOLDER.sub(lambda match: values[match.group(1)], command)


def as_template(text: str, values: Mapping[str, str]) -> str:
    """A site's approval text with its looked-up values written back as `{name}`: wherever the value
    stands as a whole word (not inside a longer number or name). Longer values first."""
    for name, value in sorted(values.items(), key=lambda item: -len(item[1])):
        text = re.sub(rf"(?<![A-Za-z0-9_]){re.escape(value)}(?![A-Za-z0-9_])", "{" + name + "}", text)
    return text


def step_tool_use_id(run_id: str, index: int) -> str:
    """The tool-use id a site's run gives the plan's step `index` (its opening writes the steps)."""
    return f"toolu_fleet_{run_id.removeprefix('run_')}_{index}"


def step_index(run_id: str, tool_use_id: str) -> int | None:
    """Which of the plan's steps a tool call of a site's run is; None for any other call."""
    prefix = step_tool_use_id(run_id, 0)[:-1]
    rest = tool_use_id.removeprefix(prefix)
    return int(rest) if rest != tool_use_id and rest.isdigit() else None
