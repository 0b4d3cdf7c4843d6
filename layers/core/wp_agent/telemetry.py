"""Metric names (spec §10.3 plus ours) and the Telemetry port the agent reports through.

The Lambda handlers plug in CloudWatch EMF (adapters.aws.emf_telemetry); the CLI reports nothing.
"""

from __future__ import annotations

from typing import Protocol

REQUESTS_TOTAL = "wp_agent_requests_total"
REQUESTS_DURATION_SECONDS = "wp_agent_requests_duration_seconds"
COMMANDS_EXECUTED_TOTAL = "wp_agent_commands_executed_total"
COMMANDS_BLOCKED_TOTAL = "wp_agent_commands_blocked_total"
ERRORS_TOTAL = "wp_agent_errors_total"  # dimension ErrorCode
API_CALLS_TOTAL = "wp_agent_api_calls_total"
# ours
FAILED_REQUESTS_TOTAL = "wp_agent_failed_requests_total"  # runs ended by a service fault (error-rate alarm)
SSH_CONNECTION_FAILURES_TOTAL = "wp_agent_ssh_connection_failures_total"
APPROVALS_REQUESTED_TOTAL = "wp_agent_approvals_requested_total"
APPROVALS_RESOLVED_TOTAL = "wp_agent_approvals_resolved_total"
# Fleet runs: sites that ended failed (failed, partial failure, taken back) and those taken back by the guard
FLEET_SITES_FAILED_TOTAL = "wp_agent_fleet_sites_failed_total"
FLEET_SITES_ROLLED_BACK_TOTAL = "wp_agent_fleet_sites_rolled_back_total"
RATE_LIMIT_UTILISATION_PERCENT = "wp_agent_rate_limit_utilisation_percent"  # dimension Limit
TURN_DURATION_SECONDS = "wp_agent_turn_duration_seconds"

NAMESPACE = "WpAgent"
SERVICE = "wp-agent"
# Codes that mean the service (not the user's request) failed; they count toward the error rate.
SERVICE_FAULT_CODES = frozenset(
    {"API_ERROR", "API_RATE_LIMITED", "SSH_CONNECTION_FAILED", "COMMAND_TIMEOUT", "UNKNOWN_ERROR"}
)


class Telemetry(Protocol):
    """Records one metric data point; never raises into the caller's work."""

    def count(self, name: str, value: float = 1.0, *, dimensions: dict[str, str] | None = None) -> None: ...

    def seconds(self, name: str, value: float, *, dimensions: dict[str, str] | None = None) -> None: ...

    def percent(self, name: str, value: float, *, dimensions: dict[str, str] | None = None) -> None: ...


class NoTelemetry:
    def count(self, name: str, value: float = 1.0, *, dimensions: dict[str, str] | None = None) -> None:
        return None

    def seconds(self, name: str, value: float, *, dimensions: dict[str, str] | None = None) -> None:
        return None

    def percent(self, name: str, value: float, *, dimensions: dict[str, str] | None = None) -> None:
        return None
