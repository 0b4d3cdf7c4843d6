"""One-line Japanese summary and impact of a destructive command, built from its argv and, where
the effect depends on the site's state, from what read-only commands show before approval.

Never from the model's words: an approver must see what will actually happen. WP-CLI facts that
matter (checked on WordPress 6.1 / WP-CLI 2.10): `post delete <id>` of a post already in the trash
deletes it for good; without --force it refuses every type but post and page; `comment delete`
of a trashed or spam comment deletes it for good; `user set-role` replaces every role.
"""

from __future__ import annotations

import logging

from wp_agent.command_line.code_changes import CODE_CHANGES, LANGUAGE_CHANGES
from wp_agent.command_line.parsed_command import ParsedCommand
from wp_agent.masking import mask_argv
from wp_agent.policy.approval_summary import reads
from wp_agent.policy.approval_summary.accounts import (
    add_role,
    cap_remove,
    remove_role,
    reset_password,
    role_change,
    role_create,
    role_delete,
    session_destroy,
    user_create,
    user_credentials,
    user_delete,
)
from wp_agent.policy.approval_summary.code_changes import (
    EXTENSIONS_KEPT,
    GUARD_PLAN_JA,
    LANGUAGE_KEPT,
    core_guard_plan,
    core_update,
    extension,
    language_switch,
    theme_switch,
)
from wp_agent.policy.approval_summary.common import IRREVERSIBLE, POST_RECREATED_ONLY, Handler
from wp_agent.policy.approval_summary.content import (
    comment_delete,
    comment_trash,
    menu_delete,
    menu_item_delete,
    meta_delete,
    post_delete,
)
from wp_agent.policy.approval_summary.flag_notes import active_content_notes, flag_notes
from wp_agent.policy.approval_summary.generic import generic, spelled_out
from wp_agent.policy.approval_summary.reads import SummaryRead, limited_to
from wp_agent.policy.approval_summary.settings import option
from wp_agent.policy.approval_summary.sites import SITE_FLAG_EFFECTS, site_create, site_delete, site_flag
from wp_agent.policy.command_policy import PolicyDecision
from wp_agent.policy.command_table import ALLOWED_COMMANDS, SPELLED_OUT
from wp_agent.policy.site_reads import StateReader

logger = logging.getLogger(__name__)

__all__ = [
    "IRREVERSIBLE",
    "POST_RECREATED_ONLY",
    "Handler",
    "SummaryRead",
    "describe",
    "summaries_of",
    "summary_handler",
    "summary_reads",
    "worded",
]


def describe(decision: PolicyDecision, read: StateReader | None = None) -> tuple[str, str]:
    """(summary, impact) for the approval prompt, read on the site the command runs on."""
    argv = mask_argv(list(decision.argv))
    parsed = ParsedCommand.from_argv(tuple(argv))
    path = decision.command_path
    # The policy held the command only after reading it by its synopsis (command_grammar): its words fill
    # the arguments in order, so the masked argv's positionals are the reading's words.
    args = list(parsed.args_after(path))
    on_site = _on_site(read, parsed.url_tokens())
    described: tuple[str, str] | None = None
    for handler, declared in summaries_of(path):
        described = handler(parsed, path, args, limited_to(on_site, declared))
        if described is not None:
            break
    text, impact = described or generic(decision, parsed, path, args)
    if path in SPELLED_OUT and decision.rule != f"confirm.{'.'.join(path)}":
        impact = f"{decision.reason_ja} {impact}"  # a rule held it for a reason of its own: said first
    notes = flag_notes(parsed, path) + active_content_notes(parsed, path, impact)
    if notes:
        impact = " ".join([impact, *notes]).strip()
    if path == ("core", "update"):
        impact = f"{impact} {core_guard_plan(parsed, limited_to(on_site, _PLAN_READS[path]))}".strip()
    elif path in CODE_CHANGES:
        kept = LANGUAGE_KEPT if path in LANGUAGE_CHANGES else EXTENSIONS_KEPT
        impact = f"{impact} {GUARD_PLAN_JA.format(kept=kept)}".strip()
    urls = parsed.option_values("url")
    if urls:
        text = f"{text}（対象サイト: {urls[-1]}）"
    return text, impact


def worded(decision: PolicyDecision, read: StateReader | None = None) -> tuple[str, str] | None:
    """`describe`, or None when it fails on the command — a fault of ours, logged (the rule and the command's
    path, never its values). The caller refuses the command: nobody approves a text not computed from it."""
    try:
        return describe(decision, read)
    except Exception:
        logger.exception(
            "approval summary failed",
            extra={"rule": decision.rule, "command_path": " ".join(decision.command_path)},
        )
        return None


def _on_site(read: StateReader | None, url_tokens: tuple[str, ...]) -> StateReader | None:
    """`read` on the command's own site: every read carries the command's `--url` (on a network,
    post 5 of /en/ is not post 5 of the main site). One description asks the site each thing once
    (its handler and the plan may both need the same fact)."""
    if read is None:
        return None
    answers: dict[tuple[str, ...], str | None] = {}

    def on_site(argv: list[str]) -> str | None:
        key = (*argv, *url_tokens)
        if key not in answers:
            answers[key] = read(list(key))
        return answers[key]

    return on_site


def _paths(*names: str) -> frozenset[tuple[str, ...]]:
    return frozenset(tuple(name.split()) for name in names)


# Each summary, the commands of the table it tells and what it may read of the site to word them, in the
# order they are tried: the first with something to say tells the command (a spelled-out command that cannot
# be read by its synopsis is told by the next); a command none names is told by `generic`, which reads
# nothing. A command's row reads its own here (`summaries_of`, `summary_reads`).
_SUMMARIES: tuple[tuple[frozenset[tuple[str, ...]], Handler, tuple[SummaryRead, ...]], ...] = (
    (SPELLED_OUT, spelled_out, ()),
    (_paths("role create"), role_create, ()),
    (_paths("role delete"), role_delete, ()),
    (_paths("cap remove"), cap_remove, ()),
    (_paths("post delete"), post_delete, (reads.POSTS,)),
    (_paths("comment delete"), comment_delete, (reads.COMMENTS,)),
    (_paths("user set-role"), role_change, (reads.USER, reads.DEFAULT_ROLE)),
    (_paths("user add-role"), add_role, ()),
    (_paths("user remove-role"), remove_role, (reads.USER,)),
    (_paths("user session destroy"), session_destroy, (reads.USER,)),
    (_paths("comment trash"), comment_trash, ()),
    (_paths("user reset-password"), reset_password, (reads.USER,)),
    (_paths("user update"), user_credentials, (reads.USER,)),
    (_paths("user create"), user_create, (reads.DEFAULT_ROLE,)),
    (_paths("site create"), site_create, (reads.SAME_ADDRESS_PAGE,)),
    (_paths("plugin activate", "plugin install"), extension, ()),
    (_paths("core update"), core_update, (reads.CORE_VERSION,)),
    (_paths("user delete"), user_delete, (reads.USER, reads.NETWORK, reads.NETWORK_SITES, reads.USERS_POSTS)),
    (_paths("site delete"), site_delete, (reads.NETWORK_SITES,)),
    (frozenset(("site", flag) for flag in SITE_FLAG_EFFECTS), site_flag, (reads.NETWORK_SITES,)),
    (_paths("menu delete"), menu_delete, (reads.MENUS,)),
    (_paths("language core activate", "site switch-language"), language_switch, (reads.LANGUAGE,)),
    (frozenset(p for p in ALLOWED_COMMANDS if p[1:] == ("meta", "delete")), meta_delete, (reads.META_KEYS,)),
    (_paths("menu item delete"), menu_item_delete, (reads.MENU_ITEMS,)),
    (_paths("option update", "option add", "option delete", "option patch"), option,
     (reads.OPTION_VALUE, reads.OPTION_NAMES)),
    (_paths("theme activate", "theme install"), theme_switch, (reads.ACTIVE_THEME,)),
)  # fmt: skip
# Read beside the summary: what the update's guard will keep depends on the version it starts from.
_PLAN_READS: dict[tuple[str, ...], tuple[SummaryRead, ...]] = {("core", "update"): (reads.CORE_VERSION,)}


_SUMMARIES_OF: dict[tuple[str, ...], tuple[tuple[Handler, tuple[SummaryRead, ...]], ...]] = {
    path: tuple((handler, declared) for paths, handler, declared in _SUMMARIES if path in paths)
    for path in {path for paths, _, _ in _SUMMARIES for path in paths}
}


def _summaries_name_known_commands() -> None:
    """Checked as the table loads: a summary of a command the table lacks would tell nothing."""
    unknown = sorted(" ".join(path) for path in _SUMMARIES_OF if path not in ALLOWED_COMMANDS)
    if unknown:
        raise ValueError(f"approval summaries name commands the table lacks: {unknown}")


_summaries_name_known_commands()


def summaries_of(path: tuple[str, ...]) -> tuple[tuple[Handler, tuple[SummaryRead, ...]], ...]:
    """The summaries that may tell this command's approval, in the order they are tried, each with the
    reads it may ask."""
    return _SUMMARIES_OF.get(path, ())


def summary_handler(path: tuple[str, ...]) -> str:
    """The summary that tells this command's approval first (`generic` when none names it)."""
    return next((handler.__name__ for handler, _ in summaries_of(path)), generic.__name__)


def summary_reads(path: tuple[str, ...]) -> tuple[SummaryRead, ...]:
    """What wording this command's approval may read of the site: its summaries' reads and the plan's."""
    declared = [fact for _, facts in summaries_of(path) for fact in facts]
    return tuple(dict.fromkeys([*declared, *_PLAN_READS.get(path, ())]))
