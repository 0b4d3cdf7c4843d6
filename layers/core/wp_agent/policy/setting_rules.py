"""The site's settings: options (secret names asked for outright, the important keys, unusual spellings) and
what may be read of wp-config.php.
"""

from __future__ import annotations

from wp_agent.command_line.parsed_command import ParsedCommand
from wp_agent.masking import folded, is_secret_option
from wp_agent.policy.categories import PolicyCategory
from wp_agent.policy.rule import OPTION_WRITES, Verdict, argument_rule, written_option
from wp_agent.whole_values import whole

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


_PLAIN_KEY = whole(r"[A-Za-z0-9_\-]+", "blogname", "my-key", "widget_block-2")


_SECRET_SEARCH_WORDS = ("pass", "secret", "token", "key", "salt", "auth", "credential")


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
def secret_option_read(cmd: ParsedCommand, path: tuple[str, ...]) -> Verdict | None:
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
def other_config_file(cmd: ParsedCommand, path: tuple[str, ...]) -> Verdict | None:
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
def secret_config_read(cmd: ParsedCommand, path: tuple[str, ...]) -> Verdict | None:
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


@argument_rule(
    match=(
        "option update siteurl http://x",
        "option delete home",
        "option patch update active_plugins 0 x",
    ),
    not_match=("option update posts_per_page 5", "option get siteurl"),
    paths=OPTION_WRITES,
)
def important_option(cmd: ParsedCommand, path: tuple[str, ...]) -> Verdict | None:
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
