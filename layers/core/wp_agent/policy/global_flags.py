"""WP-CLI's global parameters: the ones no command may carry, and the execution context."""

from __future__ import annotations

from wp_agent.command_line.parsed_command import ParsedCommand
from wp_agent.policy.categories import PolicyCategory
from wp_agent.policy.rule import Verdict, argument_rule

B = PolicyCategory.BLOCKED

# Global WP-CLI parameters that run code, reach other hosts or escape the configured install.
FORBIDDEN_GLOBALS = {
    "exec": "任意のPHPコードを実行するオプション（--exec）は使用できません",
    "require": "任意のPHPファイルを読み込むオプション（--require）は使用できません",
    "ssh": "別のサーバーへ接続するオプション（--ssh）は使用できません",
    "http": "別のサイトへ接続するオプション（--http）は使用できません",
    "path": "WordPressの場所を変えるオプション（--path）は使用できません（接続先の設定で決まります）",
    "prompt": "対話入力を求めるオプション（--prompt）は使用できません",
    # `--blog` is WP-CLI's old name of --url and overrides it: a session pinned to one site would
    # write to another.
    "blog": "対象サイトを変えるオプション（--blog）は使用できません（対象サイトはセッションの設定で決まります）",
    # The WordPress user decides capabilities such as unfiltered_html: only the operator sets it
    # (WP_AGENT_WP_USER or the target's wpUser); the executors add it to every command.
    "user": "実行するWordPressユーザーを変えるオプション（--user）は使用できません（接続先の設定で決まります）",
}
# WP-CLI's global parameters, allowed on every command (FORBIDDEN_GLOBALS are refused before this).
GLOBAL_OPTIONS = frozenset(
    {
        "url",
        "quiet",
        "skip-plugins",
        "skip-themes",
        "skip-packages",
        "no-color",
        "color",
        "debug",
        "context",
        "allow-root",
    }
)


@argument_rule(
    match=(
        "post list --exec=phpinfo();",
        "post list --REQUIRE=/tmp/x.php",
        "--ssh=host post list",
        "post create --blog=http://ms.test/shop/ --post_title=x",
        "post create --user=admin --post_title=x",
    ),
    not_match=("post list --execute=1", "post list --paths=x"),
)
def forbidden_globals(cmd: ParsedCommand, path: tuple[str, ...]) -> Verdict | None:
    for option in cmd.options:
        if option.name in FORBIDDEN_GLOBALS:
            return Verdict(
                B, f"blocked.global_option.{option.name}", FORBIDDEN_GLOBALS[option.name], f"--{option.name}"
            )
    return None


@argument_rule(
    match=("post list --context=admin", "option get blogname --CONTEXT=auto", "post list --context"),
    not_match=("post list --context=cli", "post list --format=ids"),
)
def execution_context(cmd: ParsedCommand, path: tuple[str, ...]) -> Verdict | None:
    """`--context=admin` loads WordPress as the dashboard does: on the real site a plain `option get`
    so scheduled cron events, ran the update checks and stored a login session for the WP user."""
    odd = next((o for o in cmd.options if o.name == "context" and (o.value or "").strip() != "cli"), None)
    if odd is None:
        return None
    return Verdict(
        B,
        "blocked.global_option.context",
        "実行コンテキストの変更（--context）は使用できません（管理画面の処理が動き、予約イベントやログインセッションが作られるため）",
        odd.token,
    )
