"""Bus, archive and example rule; scheduler group and role; secrets; SNS topics; dashboard; outputs."""

from __future__ import annotations

import json
from typing import Any

from aws_cdk.assertions import Match, Template

from infra import names
from tests.infra.template_queries import flatten, only, resources, role_statements
from wp_agent.models.events import DETAIL_TYPES  # the contract: every detail-type it names is wired


def test_event_bus_archive_and_example_rule(template: dict[str, Any]) -> None:
    bus_id, bus = only(template, "AWS::Events::EventBus")
    assert bus["Properties"]["Name"] == "wp-agent"
    _, archive = only(template, "AWS::Events::Archive")
    assert archive["Properties"]["RetentionDays"] == 30
    assert archive["Properties"]["SourceArn"] == {"Fn::GetAtt": [bus_id, "Arn"]}
    assert archive["Properties"]["EventPattern"] == {"source": ["argo.wp-agent"]}
    rule_id, rule = only(template, "AWS::Events::Rule")
    assert rule["Properties"]["EventBusName"] == {"Ref": bus_id}
    pattern = rule["Properties"]["EventPattern"]
    assert (pattern["source"], sorted(pattern["detail-type"])) == (["argo.wp-agent"], sorted(DETAIL_TYPES))
    (target,) = rule["Properties"]["Targets"]
    log_group_id = target["Arn"]["Fn::GetAtt"][0]
    log_group = template["Resources"][log_group_id]["Properties"]
    assert log_group["LogGroupName"].startswith("/aws/events/")
    _, policy = only(template, "AWS::Logs::ResourcePolicy")
    document = json.dumps(policy["Properties"]["PolicyDocument"])
    assert "events.amazonaws.com" in document
    assert rule_id in document  # scoped to this rule (aws:SourceArn)


def test_the_schema_registry_holds_each_detail_types_committed_schema(template: dict[str, Any]) -> None:
    from wp_agent.models.events import committed_schema

    registry_id, registry = only(template, "AWS::EventSchemas::Registry")
    assert registry["Properties"]["RegistryName"] == "wp-agent"
    schemas = resources(template, "AWS::EventSchemas::Schema")
    by_name = {s["Properties"]["SchemaName"]: s for s in schemas.values()}
    assert set(by_name) == {f"argo.wp-agent@{t.replace(' ', '')}" for t in DETAIL_TYPES}
    for detail_type in DETAIL_TYPES:
        schema = by_name[f"argo.wp-agent@{detail_type.replace(' ', '')}"]
        assert schema["Properties"]["Type"] == "JSONSchemaDraft4"
        assert schema["Properties"]["RegistryName"] == "wp-agent"
        assert json.loads(schema["Properties"]["Content"]) == committed_schema(detail_type)
        assert registry_id in schema["DependsOn"]


def test_no_custom_resource_lambdas(template: dict[str, Any]) -> None:
    # Only the contract functions: no CDK singleton/custom-resource Lambdas crept in.
    assert len(resources(template, "AWS::Lambda::Function")) == len(names.FunctionName)
    assert not [r for r in template["Resources"].values() if r["Type"].startswith("Custom::")]


def test_schedule_group_and_scheduler_role(template: dict[str, Any]) -> None:
    group_id, group = only(template, "AWS::Scheduler::ScheduleGroup")
    assert group["Properties"]["Name"] == "wp-agent"
    machine_id, _ = only(template, "AWS::StepFunctions::StateMachine")
    (role_id,) = [
        key
        for key, role in resources(template, "AWS::IAM::Role").items()
        if role["Properties"]["AssumeRolePolicyDocument"]["Statement"][0]["Principal"]
        == {"Service": "scheduler.amazonaws.com"}
    ]
    role = template["Resources"][role_id]["Properties"]
    (trust,) = role["AssumeRolePolicyDocument"]["Statement"]
    assert trust["Condition"] == {
        "StringEquals": {
            "aws:SourceAccount": {"Ref": "AWS::AccountId"},
            "aws:SourceArn": {"Fn::GetAtt": [group_id, "Arn"]},
        }
    }
    assert "ManagedPolicyArns" not in role
    (statement,) = role_statements(template, role_id)
    assert (statement.actions, statement.resources) == (("states:StartExecution",), (f"<{machine_id}>",))


def test_anthropic_secret_is_created_empty(template: dict[str, Any]) -> None:
    _, secret = only(template, "AWS::SecretsManager::Secret")
    assert secret["Properties"]["Name"] == "wp-agent/anthropic-api-key"
    assert "GenerateSecretString" not in secret["Properties"]
    assert "SecretString" not in secret["Properties"]


def test_alarm_topics_are_encrypted_and_require_tls(template: dict[str, Any]) -> None:
    topics = resources(template, "AWS::SNS::Topic")
    assert sorted(t["Properties"]["DisplayName"] for t in topics.values()) == [
        "wp-agent critical",
        "wp-agent warning",
    ]
    key_id, key = only(template, "AWS::KMS::Key")
    assert key["Properties"]["EnableKeyRotation"] is True
    key_policy = json.dumps(key["Properties"]["KeyPolicy"])
    assert "cloudwatch.amazonaws.com" in key_policy
    for topic in topics.values():
        assert topic["Properties"]["KmsMasterKeyId"] == {"Fn::GetAtt": [key_id, "Arn"]}
    for policy in resources(template, "AWS::SNS::TopicPolicy").values():
        assert '"aws:SecureTransport": "false"' in json.dumps(policy["Properties"]["PolicyDocument"])


def test_dashboard_shows_lambda_and_workflow_metrics(template: dict[str, Any]) -> None:
    _, dashboard = only(template, "AWS::CloudWatch::Dashboard")
    body = flatten(dashboard["Properties"]["DashboardBody"])
    for metric in ("Errors", "Throttles", "Duration", "ExecutionsStarted", "ExecutionsFailed", "5XXError"):
        assert f'"{metric}"' in body, metric


def test_outputs(assertions: Template) -> None:
    for output in names.Output:
        assertions.has_output(output.value, {"Value": Match.any_value()})
