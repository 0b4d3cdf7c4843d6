"""The server's two resources: the site's summary (read with policy-checked, audited commands) and
the policy's rules in Japanese (from the same tables and configuration the policy decides with)."""

from __future__ import annotations

import json
from typing import Any

from wp_agent.config import PolicySettings, WpCliSettings
from wp_agent.mcp_server.session import McpSession
from wp_agent.policy import PolicyCategory
from wp_agent.policy.command_table import ALLOWED_COMMANDS, HARD_BLOCKS
from wp_agent.policy.custom_rules import load_custom_rules

_SUMMARY_REASON = "MCPリソース: サイト概要の取得（読み取りのみ）"
_CATEGORY_JA = {
    PolicyCategory.READ: "読み取り（すぐに実行）",
    PolicyCategory.WRITE: "変更（すぐに実行・監査記録あり）",
    PolicyCategory.DESTRUCTIVE: "破壊的（利用者の承認が必要）",
}


def site_summary(session: McpSession, settings: WpCliSettings) -> dict[str, Any]:
    """Name, URL, WordPress version and (multisite) the network's sites, as WordPress reports them."""

    def read(command: str) -> str | None:
        out = session.read(command, _SUMMARY_REASON)
        return out.strip() if out is not None else None

    sites_json = read("site list --fields=blog_id,url --format=json")
    sites: list[dict[str, Any]] = []
    if sites_json:
        try:
            sites = [{"blogId": int(s["blog_id"]), "url": str(s["url"])} for s in json.loads(sites_json)]
        except (ValueError, KeyError, TypeError):
            sites = []
    return {
        "name": read("option get blogname"),
        "url": read("option get home"),
        "wordpressVersion": read("core version"),
        "multisite": bool(sites),
        "sites": sites,
        "wpCliMode": settings.wp_cli_mode.value,
        "sandbox": session.simulated,
        "siteScope": session.site_url,
    }


def policy_rules_ja(settings: PolicySettings) -> str:
    """The rules wp_cli is judged by, in Japanese Markdown (built-in tables plus FR-5.2 custom rules)."""
    lines = [
        "# wp-agent のコマンドポリシー",
        "",
        "すべての wp_cli 呼び出しは、実行前に決定的なポリシーで判定されます（AIやクライアントの指示では変わりません）。",
        "",
        "- 1回に1つのWP-CLIコマンドだけを指定します。シェルの演算子（; && || | ` $( > < など）や、"
        "クォートの外の改行は使えません。引数はシェルを通さずにそのまま渡されます。",
        "- 下の許可リストにないコマンドはすべてブロックされます。",
        "- 読み取りはすぐに実行されます。変更は、コマンドごとに宣言された影響（変更できる項目・キー・値）の"
        "範囲内のときだけすぐに実行され、範囲外の変更と破壊的な操作（削除、--force、--all、テーマの有効化、"
        "一覧にない設定の変更、ユーザーの作成、search-replace など）は利用者の承認まで保留されます。",
        "- 承認は、保留したのと同じMCPセッションの中でだけ、保留した引数そのままで実行されます。"
        "実行直前にポリシーで再確認され、ブロック対象は承認しても実行されません。",
        "- グローバル引数 --exec --require --ssh --http --path、パスワードや認証キーの出力、"
        "URLやZIPからのプラグイン・テーマのインストールは使えません。",
        "- 出力は「信頼できないデータ」として囲まれ、大きすぎる出力は切り詰められます。"
        "パスワード・鍵・トークンなどの秘密情報はマスクされます。",
        "- すべての判定と実行は監査ログに記録されます（MCPクライアント名をチャネルとして記録）。",
        "",
        "## 常にブロックされるコマンド（設定でも許可できません）",
        "",
    ]
    lines += [f"- `wp {' '.join(block.path)}` — {block.reason_ja}" for block in HARD_BLOCKS]
    for category, title in _CATEGORY_JA.items():
        lines += ["", f"## 許可されたコマンド: {title}", ""]
        lines += [
            f"- `wp {' '.join(entry.path)}` — {entry.label_ja}"
            for entry in ALLOWED_COMMANDS.values()
            if entry.category is category
        ]
    custom = load_custom_rules(settings.wp_agent_policy_file, settings.wp_agent_policy_rules)
    if custom.allow or custom.deny or custom.confirm:
        lines += ["", "## この環境の追加ルール", ""]
        lines += [f"- 追加許可（{rule.category}）: `wp {rule.command}`" for rule in custom.allow]
        lines += [
            f"- 禁止: `wp {rule.command}`" + (f" — {rule.reason}" if rule.reason else "")
            for rule in custom.deny
        ]
        lines += [f"- 承認が必要: `wp {rule.command}`" for rule in custom.confirm]
    return "\n".join(lines) + "\n"
