"""The argument rules, in the order the policy asks them: flags and values that make an allowed command
wait for approval or be refused. Each rule lives with its kind (accounts, settings, content, extensions,
sources, the database, option storage, read oracles, identifiers, the network…), names the commands it is
about (`paths`, or every command) and carries the commands it must and must not catch; this module holds
them in order, gives a command its row of rules (`rules_for`), checks them as the table loads, and keeps the
one rule about how many objects a command reaches (`--all`, `--force`, ID ranges).

Values are compared the way WordPress will store them (trimmed, `sanitize_key`-ed, width- and
accent-folded), so a disguised spelling cannot slip past a rule that the real write would match.
"""

from __future__ import annotations

from functools import cache

from wp_agent.command_line.parsed_command import ParsedCommand
from wp_agent.policy.account_rules import (
    account_changes,
    account_fields,
    administrator_capabilities,
    cloned_role,
    default_role,
    network_administrators,
    new_login,
    new_password_output,
    privileged_user_meta,
    publishing_role,
    role_change,
    role_definitions,
    secret_user_fields,
    signup_activation,
    signup_secrets,
    site_administrator_by_email,
    wordpress_role_deletion,
    wordpress_role_name,
)
from wp_agent.policy.approval_flags import undescribed_flag
from wp_agent.policy.categories import PolicyCategory
from wp_agent.policy.command_table import ALLOWED_COMMANDS
from wp_agent.policy.content_rules import (
    comment_trash_status,
    internal_post_types,
    post_trash_status,
    rendering_export,
)
from wp_agent.policy.database_rules import all_tables, search_replace
from wp_agent.policy.effects.table import declared_effect, parse_example
from wp_agent.policy.extension_rules import (
    core_update_forms,
    pinned_install,
    pinned_update,
    plugin_activation,
    theme_activation,
)
from wp_agent.policy.global_flags import execution_context, forbidden_globals
from wp_agent.policy.identifiers import non_plain_identifier
from wp_agent.policy.network_scope import network_wide, site_restores
from wp_agent.policy.option_storage_rules import placement_and_hooks, update_offers, widget_storage
from wp_agent.policy.read_only_flags import ReadOnlyFlag, read_only_flag
from wp_agent.policy.read_oracles import read_oracles, search_replace_scope
from wp_agent.policy.rule import ID_RANGE, ArgumentRule, Verdict, argument_rule
from wp_agent.policy.setting_rules import (
    important_option,
    other_config_file,
    secret_config_read,
    secret_option_read,
)
from wp_agent.policy.source_rules import (
    MEDIA_PRIVATE_HOST_RULE,
    every_image_regenerated,
    install_source,
    media_source,
    post_content_sources,
    server_fetches,
    server_files,
)

__all__ = [
    "ARGUMENT_RULES",
    "MEDIA_PRIVATE_HOST_RULE",
    "ArgumentRule",
    "ReadOnlyFlag",
    "Verdict",
    "read_only_flag",
    "rules_for",
]

D = PolicyCategory.DESTRUCTIVE


@argument_rule(
    match=("plugin deactivate --all", "post delete 5 --force", "post update 10-20 --post_status=draft"),
    not_match=("plugin deactivate akismet", "post delete 5"),
)
def _bulk_flags(cmd: ParsedCommand, path: tuple[str, ...]) -> Verdict | None:
    if cmd.has_flag("all") or cmd.has_flag("auto-update-indicated"):
        return Verdict(
            D,
            "confirm.flag.all",
            "全ての対象に対して一括で操作を実行します（--all）。承認が必要です",
            "--all",
        )
    if cmd.has_flag("force"):
        return Verdict(
            D,
            "confirm.flag.force",
            "確認や安全装置を省略して実行します（--force）。承認が必要です",
            "--force",
        )
    ranges = [a for a in cmd.args_after(path) if ID_RANGE.fits(a)]
    if ranges:
        return Verdict(
            D,
            "confirm.id_range",
            f"ID範囲（{ranges[0]}）に含まれる全ての対象に実行します。承認が必要です",
            ranges[0],
        )
    return None


# Order matters only for which reason is reported first among equal categories: the specific rules
# first, the declared effect (what a write may change without approval) last.
ARGUMENT_RULES: tuple[ArgumentRule, ...] = (
    non_plain_identifier,
    forbidden_globals,
    execution_context,
    all_tables,
    search_replace,
    search_replace_scope,
    read_oracles,
    privileged_user_meta,
    signup_secrets,
    secret_user_fields,
    new_password_output,
    account_fields,
    role_definitions,
    wordpress_role_name,
    cloned_role,
    wordpress_role_deletion,
    administrator_capabilities,
    network_administrators,
    secret_option_read,
    other_config_file,
    secret_config_read,
    post_content_sources,
    install_source,
    every_image_regenerated,
    media_source,
    server_fetches,
    server_files,
    important_option,
    default_role,
    publishing_role,
    role_change,
    account_changes,
    plugin_activation,
    theme_activation,
    pinned_update,
    pinned_install,
    core_update_forms,
    placement_and_hooks,
    update_offers,
    widget_storage,
    internal_post_types,
    rendering_export,
    post_trash_status,
    comment_trash_status,
    _bulk_flags,
    site_restores,
    network_wide,
    site_administrator_by_email,
    signup_activation,
    new_login,
    declared_effect,
    undescribed_flag,
)


@cache
def rules_for(path: tuple[str, ...]) -> tuple[ArgumentRule, ...]:
    """The argument rules of one command (its row's): those about every command and those naming it."""
    return tuple(rule for rule in ARGUMENT_RULES if rule.applies_to(path))


def _rules_name_known_commands() -> None:
    """Checked as the table loads: a rule about a command the table does not have would never apply."""
    for rule in ARGUMENT_RULES:
        for path in rule.paths or ():
            if not any(known[: len(path)] == path for known in ALLOWED_COMMANDS):
                raise ValueError(f"argument rule {rule.name} names {' '.join(path)!r}, which the table lacks")


def _rules_hold_their_examples() -> None:
    """Checked as the table loads, as codex's execpolicy checks its examples (about 30 ms for 300): each
    rule gives a verdict for every `match` example and none for its `not_match` ones. (The tests also
    hold each `match` example to the whole policy: tests/unit/test_rule_examples.py.)"""
    for rule in ARGUMENT_RULES:
        for expected, examples in ((True, rule.match), (False, rule.not_match)):
            for example in examples:
                parsed = parse_example(example)
                words = parsed.positionals
                path = next(
                    (words[:n] for n in range(len(words), 0, -1) if words[:n] in ALLOWED_COMMANDS), None
                )
                if path is None or (rule(parsed, path) is not None) != expected:
                    what = "is not a command of the table" if path is None else "is not judged as it says"
                    raise ValueError(f"argument rule {rule.name}: its example {example!r} {what}")


_rules_name_known_commands()
_rules_hold_their_examples()
