"""The synthesized stack as data: its template, and the run workflow's definition with real ARNs.

For running the state machine outside AWS (moto): synthesise once, then substitute the ARNs of the
stand-in Lambda functions into the definition CDK wrote as an Fn::Join.

    template = synthesize_template()
    definition = state_machine_definition(template, {"turn": turn_arn, "approval": ..., ...})
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Mapping
from typing import Any

from infra import names
from infra.app import build_app
from infra.packaging import LayerDirs


def synthesize_template(
    *,
    layers: LayerDirs | None = None,
    context: Mapping[str, Any] | None = None,
    outdir: str | None = None,
) -> dict[str, Any]:
    """Synthesise the stack (cdk-nag on) and return its template; `outdir` defaults to a new temp dir.

    `layers` defaults to the real builds (cached under build/layers; the first build needs PyPI).
    """
    app, stack = build_app(
        layers=layers, context=context, outdir=outdir or tempfile.mkdtemp(prefix="wp-agent-cdk.")
    )
    template = app.synth().get_stack_by_name(stack.stack_name).template
    if not isinstance(template, dict):  # pragma: no cover - the cloud assembly always holds JSON
        raise TypeError("unexpected template type")
    return template


def function_logical_ids(template: Mapping[str, Any]) -> dict[str, str]:
    """Contract function name (api, turn, ...) -> logical id of its AWS::Lambda::Function."""
    found: dict[str, str] = {}
    for logical_id, resource in template["Resources"].items():
        name = (resource.get("Metadata") or {}).get(names.FUNCTION_METADATA_KEY)
        if resource["Type"] == "AWS::Lambda::Function" and name:
            found[str(name)] = logical_id
    return found


def state_machine_definition(
    template: Mapping[str, Any],
    function_arns: Mapping[str, str],
    *,
    partition: str = "aws",
    region: str = "us-east-1",
    account: str = "123456789012",
) -> dict[str, Any]:
    """The state machine's DefinitionString as a dict, function ARNs taken from `function_arns`.

    `function_arns` is keyed by contract function name (names.FunctionName values); every function
    the definition references must be present.
    """
    machines = [r for r in template["Resources"].values() if r["Type"] == "AWS::StepFunctions::StateMachine"]
    if len(machines) != 1:
        raise ValueError(f"expected one state machine, found {len(machines)}")
    arn_by_logical_id = {
        logical_id: function_arns[name]
        for name, logical_id in function_logical_ids(template).items()
        if name in function_arns
    }
    pseudo = {
        "AWS::Partition": partition,
        "AWS::Region": region,
        "AWS::AccountId": account,
        "AWS::URLSuffix": "amazonaws.com",
    }

    def render(node: Any) -> str:
        if isinstance(node, str):
            return node
        if "Fn::Join" in node:
            delimiter, parts = node["Fn::Join"]
            return str(delimiter).join(render(part) for part in parts)
        if "Ref" in node and node["Ref"] in pseudo:
            return pseudo[node["Ref"]]
        if "Fn::GetAtt" in node and node["Fn::GetAtt"][1] == "Arn":
            logical_id = node["Fn::GetAtt"][0]
            if logical_id not in arn_by_logical_id:
                raise KeyError(f"no ARN given for function {logical_id}")
            return arn_by_logical_id[logical_id]
        raise ValueError(f"cannot render {json.dumps(node)} in the definition")

    definition: dict[str, Any] = json.loads(render(machines[0]["Properties"]["DefinitionString"]))
    return definition
