"""ArticlePublisher: spec §4.4 publishArticle as a fixed WP-CLI sequence (no model involved).

Order (reads first; the post stays a draft until everything else has succeeded):

    option get siteurl [home] [timezone_string] [gmt_offset]   site URL (checked against siteUrl), zone
    term list category|post_tag --format=json                 which terms exist
    post create --post_status=draft … --porcelain              the post, with dates and meta
    media import <url> --post_id=<id> --featured_image         the riskiest step (a download), on a draft
    term create …                                               missing categories / tags
    post term set <id> category|post_tag <ids> --by=id          exact terms, by ID
    post term list <id> category post_tag --format=ids          the terms read back (set again if gone)
    term list category|post_tag --format=json                 where it created one: an older alike?
    post update <id> --post_status=publish|future               the only step that makes it public
    post get <id> --fields=post_status,url --format=json        permalink, and a check of the status

When a step fails, everything this call created is deleted again (`post delete --force`,
`term delete` — a term only while no other post uses it: another publish at the same time may have
set it, see article_terms.py), and the error says what was removed, kept, or still exists.

The post carries a marker (`_wp_agent_publish_id`): the call's `publish_id`, or a random one. A call
that resumes a publish_id whose earlier attempt died (`resume=True`) looks for the marked post first
and finishes it — the featured image only when the post has none yet, the terms and the status set
again (both idempotent) — so the same article is never created twice. Terms an earlier attempt
created are found as existing ones (and so not removed should the resumed call fail).
"""

from __future__ import annotations

import json
import logging
import shlex
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any
from urllib.parse import urlsplit

from wp_agent.agent.ports import AuditLog
from wp_agent.clock import now as utc_now
from wp_agent.executors.port import WpCli
from wp_agent.models.article import PublishArticleInput, PublishArticleOutput, PublishedArticle
from wp_agent.policy import CommandPolicy
from wp_agent.publishing import commands
from wp_agent.publishing.article_terms import ArticleTerms
from wp_agent.publishing.outcome import CleanupReport, PublishErrorCode, Resource, failure_output
from wp_agent.publishing.schedule import PostDates, SiteTimezoneError, post_dates, site_timezone
from wp_agent.publishing.steps import PublishRun, StepError, StepRunner, ids_of, porcelain_id
from wp_agent.publishing.terms import WantedTerm, wanted_terms
from wp_agent.publishing.validation import InputProblem, describe_problems_ja

logger = logging.getLogger(__name__)

# WordPress publishes at once unless the date is at least a minute ahead; keep a margin for the run.
MIN_SCHEDULE_LEAD = timedelta(minutes=2)
# The remote shell receives the whole command as one argument, and Linux caps one argument at
# 128 KiB (MAX_ARG_STRLEN); the executors add their own words (timeout, --path).
MAX_COMMAND_BYTES = 120_000
_EXPECTED_STATUSES = {"draft": {"draft"}, "publish": {"publish", "future"}, "future": {"future"}}


@dataclass(frozen=True)
class _Site:
    siteurl: str
    dates: PostDates | None


def _same_site(requested: str, actual: str) -> bool:
    """Host and path equal, ignoring the scheme, the host's case and a trailing slash."""

    def key(url: str) -> tuple[str, str]:
        parts = urlsplit(url.strip())
        return (parts.netloc.lower(), parts.path.rstrip("/"))

    return key(requested) == key(actual)


class ArticlePublisher:
    """Publishes one article with a deterministic WP-CLI sequence; every command passes the policy.

    `site_url` is the default `--url` (multisite) when the article has no `siteUrl`. The WordPress
    user (the post author; WordPress keeps `<script>`/`<iframe>` only for users with
    `unfiltered_html`) is the executor's, from WP_AGENT_WP_USER or the target's wpUser.
    """

    def __init__(
        self,
        wp_cli: WpCli,
        policy: CommandPolicy,
        *,
        audit: AuditLog | None = None,
        user_id: str = "publish-article",
        session_id: str | None = None,
        target_id: str = "default",
        site_url: str | None = None,
        clock: Callable[[], datetime] = utc_now,
    ) -> None:
        self._wp = wp_cli
        self._policy = policy
        self._audit = audit
        self._user_id = user_id
        self._session_id = session_id
        self._target_id = target_id
        self._site_url = site_url
        self._clock = clock
        self._steps = StepRunner(wp_cli, policy, audit, user_id=user_id, target_id=target_id)
        self._terms = ArticleTerms(self._steps)

    # -- public API -----------------------------------------------------------------------------

    def publish(
        self, article: PublishArticleInput, *, publish_id: str | None = None, resume: bool = False
    ) -> PublishArticleOutput:
        """`publish_id` marks the post (random when None); `resume`: an earlier attempt with the same
        publish_id may have created the post already."""
        token = publish_id or uuid.uuid4().hex
        run = PublishRun(
            article=article,
            token=token,
            session_id=self._session_id or f"publish_{token[:20]}",
            site_url=article.site_url or self._site_url,
            resume=resume,
        )
        try:
            data = self._publish(run)
        except StepError as failure:
            return self._fail(run, failure.code, failure.message_ja)
        except Exception:  # whatever broke (a bug), what this call created must still be removed
            logger.exception("publishArticle failed unexpectedly", extra={"session_id": run.session_id})
            return self._fail(run, PublishErrorCode.UNKNOWN_ERROR, "予期しないエラーが発生しました")
        logger.info(
            "publishArticle succeeded",
            extra={"session_id": run.session_id, "post_id": data.post_id, "status": article.status},
        )
        return PublishArticleOutput(success=True, data=data)

    # -- the sequence ---------------------------------------------------------------------------

    def _publish(self, run: PublishRun) -> PublishedArticle:
        article = run.article
        wanted = wanted_terms("category", article.categories) + wanted_terms("post_tag", article.tags)
        self._preflight(run, wanted)
        site = self._read_site(run)
        known = self._terms.read_existing(run, wanted)

        resumed = self._resumed_post(run) if run.resume else None
        post_id = resumed or self._create_post(run, commands.post_create_argv(run, site.dates))
        if article.featured_image_url and not (resumed and self._resumed_image(run, post_id)):
            self._import_featured_image(run, post_id, article.featured_image_url)
        self._terms.set_on(run, post_id, wanted, known)
        if article.status != "draft":
            self._steps.run(
                run, commands.post_update_argv(post_id, article.status, site.dates), "投稿の公開・予約"
            )
        status, url = self._read_post(run, post_id)
        if status not in _EXPECTED_STATUSES[article.status]:
            raise StepError(PublishErrorCode.PUBLISH_FAILED, self._status_mismatch_ja(article.status, status))
        edit_url = f"{site.siteurl}/wp-admin/post.php?post={post_id}&action=edit"
        return PublishedArticle(post_id=post_id, post_url=url, edit_url=edit_url)

    def _read_site(self, run: PublishRun) -> _Site:
        siteurl = self._read_option(run, "siteurl").rstrip("/")
        if not siteurl.startswith(("http://", "https://")):
            raise StepError(
                PublishErrorCode.PUBLISH_FAILED, f"サイトURL（siteurl）の値を解釈できません: {siteurl!r}"
            )
        if run.site_url and not _same_site(run.site_url, siteurl):
            home = self._read_option(run, "home")
            if not _same_site(run.site_url, home):
                # Multisite resolves an unknown path to the closest site (often the main one).
                problem = InputProblem(
                    "siteUrl",
                    f"{run.site_url} に一致するサイトがありません（WordPressは {home or siteurl} のサイトとして応答しました）",
                )
                raise StepError(PublishErrorCode.VALIDATION_ERROR, describe_problems_ja([problem]))
        instant = run.article.publish_datetime()
        if instant is None:
            return _Site(siteurl, None)
        timezone_string = self._read_option(run, "timezone_string")
        gmt_offset = "" if timezone_string.strip() else self._read_option(run, "gmt_offset")
        try:
            zone = site_timezone(timezone_string, gmt_offset)
        except SiteTimezoneError:
            raise StepError(
                PublishErrorCode.PUBLISH_FAILED,
                "サイトのタイムゾーン設定（timezone_string / gmt_offset）を解釈できないため、"
                f"公開日時を変換できません: {timezone_string or gmt_offset!r}",
            ) from None
        return _Site(siteurl, post_dates(instant, zone))

    def _read_option(self, run: PublishRun, name: str) -> str:
        result = self._steps.run(run, ["option", "get", name], f"サイト設定（{name}）の取得")
        return result.stdout.strip()

    def _preflight(self, run: PublishRun, wanted: Sequence[WantedTerm]) -> None:
        """Refuse before any command runs: a date WordPress would not schedule, an article too large
        for one command, or a step the policy refuses (checked with placeholder IDs)."""
        article = run.article
        instant = article.publish_datetime()
        if article.status == "future" and instant is not None and instant < self._clock() + MIN_SCHEDULE_LEAD:
            minutes = int(MIN_SCHEDULE_LEAD.total_seconds() // 60)
            problem = InputProblem(
                "publishDate", f"予約公開には現在時刻より{minutes}分以上先の日時を指定してください"
            )
            raise StepError(PublishErrorCode.VALIDATION_ERROR, describe_problems_ja([problem]))
        sample_dates = PostDates("2000-01-01 00:00:00", "2000-01-01 00:00:00") if instant else None
        create_argv = commands.post_create_argv(run, sample_dates)
        size = len(shlex.join(self._steps.with_globals(run, create_argv)).encode("utf-8"))
        if size > MAX_COMMAND_BYTES:
            meta_size = sum(len(k) + len(v or "") for k, v in (article.meta or {}).items())
            problem = InputProblem(
                "meta" if meta_size > len(article.content) else "content",
                "本文とメタデータが大きすぎます（WP-CLIに1コマンドで渡せるのは約"
                f"{MAX_COMMAND_BYTES // 1000}KBまで、この記事は約{size // 1000}KB）",
            )
            raise StepError(PublishErrorCode.VALIDATION_ERROR, describe_problems_ja([problem]))
        placeholder = 1
        planned: list[tuple[list[str], str]] = [(create_argv, "投稿の作成")]
        if article.featured_image_url:
            argv = commands.media_import_argv(placeholder, article.featured_image_url)
            planned.append((argv, "アイキャッチ画像の取り込み"))
        planned += [(commands.term_create_argv(term), "カテゴリ・タグの作成") for term in wanted]
        taxonomies = list(dict.fromkeys(term.taxonomy for term in wanted))
        planned += [
            (commands.post_term_set_argv(placeholder, taxonomy, [str(placeholder)]), "カテゴリ・タグの設定")
            for taxonomy in taxonomies
        ]
        if taxonomies:
            planned.append(
                (commands.post_terms_argv(placeholder, taxonomies), "設定したカテゴリ・タグの確認")
            )
            planned += [
                (commands.term_users_argv(taxonomy, placeholder), "カテゴリ・タグの使用状況の確認")
                for taxonomy in taxonomies
            ]
        planned.append(
            (commands.post_update_argv(placeholder, article.status, sample_dates), "投稿の公開・予約")
        )
        for argv, purpose in planned:
            self._steps.check_policy(run, self._steps.with_globals(run, argv), purpose)

    # -- creating steps (each records what it made, and looks for it when the outcome is unknown) --

    def _create_post(self, run: PublishRun, argv: list[str]) -> int:
        try:
            result = self._steps.run(run, argv, "投稿を下書きとして作成")
        except StepError:
            self._find_marked_post(run)
            raise
        post_id = porcelain_id(result.stdout)
        if post_id is None:
            self._find_marked_post(run)
            raise StepError(PublishErrorCode.PUBLISH_FAILED, "作成した投稿のIDを読み取れませんでした")
        run.created.append(Resource("post", post_id))
        return post_id

    def _import_featured_image(self, run: PublishRun, post_id: int, url: str) -> None:
        try:
            result = self._steps.run(
                run, commands.media_import_argv(post_id, url), "アイキャッチ画像の取り込み"
            )
        except StepError:
            self._find_attachments(run, post_id)
            raise
        attachment_id = porcelain_id(result.stdout)
        if attachment_id is None:
            self._find_attachments(run, post_id)
            raise StepError(PublishErrorCode.PUBLISH_FAILED, "取り込んだ画像のIDを読み取れませんでした")
        run.created.append(Resource("attachment", attachment_id))

    def _find_marked_post(self, run: PublishRun) -> None:
        self._steps.discover(
            run, commands.marked_posts_argv(run), "作成途中の投稿の確認", commands.marker_note(run),
            lambda out: [Resource("post", i) for i in ids_of(out)],
        )  # fmt: skip

    def _find_attachments(self, run: PublishRun, post_id: int) -> None:
        note = f"添付画像が作成されたかどうか確認できませんでした（投稿 ID {post_id} に添付されたメディアを確認してください）。"
        self._steps.discover(
            run,
            commands.attachments_argv(post_id),
            "取り込み途中の画像の確認",
            note,
            lambda out: [Resource("attachment", i) for i in ids_of(out)],
        )

    def _resumed_post(self, run: PublishRun) -> int | None:
        """The post an earlier attempt of this publish_id created (now this call's), or None."""
        try:
            stdout = self._steps.run(
                run, commands.marked_posts_argv(run), "前回の試行で作成した投稿の確認"
            ).stdout
        except StepError:
            run.unconfirmed.append(commands.marker_note(run))
            raise
        found = sorted(set(ids_of(stdout)))
        for extra in found[1:]:  # attempts run one at a time, so there is never more than one
            logger.warning("a second post with the same marker is removed", extra={"post_id": extra})
            if not self._delete(run, Resource("post", extra)):
                run.created.append(Resource("post", extra))
        if not found:
            return None
        run.created.append(Resource("post", found[0]))
        return found[0]

    def _resumed_image(self, run: PublishRun, post_id: int) -> bool:
        """Whether an earlier attempt imported the featured image already (now this call's)."""
        stdout = self._steps.run(
            run, commands.attachments_argv(post_id), "前回の試行で取り込んだ画像の確認"
        ).stdout
        found = [Resource("attachment", attachment) for attachment in ids_of(stdout)]
        run.created += [resource for resource in found if resource not in run.created]
        return bool(found)

    def _read_post(self, run: PublishRun, post_id: int) -> tuple[str, str]:
        """Status and permalink. `post get` has the `url` field since WP-CLI 2.8 (entity-command
        #383); older servers answer "Invalid field: url.", so `post list --post__in` is asked then."""
        argv = ["post", "get", str(post_id), "--fields=post_status,url", "--format=json"]
        listed = False
        try:
            stdout = self._steps.run(run, argv, "公開URLの取得").stdout
        except StepError as failure:
            if "Invalid field: url" not in failure.message_ja:
                raise
            argv = ["post", "list", f"--post__in={post_id}", "--post_type=post", "--post_status=any"]
            argv += ["--fields=post_status,url", "--format=json"]
            stdout = self._steps.run(run, argv, "公開URLの取得（WP-CLI 2.8より前）").stdout
            listed = True
        try:
            data: Any = json.loads(stdout)
            row = data[0] if listed else data
            status, url = str(row["post_status"]), str(row["url"])
        except (ValueError, KeyError, IndexError, TypeError):
            raise StepError(PublishErrorCode.PUBLISH_FAILED, "投稿のURLを読み取れませんでした") from None
        if not url.startswith(("http://", "https://")):
            raise StepError(PublishErrorCode.PUBLISH_FAILED, f"投稿のURLを解釈できません: {url!r}")
        return status, url

    @staticmethod
    def _status_mismatch_ja(requested: str, actual: str) -> str:
        if requested == "future" and actual == "publish":
            return "予約日時が現在時刻に近すぎる（または過ぎた）ため、WordPressが予約せずに即時公開しました"
        return f"WordPressが投稿の状態を「{actual}」にしました（指定は「{requested}」）"

    # -- failure and cleanup --------------------------------------------------------------------

    def _fail(self, run: PublishRun, code: PublishErrorCode, cause_ja: str) -> PublishArticleOutput:
        report = self._clean_up(run)
        output = failure_output(code, cause_ja, report)
        logger.warning(
            "publishArticle failed",
            extra={
                "session_id": run.session_id,
                "error_code": output.error.code if output.error else None,
                "removed": [f"{r.kind}:{r.object_id}" for r in report.removed],
                "remaining": [f"{r.kind}:{r.object_id}" for r in report.remaining],
                "kept_in_use": [f"{r.kind}:{r.object_id}" for r in report.kept],
            },
        )
        return output

    def _clean_up(self, run: PublishRun) -> CleanupReport:
        """Delete what this call created: media first, then the post, then new terms."""
        run.cleaning = True
        report = CleanupReport(unconfirmed=list(run.unconfirmed))
        order = {"attachment": 0, "post": 1, "post_tag": 2, "category": 3}
        own_posts = {r.object_id for r in run.created if r.kind in ("post", "attachment")}
        for resource in sorted(run.created, key=lambda r: order[r.kind]):
            if run.connection_lost:
                report.remaining.append(resource)
                continue
            if resource.kind in ("post_tag", "category"):
                # Another publish may have found the new term meanwhile and set it on its post.
                report.add(self._terms.remove_created(run, resource, ignoring=own_posts), resource)
            else:
                report.add("removed" if self._delete(run, resource) else "remaining", resource)
        return report

    def _delete(self, run: PublishRun, resource: Resource) -> bool:
        """A post or attachment this call created."""
        argv = ["post", "delete", str(resource.object_id), "--force"]
        return self._steps.delete_created(run, resource, argv, f"Deleted post {resource.object_id}.")

    # -- running one command --------------------------------------------------------------------
