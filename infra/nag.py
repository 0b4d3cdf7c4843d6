"""cdk-nag (v3, a CDK policy-validation plugin) registration and how we acknowledge findings.

cdk-nag v3 reports through CDK's validation report: any unacknowledged finding, error or warning,
fails `synth`. Every acknowledgement carries its reason and sits next to the resource it concerns.
"""

from __future__ import annotations

import json
from typing import Any

from aws_cdk import Acknowledgment, App, Stack, Validations
from cdk_nag import AwsSolutionsChecks
from constructs import IConstruct


def enable_aws_solutions_checks(app: App) -> None:
    """Run the AwsSolutions pack on every stack of `app` at synth."""
    Validations.of(app).add_plugins(AwsSolutionsChecks(app, verbose=True))


def acknowledge(scope: IConstruct, rule_id: str, reason: str) -> None:
    """Accept one finding (e.g. 'AwsSolutions-L1') on `scope` and everything below it."""
    Validations.of(scope).acknowledge(Acknowledgment(id=rule_id, reason=reason))


def acknowledge_wildcard_resource(scope: IConstruct, resource: str, reason: str) -> None:
    """Accept AwsSolutions-IAM5 for one wildcard `resource` (a string that may contain tokens)."""
    acknowledge(scope, f"AwsSolutions-IAM5[Resource::{finding_text(scope, resource)}]", reason)


def finding_text(scope: IConstruct, value: str) -> str:
    """`value` as cdk-nag prints it in a finding id (a port of cdk-nag's flattenCfnReference)."""
    return _flatten(Stack.of(scope).resolve(value))


def _flatten(node: Any) -> str:
    if node is None:
        return ""
    if isinstance(node, str):
        return node.replace("${", "<").replace("}", ">")
    if isinstance(node, dict):
        if "Fn::Join" in node:
            delimiter, items = node["Fn::Join"]
            return str(delimiter).join(_flatten(item) for item in items)
        if "Fn::Sub" in node:
            return _flatten(node["Fn::Sub"])
        if "Fn::GetAtt" in node:
            resource, attribute = node["Fn::GetAtt"]
            return f"<{_flatten(resource)}.{_flatten(attribute)}>"
        if "Fn::ImportValue" in node:
            return _flatten(node["Fn::ImportValue"])
        if "Ref" in node:
            return f"<{_flatten(node['Ref'])}>"
    return json.dumps(node, separators=(",", ":"))
