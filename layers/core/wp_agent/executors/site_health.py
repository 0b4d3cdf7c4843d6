"""The site health probe (the executors' part: run it, read it, judge a change): does the site still work, as its visitors and its administrators see it?

WP-CLI never runs `template_redirect` or the dashboard, so a plugin that fatals only on the front end or
on `admin_init` is "activated ✓" by WP-CLI while every visitor gets an error. The probe runs on the site's
own server (executors/health_probe.php, staged and run with `wp eval-file`: the server fetches its own
site, never an address the model chose, never a fetch from the agent or Lambda) and reads:

- the front page and the newest published post: the status, a fatal-error page, an empty body;
- the dashboard, logged in with a session made for the probe alone and destroyed before it ends (an
  anonymous request is redirected to the login before anything of the admin runs);
- the REST API index;
- WP-CLI bootstrapping WordPress without a PHP error (the probe's own run);
- the PHP error log's lines written since the baseline (where the site has one: its path is PHP's
  `error_log`, which WordPress sets when it logs).

After a change of code (`fresh`: the plugins, the themes or core), the probe first has the web server's
PHP cache (opcache) forget the changed folders' scripts — otherwise a page can run the code of before for
seconds (opcache looks at files every `revalidate_freq`), or until PHP restarts, and a broken update would
look fine. Where the server's cache cannot be reached, the probe waits for it and says so.

`compare(before, after)` is the verdict of a change: a check that passed before and fails after got
worse; one already failing before is reported as such, not blamed on the change.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from wp_agent.errors import WpAgentError
from wp_agent.executors.media_staging import FileStager, json_answer, run_staged_script
from wp_agent.executors.port import WpCli, first_line
from wp_agent.masking import mask_command_output

PROBE = Path(__file__).with_name("health_probe.php")
_PHP_ERROR = re.compile(r"PHP (?:Fatal|Parse) error|Fatal error:|Parse error:", re.IGNORECASE)
_LABELS = {
    "front": "トップページ",
    "post": "最新の投稿",
    "admin": "管理画面（ログイン後）",
    "rest": "REST API",
    "login": "ログイン画面",
    "address": "サイトのアドレス",
    "wpcli": "WP-CLI の起動",
    "log": "PHP のエラーログ",
}


@dataclass(frozen=True)
class Probed:
    """One thing the probe looked at: whether it works, what it answered, and why not (Japanese)."""

    name: str
    ok: bool
    detail: str
    problem: str = ""
    ms: int = 0

    @property
    def label(self) -> str:
        return _LABELS[self.name]


@dataclass(frozen=True)
class HealthReport:
    """What the probe found; `log_size` is where the next probe's new log lines start."""

    probed: tuple[Probed, ...]
    log_size: int | None = None
    new_log_lines: tuple[str, ...] = field(default=())
    notes: tuple[str, ...] = field(default=())  # how the probe saw the change (not part of the verdict)
    leftovers: tuple[str, ...] = field(default=())  # guard backups of changes stopped midway (Japanese)
    # The site's own addresses as WordPress gave them ({"home", "siteurl"}): a later probe checks them.
    address: dict[str, str] | None = None

    @property
    def healthy(self) -> bool:
        return all(p.ok for p in self.probed)

    def failing(self) -> set[str]:
        return {p.name for p in self.probed if not p.ok}

    def lines_ja(self) -> list[str]:
        return [f"{'✓' if p.ok else '✗'} {p.label}: {p.detail}" for p in self.probed] + [
            f"※ {note}" for note in self.notes
        ]


@dataclass(frozen=True)
class HealthVerdict:
    """A change judged by the site before and after it."""

    worse: tuple[str, ...]  # names that worked before and fail after
    already_broken: tuple[str, ...]  # names that failed before as after

    @property
    def got_worse(self) -> bool:
        return bool(self.worse)

    def text_ja(self) -> str:
        if self.worse:
            named = "、".join(_LABELS[name] for name in self.worse)
            return f"変更後に {named} が正常に動かなくなりました。"
        if self.already_broken:
            named = "、".join(_LABELS[name] for name in self.already_broken)
            return f"サイトは変更前と同じ状態です（{named} は変更前から正常ではありません）。"
        return "サイトは正常です。"


def compare(before: HealthReport, after: HealthReport) -> HealthVerdict:
    was, now = before.failing(), after.failing()
    order = [p.name for p in after.probed]
    return HealthVerdict(
        worse=tuple(n for n in order if n in now - was),
        already_broken=tuple(n for n in order if n in now & was),
    )


def probe(
    wp_cli: WpCli,
    stager: FileStager,
    *,
    log_from: int | None = None,
    connect: str | None = None,
    fresh: tuple[str, ...] = (),
    site: tuple[str, ...] = (),
    address: dict[str, str] | None = None,
) -> HealthReport:
    """Run the probe on the site's server (`connect`: an address serving the site over plain HTTP, for
    the sandbox; `fresh`: the kinds of code just changed, "plugins" "themes" "core"; `site`: the `--url=`
    of the network's site a change went to, whose pages are then the ones looked at; `address`: the
    addresses an earlier probe found, which must not have changed — a change that moves the site's
    address leaves its visitors at the old one, whatever the new one answers). A probe that does not run
    at all is itself the finding: WP-CLI cannot load WordPress."""
    request = {"connect": connect, "log_from": log_from, "fresh": list(fresh)}
    try:
        result = run_staged_script(wp_cli, stager, PROBE, request, site)
    except WpAgentError as exc:
        return HealthReport((Probed("wpcli", False, "応答がありません", exc.message_ja),))
    errors = _PHP_ERROR.search(result.stderr)
    answer = json_answer(result)
    if not answer:
        # Exit 0 without the probe's answer: WordPress wrote something of its own first (a plugin that
        # prints while loading breaks every page's headers, and WP-CLI's output).
        printed = first_line(result.stdout.partition('{"pages"')[0])
        detail = mask_command_output(first_line(result.stderr)) or (
            f"読み込み中に余計な出力があります: {mask_command_output(printed)[:100]}"
            if printed
            else f"終了コード {result.exit_code}"
        )
        return HealthReport(
            (
                Probed(
                    "wpcli",
                    False,
                    detail[:300],
                    "WordPress の読み込み中にエラーが起きています。直前に入れたプラグインやテーマを確認してください。",
                ),
            )
        )
    now = {key: str(value) for key, value in dict(answer.get("address") or {}).items()}
    host = (urlsplit(now.get("home", "")).hostname or "").lower()  # the site's own, for its redirects
    probed = [_page(page, host) for page in answer.get("pages", [])]
    if address is not None and now != address:
        moved = "、".join(
            f"{address.get(k)} → {now.get(k)}" for k in ("home", "siteurl") if address.get(k) != now.get(k)
        )
        probed.append(Probed("address", False, f"変わりました（{moved[:300]}）",
                             "サイトのアドレスが変わり、訪問者が元のアドレスでサイトを見られません。"))  # fmt: skip
    elif now:
        probed.append(Probed("address", True, now.get("home", "")))
    probed.append(
        Probed("wpcli", False, mask_command_output(first_line(result.stderr[errors.start() :]))[:300],
               "WordPress の読み込み中に PHP のエラーが出ています。")
        if errors
        else Probed("wpcli", True, "WordPress をエラーなく読み込みました")
    )  # fmt: skip
    log = answer.get("log") or {}
    lines = tuple(mask_command_output(str(line)) for line in log.get("lines") or [])
    if log.get("found"):
        new_errors = [line for line in lines if _PHP_ERROR.search(line)]
        probed.append(
            Probed("log", False, f"新しい PHP エラー {len(new_errors)}件: {new_errors[-1][:200]}",
                   "エラーログに新しい致命的エラーが記録されています。")
            if new_errors
            else Probed("log", True, f"新しいエラーなし（{len(lines)}行の新しい記録）" if log_from is not None else "記録を確認できます")
        )  # fmt: skip
    else:
        probed.append(
            Probed("log", True, "エラーログはありません（WordPress がログを記録する設定ではありません）")
        )
    size = log.get("size")
    notes = _fresh_notes(answer.get("fresh"))
    leftovers = tuple(
        f"{item.get('backup')}（{item.get('made')} 作成: {', '.join(map(str, item.get('holds') or [])) or '内容不明'}）"
        for item in answer.get("leftovers") or []
        if isinstance(item, dict)
    )
    return HealthReport(
        tuple(probed), size if isinstance(size, int) else None, lines, notes, leftovers, now or None
    )


def _fresh_notes(fresh: Any) -> tuple[str, ...]:
    """What the probe could not do to see the new code at once (nothing when the server's cache was told)."""
    if not isinstance(fresh, dict) or (fresh.get("reached") and not fresh.get("restricted")):
        return ()
    waited = int(fresh.get("waited") or 0)
    if waited:
        return (
            f"Webサーバーの PHP キャッシュ（opcache）に変更を直接伝えられなかったため、{waited}秒待ってから確認しました。",
        )
    return (
        "Webサーバーの PHP キャッシュ（opcache）がファイルの変更を確かめない設定のため、"
        "PHP を再起動するまでページが変更前のコードで動いている可能性があります。",
    )


def _redirected(name: str, page: dict[str, Any], host: str, said: str, ms: int) -> Probed:
    """A page that sends the visitor on: fine within the site (a canonical address, https), not to another
    site, nor a page everyone may see to the login (the site is closed to its visitors)."""
    location = str(page.get("redirect") or "")
    target = urlsplit(location)
    elsewhere = (target.hostname or "").lower()
    if elsewhere and elsewhere != host:
        return Probed(name, False, f"{said} 別のサイト（{elsewhere[:100]}）へ転送されます",
                      "訪問者が別のサイトへ転送されています。", ms)  # fmt: skip
    if name in {"front", "post"} and target.path.endswith("/wp-login.php"):
        return Probed(name, False, f"{said} ログイン画面へ転送されます",
                      "訪問者がページを見られず、ログイン画面へ転送されています。", ms)  # fmt: skip
    return Probed(name, True, f"{said} → {target.path[:100] or '/'}", ms=ms)


def _page(page: dict[str, Any], host: str) -> Probed:
    """One fetched page judged (`host`: the site's own, where its redirects may go)."""
    name = str(page.get("name"))
    ms = int(page.get("ms") or 0)
    if page.get("absent"):
        what = "公開済みの投稿がありません" if name == "post" else "管理者のユーザーがいません"
        return Probed(name, True, f"確認できません（{what}）")
    status = page.get("status")
    if status is None:
        return Probed(name, False, f"応答がありません（{str(page.get('error', ''))[:200]}）",
                      "サーバーから自分のサイトに接続できません。Webサーバーが動いているか確認してください。", ms)  # fmt: skip
    said = f"HTTP {status}（{ms} ms）"
    if page.get("fatal"):
        return Probed(name, False, f"{said} 致命的なエラーの画面",
                      "PHP の致命的なエラーでページが表示されていません。", ms)  # fmt: skip
    if status >= 500:
        return Probed(name, False, f"{said} サーバーエラー", "ページがサーバーエラーを返しています。", ms)
    if name == "admin" and status in {301, 302}:
        return Probed(name, False, f"{said} ログイン画面へ転送されました",
                      "管理画面にログインした状態で表示できません。", ms)  # fmt: skip
    if 300 <= status < 400:
        return _redirected(name, page, host, said, ms)
    if status >= 400:
        return Probed(name, False, f"{said} エラー", "ページがエラーを返しています。", ms)
    if status == 200 and not page.get("bytes"):
        return Probed(
            name, False, f"{said} 空のページ", "ページの中身が空です（表示が途中で止まっています）。", ms
        )
    if name == "rest" and status == 200 and not page.get("rest"):
        return Probed(
            name, False, f"{said} REST API の応答ではありません", "REST API が正しく応答していません。", ms
        )
    if name == "login" and status == 200 and not page.get("login"):
        return Probed(
            name, False, f"{said} ログインフォームがありません", "ログイン画面からログインできません。", ms
        )
    if name == "admin" and status == 200 and not page.get("admin"):
        return Probed(
            name, False, f"{said} 管理画面が表示されていません", "管理画面の表示が途中で止まっています。", ms
        )
    return Probed(name, True, said, ms=ms)
