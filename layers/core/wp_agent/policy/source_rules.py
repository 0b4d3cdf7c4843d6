"""Argument rules about where content comes from: post content read from files or standard input,
plugin and theme install sources, and media imported from URLs (only public web hosts).

Part of ARGUMENT_RULES (argument_rules.py); split out because each needs its own knowledge of
sources (paths, package URLs, host addresses) rather than of WordPress's stored values.
"""

from __future__ import annotations

import ipaddress
import re
import socket
from urllib.parse import urlsplit

from wp_agent.command_line.parsed_command import ParsedCommand
from wp_agent.policy.categories import PolicyCategory
from wp_agent.policy.rule import DIGITS, ID_RANGE, SLUG, Verdict, argument_rule

B = PolicyCategory.BLOCKED
D = PolicyCategory.DESTRUCTIVE


_WEB_PORTS = frozenset({80, 443, 8080, 8443})


MEDIA_PRIVATE_HOST_RULE = "blocked.media_private_host"


@argument_rule(
    match=("post create /etc/passwd --post_title=x", "post update 5 -", "post create --edit"),
    not_match=("post create --post_title=x --post_content=y", "post update 5 7 --post_status=draft"),
)
def post_content_sources(cmd: ParsedCommand, path: tuple[str, ...]) -> Verdict | None:
    if path not in {("post", "create"), ("post", "update")}:
        return None
    if cmd.has_flag("edit"):
        return Verdict(
            B,
            "blocked.interactive_editor",
            "エディタを起動するオプション（--edit）は使用できません",
            "--edit",
        )
    args = cmd.args_after(path)
    ids = (DIGITS, ID_RANGE)
    files = args if path == ("post", "create") else [a for a in args if not any(p.fits(a) for p in ids)]
    if files:
        return Verdict(
            B,
            "blocked.file_argument",
            "サーバー上のファイルや標準入力から本文を読み込む指定はできません。--post_content で本文を指定してください",
            files[0],
        )
    return None


@argument_rule(
    match=(
        "plugin install https://evil.example/x.zip",
        "theme install ./t.zip",
        "plugin install akismet --insecure",
    ),
    not_match=("plugin install akismet", "theme install twentytwentythree --activate"),
)
def install_source(cmd: ParsedCommand, path: tuple[str, ...]) -> Verdict | None:
    if path not in {("plugin", "install"), ("theme", "install")}:
        return None
    kind = "プラグイン" if path[0] == "plugin" else "テーマ"
    if cmd.has_flag("insecure"):
        return Verdict(
            B,
            "blocked.insecure_download",
            "TLS検証を無効にするオプション（--insecure）は使用できません",
            "--insecure",
        )
    for source in cmd.args_after(path):
        if not SLUG.fits(source):
            return Verdict(
                B,
                "blocked.install_source",
                f"{kind}は公式ディレクトリのスラッグでのみインストールできます（URLやZIPファイルは不可）: {source}",
                source,
            )
    return None


def _numeric_ipv4(host: str) -> ipaddress.IPv4Address | None:
    """Hosts such as 127.1, 0x7f.1 or 0177.0.0.1 that inet_aton (and so curl) read as IPv4."""
    if not re.fullmatch(r"[0-9a-fA-Fx.]+", host) or not any(c.isdigit() for c in host):
        return None
    try:
        return ipaddress.IPv4Address(socket.inet_aton(host))
    except OSError:
        return None


def is_public_host(host: str) -> bool:
    """A host the internet can reach (not loopback, private, link-local such as the cloud metadata
    address, nor a single-label or internal name), in every spelling curl accepts."""
    lowered = host.lower().rstrip(".")
    if lowered in {"localhost", "metadata.google.internal"} or lowered.endswith(
        (".localhost", ".internal", ".local")
    ):
        return False
    numeric = _numeric_ipv4(lowered)
    if numeric is not None:
        return numeric.is_global
    try:
        address = ipaddress.ip_address(lowered.strip("[]"))
    except ValueError:
        return "." in lowered  # a DNS name; single-label names usually point inside the network
    mapped = getattr(address, "ipv4_mapped", None)
    return bool((mapped or address).is_global)


@argument_rule(
    match=(
        "media import /etc/passwd",
        "media import http://127.0.0.1/x.png",
        "media import 'http://\u200b169.254.169.254/x.png'",
        "media regenerate --yes",
    ),
    not_match=("media import https://example.com/x.png", "media regenerate 7 --yes"),
)
def media_source(cmd: ParsedCommand, path: tuple[str, ...]) -> Verdict | None:
    if path == ("media", "regenerate") and not [a for a in cmd.args_after(path) if DIGITS.fits(a)]:
        return Verdict(
            B,
            "blocked.heavy_operation",
            "全画像の再生成は負荷が高いため実行できません。対象の画像IDを指定してください",
            "media regenerate",
        )
    if path != ("media", "import"):
        return None
    if cmd.option_values("destination-dir") or cmd.has_flag("destination-dir"):
        return Verdict(
            B,
            "blocked.media_destination",
            "保存先ディレクトリの指定（--destination-dir）はできません",
            "--destination-dir",
        )
    # The literal checks here answer early; SafeDownloader checks every resolved address and
    # redirect when the agent downloads the file (WordPress itself never fetches it).
    refused: list[str] = []
    for source in cmd.args_after(path):
        parts = urlsplit(source)
        if parts.scheme not in {"http", "https"} or not parts.hostname:
            return Verdict(
                B,
                "blocked.media_source",
                f"メディアは http(s) のURLからのみ取り込めます（サーバー上のファイルは不可）: {source}",
                source,
            )
        if not parts.hostname.isascii():
            # IDNA drops invisible characters: http://<U+200B>169.254.169.254/ is the metadata host.
            return Verdict(
                B,
                "blocked.media_source",
                f"URLのホスト名は半角で指定してください（国際化ドメインは xn-- の形式）: {ascii(parts.hostname)[1:-1]}",
                source,
            )
        try:
            port = parts.port or (443 if parts.scheme == "https" else 80)
        except ValueError:
            port = -1
        if not is_public_host(parts.hostname) or port not in _WEB_PORTS:
            refused.append(f"{parts.hostname}:{port}")
    if not refused:
        return None
    return Verdict(
        B,
        MEDIA_PRIVATE_HOST_RULE,
        f"内部ネットワークのアドレスや特殊なポートからは取り込めません: {', '.join(refused)}",
        ",".join(refused),  # every refused host:port (an explicit test setting may allow them)
    )
