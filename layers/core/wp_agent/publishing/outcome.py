"""Error codes of publishArticle and the Japanese account of what a failed call left behind."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Literal

from wp_agent.models.article import PublishArticleError, PublishArticleOutput


class PublishErrorCode(StrEnum):
    """Stable codes in `PublishArticleOutput.error.code` (shared ones equal AgentErrorCode's values)."""

    VALIDATION_ERROR = "VALIDATION_ERROR"  # the input cannot be published as given; nothing was run
    COMMAND_BLOCKED = "COMMAND_BLOCKED"  # the policy refused a command of the sequence
    CONFIRMATION_REQUIRED = "CONFIRMATION_REQUIRED"  # the site's policy wants approval for a step
    PUBLISH_FAILED = "PUBLISH_FAILED"  # WP-CLI reported an error (or unreadable output)
    SSH_CONNECTION_FAILED = "SSH_CONNECTION_FAILED"
    COMMAND_TIMEOUT = "COMMAND_TIMEOUT"
    PARTIAL_FAILURE = "PARTIAL_FAILURE"  # failed, and cleanup could not remove (or confirm) everything
    UNKNOWN_ERROR = "UNKNOWN_ERROR"


ResourceKind = Literal["post", "attachment", "category", "post_tag"]
_KIND_JA: dict[ResourceKind, str] = {
    "post": "投稿",
    "attachment": "添付画像",
    "category": "カテゴリ",
    "post_tag": "タグ",
}


@dataclass(frozen=True)
class Resource:
    """Something this call created on the site; `label` is a term's slug or name."""

    kind: ResourceKind
    object_id: int
    label: str = ""

    def describe_ja(self) -> str:
        text = f"{_KIND_JA[self.kind]} ID {self.object_id}"
        return f"{text}（{self.label}）" if self.label else text


CleanupOutcome = Literal["removed", "kept", "remaining"]


@dataclass
class CleanupReport:
    removed: list[Resource] = field(default_factory=list)
    remaining: list[Resource] = field(default_factory=list)
    kept: list[Resource] = field(default_factory=list)  # created here, but another post uses it now
    unconfirmed: list[str] = field(default_factory=list)  # Japanese notes on what may exist

    def add(self, outcome: CleanupOutcome, resource: Resource) -> None:
        {"removed": self.removed, "kept": self.kept, "remaining": self.remaining}[outcome].append(resource)

    @property
    def complete(self) -> bool:
        return not self.remaining and not self.unconfirmed

    def describe_ja(self) -> str:
        if not self.removed and not self.kept and self.complete:
            return "サイトには何も作成していません。"
        parts: list[str] = []
        if self.removed:
            parts.append(f"この処理で作成した {_join(self.removed)} を削除しました。")
        if self.remaining:
            parts.append(
                f"{_join(self.remaining)} は削除できなかったため、サイトに残っています。"
                "WordPressの管理画面などで確認して削除してください。"
            )
        if self.kept:
            parts.append(f"{_join(self.kept)} は他の投稿でも使われているため残しました。")
        parts.extend(self.unconfirmed)
        return "".join(parts)


def _join(resources: list[Resource]) -> str:
    return "、".join(resource.describe_ja() for resource in resources)


def failure_output(code: PublishErrorCode, cause_ja: str, report: CleanupReport) -> PublishArticleOutput:
    """The cause, then what was cleaned up or still exists; PARTIAL_FAILURE when leftovers remain."""
    final = code if report.complete else PublishErrorCode.PARTIAL_FAILURE
    cause = cause_ja.rstrip("。") + "。"
    return PublishArticleOutput(
        success=False,
        error=PublishArticleError(code=final.value, message=cause + report.describe_ja()),
    )
