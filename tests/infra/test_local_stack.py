"""What `wp-agent api serve` (and the moto tests) run is the deployed stack: the committed state
machine definition is the synthesized one, the moto tables have the synthesized keys and indexes.
Regenerate the definition after a workflow change: `.venv/bin/python -m tests.infra.test_local_stack`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from infra import names
from infra.definition import state_machine_definition, synthesize_template
from wp_agent.adapters.aws.table_layout import LAYOUTS, LogicalTable
from wp_agent.local_api import workflow

COMMITTED = Path(workflow.__file__).resolve().parent / workflow.DEFINITION_FILE
_TABLES = {
    names.Table.SESSIONS: LogicalTable.SESSIONS,
    names.Table.AUDIT: LogicalTable.AUDIT,
    names.Table.REGISTRY: LogicalTable.REGISTRY,
    names.Table.RATE_LIMITS: LogicalTable.RATE_LIMITS,
    names.Table.IDEMPOTENCY: LogicalTable.IDEMPOTENCY,
}


def placeholder_definition(template: dict[str, Any]) -> str:
    arns = {name.value: workflow.function_placeholder(name.value) for name in names.FunctionName}
    definition = state_machine_definition(template, arns, region="${Region}", account="${Account}")
    return json.dumps(definition, ensure_ascii=False, indent=2, sort_keys=True) + "\n"


def test_the_committed_definition_is_the_synthesized_one(template: dict[str, Any]) -> None:
    assert workflow.committed_definition() == placeholder_definition(template), (
        f"{COMMITTED.name} is stale: regenerate it (see this module's docstring)"
    )
    assert set(workflow.FUNCTION_NAMES) == {name.value for name in names.FunctionName}
    assert workflow.WAIT_FOR_APPROVAL_STATE == names.State.WAIT_FOR_APPROVAL


def test_the_local_tables_have_the_synthesized_keys_and_indexes(template: dict[str, Any]) -> None:
    tables = {
        logical_id: resource["Properties"]
        for logical_id, resource in template["Resources"].items()
        if resource["Type"] == "AWS::DynamoDB::Table"
    }
    for table, logical in _TABLES.items():
        synthesized = next(props for logical_id, props in tables.items() if table.value in logical_id)
        local = LAYOUTS[logical].create_table_request("x")
        assert synthesized["KeySchema"] == local["KeySchema"], table
        assert sorted(synthesized["AttributeDefinitions"], key=str) == sorted(
            local["AttributeDefinitions"], key=str
        )
        assert sorted(synthesized.get("GlobalSecondaryIndexes", []), key=str) == sorted(
            local.get("GlobalSecondaryIndexes", []), key=str
        ), table


if __name__ == "__main__":
    from infra.packaging import LayerDirs, build_core_layer

    root = Path(__import__("tempfile").mkdtemp(prefix="wp-agent-local-stack."))
    (root / "deps" / "python").mkdir(parents=True)
    layers = LayerDirs(core=build_core_layer(root), dependencies=root / "deps")
    context = {names.CONTEXT_BACKEND_PRINCIPALS: "arn:aws:iam::123456789012:role/ArgoNoteBackend"}
    COMMITTED.write_text(
        placeholder_definition(synthesize_template(layers=layers, context=context)), encoding="utf-8"
    )
