"""One WP-CLI step of a publish: the site's `--url`, the policy check (blocked or approval-needing
steps never run), the command, its audit record, and the step's failure as a StepError with the
publish error code and a Japanese message."""

from __future__ import annotations

import shlex
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from wp_agent.agent.audit_events import AuditEvent, AuditEventType
from wp_agent.agent.ports import AuditLog
from wp_agent.errors import AgentErrorCode, WpAgentError
from wp_agent.executors.port import CommandResult, WpCli
from wp_agent.masking import mask_argv, mask_command_output, mask_text
from wp_agent.models.article import PublishArticleInput
from wp_agent.policy import CommandPolicy, PolicyDecision
from wp_agent.publishing.outcome import PublishErrorCode, Resource
from wp_agent.publishing.terms import SiteTerm, Taxonomy

_AUDIT_VALUE_CHARS = 300
_WP_CLI_FAILURE_CODES = {
    AgentErrorCode.COMMAND_TIMEOUT: PublishErrorCode.COMMAND_TIMEOUT,
    AgentErrorCode.SSH_CONNECTION_FAILED: PublishErrorCode.SSH_CONNECTION_FAILED,
}


class StepError(Exception):
    """A step that did not succeed. `answered`: WP-CLI ran it and reported the failure itself (so a
    creating step created nothing); False when it was refused, or its outcome is unknown (timed out,
    connection lost)."""

    def __init__(self, code: PublishErrorCode, message_ja: str, *, answered: bool = False) -> None:
        self.code = code
        self.message_ja = message_ja
        self.answered = answered
        super().__init__(f"{code.value}: {message_ja}")


@dataclass
class PublishRun:
    """State of one publish() call."""

    article: PublishArticleInput
    token: str
    session_id: str
    site_url: str | None
    created: list[Resource] = field(default_factory=list)
    unconfirmed: list[str] = field(default_factory=list)
    terms_before: dict[Taxonomy, list[SiteTerm]] = field(default_factory=dict)
    cleaning: bool = False
    connection_lost: bool = False
    resume: bool = False  # an earlier attempt with the same token may have created the post


def porcelain_id(stdout: str) -> int | None:
    """The ID a `--porcelain` command printed (its last line; PHP notices may come first)."""
    lines = [line.strip() for line in stdout.splitlines() if line.strip()]
    return int(lines[-1]) if lines and lines[-1].isdigit() else None


def ids_of(stdout: str) -> list[int]:
    """`--format=ids` output: space-separated IDs."""
    return [int(word) for word in stdout.split() if word.isdigit()]


def _wp_error_text(result: CommandResult) -> str:
    """WP-CLI's own error line(s), masked and short, for the Japanese message."""
    lines = [line.strip() for line in result.stderr.splitlines() if line.strip()]
    wanted = [line for line in lines if line.startswith(("Error:", "Warning:"))] or lines
    text = mask_text(" ".join(wanted))[:300]
    return text or f"終了コード {result.exit_code}"


def _audit_command(argv: Sequence[str]) -> str:
    """Masked command for the audit record, long values (the article body) shortened."""
    shown: list[str] = []
    for word in mask_argv(argv):
        name, sep, value = word.partition("=")
        if len(word) <= _AUDIT_VALUE_CHARS:
            shown.append(word)
        elif sep and name.startswith("--"):
            shown.append(f"{name}=<{len(value)} chars>")
        else:
            shown.append(f"<{len(word)} chars>")
    return shlex.join(shown)


class StepRunner:
    def __init__(
        self, wp_cli: WpCli, policy: CommandPolicy, audit: AuditLog | None, *, user_id: str, target_id: str
    ) -> None:
        self._wp = wp_cli
        self._policy = policy
        self._audit = audit
        self._user_id = user_id
        self._target_id = target_id

    def with_globals(self, run: PublishRun, argv: Sequence[str]) -> list[str]:
        words = list(argv)
        if run.site_url:
            words.append(f"--url={run.site_url}")
        return words

    def check_policy(
        self, run: PublishRun, argv: list[str], purpose_ja: str, *, cleanup: bool = False
    ) -> PolicyDecision:
        """The policy's decision; blocked (or approval-needing, except for cleanup) raises StepError."""
        decision = self._policy.classify_argv(argv)
        refusal: tuple[PublishErrorCode, str] | None = None
        if decision.blocked:
            refusal = (
                PublishErrorCode.COMMAND_BLOCKED,
                f"{purpose_ja}のコマンドがポリシーで拒否されました: {decision.reason_ja}",
            )
        elif decision.argv != tuple(argv):
            refusal = (
                PublishErrorCode.COMMAND_BLOCKED,
                f"{purpose_ja}のコマンドを安全に引数へ分解できませんでした",
            )
        elif decision.needs_approval and not cleanup:
            # Deleting what this very call created needs no approval; anything else the site's
            # policy wants approved cannot run in a request without a human in the loop.
            refusal = (
                PublishErrorCode.CONFIRMATION_REQUIRED,
                f"{purpose_ja}はこのサイトのポリシーで承認が必要なため、記事公開では実行できません: {decision.reason_ja}",
            )
        if refusal is not None:
            self.record(
                run, AuditEventType.COMMAND_BLOCKED, argv, purpose_ja, decision, error=refusal[0].value
            )
            raise StepError(*refusal)
        return decision

    def run(
        self, run: PublishRun, argv: Sequence[str], purpose_ja: str, *, cleanup: bool = False
    ) -> CommandResult:
        """Policy check, run, audit; a non-zero exit or executor error becomes StepError."""
        words = self.with_globals(run, argv)
        decision = self.check_policy(run, words, purpose_ja, cleanup=cleanup)
        try:
            result = self._wp.run(words)
        except WpAgentError as exc:
            self.record(
                run, AuditEventType.COMMAND_EXECUTED, words, purpose_ja, decision, error=exc.code.value
            )
            if run.cleaning and exc.code is AgentErrorCode.SSH_CONNECTION_FAILED:
                run.connection_lost = True  # later cleanup commands would only wait for the same failure
            code = _WP_CLI_FAILURE_CODES.get(exc.code, PublishErrorCode.PUBLISH_FAILED)
            raise StepError(code, f"{purpose_ja}に失敗しました: {exc.message_ja}") from None
        self.record(run, AuditEventType.COMMAND_EXECUTED, words, purpose_ja, decision, result=result)
        if not result.ok:
            raise StepError(
                PublishErrorCode.PUBLISH_FAILED,
                f"{purpose_ja}に失敗しました（WP-CLI: {_wp_error_text(result)}）",
                answered=True,
            )
        return result

    def delete_created(
        self, run: PublishRun, resource: Resource, argv: Sequence[str], confirmation: str
    ) -> bool:
        """Delete what this call created (needing no approval: `cleanup`); True when WP-CLI's answer
        confirms it (`confirmation`, its "Deleted …" line)."""
        purpose = f"作成途中の{resource.describe_ja()}の削除"
        try:
            return confirmation in self.run(run, argv, purpose, cleanup=True).stdout
        except StepError:
            return False

    def discover(
        self,
        run: PublishRun,
        argv: list[str],
        purpose_ja: str,
        unconfirmed_ja: str,
        parse: Callable[[str], list[Resource]],
    ) -> None:
        """After a creating step failed: find what it may have made anyway, or say we could not."""
        run.cleaning = True
        try:
            found = parse(self.run(run, argv, purpose_ja).stdout)
        except (StepError, ValueError, KeyError, TypeError):
            run.unconfirmed.append(unconfirmed_ja)
            return
        run.created += [resource for resource in found if resource not in run.created]

    def record(
        self,
        run: PublishRun,
        event_type: AuditEventType,
        argv: Sequence[str],
        purpose_ja: str,
        decision: PolicyDecision,
        *,
        result: CommandResult | None = None,
        error: str | None = None,
    ) -> None:
        if self._audit is None:
            return
        if result is not None and not result.ok:
            error = mask_command_output(result.stderr[:1_000])
        executed = event_type is AuditEventType.COMMAND_EXECUTED
        self._audit.append(
            AuditEvent(
                type=event_type,
                user_id=self._user_id,
                session_id=run.session_id,
                target_id=self._target_id,
                command=_audit_command(argv),
                reason=f"記事公開（publishArticle）: {purpose_ja}",
                category=decision.category.value,
                rule=decision.rule,
                policy_reason=decision.reason_ja,
                success=(result is not None and result.ok) if executed else None,
                exit_code=result.exit_code if result is not None else None,
                duration_ms=result.duration_ms if result is not None else None,
                error=error,
            )
        )
