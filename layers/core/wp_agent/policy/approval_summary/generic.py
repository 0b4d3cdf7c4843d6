"""Commands told argument by argument (the table's SPELLED_OUT), and the generic summary of any other."""

from __future__ import annotations

from wp_agent.command_line.parsed_command import ParsedCommand
from wp_agent.policy.approval_summary.common import DELETES, IRREVERSIBLE_PATHS, OBJECT_NAMES, listed
from wp_agent.policy.command_grammar import CommandReading, read_command
from wp_agent.policy.command_policy import PolicyDecision
from wp_agent.policy.command_table import ALLOWED_COMMANDS, NEWER_THAN_PINNED
from wp_agent.policy.site_reads import StateReader


def spelled_out(
    parsed: ParsedCommand, path: tuple[str, ...], args: list[str], read: StateReader | None
) -> tuple[str, str] | None:
    """A held command no summary of ours explains: every argument by its synopsis name and every option
    with its value, as WP-CLI reads them (secrets masked), so the person approves exactly what runs."""
    reading = read_command(parsed, path)
    if not isinstance(reading, CommandReading):
        return None
    arguments = dict(reading.arguments)
    words_at = arguments.get("key-path", ())
    if path[-1] == "patch" and len(words_at) > 1 and reading.word("action") != "delete":
        # `patch insert|update … <key-path>… <value>`: WP-CLI takes the last word as the value
        arguments["key-path"], arguments["value"] = words_at[:-1], words_at[-1:]
    given = [
        f"{name}「{' > '.join(words) if name == 'key-path' else ' '.join(words)}」"
        for name, words in arguments.items()
    ]
    given += [f"--{name}" + (f"={value}" if value is not None else "") for name, value in reading.options.items()
              if name not in {"yes", "url"}]  # fmt: skip
    said = f"（{'、'.join(given)}）" if given else ""
    unproven = (
        "このコマンドはエージェントが動作を確かめたWP-CLI（2.10.0）より新しく、影響を事前に確かめられません。"
        if path in NEWER_THAN_PINNED
        else "このコマンドの影響はエージェントが事前に確かめていません。"
    )
    entry = ALLOWED_COMMANDS.get(path)
    label = entry.label_ja if entry is not None else "操作"
    return (
        f"{label}（wp {' '.join(path)}）{said}を実行します",
        unproven + "指定された内容をそのまま示しています。",
    )


def generic(
    decision: PolicyDecision, parsed: ParsedCommand, path: tuple[str, ...], args: list[str]
) -> tuple[str, str]:
    everything = parsed.has_flag("all")
    label = decision.label_ja or "操作"
    impact = IRREVERSIBLE_PATHS.get(path) or DELETES.get(path)
    if impact is not None:
        target = f"全ての{OBJECT_NAMES.get(path[0], '対象')}" if everything else f"（{listed(args)}）"
        return f"{label}{target}を実行します", impact
    if path[:1] == ("plugin",) and path[1:] in {("deactivate",), ("toggle",)}:
        target = "全てのプラグイン" if everything else f"プラグイン「{listed(args)}」"
        verb = "無効化します" if path[1] == "deactivate" else "有効・無効を切り替えます"
        return f"{target}を{verb}", "プラグインの機能が停止し、サイト表示や動作に影響する可能性があります。"
    if path == ("search-replace",) and len(args) >= 2:
        return (
            f"データベース内の「{args[0]}」を「{args[1]}」に置換します",
            "多数のデータが書き換わります。元に戻すにはバックアップが必要です。",
        )
    if path == ("post", "update") and decision.rule == "confirm.post.trash_status":
        return (
            f"投稿（ID: {listed(args)}）をゴミ箱へ移動します",
            "ゴミ箱から復元できますが、サイトからは見えなくなります。",
        )
    if everything:
        return f"全ての対象に対して「{label}」を実行します", "一括操作のため、多数のデータに影響します。"
    target = f"（{listed(args)}）" if args else ""
    return f"{label}{target}を実行します", decision.reason_ja
