"""Argument-level rules: flags and values that make an allowed command destructive or blocked.

Values are compared the way WordPress will store them (trimmed, `sanitize_key`-ed, width- and
accent-folded), so a disguised spelling cannot slip past a rule that the real write would match.
"""

from __future__ import annotations

import re
from functools import cache

from wp_agent.command_line.parsed_command import ParsedCommand
from wp_agent.masking import folded, is_secret_option
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
from wp_agent.policy.effects.table import declared_effect, parse_example
from wp_agent.policy.global_flags import GLOBAL_OPTIONS, execution_context, forbidden_globals
from wp_agent.policy.identifiers import non_plain_identifier
from wp_agent.policy.network_scope import network_wide, site_restores
from wp_agent.policy.option_storage_rules import placement_and_hooks, update_offers, widget_storage
from wp_agent.policy.read_only_flags import ReadOnlyFlag, read_only_flag
from wp_agent.policy.read_oracles import read_oracles, search_replace_scope
from wp_agent.policy.rule import ID_RANGE, OPTION_WRITES, ArgumentRule, Verdict, argument_rule, written_option
from wp_agent.policy.source_rules import (
    MEDIA_PRIVATE_HOST_RULE,
    every_image_regenerated,
    install_source,
    media_source,
    post_content_sources,
    server_fetches,
    server_files,
)
from wp_agent.whole_values import whole

__all__ = [
    "ARGUMENT_RULES",
    "MEDIA_PRIVATE_HOST_RULE",
    "ArgumentRule",
    "ReadOnlyFlag",
    "Verdict",
    "read_only_flag",
    "rules_for",
]

B = PolicyCategory.BLOCKED
D = PolicyCategory.DESTRUCTIVE


# FR-5.3 important option keys, plus settings that act like them (theme/plugin switches, roles,
# admin mail, search-engine visibility). `*user_roles` is never written (account_rules.py).
IMPORTANT_OPTION_KEYS = frozenset(
    {
        "siteurl",
        "home",
        "blogname",
        "blogdescription",
        "users_can_register",
        "default_role",
        "permalink_structure",
        "admin_email",
        "active_plugins",
        "template",
        "stylesheet",
        "blog_public",
        # Update services WordPress POSTs to on every publish: its URL check lets 169.254.0.0/16
        # and 100.64.0.0/10 through (tried on 6.1), so a new entry is a request into the network.
        "ping_sites",
        # The network's (`site option`, `network meta`): code and languages on every site, who may
        # register and what may be uploaded.
        "active_sitewide_plugins",
        "auto_update_plugins",
        "auto_update_themes",
        "allowedthemes",
        "registration",
        "add_new_users",
        "wplang",
        "upload_space_check_disabled",
        "blog_upload_space",
        "fileupload_maxk",
        "illegal_names",
        "limited_email_domains",
        "banned_email_domains",
    }
)
SEARCH_REPLACE_OPTIONS = frozenset(
    {
        "dry-run",
        "precise",
        "no-precise",
        "recurse-objects",
        "no-recurse-objects",
        "skip-columns",
        "include-columns",
        "skip-tables",
        "network",
        "format",
        "report",
        "no-report",
        "report-changed-only",
        "regex",
        "regex-flags",
        "regex-delimiter",
        "regex-limit",
        "verbose",
    }
)
TRASHING_POST_STATUSES = frozenset({"trash", "auto-draft", "inherit"})  # auto-drafts are purged by cron
_TABLE = whole(r"[A-Za-z0-9_$]+", "wp_posts", "wp_2_posts")
_PLAIN_KEY = whole(r"[A-Za-z0-9_\-]+", "blogname", "my-key", "widget_block-2")
_SECRET_SEARCH_WORDS = ("pass", "secret", "token", "key", "salt", "auth", "credential")


def sanitize_key(value: str) -> str:
    """WordPress sanitize_key(): lowercase, then drop everything but a-z 0-9 _ -."""
    return re.sub(r"[^a-z0-9_\-]", "", value.lower())


@argument_rule(
    match=("search-replace a b --all-tables", "search-replace a b --all-tables-with-prefix"),
    not_match=("search-replace a b wp_posts", "search-replace a b --dry-run"),
    paths=("search-replace",),
)
def _all_tables(cmd: ParsedCommand, path: tuple[str, ...]) -> Verdict | None:
    for option in cmd.options:  # (`db size --all-tables` only lists: not this rule's command)
        if option.name.startswith("all-tables"):
            return Verdict(
                B,
                "blocked.search_replace_all_tables",
                "全テーブルを対象にする置換（--all-tables）は破壊の恐れがあるため実行できません",
                f"--{option.name}",
            )
    return None


@argument_rule(
    match=(
        "search-replace a b --export=/tmp/x.sql",
        "search-replace a b --log=/tmp/x",
        "search-replace a b 'wp_*'",
    ),
    not_match=("search-replace a b --dry-run --precise", "search-replace a b wp_posts wp_postmeta"),
    paths=("search-replace",),
)
def _search_replace(cmd: ParsedCommand, path: tuple[str, ...]) -> Verdict | None:
    """Only known-safe options: --log writes files (or dumps rows), --callback calls PHP functions,
    --export dumps SQL; table wildcards reach beyond WordPress's tables."""
    for option in cmd.options:
        if option.name.startswith("export"):
            return Verdict(
                B,
                "blocked.data_export",
                "置換結果のSQL書き出し（--export）は情報漏洩の恐れがあるため実行できません",
                "--export",
            )
        if option.name not in SEARCH_REPLACE_OPTIONS and option.name not in GLOBAL_OPTIONS:
            return Verdict(
                B,
                "blocked.search_replace_option",
                f"search-replace のオプション --{option.name} は使用できません（ファイル書き込み・コード実行・情報漏洩の恐れ）",
                f"--{option.name}",
            )
    for table in cmd.args_after(path)[2:]:
        if not _TABLE.fits(table):
            return Verdict(
                B,
                "blocked.search_replace_tables",
                f"テーブル名にはワイルドカード等を使えません: {table}",
                table,
            )
    return None


def _field_names(values: list[str]) -> set[str]:
    return {folded(part) for value in values for part in value.split(",")}


@argument_rule(
    match=(
        "option list --search=*secret*",
        "site option list --search=*pass*",
        "transient list --search=*token*",
    ),
    not_match=(
        "option list --search=blog*",
        "site option list --search=smtp*",
    ),
    paths=("option list", "site option list", "transient list"),
)
def _secret_option_read(cmd: ParsedCommand, path: tuple[str, ...]) -> Verdict | None:
    # A read of one named option is read_oracles.py's (any stored value by a secret name). A listing
    # is masked by key anyway; asking for secret names outright is refused.
    for value in cmd.option_values("search", "include"):
        if is_secret_option(value.replace("*", "")) or any(w in folded(value) for w in _SECRET_SEARCH_WORDS):
            return Verdict(
                B, "blocked.secret_option", f"認証情報を含む設定（{value}）は読み出せません", value
            )
    return None


_CONFIG_READS = frozenset({("config", "get"), ("config", "has"), ("config", "is-true")})
# What wp-config.php may be asked for: WordPress's own settings, which hold no credential. Not a list
# of what to refuse: a plugin keeps a credential under any name at all (`$redis_server = ['auth' => …]`,
# `DATABASE_URL`, `AS3CF_SETTINGS`), and none of those is read; neither are DB_USER/PASSWORD/HOST, keys
# and salts. WP-CLI compares names exactly (`db_name` is not DB_NAME).
CONFIG_READABLE = frozenset(
    {
        "table_prefix", "ABSPATH", "DB_NAME", "DB_CHARSET", "DB_COLLATE", "WP_HOME", "WP_SITEURL",
        "WP_DEBUG", "WP_DEBUG_LOG", "WP_DEBUG_DISPLAY", "SCRIPT_DEBUG", "SAVEQUERIES", "WP_CACHE",
        "CONCATENATE_SCRIPTS", "COMPRESS_SCRIPTS", "COMPRESS_CSS", "ENFORCE_GZIP", "WP_MEMORY_LIMIT",
        "WP_MAX_MEMORY_LIMIT", "WP_POST_REVISIONS", "AUTOSAVE_INTERVAL", "EMPTY_TRASH_DAYS", "MEDIA_TRASH",
        "IMAGE_EDIT_OVERWRITE", "DISABLE_WP_CRON", "ALTERNATE_WP_CRON", "WP_CRON_LOCK_TIMEOUT",
        "WP_AUTO_UPDATE_CORE", "AUTOMATIC_UPDATER_DISABLED", "CORE_UPGRADE_SKIP_NEW_BUNDLED",
        "DISALLOW_FILE_EDIT", "DISALLOW_FILE_MODS", "DISALLOW_UNFILTERED_HTML", "ALLOW_UNFILTERED_UPLOADS",
        "FORCE_SSL_ADMIN", "WP_ENVIRONMENT_TYPE", "WP_DEVELOPMENT_MODE", "WP_DISABLE_FATAL_ERROR_HANDLER",
        "WPLANG", "WP_LANG_DIR", "WP_CONTENT_DIR", "WP_CONTENT_URL", "WP_PLUGIN_DIR", "WP_PLUGIN_URL",
        "WPMU_PLUGIN_DIR", "WPMU_PLUGIN_URL", "UPLOADS", "WP_TEMP_DIR", "WP_DEFAULT_THEME",
        "WP_ALLOW_MULTISITE", "MULTISITE", "SUBDOMAIN_INSTALL", "DOMAIN_CURRENT_SITE", "PATH_CURRENT_SITE",
        "SITE_ID_CURRENT_SITE", "BLOG_ID_CURRENT_SITE", "NOBLOGREDIRECT", "WP_ALLOW_REPAIR",
        "DO_NOT_UPGRADE_GLOBAL_TABLES", "WP_HTTP_BLOCK_EXTERNAL", "WP_ACCESSIBLE_HOSTS", "COOKIE_DOMAIN",
        "FS_METHOD", "RECOVERY_MODE_EMAIL",
    }
)  # fmt: skip


@argument_rule(
    match=("config get table_prefix --config-file=/etc/passwd", "config path --config-file=/tmp/x.php"),
    not_match=("config get table_prefix", "config path"),
    paths=("config",),
)
def _other_config_file(cmd: ParsedCommand, path: tuple[str, ...]) -> Verdict | None:
    option = next((o for o in cmd.options if o.name == "config-file"), None)
    if option is None:
        return None
    return Verdict(
        B,
        "blocked.config_file",
        "wp-config.php 以外のファイル（--config-file）は読み出せません",
        option.token,
    )


@argument_rule(
    match=(
        "config get DB_PASSWORD",
        "config get AUTH_KEY",
        "config has NONCE_SALT",
        "config get DB_USER",
        "config is-true SENDGRID_API_KEY",
        "config get redis_server --type=variable",
        "config get DATABASE_URL",
    ),
    not_match=("config get table_prefix", "config get WP_DEBUG", "config has WP_CACHE"),
    paths=_CONFIG_READS,
)
def _secret_config_read(cmd: ParsedCommand, path: tuple[str, ...]) -> Verdict | None:
    name = next(iter(cmd.args_after(path)[:1]), None)
    if name is None or name in CONFIG_READABLE:
        return None
    return Verdict(
        B,
        "blocked.secret_config",
        f"wp-config.php の「{name}」は読み出せません。読めるのは WordPress 本体の設定（WP_DEBUG・WP_HOME・"
        "table_prefix など）だけです（プラグインなどが置く値や接続情報は認証情報を含むことがあるため）",
        name,
    )
    for name in cmd.args_after(path)[:1]:
        if name not in CONFIG_READABLE:
            return Verdict(
                B,
                "blocked.secret_config",
                f"wp-config.php の「{name}」は読み出せません。読めるのは WordPress 本体の設定（WP_DEBUG・WP_HOME・"
                "table_prefix など）だけです（プラグインなどが置く値や接続情報は認証情報を含むことがあるため）",
                name,
            )
    return None


@argument_rule(
    match=(
        "option update siteurl http://x",
        "option delete home",
        "option patch update active_plugins 0 x",
    ),
    not_match=("option update posts_per_page 5", "option get siteurl"),
    paths=OPTION_WRITES,
)
def _important_option(cmd: ParsedCommand, path: tuple[str, ...]) -> Verdict | None:
    key = written_option(cmd, path)
    if key is None:
        return None
    if folded(key) in IMPORTANT_OPTION_KEYS:
        whose, reach = (
            ("サイト", "サイト") if path[0] == "option" else ("ネットワーク", "ネットワークの全サイト")
        )
        return Verdict(
            D,
            "confirm.option.important_key",
            f"{whose}設定「{folded(key)}」を変更します。{reach}に影響するため承認が必要です",
            key,
        )
    if not _PLAIN_KEY.fits(key):
        # WordPress trims names and MySQL folds width/accents: an odd spelling may hit a real key.
        return Verdict(
            D,
            "confirm.option.unusual_key",
            f"通常と異なる表記の設定名（{key!r}）を変更します。承認が必要です",
            key,
        )
    return None


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


@argument_rule(
    match=("post update 5 --post_status=trash", "post update 5 --post_status=Auto-Draft"),
    not_match=("post update 5 --post_status=publish", "post update 5 --post_title=trash"),
    paths=("post update",),
)
def _post_trash_status(cmd: ParsedCommand, path: tuple[str, ...]) -> Verdict | None:
    """Trash by update (WordPress sanitize_key()s the status), and auto-draft, which cron deletes."""
    for value in cmd.option_values("post_status"):
        if sanitize_key(value) in TRASHING_POST_STATUSES:
            return Verdict(
                D,
                "confirm.post.trash_status",
                "投稿をゴミ箱へ移動（または非表示・自動削除対象に）します。承認が必要です",
                f"--post_status={value}",
            )
    return None


@argument_rule(
    match=("comment update 3 --comment_approved=spam", "comment update 3 --comment_approved=Trash"),
    not_match=("comment update 3 --comment_approved=1", "comment update 3 --comment_content=spam"),
    paths=("comment update",),
)
def _comment_trash_status(cmd: ParsedCommand, path: tuple[str, ...]) -> Verdict | None:
    """A comment moved to the trash or spam by update (the status is sanitize_key()d too)."""
    for value in cmd.option_values("comment_approved"):
        if sanitize_key(value) in {"trash", "spam"}:
            return Verdict(
                D,
                "confirm.comment.trash_status",
                "コメントをゴミ箱またはスパムへ移動します。承認が必要です",
                f"--comment_approved={value}",
            )
    return None


# Theme switches, and any pinned version: an old release may be a known-vulnerable one.


@argument_rule(
    match=("plugin install contact-form-7 --version=5.3.1 --activate", "plugin install akismet --activate"),
    not_match=("plugin install akismet", "plugin install akismet --force"),
    paths=("plugin install",),
)
def _plugin_activation(cmd: ParsedCommand, path: tuple[str, ...]) -> Verdict | None:
    if not cmd.has_flag("activate"):
        return None
    return Verdict(
        D,
        "confirm.plugin.activate",
        "プラグインを有効化します。有効化するとプラグイン自身のコード（有効化処理を含む）が実行され、"
        "何が変わるかを事前に確認できないため承認が必要です",
        "--activate",
    )


@argument_rule(
    match=("theme install twentytwentythree --activate", "theme enable twentytwentythree --activate"),
    not_match=("theme install twentytwentythree", "theme enable twentytwentythree"),
    paths=("theme install", "theme enable"),
)
def _theme_activation(cmd: ParsedCommand, path: tuple[str, ...]) -> Verdict | None:
    if not cmd.has_flag("activate"):
        return None
    return Verdict(
        D,
        "confirm.theme.activate",
        "テーマを有効化（切り替え）します。サイト表示に影響するため承認が必要です",
        "--activate",
    )


@argument_rule(
    match=("plugin update akismet --version=5.0", "theme update twentytwentyone --version=1.0"),
    not_match=("plugin update akismet", "theme update twentytwentyone --dry-run"),
    paths=("plugin update", "theme update"),
)
def _pinned_update(cmd: ParsedCommand, path: tuple[str, ...]) -> Verdict | None:
    if not cmd.has_flag("version"):
        return None
    return Verdict(
        D,
        "confirm.extension.version",
        "指定したバージョンへ入れ替えます（古い版への戻しを含む）。承認が必要です",
        "--version",
    )


@argument_rule(
    match=("theme install astra --version=1.0.0", "plugin install akismet --version"),
    not_match=("theme install astra", "plugin install akismet"),
    paths=("plugin install", "theme install"),
)
def _pinned_install(cmd: ParsedCommand, path: tuple[str, ...]) -> Verdict | None:
    if not cmd.has_flag("version"):
        return None
    return Verdict(
        D,
        "confirm.extension.version",
        "最新版ではなく指定したバージョンをインストールします（脆弱性が知られた古い版の恐れがあります）。承認が必要です",
        "--version",
    )


_CORE_VERSION = whole(r"\d+\.\d+(?:\.\d+)?", "7.1", "7.1.5")
_CORE_UPDATE_OPTIONS = frozenset({"minor", "version"})


@argument_rule(
    match=(
        "core update /tmp/wordpress.zip",
        "core update https://example.com/wordpress.zip",
        "core update --version=nightly",
        "core update --version=6.8 --force",
        "core update --insecure",
        "core update --locale=en_US",
    ),
    not_match=("core update", "core update --minor", "core update --version=7.1.5"),
    paths=("core update",),
)
def _core_update_forms(cmd: ParsedCommand, path: tuple[str, ...]) -> Verdict | None:
    """A core update only from WordPress.org's own offers, to a release by its number: never a package
    from a path or URL (code from anywhere), a nightly build, a forced downgrade (files older than the
    database), TLS checks turned off, or another language's package."""
    for value in cmd.args_after(path):
        return Verdict(
            B,
            "blocked.core_update_package",
            "WordPress本体は WordPress.org の公開版からのみ更新できます（ファイルやURLのパッケージは指定できません）",
            value,
        )
    for option in cmd.options:
        if option.name not in _CORE_UPDATE_OPTIONS and option.name not in GLOBAL_OPTIONS:
            return Verdict(
                B,
                "blocked.core_update_option",
                f"core update のオプション --{option.name} は使用できません（使えるのは --minor と --version=番号 です）",
                f"--{option.name}",
            )
    for version in cmd.option_values("version"):
        if not _CORE_VERSION.fits(version):
            return Verdict(
                B,
                "blocked.core_update_option",
                f"--version には公開版の番号（例: 7.1.5）を指定してください: {version[:40]}",
                f"--version={version[:40]}",
            )
    return None


@argument_rule(
    match=("post block export 5 --format=html", "post block export 5 --format=HTML"),
    not_match=("post block export 5 --format=json", "post block export 5"),
    paths=("post block export",),
)
def _rendering_export(cmd: ParsedCommand, path: tuple[str, ...]) -> Verdict | None:
    """Exporting blocks as HTML renders them (render_block): not a read (see `post block render`)."""
    if not any(v.lower() == "html" for v in cmd.option_values("format")):
        return None
    return Verdict(
        B,
        "blocked.render_read",
        "HTML形式の書き出し（--format=html）はブロックを描画し、動的ブロックやプラグインのコードが保存や外部への取得を"
        "行うことがあるため、読み取りとして実行できません。構造は --format=json で確認できます",
        "--format=html",
    )


# Post types WordPress acts on when such a post is saved or published: a published
# customize_changeset applies its settings (tried on WordPress 6.1: `post create
# --post_type=customize_changeset --post_status=publish --post_content='{"blogname":…}'` renamed the
# site without the approval an option change needs), user_request starts privacy exports/erasures,
# scheduled-action runs hooks, templates and global styles change every page.
_INTERNAL_POST_TYPES = frozenset(
    {
        "customize_changeset",
        "user_request",
        "scheduled-action",
        "revision",
        "oembed_cache",
        "custom_css",
        "wp_global_styles",
        "wp_template",
        "wp_template_part",
        "wp_navigation",
    }
)

INTERNAL_POST_TYPES = _INTERNAL_POST_TYPES  # for the agent's check of posts addressed by ID


@argument_rule(
    match=(
        "post create --post_type=customize_changeset --post_status=publish --post_content='{}'",
        "post update 8 --post_type=user_request",
        "post create --post_type=CUSTOM_CSS --post_content=x",
    ),
    not_match=(
        "post create --post_type=page --post_title=会社概要",
        "post list --post_type=customize_changeset --format=ids",
    ),
    paths=("post create", "post update"),
)
def _internal_post_types(cmd: ParsedCommand, path: tuple[str, ...]) -> Verdict | None:
    internal = next((t for t in cmd.option_values("post_type") if folded(t) in _INTERNAL_POST_TYPES), None)
    if internal is None:
        return None
    return Verdict(
        B,
        "blocked.internal_post_type",
        f"WordPressが内部で使う投稿タイプ（{internal}）は作成・変更できません（保存時に設定変更などが実行されるため）",
        f"--post_type={internal}",
    )


# Order matters only for which reason is reported first among equal categories: the specific rules
# first, the declared effect (what a write may change without approval) last.
ARGUMENT_RULES: tuple[ArgumentRule, ...] = (
    non_plain_identifier,
    forbidden_globals,
    execution_context,
    _all_tables,
    _search_replace,
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
    _secret_option_read,
    _other_config_file,
    _secret_config_read,
    post_content_sources,
    install_source,
    every_image_regenerated,
    media_source,
    server_fetches,
    server_files,
    _important_option,
    default_role,
    publishing_role,
    role_change,
    account_changes,
    _plugin_activation,
    _theme_activation,
    _pinned_update,
    _pinned_install,
    _core_update_forms,
    placement_and_hooks,
    update_offers,
    widget_storage,
    _internal_post_types,
    _rendering_export,
    _post_trash_status,
    _comment_trash_status,
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
