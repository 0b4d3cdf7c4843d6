"""No oracles: a read must not reveal what a direct read would refuse.

A count, a search, a filter or an ordering over stored values answers a yes/no question about each
value; asked often enough it spells the value out. On the real site 80 dry runs of
`search-replace '^(?=[A-Z2-7]{16}$).{0}[A-M]' X wp_usermeta --regex --format=count` returned a user's
whole 2FA seed, which `user meta get` refuses. So:
- `search-replace` (dry run or not) runs only over content: the posts', comments' and terms' tables
  named explicitly, and only their public columns (`--include-columns`); never `--regex`, never a
  bare count;
- list filters over meta values compare for equality or existence only, under one key named with
  `--meta_key` (never a value filter across every key, never a key pattern), never over a key a
  direct read refuses or masks, and never order rows by a meta value (`meta_value`, or the
  `--meta_key` named as `--orderby`);
- option and meta listings order by name or id only (never by value);
- no read names a secret field (`--fields=post_password`, `--post_password=…`, `--orderby=…`).
"""

from __future__ import annotations

import re

from wp_agent.command_line.parsed_command import CliOption, ParsedCommand
from wp_agent.masking.secret_names import folded, is_privilege_key, is_secret_key
from wp_agent.policy.categories import PolicyCategory
from wp_agent.policy.command_table import ALLOWED_COMMANDS
from wp_agent.policy.rule import Verdict, argument_rule
from wp_agent.whole_values import whole

B = PolicyCategory.BLOCKED

# Content tables of any site (`wp_posts`, `wp_2_posts`, …) and the columns people see on the site.
_CONTENT_TABLE = whole(
    r"[A-Za-z0-9]+_(?:\d+_)?(posts|comments|terms|term_taxonomy)", "wp_posts", "wp_2_terms"
)
PUBLIC_COLUMNS = {
    "posts": frozenset({"post_title", "post_content", "post_excerpt", "post_name"}),
    "comments": frozenset({"comment_content", "comment_author", "comment_author_url"}),
    "terms": frozenset({"name", "slug"}),
    "term_taxonomy": frozenset({"description"}),
}
_EQUALITY = frozenset({"=", "!=", "exists", "not exists"})
_VALUE_FILTERS = frozenset({"meta_value", "meta_value_num", "meta_compare", "meta_type"})
_META_FILTERS = ("meta_key", "meta_value", "meta_compare", "meta_compare_key", "meta_value_num", "meta_type")
_BY_VALUE = frozenset({"meta_value", "meta_value_num", "option_value"})
_SR_HOW = (
    "search-replace は投稿・コメント・カテゴリの公開項目だけを対象にできます。"
    "テーブル（例: wp_posts）と --include-columns=post_content,post_title,post_excerpt を指定してください"
)


@argument_rule(
    match=(
        "search-replace '^(?=[A-Z2-7]{16}$).{0}[A-M]' X wp_usermeta --regex --dry-run --format=count",
        "search-replace a b wp_options --dry-run",
        "search-replace a b wp_posts --dry-run",
        "search-replace a b wp_posts --include-columns=post_password --dry-run",
        "search-replace a b --dry-run",
    ),
    not_match=(
        "search-replace http://a https://b wp_posts --include-columns=post_content,post_title --dry-run",
        "search-replace 古い 新しい wp_2_posts wp_comments --include-columns=post_content,comment_content",
    ),
    paths=("search-replace",),
)
def search_replace_scope(cmd: ParsedCommand, path: tuple[str, ...]) -> Verdict | None:
    regex = next((o for o in cmd.options if o.name.startswith("regex")), None)
    if regex is not None:
        return Verdict(
            B,
            "blocked.oracle.regex",
            "正規表現による置換・照合（--regex）は、読み出せない値を1文字ずつ推測できるため使用できません",
            regex.token,
        )
    if any(v.strip().lower() == "count" for v in cmd.option_values("format")):
        return Verdict(
            B,
            "blocked.oracle.count",
            "一致した件数だけを返す形式（--format=count）は、値を推測する手段になるため使用できません。"
            + _SR_HOW,
            "--format=count",
        )
    tables = cmd.args_after(("search-replace",))[2:]
    families = {m.group(1) for t in tables if (m := _CONTENT_TABLE.parts(t))}
    outside = [t for t in tables if not _CONTENT_TABLE.parts(t)]
    if not tables or outside:
        shown = outside[0] if outside else "（テーブルの指定なし: 全テーブル）"
        return Verdict(
            B, "blocked.oracle.search_replace_table", f"置換・照合の対象にできないテーブルです: {shown}。" + _SR_HOW,
            shown,
        )  # fmt: skip
    allowed = frozenset().union(*(PUBLIC_COLUMNS[f] for f in families))
    columns = [c.strip() for v in cmd.option_values("include-columns") for c in v.split(",") if c.strip()]
    hidden = [c for c in columns if c not in allowed]
    if (
        not columns
        or hidden
        or (cmd.has_flag("include-columns") and not cmd.option_values("include-columns"))
    ):
        shown = hidden[0] if hidden else "（--include-columns の指定なし）"
        return Verdict(
            B,
            "blocked.oracle.search_replace_column",
            f"置換・照合の対象にできない列です: {shown}。" + _SR_HOW,
            shown,
        )
    return None


def _meta_filters(cmd: ParsedCommand) -> Verdict | None:
    keys = cmd.option_values("meta_key")
    for key in keys:
        if is_secret_key(key) or is_privilege_key(key):
            return Verdict(
                B,
                "blocked.oracle.meta_filter",
                f"読み出せないメタ（{key}）の値で絞り込み・並べ替えはできません（値を推測する手段になるため）",
                key,
            )
    by_value = next((o for o in cmd.options if o.name in _VALUE_FILTERS), None)
    if by_value is not None and not [k for k in keys if k.strip()]:
        # Without a key the filter matches the value under every key, the refused ones included.
        return Verdict(
            B,
            "blocked.oracle.meta_filter",
            f"メタの値による絞り込み（--{by_value.name}）は、--meta_key で読み出せるキーを指定したときだけ使えます",
            by_value.token,
        )
    for value in cmd.option_values("meta_compare"):
        if folded(value) not in _EQUALITY:
            return Verdict(
                B,
                "blocked.oracle.meta_compare",
                f"メタの値の比較は =・!=・EXISTS・NOT EXISTS だけ使えます（--meta_compare={value} は値を推測する手段になるため）",
                "--meta_compare",
            )
    for value in cmd.option_values("meta_compare_key"):
        if folded(value) != "=":
            # `!=`, LIKE or a pattern makes the key filter match other keys, the refused ones included.
            return Verdict(
                B,
                "blocked.oracle.meta_compare",
                f"メタのキーは = でだけ指定できます（--meta_compare_key={value} は読み出せないキーにも当たるため）",
                "--meta_compare_key",
            )
    if cmd.has_flag("meta_query"):
        return Verdict(
            B, "blocked.oracle.meta_filter", "--meta_query による絞り込みは使用できません。--meta_key と --meta_value を使ってください",
            "--meta_query",
        )  # fmt: skip
    return None


def _ordering(cmd: ParsedCommand, path: tuple[str, ...]) -> Verdict | None:
    orders = [
        part.strip() for v in cmd.option_values("orderby") for part in re.split(r"[,\s]+", v) if part.strip()
    ]
    # WP_Query and WP_User_Query order by the meta value when `orderby` names the `meta_key` itself.
    keys = {folded(k) for k in cmd.option_values("meta_key")}
    by_value = next((o for o in orders if folded(o) in _BY_VALUE | keys or is_secret_key(o)), None)
    if by_value is not None:
        return Verdict(
            B,
            "blocked.oracle.order_by_value",
            f"保存された値での並べ替え（--orderby={by_value}）は、読み出せない値を推測する手段になるため使用できません",
            f"--orderby={by_value}",
        )
    return None


def _presence_only(option: CliOption, path: tuple[str, ...]) -> bool:
    """`post list --has_password[=0|1]`: WP_Query compares the password with '' only — whether a post
    is protected (WordPress marks it 「保護中」 for every visitor), never what the password is."""
    value = None if option.value is None else option.value.strip().lower()
    return (
        path == ("post", "list")
        and option.name == "has_password"
        and value in {None, "0", "1", "true", "false"}
    )


def _secret_fields(cmd: ParsedCommand, path: tuple[str, ...]) -> Verdict | None:
    entry = ALLOWED_COMMANDS.get(path)
    if entry is None or entry.category is not PolicyCategory.READ:
        return None  # writes declare their fields (effects/); a post's password is set, not read
    named = [p for v in cmd.option_values("field", "fields", "search_columns") for p in v.split(",")]
    named += [o.name for o in cmd.options if not _presence_only(o, path)]
    secret = next((n for n in named if is_secret_key(n)), None)
    if secret is None:
        return None
    return Verdict(
        B,
        "blocked.secret_field",
        f"パスワード等の認証情報の項目（{secret}）は、出力にも絞り込みにも使えません",
        secret,
    )


@argument_rule(
    match=(
        "post list --meta_key=_two_factor_totp_key --meta_value=A --meta_compare=LIKE --format=count",
        "post list --meta_key=views --meta_value=1 --meta_compare=REGEXP",
        "user list --meta_value=JBSWY3DPEHPK3PXP --format=count",
        "user list --meta_key=nickname --meta_value=x --meta_compare_key=!=",
        "post list --meta_key=views --orderby=views",
        "user list --meta_key=nickname --orderby=meta_value",
        "option list --search=mail* --orderby=option_value",
        "post list --fields=ID,post_password",
        "post list --post_password=hunter2 --format=ids",
        "post list --has_password=hunter2 --format=ids",
        "user list --has_password=1 --format=ids",
        "user list --search=x --search_columns=user_pass",
        "user meta list 1 --fields=meta_value",
        "option list --search=mailserver_* --field=option_value",
        "option list --fields=option_value --format=csv",
        "theme mod list --field=value",
        "theme mod get --all --field=value",
        "site option list --fields=meta_value",
        "post meta get 1 mailchimp_api_key",
        "term meta get 1 access_token",
        "post meta list 1 --keys=mailchimp_api_key --fields=meta_key,meta_value",
        "post meta pluck 1 stripe_settings secret_key",
        "theme mod get maps_api_key",
        "transient get my_api_token",
        "option list --fields=OPTION_NAME,option_value",
        "option get mailserver_pass",
        "option pluck my_plugin api_key",
        "site option get auth_key",
    ),
    not_match=(
        "post list --meta_key=views --meta_value=10 --format=ids",
        "post list --meta_key=_thumbnail_id --meta_compare=EXISTS --format=count",
        "user list --meta_key=nickname --meta_value=taro --meta_compare_key==",
        "option list --search=blog* --orderby=option_name",
        "post list --fields=ID,post_title --orderby=title",
        "post list --post__in=45,46 --has_password=1 --format=ids",
        "post update 45 --post_password=secret",
        "option list --search=blog* --fields=option_name,option_value",
        "option list --field=option_name",
        "post meta list 1 --keys=views --fields=meta_key,meta_value --format=json",
        "theme mod list --fields=key,value",
        "post meta get 1 views",
        "theme mod get header_textcolor",
        "option get blogname",
        "option pluck my_plugin colour",
    ),
)
def read_oracles(cmd: ParsedCommand, path: tuple[str, ...]) -> Verdict | None:
    return (
        _meta_filters(cmd)
        or _ordering(cmd, path)
        or _secret_fields(cmd, path)
        or _named_value(cmd, path)
        or _value_without_its_name(cmd, path)
    )


# Values stored under names (options, meta, theme mods, transients): the name is what tells a secret
# (masking/secret_names.py). A read that names one is refused when the name is secret; a listing
# shows every value beside its name, so the masker can tell it (a column of values alone cannot).
# Every `<object> meta get|pluck <id> <key>` and `<object> meta list <id>` of the table is one: the
# object's meta are named values whatever the object (a new object's meta is covered as it is added;
# tests/unit/test_read_oracles_cover.py checks every read that takes a `<key>` is known here).
_META_OBJECTS = frozenset(p[0] for p in ALLOWED_COMMANDS if len(p) == 3 and p[1] == "meta")
_NAMES_FROM: dict[
    tuple[str, ...], int
] = {  # the argument where a read's names begin (pluck: the key, then the path inside it)
    ("option", "get"): 0,
    ("option", "pluck"): 0,
    ("site", "option", "get"): 0,
    ("site", "option", "pluck"): 0,
    ("theme", "mod", "get"): 0,
    ("transient", "get"): 0,
    ("transient", "pluck"): 0,
    ("option", "get-autoload"): 0,  # only yes/no, but whether a secret-named option exists is not asked
    # (user meta: account_rules.privileged_user_data, which refuses secret and privilege names)
    **{(o, "meta", verb): 1 for o in _META_OBJECTS - {"user"} for verb in ("get", "pluck")},
}
NAME_COLUMNS: dict[tuple[str, ...], str] = {
    ("option", "list"): "option_name",
    ("site", "option", "list"): "meta_key",
    ("theme", "mod", "list"): "key",
    ("transient", "list"): "name",
    ("theme", "mod", "get"): "key",  # `--all` lists every mod (tests/integration/test_value_listings.py)
    **{(o, "meta", "list"): "meta_key" for o in _META_OBJECTS},
}


def names_a_stored_value(path: tuple[str, ...]) -> bool:
    """Whether the read's arguments name stored values whose names tell a secret (see above)."""
    return path in _NAMES_FROM or path[:2] == ("user", "meta")


def _named_value(cmd: ParsedCommand, path: tuple[str, ...]) -> Verdict | None:
    at = _NAMES_FROM.get(path)
    names = list(cmd.args_after(path)[at:]) if at is not None else []
    if path in NAME_COLUMNS and path[0] != "user":  # user meta: account_rules.privileged_user_data
        names += [k for v in cmd.option_values("keys") for k in v.split(",")]
    secret = next((n for n in names if is_secret_key(n)), None)
    if secret is None:
        return None
    return Verdict(B, "blocked.secret_name", f"認証情報を含む値（{secret}）は読み出せません", secret)


def _value_without_its_name(cmd: ParsedCommand, path: tuple[str, ...]) -> Verdict | None:
    name = NAME_COLUMNS.get(path)
    if name is None:
        return None
    # As WP-CLI reads the field names: case and all (`--fields=OPTION_NAME,…` prints an empty column).
    for value in cmd.option_values("field"):
        if value.strip() != name:
            return _projection(name, f"--field={value}")
    for value in cmd.option_values("fields"):
        if name not in {part.strip() for part in value.split(",")}:
            return _projection(name, f"--fields={value}")
    return None


def _projection(name: str, token: str) -> Verdict:
    return Verdict(
        B,
        "blocked.oracle.value_without_name",
        f"値だけを出力する指定（{token}）は使用できません。{name} を含めてください"
        "（名前が無いと、認証情報の値かどうかを判別して伏せることができないため）",
        token,
    )
