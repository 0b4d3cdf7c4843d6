"""Reading the synthesized template: resources by type, functions by contract name, IAM per role."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from infra import names


def resources(template: dict[str, Any], resource_type: str) -> dict[str, dict[str, Any]]:
    """Logical id -> resource, for every resource of `resource_type`."""
    return {key: value for key, value in template["Resources"].items() if value["Type"] == resource_type}


def only(template: dict[str, Any], resource_type: str) -> tuple[str, dict[str, Any]]:
    """The single resource of `resource_type` (fails if there are none or several)."""
    found = resources(template, resource_type)
    assert len(found) == 1, f"expected one {resource_type}, found {sorted(found)}"
    return next(iter(found.items()))


def function(template: dict[str, Any], name: names.FunctionName) -> tuple[str, dict[str, Any]]:
    """Logical id and resource of a contract function."""
    for key, value in resources(template, "AWS::Lambda::Function").items():
        if (value.get("Metadata") or {}).get(names.FUNCTION_METADATA_KEY) == name.value:
            return key, value
    raise AssertionError(f"function {name} not in template")


def logical_id_of_table(template: dict[str, Any], table: names.Table) -> str:
    """Tables are found through the stack output that names them."""
    output = template["Outputs"][names.TABLE_OUTPUT[table].value]
    return str(output["Value"]["Ref"])


def flatten(value: Any) -> str:
    """A CloudFormation value as one readable string: tokens become <LogicalId> / <LogicalId.Attr>."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        if "Fn::Join" in value:
            delimiter, parts = value["Fn::Join"]
            return str(delimiter).join(flatten(part) for part in parts)
        if "Ref" in value:
            return f"<{value['Ref']}>"
        if "Fn::GetAtt" in value:
            return f"<{value['Fn::GetAtt'][0]}.{value['Fn::GetAtt'][1]}>"
    return json.dumps(value, sort_keys=True)


@dataclass(frozen=True)
class Statement:
    """One IAM statement, flattened: actions and resources as sorted tuples of strings."""

    sid: str | None
    actions: tuple[str, ...]
    resources: tuple[str, ...]
    condition: str | None

    def grants(self, action: str, resource: str) -> bool:
        return action in self.actions and resource in self.resources


def role_statements(template: dict[str, Any], role_logical_id: str) -> list[Statement]:
    """Every Allow statement of every AWS::IAM::Policy attached to the role, plus inline policies."""
    documents: list[dict[str, Any]] = []
    for policy in resources(template, "AWS::IAM::Policy").values():
        if {"Ref": role_logical_id} in policy["Properties"]["Roles"]:
            documents.append(policy["Properties"]["PolicyDocument"])
    role = template["Resources"][role_logical_id]
    documents += [inline["PolicyDocument"] for inline in role["Properties"].get("Policies", [])]
    statements = []
    for document in documents:
        for raw in document["Statement"]:
            assert raw["Effect"] == "Allow"
            actions = raw["Action"] if isinstance(raw["Action"], list) else [raw["Action"]]
            targets = raw["Resource"] if isinstance(raw["Resource"], list) else [raw["Resource"]]
            statements.append(
                Statement(
                    sid=raw.get("Sid"),
                    actions=tuple(sorted(actions)),
                    resources=tuple(sorted(flatten(target) for target in targets)),
                    condition=json.dumps(raw["Condition"], sort_keys=True) if "Condition" in raw else None,
                )
            )
    return statements


def function_statements(template: dict[str, Any], name: names.FunctionName) -> list[Statement]:
    _, resource = function(template, name)
    return role_statements(template, resource["Properties"]["Role"]["Fn::GetAtt"][0])


def grants(statements: list[Statement]) -> set[tuple[str, str]]:
    """(action, resource) pairs the statements allow."""
    return {(action, resource) for s in statements for action in s.actions for resource in s.resources}
