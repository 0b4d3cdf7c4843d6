"""The CLI's wiring: the agent's real local adapters from LocalAgentSettings (the Lambda handlers wire AWS ones in
service/runtime.py)."""

from __future__ import annotations

from wp_agent.adapters.jsonl_audit import JsonlAuditLog
from wp_agent.agent.model_client import ModelClient
from wp_agent.agent.ports import (
    AgentDeps,
    AuditLog,
    InMemorySessionStore,
    NoRateLimits,
    ProgressListener,
    RateLimiter,
    SessionStore,
)
from wp_agent.agent.site_facts_cache import SiteFactsCache
from wp_agent.config import LocalAgentSettings
from wp_agent.executors.factory import build_wp_cli
from wp_agent.executors.port import WpCli
from wp_agent.fleet.opening import FleetRunOpening, PlannedOpenings
from wp_agent.policy import CommandPolicy
from wp_agent.undo.agent_hooks import UndoRecorder, UndoRunOpening


def build_local_deps(
    settings: LocalAgentSettings,
    *,
    model: ModelClient,
    progress: ProgressListener | None = None,
    wp_cli: WpCli | None = None,
    audit: AuditLog | None = None,
    store: SessionStore | None = None,
    limiter: RateLimiter | None = None,
) -> AgentDeps:
    wp_cli = wp_cli or build_wp_cli(settings)
    policy = CommandPolicy.from_settings(settings)
    limiter = limiter or NoRateLimits()
    return AgentDeps(
        model=model,
        wp_cli=wp_cli,
        policy=policy,
        audit=audit or JsonlAuditLog(settings.wp_agent_audit_file.expanduser()),
        limiter=limiter,
        store=store or InMemorySessionStore(),
        settings=settings,
        progress=progress,
        changes=UndoRecorder(policy, wp_cli, limiter),
        opening=PlannedOpenings(
            UndoRunOpening(policy, wp_cli, limiter), FleetRunOpening(policy, wp_cli, limiter)
        ),
        site_facts=SiteFactsCache(settings.wp_agent_site_facts_ttl_seconds),
        wp_user=settings.wp_agent_wp_user,
    )
