"""Wiring of the AWS adapters from LambdaSettings; built once per Lambda container and reused warm."""

from __future__ import annotations

from collections.abc import Mapping
from functools import cached_property
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from wp_agent.adapters.aws.article_jobs import ArticleJob, ArticleJobStore
from wp_agent.adapters.aws.audit_log import DynamoAuditLog
from wp_agent.adapters.aws.audit_log import event_from_item as audit_event_from_item
from wp_agent.adapters.aws.events import EventPublisher
from wp_agent.adapters.aws.fleet_store import FleetChangedError, FleetStore
from wp_agent.adapters.aws.paging import InvalidStartKeyError
from wp_agent.adapters.aws.registry import TargetChangedError, TargetRecord, TargetRegistry
from wp_agent.adapters.aws.schedule_store import ScheduleRecord, ScheduleStore
from wp_agent.adapters.aws.scheduler import disable_schedule, scheduler_client
from wp_agent.adapters.aws.scheduler import failure_code as scheduler_failure_code
from wp_agent.adapters.aws.secrets import SecretStoreError, TargetSecrets, read_secret
from wp_agent.adapters.aws.session_store import DynamoSessionStore
from wp_agent.adapters.aws.workflow import ApprovalWaits, RunWorkflow
from wp_agent.agent.model_client import AnthropicModelClient, ModelClient
from wp_agent.agent.ports import AgentDeps, NoRateLimits, RateLimiter
from wp_agent.agent.site_facts_cache import SiteFactsCache
from wp_agent.agent.turn import AgentTurn
from wp_agent.config import LambdaSettings
from wp_agent.diagnostics.checks import Check
from wp_agent.errors import ConfigurationError
from wp_agent.executors.port import WpCli
from wp_agent.executors.ssh_target import SshTarget
from wp_agent.fleet.opening import FleetRunOpening, PlannedOpenings
from wp_agent.models.target import Target
from wp_agent.policy import CommandPolicy
from wp_agent.service.idempotency import IdempotentRequests
from wp_agent.telemetry import RATE_LIMIT_UTILISATION_PERCENT, Telemetry
from wp_agent.undo.agent_hooks import UndoRecorder, UndoRunOpening

if TYPE_CHECKING:
    from wp_agent.executors.ssh_pool import SshConnectionPool

# The adapters the services may use are the ones wired here (import-linter keeps it so).
__all__ = [
    "ArticleJob",
    "AwsRuntime",
    "FleetChangedError",
    "InvalidStartKeyError",
    "LazyRuntime",
    "ScheduleRecord",
    "ScheduleStore",
    "SecretStoreError",
    "TargetChangedError",
    "TargetRecord",
    "TargetRegistry",
    "audit_event_from_item",
    "disable_schedule",
    "function_settings",
    "read_secret",
    "required_setting",
    "scheduler_client",
    "scheduler_failure_code",
]


def required_setting(value: str | None, name: str) -> str:
    if not value:
        raise ConfigurationError(
            f"環境変数 {name} が設定されていません（デプロイ設定を確認してください）。", setting=name
        )
    return value


class AwsRuntime:
    """Everything a handler needs, created lazily so a cold start only pays for what it uses."""

    def __init__(self, settings: LambdaSettings, *, ssh_pool: SshConnectionPool | None = None) -> None:
        self.settings = settings
        self._ssh_pool = ssh_pool  # None: the process's pool (in Lambda, the container's)

    @cached_property
    def sessions(self) -> DynamoSessionStore:
        return DynamoSessionStore(
            required_setting(self.settings.wp_agent_sessions_table, "WP_AGENT_SESSIONS_TABLE"),
            ttl_days=self.settings.wp_agent_session_ttl_days,
        )

    @cached_property
    def audit(self) -> DynamoAuditLog:
        return DynamoAuditLog(required_setting(self.settings.wp_agent_audit_table, "WP_AGENT_AUDIT_TABLE"))

    @cached_property
    def registry(self) -> TargetRegistry:
        return TargetRegistry(
            required_setting(self.settings.wp_agent_registry_table, "WP_AGENT_REGISTRY_TABLE")
        )

    @cached_property
    def idempotent_requests(self) -> IdempotentRequests:
        """The api's Idempotency-Key handling (one per container, like the runtime itself)."""
        return IdempotentRequests(self.settings.wp_agent_idempotency_table)

    @cached_property
    def target_secrets(self) -> TargetSecrets:
        return TargetSecrets()

    @cached_property
    def schedules(self) -> ScheduleStore:
        return ScheduleStore(
            required_setting(self.settings.wp_agent_registry_table, "WP_AGENT_REGISTRY_TABLE")
        )

    @cached_property
    def article_jobs(self) -> ArticleJobStore:
        """publishArticle jobs (kept in the sessions table)."""
        return ArticleJobStore(
            required_setting(self.settings.wp_agent_sessions_table, "WP_AGENT_SESSIONS_TABLE"),
            ttl_days=self.settings.wp_agent_session_ttl_days,
        )

    @cached_property
    def fleets(self) -> FleetStore:
        """Fleet runs (kept in the sessions table)."""
        return FleetStore(
            required_setting(self.settings.wp_agent_sessions_table, "WP_AGENT_SESSIONS_TABLE"),
            ttl_days=self.settings.wp_agent_session_ttl_days,
        )

    @cached_property
    def events(self) -> EventPublisher:
        return EventPublisher(required_setting(self.settings.wp_agent_event_bus, "WP_AGENT_EVENT_BUS"))

    @cached_property
    def workflow(self) -> RunWorkflow:
        return RunWorkflow(
            required_setting(self.settings.wp_agent_state_machine_arn, "WP_AGENT_STATE_MACHINE_ARN")
        )

    @cached_property
    def approval_waits(self) -> ApprovalWaits:
        return ApprovalWaits()

    @cached_property
    def telemetry(self) -> Telemetry:
        from wp_agent.adapters.aws.emf_telemetry import EmfTelemetry

        return EmfTelemetry()

    @cached_property
    def limiter(self) -> RateLimiter:
        if self.settings.wp_agent_rate_limit_table:
            from wp_agent.adapters.aws.rate_limiter import DynamoRateLimiter

            def report(limit: str, utilisation: float) -> None:
                self.telemetry.percent(
                    RATE_LIMIT_UTILISATION_PERCENT, utilisation * 100, dimensions={"Limit": limit}
                )

            return DynamoRateLimiter(
                self.settings.wp_agent_rate_limit_table, self.settings, on_utilisation=report
            )
        return NoRateLimits()

    @cached_property
    def model(self) -> ModelClient:
        return AnthropicModelClient(self.settings, read_secret=read_secret)

    @cached_property
    def policy(self) -> CommandPolicy:
        return CommandPolicy.from_settings(self.settings)

    @cached_property
    def site_facts(self) -> SiteFactsCache:
        """The site-fact reads' answers per target, kept while the container is warm."""
        return SiteFactsCache(self.settings.wp_agent_site_facts_ttl_seconds)

    def wp_cli_for(self, target: Target) -> WpCli:
        """WP-CLI over SSH to a registered target: its key and pinned host key come from its secret only."""
        from wp_agent.executors.code_guard import GuardedWpCli, fixed
        from wp_agent.executors.ssh import SshWpCli

        ssh = SshWpCli(self.settings, target=_ssh_target(target), pool=self._ssh_pool)
        if not self.settings.wp_agent_guard_code_changes:
            return ssh
        # Plugin and theme changes: probed on the server before and after, back by themselves if worse.
        return GuardedWpCli(ssh, ssh, connect=fixed(self.settings.health_connect_for(target.wp_path)))

    def check_target(self, target: Target) -> list[Check]:
        """The doctor's checks of a registered target (reachable, host key, login, WordPress), no model;
        a connection of their own (never the pool's)."""
        from wp_agent.diagnostics.ssh_checks import check_ssh_target

        return check_ssh_target(self.settings, _ssh_target(target))

    def agent_turn(self, target: Target, wp_cli: WpCli | None = None) -> AgentTurn:
        wp_cli = wp_cli or self.wp_cli_for(target)
        return AgentTurn(
            AgentDeps(
                model=self.model,
                wp_cli=wp_cli,
                policy=self.policy,
                audit=self.audit,
                limiter=self.limiter,
                store=self.sessions,
                settings=self.settings,
                telemetry=self.telemetry,
                changes=UndoRecorder(self.policy, wp_cli, self.limiter),
                opening=PlannedOpenings(
                    UndoRunOpening(self.policy, wp_cli, self.limiter),
                    FleetRunOpening(self.policy, wp_cli, self.limiter),
                ),
                site_facts=self.site_facts,
                wp_user=target.wp_user,
            )
        )


def _ssh_target(target: Target) -> SshTarget:
    return SshTarget(
        host=target.host,
        port=target.port,
        user=target.user,
        wp_path=target.wp_path,
        wp_user=target.wp_user,
        key_secret_arn=target.secret_arn,
    )


class LazyRuntime:
    """A handler module's accessor: the runtime is built on first use, then reused while warm. Its
    settings are the function's own class (config.py), validated whole when it is built: a missing or
    invalid setting fails the first invocation before it does anything, naming every such setting."""

    def __init__(
        self, settings_class: type[LambdaSettings], *, ssh_pool: SshConnectionPool | None = None
    ) -> None:
        self._settings_class = settings_class
        self._ssh_pool = ssh_pool  # None: the process's pool (a test's container passes its own)
        self._runtime: AwsRuntime | None = None

    @property
    def settings_class(self) -> type[LambdaSettings]:
        return self._settings_class

    def __call__(self) -> AwsRuntime:
        if self._runtime is None:
            self._runtime = AwsRuntime(function_settings(self._settings_class), ssh_pool=self._ssh_pool)
        return self._runtime

    def reset(self) -> None:
        """Forget the runtime (tests switching environments; SnapStart restore)."""
        self._runtime = None


def function_settings(
    settings_class: type[LambdaSettings], values: Mapping[str, Any] | None = None
) -> LambdaSettings:
    """The function's settings from its environment (`values` first: the local stack's own); a
    ConfigurationError naming what is missing or invalid (never the values: they may be secrets)."""
    try:
        return settings_class(**(values or {}))
    except ValidationError as exc:
        # A setting's name, or for a rule over several settings the names it gives.
        names = sorted(
            {
                ".".join(map(str, e["loc"])).upper() or e["msg"].removeprefix("Value error, ")
                for e in exc.errors()
            }
        )
        raise ConfigurationError(
            f"環境変数 {', '.join(names)} が設定されていないか、値が正しくありません（デプロイ設定を確認してください）。",
            setting=",".join(names),
        ) from None
