"""Identifiers the policy reasons about are accepted only in plain ASCII.

MariaDB's utf8mb4_unicode_520_ci (WordPress's default collation) ignores about twenty code points
(U+200B, U+00AD, …), folds full-width letters, case and trailing spaces: `wp_capabil<U+200B>ities`,
`ｗｐ_capabilities` and `wp_capabilities ` all reach the row `wp_capabilities`. A rule that compares
names can only be sound when the names are plain, so every identifier — command words, option
names, meta keys, field names, hooks, roles, capabilities, taxonomies, post types, flag names — must
be printable ASCII without spaces. Values (titles, content, term names, option values) stay free.
"""

from __future__ import annotations

import unicodedata

from wp_agent.command_line.parsed_command import CliOption, ParsedCommand
from wp_agent.policy.categories import PolicyCategory
from wp_agent.policy.command_grammar import synopsis_of
from wp_agent.policy.rule import Verdict, argument_rule
from wp_agent.whole_values import whole

# Printable ASCII, never starting with `-`: a name stored so would come back as an option wherever it is
# written as a word again (`post meta delete 5 --all` deletes every field; WP-CLI has no `--`).
PLAIN_IDENTIFIER = whole(r"-|[\x21-\x2c\x2e-\x7e][\x21-\x7e]*", "blogname", "wp_capabilities")

# Positional arguments after the command path: k = identifier, v = value (free text or an object
# reference such as an ID, login or URL); a trailing "…" repeats the last kind. A command not listed
# here has identifiers only. `patch` commands also take a value last (see _positional_kinds).
_POSITIONAL_KINDS: dict[tuple[str, ...], str] = {
    ("post", "get"): "v",
    ("post", "exists"): "v",
    ("post", "url-to-id"): "v",
    ("post", "update"): "v…",
    ("post", "delete"): "v…",
    ("post", "term", "list"): "v k…",
    ("post", "term", "add"): "v k v…",
    ("post", "term", "set"): "v k v…",
    ("post", "term", "remove"): "v k v…",
    ("media", "import"): "v…",
    ("media", "regenerate"): "v…",
    ("term", "get"): "k v",
    ("term", "create"): "k v",
    ("term", "update"): "k v",
    ("term", "delete"): "k v…",
    ("comment", "get"): "v",
    ("comment", "count"): "v",
    ("comment", "exists"): "v",
    ("comment", "status"): "v",
    ("comment", "update"): "v…",
    ("comment", "approve"): "v…",
    ("comment", "unapprove"): "v…",
    ("comment", "spam"): "v…",
    ("comment", "unspam"): "v…",
    ("comment", "untrash"): "v…",
    ("comment", "recount"): "v…",
    ("comment", "trash"): "v…",
    ("comment", "delete"): "v…",
    ("menu", "create"): "v",
    ("menu", "delete"): "v…",
    ("menu", "item", "list"): "v",
    ("menu", "item", "add-post"): "v v",
    ("menu", "item", "add-term"): "v k v",
    ("menu", "item", "add-custom"): "v v v",
    ("menu", "item", "update"): "v",
    ("menu", "item", "delete"): "v…",
    ("menu", "location", "assign"): "v k",
    ("menu", "location", "remove"): "v k",
    ("theme", "search"): "v",
    ("theme", "mod", "set"): "k v",
    ("widget", "update"): "v",
    ("widget", "move"): "v",
    ("widget", "deactivate"): "v…",
    ("widget", "delete"): "v…",
    ("plugin", "search"): "v",
    ("user", "get"): "v",
    ("user", "list-caps"): "v",
    ("user", "session", "list"): "v",
    ("user", "session", "destroy"): "v v",
    ("user", "create"): "v v",
    ("user", "update"): "v…",
    ("user", "set-role"): "v k",
    ("user", "add-role"): "v k…",
    ("user", "remove-role"): "v k…",
    ("user", "add-cap"): "v k",
    ("user", "remove-cap"): "v k",
    ("user", "reset-password"): "v…",
    ("user", "spam"): "v…",
    ("user", "unspam"): "v…",
    ("user", "delete"): "v…",
    ("super-admin", "add"): "v…",
    ("super-admin", "remove"): "v…",
    ("option", "add"): "k v",
    ("option", "update"): "k v",
    ("site", "activate"): "v…",
    ("site", "unarchive"): "v…",
    ("site", "unspam"): "v…",
    ("site", "public"): "v…",
    ("site", "private"): "v…",
    ("site", "deactivate"): "v…",
    ("site", "archive"): "v…",
    ("site", "spam"): "v…",
    ("site", "delete"): "v",
    ("site", "option", "add"): "k v",
    ("site", "option", "update"): "k v",
    ("rewrite", "structure"): "v",
    ("role", "create"): "k v",  # the role's key, its display name
    ("cron", "event", "schedule"): "k v k",
    ("search-replace",): "v v k…",
}
for _object in ("post", "term", "comment", "user", "site", "network"):
    _POSITIONAL_KINDS |= {
        (_object, "meta", "list"): "v",
        (_object, "meta", "get"): "v k",
        (_object, "meta", "add"): "v k v",
        (_object, "meta", "update"): "v k v",
        (_object, "meta", "delete"): "v k v",
        (_object, "meta", "pluck"): "v k…",
        (_object, "meta", "patch"): "k v k…",
    }

# Flag values that name things the rules compare (on any command).
_IDENTIFIER_FLAGS = frozenset(
    {
        "by",
        "cap",
        "capability",
        "comment_approved",
        "comment_status",
        "comment_type",
        "field",
        "fields",
        "format",
        "hook",
        "keys",
        "meta_key",
        "orderby",
        "ping_status",
        "post_mime_type",
        "post_status",
        "post_type",
        "role",
        "role__in",
        "role__not_in",
        "status",
        "taxonomy",
        "type",
    }
)
# Flag values that are identifiers on one command only (`--search` is free text on `post list`).
_IDENTIFIER_FLAGS_BY_PATH: dict[tuple[str, ...], frozenset[str]] = {
    ("option", "list"): frozenset({"search", "exclude"}),
    ("site", "option", "list"): frozenset({"search"}),
}


def is_plain(identifier: str) -> bool:
    return PLAIN_IDENTIFIER.fits(identifier)


def _reads_as(word: str) -> str:
    """What a word reads as: NFKC (full width to ASCII), invisible characters removed."""
    visible = "".join(c for c in word if unicodedata.category(c) not in {"Cf", "Mn", "Me"})
    return unicodedata.normalize("NFKC", visible)


def disguised_option(cmd: ParsedCommand) -> str | None:
    """A positional word that reads as `--name…` once invisible or full-width characters are
    folded (`-<U+200B>-user_pass=…`, `－－user_pass`): WP-CLI would not see an option, a person
    reading the approval would."""
    return next((w for w in cmd.positionals if ParsedCommand.is_option(_reads_as(w))), None)


def non_plain_flag_name(cmd: ParsedCommand) -> CliOption | None:
    """The first option whose name is not plain ASCII (WP-CLI would pass it on as a field name)."""
    return next((o for o in cmd.options if not is_plain(o.name)), None)


# Arguments of a synopsis that hold a value or free text, not a name the database compares: how a path
# the table above does not list is read (every other argument is an identifier, as before).
_VALUE_ARGUMENTS = frozenset(
    {"value", "expiration", "content", "title", "text", "email", "url", "old", "new"}
)


def _synopsis_kinds(path: tuple[str, ...]) -> str | None:
    synopsis = synopsis_of(path)
    if synopsis is None or not synopsis.arguments:
        return None
    kinds = " ".join("v" if a.name in _VALUE_ARGUMENTS else "k" for a in synopsis.arguments)
    return kinds + ("…" if synopsis.arguments[-1].repeating else "")


def _positional_kinds(path: tuple[str, ...], args: tuple[str, ...]) -> list[str]:
    spec = _POSITIONAL_KINDS.get(path) or _synopsis_kinds(path)
    if spec is None:
        return ["k"] * len(args)
    kinds = spec.replace("…", "").split()
    repeat = kinds[-1] if spec.endswith("…") else "v"
    out = [kinds[i] if i < len(kinds) else repeat for i in range(len(args))]
    if path[-1] == "patch" and args and args[0] != "delete" and len(args) > len(kinds):
        out[-1] = "v"  # patch insert|update <…> <key-path>… <value>
    return out


def _shown(text: str) -> str:
    return ascii(text)[1:-1]  # escapes make an invisible character visible in the reason


@argument_rule(
    match=(
        "user meta update 2 wp_capabil\u200bities '{}' --format=json",
        "option get mailserver_p\u200bass",
        "option update 'siteurl ' http://x",
        "user list --fields=ID,user_p\u00e1ss",
        "user set-role 2 \uff41dministrator",
        "term list categ\u00f3ry",
        "option list --search=*\uff50ass*",
    ),
    not_match=(
        "post create --post_title=お知らせ --post_content='<p>本文</p>'",
        "term create category 秋のメニュー",
        "option update blogname 日本語のブログ",
        "post meta update 45 description 説明文",
        "post list --s=検索語 --post_type=page",
    ),
)
def non_plain_identifier(cmd: ParsedCommand, path: tuple[str, ...]) -> Verdict | None:
    args = cmd.args_after(path)
    for arg, kind in zip(args, _positional_kinds(path, args), strict=True):
        if kind == "k" and not is_plain(arg):
            return _verdict(arg)
    by_path = _IDENTIFIER_FLAGS_BY_PATH.get(path, frozenset())
    named = [o.value for o in cmd.options if o.name in _IDENTIFIER_FLAGS or o.name in by_path]
    odd = next((value for value in named if value is not None and not is_plain(value)), None)
    return None if odd is None else _verdict(odd)


def _verdict(identifier: str) -> Verdict:
    return Verdict(
        PolicyCategory.BLOCKED,
        "blocked.non_ascii_identifier",
        f"名前（設定名・メタキー・フィールド名・権限名など）は半角英数字と記号だけで指定してください: "
        f"「{_shown(identifier)}」。見えない文字・全角文字・空白はデータベースで別の名前と同一視されるため、"
        "先頭の「-」はWP-CLIがオプションと読むため使えません",
        identifier,
    )


def non_plain_flag_verdict(option: CliOption) -> Verdict:
    return Verdict(
        PolicyCategory.BLOCKED,
        "blocked.non_ascii_identifier",
        f"オプション名は半角英数字で指定してください: 「--{_shown(option.name)}」",
        option.token,
    )
