"""A network's sites: created, deleted, or their state (archived, spam, public…) changed."""

from __future__ import annotations

from wp_agent.command_line.parsed_command import ParsedCommand
from wp_agent.policy.approval_summary.common import IRREVERSIBLE, listed, read_json
from wp_agent.policy.effects.site_address import RESERVED_SITE_NAMES, address_name
from wp_agent.policy.effects.table import site_checks
from wp_agent.policy.site_reads import StateReader

SITE_FLAG_EFFECTS = {
    "archive": "訪問者はサイトを閲覧できなくなります（アーカイブ解除で戻せます）。",
    "unarchive": "サイトが再び閲覧できるようになります。",
    "spam": "サイトがスパム扱いになり、閲覧できなくなります。",
    "unspam": "スパム扱いが解除され、サイトが閲覧できるようになります。",
    "deactivate": "サイトが無効になり、閲覧できなくなります。",
    "activate": "サイトが有効になり、閲覧できるようになります。",
    "private": "検索エンジンにサイトを登録しないよう求める設定になります。",
    "public": "検索エンジンにサイトが公開されます。",
}


def site_create(
    parsed: ParsedCommand, path: tuple[str, ...], args: list[str], read: StateReader | None
) -> tuple[str, str] | None:
    emails = parsed.option_values("email")
    slug = next(iter(parsed.option_values("slug")), "?")
    if emails or parsed.has_flag("email"):
        return (
            f"新しいサイト（{slug}）を作成し、メールアドレス {emails[0] if emails else '（空）'} のアカウントをその管理者にします",
            "そのアドレスのユーザーがいなければ、ログインできるアカウントが新しく作成され、パスワードがそのアドレスにメールで送られます。"
            "既存のユーザーであれば、そのユーザーが新しいサイトの管理者になります。",
        )
    what = f"新しいサイトをアドレス「/{slug.lower()}/」に作成します"
    if slug.lower() in RESERVED_SITE_NAMES:
        return what, (
            "このアドレスはWordPress自身が使う名前（管理画面・REST API・フィードなど）です。作成すると、"
            "このアドレスへのアクセスが新しいサイトに向かい、元の機能が使えなくなります。"
        )
    if read is not None:
        for check in site_checks(tuple(parsed.argv), path):
            pages = read(list(check.argv))
            if check.confirms(pages):
                continue
            ids = pages.split() if pages else []
            found = (
                f"メインサイトに同じアドレスの固定ページ（ID: {listed(ids)}）があります"
                if ids and all(i.isdigit() for i in ids)
                else "メインサイトに同じアドレスの固定ページがないことを確認できませんでした"
            )
            return (
                what,
                f"{found}。作成すると、その固定ページはこのアドレスで表示されなくなります（新しいサイトが表示されます）。",
            )
    return None


def site_delete(
    parsed: ParsedCommand, path: tuple[str, ...], args: list[str], read: StateReader | None
) -> tuple[str, str]:
    """The site named by ID or `--slug`, as the network knows it now."""
    slugs = parsed.option_values("slug")
    sites = _network_sites(read)
    matched = _matching_sites(sites, args[:1], slugs[0] if slugs else None) if sites is not None else []
    found = matched[-1] if matched else None
    named = args[0] if args else f"アドレス名「{slugs[0] if slugs else '?'}」"
    what = f"サイト（{found}）" if found else f"サイト（{named}。現在のサイト一覧で確認できませんでした）"
    if parsed.has_flag("keep-tables"):
        return (
            f"{what}をネットワークから削除します（データベースのテーブルは残します）",
            "サイトにはアクセスできなくなります。テーブルは残りますが、サイトの登録は" + IRREVERSIBLE,
        )
    return (
        f"{what}を削除します",
        "サイトの全ての投稿・設定・ユーザーとの関連付けが削除されます。" + IRREVERSIBLE,
    )


def _network_sites(read: StateReader | None) -> dict[str, str] | None:
    """blog_id -> URL of every site of the network (None when it cannot be read)."""
    rows = read_json(read, ["site", "list", "--fields=blog_id,url", "--format=json"])
    if not isinstance(rows, list):
        return None
    return {str(r.get("blog_id")): str(r.get("url", "")) for r in rows if isinstance(r, dict)}


def _matching_sites(sites: dict[str, str], ids: list[str], slug: str | None) -> list[str]:
    """`ID <n>: <url>` of the listed sites a command names by ID, or by `--slug` (their address name)."""
    if slug is not None:
        return [f"ID {i}: {u}" for i, u in sites.items() if address_name(u) == slug.lower()]
    return [f"ID {i}: {sites[i]}" for i in ids if i in sites]


def _named_sites(read: StateReader | None, ids: list[str], slug: str | None) -> str:
    """The sites as the network lists them: by ID, or by the last part of their address (`--slug`)."""
    sites = _network_sites(read)
    if sites is None:
        return f"ID {listed(ids)}" if ids else f"アドレス名「{slug}」"
    if slug is not None:
        found = _matching_sites(sites, ids, slug)
        return listed(found) if found else f"アドレス名「{slug}」（見つかりません）"
    return listed([f"ID {i}: {sites[i]}" if i in sites else f"ID {i}（見つかりません）" for i in ids])


def site_flag(
    parsed: ParsedCommand, path: tuple[str, ...], args: list[str], read: StateReader | None
) -> tuple[str, str]:
    slugs = parsed.option_values("slug")
    what = _named_sites(read, args, slugs[0] if slugs else None)
    label = {"archive": "アーカイブ", "unarchive": "アーカイブ解除", "spam": "スパムに設定", "unspam": "スパム解除",
             "deactivate": "無効化", "activate": "有効化", "private": "非公開化", "public": "公開"}[path[1]]  # fmt: skip
    return (
        f"サイト（{what}）を{label}します",
        SITE_FLAG_EFFECTS[path[1]] + "ネットワーク上のサイトの状態（公開・利用の可否）が変わります。",
    )
