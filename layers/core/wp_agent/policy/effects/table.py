"""Every write of the command table with its declared effect, and the argument rule that holds a write
for approval when the command leaves its declaration."""

from __future__ import annotations

import dataclasses

from wp_agent.command_line.aliases import canonical_argv
from wp_agent.command_line.parsed_command import ParsedCommand
from wp_agent.command_line.shell_syntax import split_words
from wp_agent.policy.categories import PolicyCategory
from wp_agent.policy.command_table import ALLOWED_COMMANDS
from wp_agent.policy.effects.comments_menus import COMMENT_AND_MENU_EFFECTS
from wp_agent.policy.effects.content import CONTENT_EFFECTS
from wp_agent.policy.effects.declaration import Effect
from wp_agent.policy.effects.site_settings import SITE_EFFECTS
from wp_agent.policy.effects.values import SiteCheck
from wp_agent.policy.fetches import hosts_fetched
from wp_agent.policy.read_only_flags import read_only_alternative, read_only_flag
from wp_agent.policy.rule import Verdict, argument_rule

WRITE_EFFECTS: dict[tuple[str, ...], Effect] = {**CONTENT_EFFECTS, **COMMENT_AND_MENU_EFFECTS, **SITE_EFFECTS}


def parse_example(example: str) -> ParsedCommand:
    """A table example as the policy reads a command (its words, aliases made canonical)."""
    return ParsedCommand.from_argv(canonical_argv(tuple(split_words(example))))


def check_declarations() -> None:
    """Every write path has a declaration, and each declaration's examples fall where they say."""
    writes = {p for p, e in ALLOWED_COMMANDS.items() if e.category is PolicyCategory.WRITE}
    missing = sorted(" ".join(p) for p in writes - WRITE_EFFECTS.keys())
    extra = sorted(" ".join(p) for p in WRITE_EFFECTS.keys() - writes)
    if missing or extra:
        raise AssertionError(
            f"write paths without a declared effect: {missing}; declarations of no write: {extra}"
        )
    for path, effect in WRITE_EFFECTS.items():
        if not effect.match or not effect.not_match:
            raise AssertionError(f"the effect of `{' '.join(path)}` needs match and not_match examples")
        for example in effect.match:
            verdict = effect.judge(parse_example(example), path)
            if verdict is not None:
                raise AssertionError(f"`{example}` should be inside its declared effect: {verdict.reason_ja}")
        for example in effect.not_match:
            if effect.judge(parse_example(example), path) is None:
                raise AssertionError(f"`{example}` should be outside its declared effect")


check_declarations()  # at load, like the codex execpolicy examples: a table that contradicts itself never runs


def site_checks(argv: tuple[str, ...], path: tuple[str, ...]) -> list[SiteCheck]:
    """Reads of the site that must confirm a write before it runs without approval (an attachment's
    ID behind `_thumbnail_id`, the stored file names before `media regenerate`), each on the site
    the write goes to: with the write's own `--url`, as WP-CLI will resolve it."""
    effect = WRITE_EFFECTS.get(path)
    if effect is None:
        return []
    cmd = ParsedCommand.from_argv(argv)
    return [on_the_same_site(check, cmd) for check in effect.checks_on_site(cmd, path)]


def fetched_host_names(argv: tuple[str, ...], path: tuple[str, ...]) -> list[str]:
    """The host names the server (or the agent, for media) would fetch from because of a write the
    declaration accepts: their addresses decide whether it runs without approval. Hosts that are not
    public whatever they resolve to were held by the value checks already."""
    effect = WRITE_EFFECTS.get(path)
    if effect is None:
        return []
    _, names = hosts_fetched(effect.fetched_urls(ParsedCommand.from_argv(argv), path))
    return names


def on_the_same_site(check: SiteCheck, cmd: ParsedCommand) -> SiteCheck:
    """`check` reading the site `cmd` writes to (a network's sites share IDs: post 58 of one site
    is not post 58 of another)."""
    urls = cmd.url_tokens()
    if any(word.startswith("--url=") for word in check.argv):
        return check  # the check names its site itself (a new site's address: the main site)
    return dataclasses.replace(check, argv=(*check.argv, *urls)) if urls else check


@argument_rule(
    match=(
        "post meta update 45 _price 100",
        "option update html_type text/plain",
        "post create --post_title=x --guid=https://evil.example/",
        "widget add rss sidebar-1 --url=http://169.254.169.254/",
    ),
    not_match=(
        "post meta update 45 _thumbnail_id 58",
        "option update posts_per_page 10",
        "post create --post_title=お知らせ --post_status=draft",
        "plugin list --skip-update-check --foo=1",
    ),
)
def declared_effect(cmd: ParsedCommand, path: tuple[str, ...]) -> Verdict | None:
    effect = WRITE_EFFECTS.get(path)
    if effect is None or read_only_flag(cmd, path) is not None:
        return None  # not a write of the table, or made a read by its flag
    verdict = effect.judge(cmd, path)
    alternative = read_only_alternative(path)
    if verdict is None or alternative is None or verdict.category is not PolicyCategory.DESTRUCTIVE:
        return verdict
    # What a person asking only to look can do instead (`plugin list --recently-active`).
    hint = f"（見るだけなら --{alternative.flag} を付けると、変更のない読み取りとして承認なしで実行できます）"
    return dataclasses.replace(verdict, reason_ja=verdict.reason_ja + hint)
