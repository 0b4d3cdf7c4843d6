"""`wp-agent sites add|list|show|remove|default`: the owner's named sites (cli/site_book.py).

`sites add NAME --ssh USER@HOST[:PORT] --wp-path PATH [--key FILE]` fetches the server's host key and
shows its SHA256 fingerprint; the person confirms it against the server (or gives it with
`--host-key`), then the key is pinned, the login and `wp` are tried, and only then the site is kept.
Without `--key` the login key comes from the person's ssh-agent (its fingerprint is kept).
`sites add NAME --local PATH` is a WordPress directory on this machine."""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

from wp_agent import clock
from wp_agent.cli import failures, site_book, terminal
from wp_agent.cli.exit_codes import ExitCode
from wp_agent.cli.site_book import SITE_NAME, SITE_NAME_RULE, NamedSite
from wp_agent.cli.site_reachability import wordpress_version
from wp_agent.config import CliSettings
from wp_agent.errors import WpAgentError
from wp_agent.models import field_rules
from wp_agent.models.target import MAX_TAGS, UpdateAllowance, UpdateLevel
from wp_agent.program import command_name
from wp_agent.whole_values import whole

_SSH_TARGET = whole(
    r"(?P<user>[A-Za-z0-9_][A-Za-z0-9_.-]*)@(?P<host>\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9_.-]+)(?::(?P<port>\d{1,5}))?",
    "deploy@example.com",
    "wp@[::1]:2222",
)
_FINGERPRINT = re.compile(r"SHA256:[A-Za-z0-9+/]{43}")
_YES = {"y", "yes", "はい"}


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "sites",
        help="自分のサイトを名前で登録・一覧・削除します（SSH または このコンピューターの WordPress）",
        description="サイトを名前で登録すると、--site NAME（または既定のサイト）だけで ask・approve・undo などが使えます。"
        f"保存先: {site_book.book_path()}（本人だけが読み書きできる 0600。鍵はファイルの場所だけを保存し、中身は保存しません）。",
    )
    actions = parser.add_subparsers(dest="sites_action", required=True, metavar="<操作>")
    add = actions.add_parser(
        "add",
        help="サイトを登録します（SSH はホスト鍵の指紋を確認してから固定します）",
        description="SSH: サーバーのホスト鍵を取得して SHA256 指紋を表示します。サーバー側の指紋（例: "
        "ssh-keygen -lf /etc/ssh/ssh_host_ed25519_key.pub）と同じことを確かめて y と答えるか、--host-key で指紋を渡します。"
        "そのあとログインと wp（WP-CLI）を確かめてから保存します。終了コード: 0 登録、1 接続できない・指紋が違う、"
        "2 指定の誤り、3 指紋の確認が必要（端末がなく --host-key もない）、5 設定エラー（鍵・wp・WordPress が見つからない）。",
    )
    add.add_argument("name", metavar="NAME", help=f"サイト名（{SITE_NAME_RULE}）")
    place = add.add_mutually_exclusive_group(required=True)
    place.add_argument("--ssh", metavar="USER@HOST[:PORT]", help="SSH の接続先（ポートの既定は 22）")
    place.add_argument("--local", metavar="PATH", help="このコンピューターの WordPress のディレクトリ")
    add.add_argument("--wp-path", metavar="PATH", help="SSH: サーバー上の WordPress のディレクトリ（必須）")
    add.add_argument(
        "--key", metavar="FILE", help="SSH: ログインに使う秘密鍵ファイル（省略時は ssh-agent の鍵）"
    )
    add.add_argument(
        "--host-key",
        metavar="KEY",
        help="SSH: 確認済みのホスト鍵（SHA256:… の指紋、'ssh-ed25519 AAAA…'、または known_hosts の行）",
    )
    add.add_argument(
        "--wp-user", metavar="USER", help="コマンドを実行する WordPress ユーザー（WP-CLI の --user）"
    )
    add.add_argument(
        "--wp-bin", metavar="COMMAND", help='WP-CLI の実行方法（既定: wp。例: "php /path/to/wp-cli.phar"）'
    )
    add.add_argument(
        "--default", action="store_true", help="既定のサイトにします（最初のサイトは自動で既定）"
    )
    add.add_argument("--replace", action="store_true", help="同じ名前のサイトを置き換えます")
    add.set_defaults(handler=run_add)
    listing = actions.add_parser("list", help="登録済みのサイトを一覧します")
    listing.set_defaults(handler=run_list)
    show = actions.add_parser("show", help="サイトの設定を表示します")
    show.add_argument("name", metavar="NAME")
    show.set_defaults(handler=run_show)
    remove = actions.add_parser("remove", help="サイトの登録を削除します（サーバーには何もしません）")
    remove.add_argument("name", metavar="NAME")
    remove.set_defaults(handler=run_remove)
    trust = actions.add_parser(
        "trust",
        help="サーバーのホスト鍵を変えたあと、新しい鍵を確認して固定し直します（ほかの設定はそのまま）",
        description="SSH のサイトで、サーバーが今提示するホスト鍵の SHA256 指紋を表示します。サーバー側の指紋と同じことを"
        "確かめて y と答えるか、--host-key で指紋を渡します。新しい鍵でログインと wp を確かめてから保存します。"
        "終了コード: 0 固定した（または変わっていない）、1 接続できない・指紋が違う、2 指定の誤り、3 指紋の確認が必要。",
    )
    trust.add_argument("name", metavar="NAME")
    trust.add_argument(
        "--host-key",
        metavar="KEY",
        help="確認済みのホスト鍵（SHA256:… の指紋、'ssh-ed25519 AAAA…'、または known_hosts の行）",
    )
    trust.set_defaults(handler=run_trust)
    updates = actions.add_parser(
        "updates",
        help="承認なしで実行してよい更新（いつも確認付き・問題があれば自動で元に戻す）を表示・設定します",
        description="指定した範囲の更新（core update --minor、plugin/theme update --patch|--minor）は、このサイトでは"
        "承認を待たずに実行します。どの更新も実行前後にサイトを確認し、悪くなれば自動で元に戻します。"
        "範囲外の更新（メジャー版、--version 指定など）はこれまでどおり承認が必要です。オプションなし: 今の設定を表示。",
    )
    updates.add_argument("name", metavar="NAME")
    updates.add_argument(
        "--core", choices=["none", "minor"], help="WordPress本体: none（毎回承認）| minor（同じ系列の修正版）"
    )
    for kind, label in (("plugins", "プラグイン"), ("themes", "テーマ")):
        updates.add_argument(
            f"--{kind}", choices=[level.value for level in UpdateLevel],
            help=f"{label}: none（毎回承認）| patch（1.3 → 1.3.3）| minor（1.3 → 1.4）",
        )  # fmt: skip
    updates.set_defaults(handler=run_updates)
    tags = actions.add_parser(
        "tags",
        help="サイトのタグ（wp-agent fleet ask --tag で複数のサイトを選ぶ名前）を表示・変更します",
        description="オプションなし: 今のタグを表示。タグは英小文字・数字で始まり、英小文字・数字・_ . - の40文字以内。",
    )
    tags.add_argument("name", metavar="NAME")
    tags.add_argument("--add", metavar="TAG", action="append", default=[], help="付けるタグ（繰り返し可）")
    tags.add_argument("--remove", metavar="TAG", action="append", default=[], help="外すタグ（繰り返し可）")
    tags.set_defaults(handler=run_tags)
    default = actions.add_parser("default", help="既定のサイトを表示・変更します")
    default.add_argument("name", metavar="NAME", nargs="?", help="既定にするサイト（省略: 今の既定を表示）")
    default.add_argument("--clear", action="store_true", help="既定のサイトをなくします")
    default.set_defaults(handler=run_default)
    for sub in (add, listing, show, remove, trust, updates, tags, default):
        sub.add_argument("--json", action="store_true", help="結果を JSON で標準出力に出します")


# --- add ------------------------------------------------------------------------------------------


def run_add(args: argparse.Namespace, settings: CliSettings) -> int:
    if not SITE_NAME.fits(args.name):
        raise failures.usage(
            "INVALID_SITE_NAME", f"サイト名「{args.name}」は使えません（{SITE_NAME_RULE}）。"
        )
    existing = site_book.load()
    if args.name in existing.sites and not args.replace:
        raise failures.usage(
            "SITE_EXISTS",
            f"サイト「{args.name}」はすでに登録されています（{existing.sites[args.name].describe()}）。"
            "置き換えるときは --replace を付けてください。",
        )
    site = _ssh_site(args, settings) if args.ssh else _local_site(args)
    candidates = _agent_candidates(site) if site.kind == "ssh" and site.key_path is None else [site]
    version = ""
    for number, candidate in enumerate(candidates, 1):
        try:
            version = _try_site(candidate)
        except failures.CliError as failure:
            if (failure.error_details or {}).get("cause") == "auth_failed" and number < len(candidates):
                continue  # the agent's next key may be the one the server accepts
            raise
        site = candidate
        break
    with site_book.changing() as book:
        book.sites[site.name] = site
        made_default = args.default or book.default is None or book.default not in book.sites
        if made_default:
            book.default = site.name
    if args.json:
        terminal.out.json(json.dumps({"success": True, "site": site.to_json_dict(), "default": made_default,
                                      "wordpressVersion": version}, ensure_ascii=False))  # fmt: skip
        return ExitCode.OK
    terminal.out.line(f"サイト「{site.name}」を登録しました: {site.describe()}（WordPress {version}）")
    if made_default:
        terminal.out.line("既定のサイトにしました（--site を付けないときに使います）。")
    terminal.err.line(f'使い方: {command_name()} ask --site {site.name} "下書きの投稿を一覧で見せて"')
    return ExitCode.OK


def _ssh_site(args: argparse.Namespace, settings: CliSettings) -> NamedSite:
    matched = _SSH_TARGET.parts(args.ssh)
    if matched is None:
        raise failures.usage(
            "INVALID_SSH_TARGET", "--ssh は USER@HOST または USER@HOST:PORT の形で指定してください。"
        )
    port = int(matched["port"] or 22)
    if not 1 <= port <= 65_535:
        raise failures.usage("INVALID_SSH_TARGET", "--ssh のポート番号は 1〜65535 です。")
    if not args.wp_path or not args.wp_path.startswith("/"):
        raise failures.usage(
            "WP_PATH_REQUIRED",
            "--wp-path にサーバー上の WordPress のディレクトリを絶対パスで指定してください。",
        )
    host = matched["host"].strip("[]")
    key_path = None
    if args.key:
        key_path = str(Path(args.key).expanduser().absolute())
        _check_key_file(key_path, settings)
    host_key = _confirmed_host_key(host, port, args.host_key, settings.vps_ssh_connect_timeout)
    # Without --key the agent's key is chosen by trying them (agent_key "" until then).
    return NamedSite(
        name=args.name, kind="ssh", wp_path=args.wp_path.rstrip("/") or "/", host=host, port=port,
        user=matched["user"], key_path=key_path, agent_key=None if key_path else "", host_key=host_key,
        wp_user=args.wp_user, wp_cli_bin=args.wp_bin, added_at=clock.now_iso(),
    )  # fmt: skip


def _local_site(args: argparse.Namespace) -> NamedSite:
    for option in ("wp_path", "key", "host_key"):
        if getattr(args, option):
            flag = "--" + option.replace("_", "-")
            raise failures.usage("USAGE_ERROR", f"{flag} は --ssh のときだけ使えます。")
    path = Path(args.local).expanduser().absolute()
    if not path.is_dir():
        raise failures.usage(
            "WP_PATH_NOT_FOUND",
            f"ディレクトリ {path} がありません。WordPress のディレクトリを指定してください。",
        )
    return NamedSite(
        name=args.name, kind="local", wp_path=str(path), wp_user=args.wp_user, wp_cli_bin=args.wp_bin,
        added_at=clock.now_iso(),
    )  # fmt: skip


def _check_key_file(path: str, settings: CliSettings) -> None:
    from wp_agent.executors.ssh_keys import parse_private_key

    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        raise failures.configuration(
            "SSH_KEY_UNREADABLE", f"秘密鍵ファイル {path} を読めません（--key）。"
        ) from None
    passphrase = (
        settings.vps_ssh_key_passphrase.get_secret_value() if settings.vps_ssh_key_passphrase else None
    )
    try:
        parse_private_key(text, passphrase, source=path)
    except WpAgentError as exc:
        hint = "（パスフレーズ付きの鍵は ssh-agent に追加して --key を省くと使えます）"
        raise failures.configuration("SSH_KEY_UNREADABLE", exc.message_ja + hint) from None


def _confirmed_host_key(host: str, port: int, given: str | None, timeout: float) -> str:
    """`type base64` of the server's host key, once the person has confirmed it."""
    from wp_agent.executors.ssh_host_scan import KEY_FAMILIES, fetch_host_key
    from wp_agent.executors.ssh_keys import describe_key, parse_host_keys

    try:
        presented = fetch_host_key(host, port, timeout)
    except WpAgentError as exc:
        raise failures.CliError(ExitCode.FAILED, exc.code.value, exc.message_ja) from None
    if given:
        wanted = _FINGERPRINT.search(given)
        if wanted is None:
            try:
                pinned = parse_host_keys(given, host, port, source="--host-key")
            except WpAgentError as exc:
                raise failures.usage("INVALID_HOST_KEY", exc.message_ja) from None
            wanted_prints = {key.fingerprint for key in pinned}
        else:
            wanted_prints = {wanted.group()}
        for family in (None, *KEY_FAMILIES):  # the fingerprint may be of another of the server's keys
            if family is not None:
                try:
                    presented = fetch_host_key(host, port, timeout, family)
                except WpAgentError:
                    continue
            if presented.fingerprint in wanted_prints:
                return f"{presented.get_name()} {presented.get_base64()}"
        raise failures.CliError(
            ExitCode.FAILED,
            "HOST_KEY_MISMATCH",
            f"{host}:{port} のホスト鍵が --host-key と一致しません（サーバーの鍵: {describe_key(presented)}）。"
            "接続先が正しいか、なりすましでないかを確かめてください（登録していません）。",
        )
    shown = describe_key(presented)
    if not terminal.interactive():
        raise failures.CliError(
            ExitCode.AWAITING_APPROVAL,
            "HOST_KEY_CONFIRMATION_REQUIRED",
            f"{host}:{port} のホスト鍵は {shown} です。サーバーで ssh-keygen -lf /etc/ssh/ssh_host_ed25519_key.pub などを"
            f"実行して同じ指紋か確かめてから、--host-key {presented.fingerprint} を付けて実行してください（登録していません）。",
            fingerprint=presented.fingerprint,
        )
    terminal.err.line(f"{host}:{port} のホスト鍵の指紋: {shown}")
    terminal.err.line(
        "サーバーで ssh-keygen -lf /etc/ssh/ssh_host_ed25519_key.pub などを実行して、同じ指紋か確かめてください。"
    )
    terminal.err.line("同じ指紋ですか？ [y/N]: ", end="", flush=True)
    if sys.stdin.readline().strip().lower() not in _YES:
        raise failures.CliError(
            ExitCode.FAILED,
            "HOST_KEY_NOT_CONFIRMED",
            "ホスト鍵の指紋を確認できなかったため、登録しませんでした。",
        )
    return f"{presented.get_name()} {presented.get_base64()}"


def _agent_candidates(site: NamedSite) -> list[NamedSite]:
    """The site once per key of the person's ssh-agent (the first the server accepts is kept)."""
    from wp_agent.executors.ssh_agent_keys import agent_keys

    try:
        keys = agent_keys()
    except WpAgentError as exc:
        raise failures.configuration("SSH_AGENT_UNAVAILABLE", exc.message_ja) from None
    return [site.model_copy(update={"agent_key": str(key.fingerprint)}) for key in keys]


def _try_site(site: NamedSite) -> str:
    """Log in (or find the directory) and ask WordPress its version, as a run would."""
    from wp_agent.executors.factory import build_wp_cli

    settings = site_book.settings_with(CliSettings, site.environment())
    try:
        wp_cli = build_wp_cli(settings)
    except WpAgentError as exc:
        raise failures.configuration(exc.code.value, exc.message_ja) from None
    try:
        return wordpress_version(wp_cli, settings, site)
    finally:
        wp_cli.close()


# --- list / show / remove / default -------------------------------------------------------------------


def _site_json(site: NamedSite, book: site_book.SiteBook) -> dict[str, Any]:
    document = site.to_json_dict()
    document["default"] = book.default == site.name
    if site.host_key:
        document["hostKeyFingerprint"] = _fingerprint(site.host_key)
    return document


def _fingerprint(host_key: str) -> str:
    from wp_agent.executors.ssh_keys import describe_key, parse_host_keys

    try:
        return describe_key(parse_host_keys(host_key, "-", 22, source="sites.json")[0])
    except WpAgentError:
        return "（読めません）"


def _find(book: site_book.SiteBook, name: str) -> NamedSite:
    site = book.sites.get(name)
    if site is None:
        raise failures.usage(
            "SITE_NOT_REGISTERED", f"サイト「{name}」は登録されていません。登録済み: {book.names()}"
        )
    return site


def run_list(args: argparse.Namespace, settings: CliSettings) -> int:
    book = site_book.load()
    sites = [book.sites[name] for name in sorted(book.sites)]
    if args.json:
        document = {"default": book.default, "sites": [_site_json(site, book) for site in sites]}
        terminal.out.json(json.dumps(document, ensure_ascii=False))
        return ExitCode.OK
    if not sites:
        terminal.out.line(f"登録済みのサイトはありません。{command_name()} sites add で登録します。")
        return ExitCode.OK
    rows = [["★" if book.default == s.name else "", s.name, s.describe(), s.wp_user or ""] for s in sites]
    terminal.out.table(["既定", "名前", "接続先", "WordPress ユーザー"], rows, title="登録済みのサイト")
    return ExitCode.OK


def run_show(args: argparse.Namespace, settings: CliSettings) -> int:
    book = site_book.load()
    site = _find(book, args.name)
    document = _site_json(site, book)
    if args.json:
        terminal.out.json(json.dumps(document, ensure_ascii=False))
        return ExitCode.OK
    labels = {"name": "名前", "kind": "種類", "host": "ホスト", "port": "ポート", "user": "SSHユーザー",
              "wpPath": "WordPress のディレクトリ", "keyPath": "秘密鍵ファイル", "agentKey": "ssh-agent の鍵",
              "hostKeyFingerprint": "ホスト鍵（固定）", "wpUser": "WordPress ユーザー", "wpCliBin": "WP-CLI",
              "default": "既定", "addedAt": "登録日時"}  # fmt: skip
    if site.update_allowance is not None:
        document["updateAllowance"] = site.update_allowance.describe_ja()
        labels["updateAllowance"] = "承認なしで実行する更新"
    for key, label in labels.items():
        if key in document:
            value = document[key]
            terminal.out.line(
                f"{label}: {'はい' if value is True else 'いいえ' if value is False else value}"
            )
    return ExitCode.OK


def run_remove(args: argparse.Namespace, settings: CliSettings) -> int:
    with site_book.changing() as book:
        site = _find(book, args.name)
        del book.sites[site.name]
        was_default = book.default == site.name
        if was_default:
            book.default = None
    if args.json:
        terminal.out.json(json.dumps({"success": True, "removed": site.name, "default": book.default}))
        return ExitCode.OK
    terminal.out.line(f"サイト「{site.name}」の登録を削除しました（サーバーには何もしていません）。")
    if was_default:
        terminal.out.line(f"既定のサイトはなくなりました（{command_name()} sites default NAME で選べます）。")
    return ExitCode.OK


def run_trust(args: argparse.Namespace, settings: CliSettings) -> int:
    """Pin the key the server presents now, once the person has confirmed it (the rest unchanged)."""
    site = _find(site_book.load(), args.name)
    if site.kind != "ssh" or site.host is None:
        raise failures.usage(
            "NOT_AN_SSH_SITE", f"サイト「{site.name}」は SSH のサイトではありません（ホスト鍵はありません）。"
        )
    pinned = site.host_key or ""
    host_key = _confirmed_host_key(site.host, site.port, args.host_key, settings.vps_ssh_connect_timeout)
    before, after = _fingerprint(pinned) if pinned else "（なし）", _fingerprint(host_key)
    changed = host_key != pinned
    if changed:
        trusted = site.model_copy(update={"host_key": host_key})
        version = _try_site(trusted)  # logs in with the new key before anything is saved
        with site_book.changing() as book:
            if book.sites.get(site.name) != site:
                raise failures.CliError(
                    ExitCode.FAILED,
                    "SITE_CHANGED",
                    f"サイト「{site.name}」の登録が途中で変わったため、保存しませんでした。もう一度実行してください。",
                )
            book.sites[site.name] = trusted
    if args.json:
        document = {"success": True, "site": site.name, "changed": changed, "before": before, "after": after}
        terminal.out.json(json.dumps(document, ensure_ascii=False))
    elif changed:
        terminal.out.line(
            f"サイト「{site.name}」のホスト鍵を固定し直しました: {before} → {after}（WordPress {version}）"
        )
    else:
        terminal.out.line(f"サイト「{site.name}」のホスト鍵は変わっていません（{after}）。")
    return ExitCode.OK


def run_updates(args: argparse.Namespace, settings: CliSettings) -> int:
    """Show, or set, the updates the owner allows on a named site without asking each time."""
    changes = {kind: getattr(args, kind) for kind in ("core", "plugins", "themes") if getattr(args, kind)}
    if changes:
        with site_book.changing() as book:
            site = _find(book, args.name)
            kept = (site.update_allowance or UpdateAllowance()).model_dump()
            allowance = UpdateAllowance.model_validate({**kept, **changes})  # the levels, checked
            site = site.model_copy(update={"update_allowance": allowance if allowance.allows_any else None})
            book.sites[site.name] = site
    else:
        site = _find(site_book.load(), args.name)
    allowance = site.update_allowance or UpdateAllowance()
    if args.json:
        document = {"success": True, "site": site.name, "updateAllowance": allowance.model_dump(mode="json")}
        terminal.out.json(json.dumps(document, ensure_ascii=False))
        return ExitCode.OK
    verb = "を設定しました" if changes else ""
    terminal.out.line(f"サイト「{site.name}」で承認なしで実行する更新{verb}: {allowance.describe_ja()}")
    if allowance.allows_any:
        terminal.out.line("どの更新も実行前後にサイトを確認し、悪くなれば自動で元に戻します。")
    return ExitCode.OK


def run_tags(args: argparse.Namespace, settings: CliSettings) -> int:
    """Show, or change, the tags a fleet run can choose the site by."""
    wrong = [tag for tag in [*args.add, *args.remove] if not field_rules.matches(field_rules.TAG, tag)]
    if wrong:
        reason = field_rules.REASONS_JA[field_rules.TAG]
        raise failures.usage("VALIDATION_ERROR", f"タグ「{wrong[0][:60]}」は使えません。{reason}。")
    if args.add or args.remove:
        with site_book.changing() as book:
            site = _find(book, args.name)
            tags = [t for t in dict.fromkeys([*site.tags, *args.add]) if t not in args.remove]
            if len(tags) > MAX_TAGS:
                raise failures.usage("VALIDATION_ERROR", f"タグは1つのサイトに{MAX_TAGS}個までです。")
            site = site.model_copy(update={"tags": tags})
            book.sites[site.name] = site
    else:
        site = _find(site_book.load(), args.name)
    if args.json:
        terminal.out.json(
            json.dumps({"success": True, "site": site.name, "tags": site.tags}, ensure_ascii=False)
        )
        return ExitCode.OK
    terminal.out.line(f"サイト「{site.name}」のタグ: {'、'.join(site.tags) if site.tags else '（なし）'}")
    return ExitCode.OK


def run_default(args: argparse.Namespace, settings: CliSettings) -> int:
    if args.name and args.clear:
        raise failures.usage("USAGE_ERROR", "NAME と --clear は同時に指定できません。")
    if args.name or args.clear:
        with site_book.changing() as book:
            book.default = None if args.clear else _find(book, args.name).name
    else:
        book = site_book.load()
    if args.json:
        terminal.out.json(json.dumps({"success": True, "default": book.default}))
    elif book.default:
        terminal.out.line(f"既定のサイト: {book.default}（{book.sites[book.default].describe()}）")
    else:
        terminal.out.line(
            "既定のサイトはありません（--site で指定するか、環境変数の設定・サンドボックスを使います）。"
        )
    return ExitCode.OK
