"""Flags that make a writing command only read (`search-replace --dry-run`, list commands with
`--skip-update-check`): the policy classifies such a command as a read when the flag is given as
it must be."""

from __future__ import annotations

from dataclasses import dataclass

from wp_agent.command_line.parsed_command import ParsedCommand


@dataclass(frozen=True)
class ReadOnlyFlag:
    """A flag that makes a writing command only read: given bare and once (not `=0`, not `--no-…`)."""

    flag: str
    reason_ja: str


# search-replace --dry-run only reports. Listing plugins or themes runs WordPress's update check,
# which stores what it fetched (a site transient), unless --skip-update-check.
_READ_ONLY_FLAGS: dict[tuple[str, ...], ReadOnlyFlag] = {
    ("search-replace",): ReadOnlyFlag("dry-run", "置換の試行（--dry-run）は変更を行わないため実行できます"),
    ("plugin", "list"): ReadOnlyFlag(
        "skip-update-check", "更新確認を省略した一覧（--skip-update-check）は変更を行わないため実行できます"
    ),
    ("theme", "list"): ReadOnlyFlag(
        "skip-update-check", "更新確認を省略した一覧（--skip-update-check）は変更を行わないため実行できます"
    ),
    # Without discovery the URL is only matched against the registered providers (nothing fetched).
    ("embed", "provider", "match"): ReadOnlyFlag(
        "no-discover",
        "取得をしない判定（--no-discover）は登録済みのプロバイダと照合するだけのため実行できます",
    ),
    ("media", "fix-orientation"): ReadOnlyFlag(
        "dry-run", "向きの補正の確認（--dry-run）は画像を書き換えないため実行できます"
    ),
}


def read_only_alternative(path: tuple[str, ...]) -> ReadOnlyFlag | None:
    """The flag that would make this writing command a read (whether given or not)."""
    return _READ_ONLY_FLAGS.get(path)


def read_only_flag(cmd: ParsedCommand, path: tuple[str, ...]) -> ReadOnlyFlag | None:
    """The flag that makes this command a read, when it is given as it must be."""
    read_only = _READ_ONLY_FLAGS.get(path)
    if read_only is None:
        return None
    given = [o for o in cmd.options if o.name in {read_only.flag, f"no-{read_only.flag}"}]
    if len(given) == 1 and given[0].name == read_only.flag and given[0].value is None:
        return read_only
    return None
