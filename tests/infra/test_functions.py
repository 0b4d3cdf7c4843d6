"""Lambda functions: runtime, architecture, sizing, environment, layers, tracing, SnapStart."""

from __future__ import annotations

from typing import Any

import pytest

from infra import names
from tests.infra.conftest import ADMIN_PRINCIPALS
from tests.infra.template_queries import flatten, function, logical_id_of_table, only, resources

N = names.FunctionName
SIZING = {
    N.API: (512, 29),
    N.TURN: (1024, 900),
    N.APPROVAL: (256, 30),
    N.WORKFLOW_TASKS: (256, 60),
    N.PUBLISH_ARTICLE: (1024, 900),
}
COMMON_ENV = {
    "POWERTOOLS_SERVICE_NAME": "wp-agent",
    "POWERTOOLS_METRICS_NAMESPACE": "WpAgent",
    "LOG_LEVEL": "INFO",
    "POWERTOOLS_TRACER_CAPTURE_RESPONSE": "false",
}
TABLE_ENV = {
    N.API: set(names.Table),
    N.TURN: {names.Table.SESSIONS, names.Table.AUDIT, names.Table.REGISTRY, names.Table.RATE_LIMITS},
    N.APPROVAL: {names.Table.SESSIONS, names.Table.AUDIT},
    N.WORKFLOW_TASKS: {
        names.Table.SESSIONS,
        names.Table.AUDIT,
        names.Table.REGISTRY,
        names.Table.RATE_LIMITS,
    },
    N.PUBLISH_ARTICLE: {names.Table.SESSIONS, names.Table.AUDIT, names.Table.REGISTRY},
}
OTHER_ENV_KEYS = {
    N.API: {
        "WP_AGENT_EVENT_BUS",
        "WP_AGENT_STATE_MACHINE_ARN",
        "WP_AGENT_ADMIN_PRINCIPALS",
        "WP_AGENT_SCHEDULE_GROUP",
        "WP_AGENT_SCHEDULER_ROLE_ARN",
        "ANTHROPIC_API_KEY_SECRET_ARN",
        "WP_AGENT_TARGET_SECRET_PREFIX",
    },
    N.TURN: {
        "WP_AGENT_EVENT_BUS",
        "ANTHROPIC_API_KEY_SECRET_ARN",
        "WP_AGENT_TARGET_SECRET_PREFIX",
        "WP_CLI_MODE",
        "WP_CLI_TIMEOUT",
        "AGENT_MAX_ITERATIONS",
        "WP_AGENT_APPROVAL_TIMEOUT_SECONDS",
    },
    N.APPROVAL: {"WP_AGENT_EVENT_BUS"},
    N.WORKFLOW_TASKS: {"WP_AGENT_EVENT_BUS"},
    # SSH to the target like a turn, but no model key
    N.PUBLISH_ARTICLE: {
        "WP_AGENT_EVENT_BUS",
        "WP_AGENT_TARGET_SECRET_PREFIX",
        "WP_CLI_MODE",
        "WP_CLI_TIMEOUT",
    },
}


def _environment(template: dict[str, Any], name: N) -> dict[str, Any]:
    variables: dict[str, Any] = function(template, name)[1]["Properties"]["Environment"]["Variables"]
    return variables


def test_exactly_the_contract_functions(template: dict[str, Any]) -> None:
    assert len(resources(template, "AWS::Lambda::Function")) == len(N)
    for name in N:
        function(template, name)


@pytest.mark.parametrize("name", list(N))
def test_runtime_architecture_handler_sizing_tracing(template: dict[str, Any], name: N) -> None:
    properties = function(template, name)[1]["Properties"]
    assert properties["Runtime"] == "python3.12"
    assert properties["Architectures"] == ["arm64"]
    assert properties["Handler"] == "handler.lambda_handler"
    assert (properties["MemorySize"], properties["Timeout"]) == SIZING[name]
    assert properties["TracingConfig"] == {"Mode": "Active"}


@pytest.mark.parametrize("name", list(N))
def test_two_layers_core_then_dependencies(template: dict[str, Any], name: N) -> None:
    layers = function(template, name)[1]["Properties"]["Layers"]
    layer_resources = resources(template, "AWS::Lambda::LayerVersion")
    assert len(layers) == 2
    descriptions = [layer_resources[layer["Ref"]]["Properties"]["Description"] for layer in layers]
    assert descriptions[0] == "wp_agent core package"
    assert descriptions[1].startswith("wp-agent third-party dependencies")
    for layer in layers:
        properties = layer_resources[layer["Ref"]]["Properties"]
        assert properties["CompatibleRuntimes"] == ["python3.12"]
        assert properties["CompatibleArchitectures"] == ["arm64"]


@pytest.mark.parametrize("name", list(N))
def test_environment_is_exactly_the_contract(template: dict[str, Any], name: N) -> None:
    environment = _environment(template, name)
    table_keys = {names.TABLE_ENV[table].value for table in TABLE_ENV[name]}
    assert set(environment) == set(COMMON_ENV) | table_keys | OTHER_ENV_KEYS[name]
    for key, value in COMMON_ENV.items():
        assert environment[key] == value
    for table in TABLE_ENV[name]:
        assert environment[names.TABLE_ENV[table].value] == {"Ref": logical_id_of_table(template, table)}


def test_turn_environment_values(template: dict[str, Any]) -> None:
    environment = _environment(template, N.TURN)
    assert environment["WP_AGENT_TARGET_SECRET_PREFIX"] == "wp-agent/targets/"
    assert environment["WP_CLI_MODE"] == "ssh"
    assert environment["WP_CLI_TIMEOUT"] == "60000"
    assert environment["AGENT_MAX_ITERATIONS"] == "10"
    # The turn dates the approval it creates; the workflow's wait uses the same setting.
    assert environment["WP_AGENT_APPROVAL_TIMEOUT_SECONDS"] == "86400"
    secret_id, _ = only(template, "AWS::SecretsManager::Secret")
    assert environment["ANTHROPIC_API_KEY_SECRET_ARN"] == {"Ref": secret_id}


def test_api_environment_values(template: dict[str, Any]) -> None:
    environment = _environment(template, N.API)
    state_machine_id, _ = only(template, "AWS::StepFunctions::StateMachine")
    assert environment["WP_AGENT_STATE_MACHINE_ARN"] == {"Ref": state_machine_id}
    assert environment["WP_AGENT_ADMIN_PRINCIPALS"] == ",".join(ADMIN_PRINCIPALS)
    assert environment["WP_AGENT_SCHEDULE_GROUP"] == "wp-agent"
    assert flatten(environment["WP_AGENT_SCHEDULER_ROLE_ARN"]).startswith("<SchedulesSchedulerRole")
    secret_id, _ = only(template, "AWS::SecretsManager::Secret")
    assert environment["ANTHROPIC_API_KEY_SECRET_ARN"] == {"Ref": secret_id}


@pytest.mark.parametrize("name", list(N))
def test_every_function_uses_the_bus(template: dict[str, Any], name: N) -> None:
    bus_id, _ = only(template, "AWS::Events::EventBus")
    assert _environment(template, name)["WP_AGENT_EVENT_BUS"] == {"Ref": bus_id}


@pytest.mark.parametrize("name", list(N))
def test_each_function_logs_to_its_own_retained_log_group(template: dict[str, Any], name: N) -> None:
    log_group_id = function(template, name)[1]["Properties"]["LoggingConfig"]["LogGroup"]["Ref"]
    assert template["Resources"][log_group_id]["Properties"]["RetentionInDays"] == 180


def test_snapstart_only_on_api(template: dict[str, Any]) -> None:
    for name in N:
        properties = function(template, name)[1]["Properties"]
        if name is N.API:
            assert properties["SnapStart"] == {"ApplyOn": "PublishedVersions"}
        else:
            assert "SnapStart" not in properties


def test_api_is_invoked_through_the_live_alias_of_a_published_version(template: dict[str, Any]) -> None:
    api_id, _ = function(template, N.API)
    version_id, version = only(template, "AWS::Lambda::Version")
    assert version["Properties"]["FunctionName"] == {"Ref": api_id}
    # An old SnapStart version keeps paying for its cached snapshot: versions are not retained.
    assert version["DeletionPolicy"] == "Delete"
    _, alias = only(template, "AWS::Lambda::Alias")
    assert alias["Properties"]["Name"] == "live"
    assert alias["Properties"]["FunctionVersion"] == {"Fn::GetAtt": [version_id, "Version"]}
