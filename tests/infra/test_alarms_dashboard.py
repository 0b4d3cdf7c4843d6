"""Spec §10.2 alarms (metric, threshold, period, evaluation periods, topic) and the dashboard body."""

from __future__ import annotations

import json
from typing import Any

import pytest

from infra.observability_construct import RATE_LIMITS
from tests.infra.template_queries import flatten, resources
from wp_agent import telemetry

SERVICE = {"Name": "service", "Value": "wp-agent"}


def alarms(template: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Alarm description prefix-free key -> properties."""
    found: dict[str, dict[str, Any]] = {}
    for logical_id, resource in resources(template, "AWS::CloudWatch::Alarm").items():
        key = next(k for k in KEYS if logical_id.startswith(f"Observability{k}Alarm"))
        found[key] = resource["Properties"]
    return found


KEYS = [
    "LatencyWarning", "LatencyCritical", "ErrorRateWarning", "ErrorRateCritical", "SshConnectionFailures",
    "RateLimitModelCalls", "RateLimitCommandsPerUser", "FleetSitesFailed", "FleetSitesRolledBack",
    "WorkflowFailed", "WorkflowTimedOut",
    "LambdaErrorsApi", "LambdaErrorsTurn", "LambdaErrorsApproval", "LambdaErrorsWorkflowTasks",
    "LambdaErrorsPublishArticle",
]  # fmt: skip


def topic_of(props: dict[str, Any]) -> str:
    (action,) = props["AlarmActions"]
    assert props["OKActions"] == [action]
    return flatten(action)


def test_every_alarm_exists(template: dict[str, Any]) -> None:
    assert sorted(alarms(template)) == sorted(KEYS)


@pytest.mark.parametrize(
    ("key", "threshold", "severity"),
    [("LatencyWarning", 5, "Warning"), ("LatencyCritical", 30, "Critical")],
)
def test_latency_alarms(template: dict[str, Any], key: str, threshold: float, severity: str) -> None:
    props = alarms(template)[key]
    assert props["MetricName"] == telemetry.REQUESTS_DURATION_SECONDS
    assert props["Namespace"] == "WpAgent"
    assert props["Dimensions"] == [SERVICE]
    assert props["ExtendedStatistic"] == "p90"
    assert props["Period"] == 300
    assert props["Threshold"] == threshold
    assert props["EvaluationPeriods"] == 1
    assert props["ComparisonOperator"] == "GreaterThanThreshold"
    assert severity in topic_of(props)


@pytest.mark.parametrize(
    ("key", "threshold", "severity"),
    [("ErrorRateWarning", 5, "Warning"), ("ErrorRateCritical", 20, "Critical")],
)
def test_error_rate_alarms_use_metric_math_over_five_minutes(
    template: dict[str, Any], key: str, threshold: float, severity: str
) -> None:
    props = alarms(template)[key]
    expression = next(q for q in props["Metrics"] if "Expression" in q)
    assert expression["Expression"] == "IF(requests > 0, 100 * failed / requests, 0)"
    inputs = {q["Id"]: q["MetricStat"] for q in props["Metrics"] if "MetricStat" in q}
    assert inputs["requests"]["Metric"]["MetricName"] == telemetry.REQUESTS_TOTAL
    assert inputs["failed"]["Metric"]["MetricName"] == telemetry.FAILED_REQUESTS_TOTAL
    assert {stat["Period"] for stat in inputs.values()} == {300}
    assert {stat["Stat"] for stat in inputs.values()} == {"Sum"}
    assert props["Threshold"] == threshold
    assert props["EvaluationPeriods"] == 1
    assert props["ComparisonOperator"] == "GreaterThanThreshold"
    assert severity in topic_of(props)


def test_three_consecutive_ssh_failures_are_critical(template: dict[str, Any]) -> None:
    props = alarms(template)["SshConnectionFailures"]
    assert props["MetricName"] == telemetry.SSH_CONNECTION_FAILURES_TOTAL
    assert props["Statistic"] == "Sum"
    assert props["Period"] == 60
    assert props["Threshold"] == 1
    assert props["EvaluationPeriods"] == 3
    assert props["DatapointsToAlarm"] == 3
    assert props["ComparisonOperator"] == "GreaterThanOrEqualToThreshold"
    assert "Critical" in topic_of(props)


@pytest.mark.parametrize("limit", RATE_LIMITS)
def test_rate_limit_at_80_percent_warns(template: dict[str, Any], limit: str) -> None:
    key = "RateLimit" + limit.title().replace("_", "")
    props = alarms(template)[key]
    assert props["MetricName"] == telemetry.RATE_LIMIT_UTILISATION_PERCENT
    assert sorted(props["Dimensions"], key=lambda d: d["Name"]) == [
        {"Name": "Limit", "Value": limit},
        SERVICE,
    ]
    assert props["Statistic"] == "Maximum"
    assert props["Period"] == 60
    assert props["Threshold"] == 80
    assert props["ComparisonOperator"] == "GreaterThanOrEqualToThreshold"
    assert "Warning" in topic_of(props)


@pytest.mark.parametrize(
    ("key", "metric"), [("WorkflowFailed", "ExecutionsFailed"), ("WorkflowTimedOut", "ExecutionsTimedOut")]
)
def test_workflow_alarms(template: dict[str, Any], key: str, metric: str) -> None:
    props = alarms(template)[key]
    assert props["Namespace"] == "AWS/States"
    assert props["MetricName"] == metric
    assert props["Threshold"] == 1
    assert props["Period"] == 300


def test_lambda_error_alarms(template: dict[str, Any]) -> None:
    found = alarms(template)
    for key in KEYS:
        if key.startswith("LambdaErrors"):
            assert found[key]["Namespace"] == "AWS/Lambda"
            assert found[key]["MetricName"] == "Errors"
    assert "Critical" in topic_of(found["LambdaErrorsTurn"])
    assert "Critical" in topic_of(found["LambdaErrorsPublishArticle"])  # it ran on the turn function


def _render(value: Any) -> str:
    if isinstance(value, str):
        return value
    if "Fn::Join" in value:
        separator, parts = value["Fn::Join"]
        return str(separator).join(_render(p) for p in parts)
    return "TOKEN"  # Ref / GetAtt / pseudo parameters: any plain string keeps the JSON valid


def test_dashboard_body_renders_with_every_panel(template: dict[str, Any]) -> None:
    (dashboard,) = resources(template, "AWS::CloudWatch::Dashboard").values()
    body = json.loads(_render(dashboard["Properties"]["DashboardBody"]))
    titles = [w["properties"].get("title") for w in body["widgets"] if w["type"] == "metric"]
    for expected in (
        "Requests (runs) and API calls to Claude", "API response time (s)", "Errors by code",
        "Commands executed / blocked", "Approvals requested / resolved", "Fleet sites failed / taken back",
        "SSH connection failures",
        "Rate-limit utilisation (%)", "Runs (Step Functions executions)", "Lambda errors", "Lambda throttles",
        "Lambda duration p99 (ms)", "DynamoDB throttled requests", "API requests and errors",
    ):  # fmt: skip
        assert expected in titles
    latency = next(w for w in body["widgets"] if w["properties"].get("title") == "API response time (s)")
    assert [m[-1]["stat"] for m in latency["properties"]["metrics"]] == ["p50", "p90", "p99"]
    text = json.dumps(body)
    for name in (
        telemetry.COMMANDS_EXECUTED_TOTAL,
        telemetry.COMMANDS_BLOCKED_TOTAL,
        telemetry.ERRORS_TOTAL,
        telemetry.API_CALLS_TOTAL,
    ):
        assert name in text


@pytest.mark.parametrize(
    ("key", "metric", "threshold"),
    [
        ("FleetSitesFailed", telemetry.FLEET_SITES_FAILED_TOTAL, 3),
        ("FleetSitesRolledBack", telemetry.FLEET_SITES_ROLLED_BACK_TOTAL, 1),
    ],
)
def test_fleet_alarms_count_the_sites_that_failed_or_were_taken_back(
    template: dict[str, Any], key: str, metric: str, threshold: int
) -> None:
    props = alarms(template)[key]
    assert props["MetricName"] == metric
    assert props["Threshold"] == threshold
    assert props["Period"] == 300
    assert "Warning" in topic_of(props)
    (dashboard,) = resources(template, "AWS::CloudWatch::Dashboard").values()
    body = json.loads(_render(dashboard["Properties"]["DashboardBody"]))
    widget = next(
        w for w in body["widgets"] if w["properties"].get("title") == "Fleet sites failed / taken back"
    )
    assert metric in json.dumps(widget)
