"""The flags a held command may carry: each one the approval summary describes, or one that only
changes what WP-CLI prints.

A side flag changes what a destructive command does (`plugin deactivate --uninstall` runs the
uninstaller and deletes the plugin's files; `user delete --network` removes the user from every
site). A summary written for the plain command would tell the person something else than what runs,
so a flag the summary cannot describe is refused, never summarised as the plain command.
tests/unit/test_approval_summary_flags.py proves, for every path and flag listed here, that the
summary's text changes when the flag is given.
"""

from __future__ import annotations

from wp_agent.command_line.parsed_command import ParsedCommand
from wp_agent.policy.categories import PolicyCategory
from wp_agent.policy.command_grammar import synopsis_of
from wp_agent.policy.command_table import ALLOWED_COMMANDS, SPELLED_OUT
from wp_agent.policy.rule import Verdict, argument_rule

# What WP-CLI prints and how, and what the run sets itself (`--url` is the command's site, which the
# summary names; `--yes` answers WP-CLI's own question once the person has approved).
OUTPUT_FLAGS = frozenset(
    {"format", "porcelain", "fields", "field", "quiet", "no-color", "color", "debug", "url", "yes", "context"}
)
# path -> the side flags its approval summary describes (every other flag of the path is refused).
DESCRIBED_FLAGS: dict[tuple[str, ...], frozenset[str]] = {
    tuple(path.split()): frozenset(flags.split())
    for path, flags in {
        "post delete": "force defer-term-counting",
        "post meta delete": "all",
        "term delete": "by",
        "term meta delete": "all",
        "comment delete": "force",
        "theme install": "version force activate",
        "theme disable": "network",
        "theme delete": "all force",
        "theme mod remove": "all",
        # (newer releases' flags: WP-CLI 2.10 refuses them as unknown, so they run only where they mean this)
        "widget reset": "all inactive",
        "cron event delete": "match-args",
        "user remove-cap": "force",
        "plugin install": "version force activate activate-network",
        "plugin update": "all exclude minor patch dry-run version auto-update-indicated",
        "theme update": "all exclude minor patch dry-run version auto-update-indicated",
        "theme enable": "network activate",
        "core update": "minor version",
        "language core install": "activate",
        "language core update": "dry-run",
        "language plugin install": "all",
        "language theme install": "all",
        "plugin activate": "all exclude network",
        "plugin auto-updates enable": "all disabled-only",
        "plugin auto-updates disable": "all enabled-only",
        "plugin deactivate": "uninstall all exclude network",
        "plugin toggle": "network",
        "plugin uninstall": "deactivate skip-delete all exclude",
        "plugin delete": "all exclude",
        "user create": (
            "role user_pass user_registered display_name user_nicename user_url nickname first_name "
            "last_name description rich_editing send-email"
        ),
        "user reset-password": "skip-email",
        "user session destroy": "all",
        "user delete": "network reassign",
        "site activate": "slug",
        "site unarchive": "slug",
        "site unspam": "slug",
        "site public": "slug",
        "site private": "slug",
        "site deactivate": "slug",
        "site archive": "slug",
        "site spam": "slug",
        "site delete": "slug keep-tables",
        "rewrite structure": "category-base tag-base hard",
        "maintenance-mode activate": "force",
        "search-replace": (
            "dry-run precise no-precise recurse-objects no-recurse-objects skip-columns include-columns "
            "skip-tables network report no-report report-changed-only regex regex-flags regex-delimiter "
            "regex-limit verbose"
        ),
    }.items()
}
RULE = "blocked.undescribed_flag"


def described_flags(path: tuple[str, ...]) -> frozenset[str]:
    """The side flags the approval summary of held `path` describes: those listed above, or for a path
    whose approval spells the command out (command_table.SPELLED_OUT) every option of its synopsis
    (`--no-<flag>` too), each shown with its value."""
    if path not in SPELLED_OUT:
        return DESCRIBED_FLAGS.get(path, frozenset())
    synopsis = synopsis_of(path)
    options = synopsis.options.values() if synopsis is not None else ()
    return frozenset(o.name for o in options) | frozenset(
        f"no-{o.name}" for o in options if not o.takes_value
    )


def held_paths() -> list[tuple[str, ...]]:
    """The built-in paths that always wait for approval."""
    return [p for p, e in ALLOWED_COMMANDS.items() if e.category is PolicyCategory.DESTRUCTIVE]


@argument_rule(
    match=(
        "plugin deactivate akismet --skip-plugins",
        "post delete 5 --skip-themes",
        "user delete 3 --send-email",
        "site delete --slug=shop --network",
    ),
    not_match=(
        "plugin deactivate akismet --uninstall",
        "post delete 5 --force --url=https://example.test/en/",
        "user delete 3 --reassign=1 --yes",
        "post list --skip-plugins",
    ),
)
def undescribed_flag(cmd: ParsedCommand, path: tuple[str, ...]) -> Verdict | None:
    entry = ALLOWED_COMMANDS.get(path)
    if entry is None or entry.category is not PolicyCategory.DESTRUCTIVE:
        return None
    described = described_flags(path)
    for option in cmd.options:
        if option.name not in OUTPUT_FLAGS and option.name not in described:
            name = " ".join(path)
            return Verdict(
                PolicyCategory.BLOCKED,
                RULE,
                f"--{option.name} を付けた「{name}」は、承認の確認文でその影響を説明できないため実行できません。"
                f"--{option.name} を外して依頼してください",
                f"--{option.name}",
            )
    return None
