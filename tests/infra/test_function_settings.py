"""Each function's settings class (wp_agent/config.py) accepts the environment the stack gives that
function, and requires what the function cannot run without: a missing setting fails the function's
start (its runtime is built before anything else happens) with CONFIGURATION_ERROR naming it."""

from __future__ import annotations

import os
from typing import Any

import pytest

from infra import names
from tests.infra.template_queries import flatten, function
from wp_agent.config import (
    ApiSettings,
    ApprovalSettings,
    LambdaSettings,
    PublishArticleSettings,
    TurnSettings,
    WorkflowTasksSettings,
)
from wp_agent.errors import ConfigurationError
from wp_agent.service.runtime import function_settings

N = names.FunctionName
SETTINGS: dict[N, type[LambdaSettings]] = {
    N.API: ApiSettings,
    N.TURN: TurnSettings,
    N.APPROVAL: ApprovalSettings,
    N.WORKFLOW_TASKS: WorkflowTasksSettings,
    N.PUBLISH_ARTICLE: PublishArticleSettings,
}
_OURS = ("WP_AGENT_", "ANTHROPIC_", "WP_CLI_", "VPS_", "AGENT_", "WP_PATH", "WP_LOCAL_PATH", "VAULT_")


def _only(monkeypatch: pytest.MonkeyPatch, env: dict[str, str]) -> None:
    for key in list(os.environ):
        if key.upper().startswith(_OURS):
            monkeypatch.delenv(key)
    for key, value in env.items():
        monkeypatch.setenv(key, value)


def _environment(template: dict[str, Any], name: N) -> dict[str, str]:
    _, resource = function(template, name)
    variables = resource["Properties"]["Environment"]["Variables"]
    return {key: flatten(value) for key, value in variables.items()}


@pytest.mark.parametrize("name", list(N))
def test_the_stack_gives_each_function_what_its_settings_require(
    template: dict[str, Any], name: N, monkeypatch: pytest.MonkeyPatch
) -> None:
    _only(monkeypatch, _environment(template, name))
    settings = function_settings(SETTINGS[name])
    assert isinstance(settings, SETTINGS[name])


@pytest.mark.parametrize("name", list(N))
def test_each_handler_builds_its_runtime_with_its_own_settings(name: N) -> None:
    handler = __import__(f"functions.{name.value}.handler", fromlist=["runtime"])
    assert handler.runtime._settings_class is SETTINGS[name]


@pytest.mark.parametrize(
    ("name", "missing"),
    [
        (N.API, "WP_AGENT_IDEMPOTENCY_TABLE"),
        (N.TURN, "WP_AGENT_RATE_LIMIT_TABLE"),
        (N.TURN, "ANTHROPIC_API_KEY_SECRET_ARN"),
        (N.APPROVAL, "WP_AGENT_SESSIONS_TABLE"),
        (N.WORKFLOW_TASKS, "WP_AGENT_REGISTRY_TABLE"),
        (N.PUBLISH_ARTICLE, "WP_AGENT_AUDIT_TABLE"),
    ],
)
def test_a_missing_setting_fails_the_start_naming_it(
    template: dict[str, Any], name: N, missing: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    env = _environment(template, name)
    assert missing in env
    del env[missing]
    _only(monkeypatch, env)
    with pytest.raises(ConfigurationError) as failed:
        function_settings(SETTINGS[name])
    assert missing in failed.value.message_ja
    assert failed.value.setting is not None
    assert missing in failed.value.setting


def test_the_approval_task_needs_no_state_machine() -> None:
    """It answers a decision that came first through the wait's token alone (ApprovalWaits)."""
    assert "wp_agent_state_machine_arn" not in {
        key for key, field in ApprovalSettings.model_fields.items() if field.is_required()
    }
