"""The API against its published OpenAPI document: the committed openapi.json is the served one, and
schemathesis (property-based requests from the served document, through an HTTP -> API Gateway event
adapter on moto) finds no server error, no response that the document does not describe, and no
request that follows the schema refused for a reason the document does not state.
Regenerate openapi.json after an API change: `.venv/bin/python -m tests.integration.test_api_contract`."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from openapi_spec_validator import validate

from tests.fakes.nested_pytest import run_pytest
from wp_agent.agent.audit_events import AuditEventType
from wp_agent.agent.session_state import SessionStatus
from wp_agent.errors import AgentErrorCode
from wp_agent.http_api.app import openapi_document
from wp_agent.policy import PolicyCategory
from wp_agent.service.api_contract import gateway_status, operation_codes
from wp_agent.service.api_errors import ApiErrorCode, GatewayErrorCode

COMMITTED = Path(__file__).resolve().parents[2] / "openapi.json"


def served_document() -> dict[str, Any]:
    document: dict[str, Any] = json.loads(json.dumps(openapi_document()))
    return document


def test_the_committed_document_is_the_served_one() -> None:
    assert json.loads(COMMITTED.read_text(encoding="utf-8")) == served_document(), (
        "openapi.json is stale: regenerate it (see this module's docstring)"
    )


def test_the_document_is_valid_openapi() -> None:
    validate(served_document())  # openapi-spec-validator: OpenAPI 3.1 and every $ref resolves


def _operations() -> list[tuple[str, str, dict[str, Any]]]:
    return [
        (method, path, operation)
        for path, operations in served_document()["paths"].items()
        for method, operation in operations.items()
    ]


def test_every_operation_is_signed_named_and_summarised() -> None:
    document = served_document()
    scheme = document["components"]["securitySchemes"]["sigv4"]
    assert scheme["x-amazon-apigateway-authtype"] == "awsSigv4"
    assert (scheme["type"], scheme["name"], scheme["in"]) == ("apiKey", "Authorization", "header")
    ids = []
    for method, path, operation in _operations():
        assert operation["security"] == [{"sigv4": []}], (method, path)
        assert re.fullmatch(r"[a-z]+(?:[A-Z][a-z]*)*", operation["operationId"]), operation["operationId"]
        summary = operation["summary"]
        assert summary, (method, path)
        assert "\n" not in summary, (method, path)
        assert path not in summary, (method, path)
        ids.append(operation["operationId"])
    assert len(ids) == len(set(ids))


def test_headers_are_declared_and_required_where_the_api_requires_them() -> None:
    optional_caller = {
        "listTargets",
        "getTarget",
        "updateTarget",
        "deleteTarget",
        "checkTarget",
        "getTargetActivity",
        "listTargetMembers",
        "putTargetMember",
        "deleteTargetMember",
    }
    no_caller = {"registerTarget", "getOpenApiDocument"}
    for method, path, operation in _operations():
        parameters = {p["name"]: p for p in operation.get("parameters", []) if p["in"] == "header"}
        name = operation["operationId"]
        if name in no_caller:
            assert "X-Argo-User-Id" not in parameters
        else:
            assert parameters["X-Argo-User-Id"]["required"] is (name not in optional_caller), name
        if method in ("post", "patch") and name not in no_caller | {
            "cancelRun",
            "checkTarget",
            "proposeSchedule",
        }:
            assert parameters["Idempotency-Key"]["required"] is False, name
        for parameter in operation.get("parameters", []):
            if parameter["in"] == "path":
                assert "{" + parameter["name"] + "}" in path
                assert "_" not in parameter["name"]


def _enum(schemas: dict[str, Any], prop: dict[str, Any]) -> set[str]:
    """An enum property's values, inline or through the named schema it refers to."""
    if "$ref" in prop:
        return _enum(schemas, schemas[prop["$ref"].split("/")[-1]])
    return set(prop["enum"])


def test_enums_state_every_value_the_server_sends() -> None:
    schemas = served_document()["components"]["schemas"]

    def values(schema: str, field: str) -> set[str]:
        return _enum(schemas, schemas[schema]["properties"][field])

    assert values("ApiErrorBody", "code") == {c.value for c in ApiErrorCode} | {
        c.value for c in GatewayErrorCode
    }
    for schema in ("SessionView", "RunAccepted", "ApprovalDecided", "SessionSummary"):
        # one named schema, referenced from each place (a generator makes one type of it)
        assert schemas[schema]["properties"]["status"]["$ref"] == "#/components/schemas/SessionStatus"
        assert values(schema, "status") == {s.value for s in SessionStatus}
    assert schemas["AgentErrorInfo"]["properties"]["code"]["$ref"].split("/")[-1] == "AgentErrorCode"
    assert values("AgentErrorInfo", "code") == {c.value for c in AgentErrorCode}
    assert values("ApprovalDecisionRequest", "decision") == {"approve", "reject"}
    assert values("RunCommandView", "decision") == {c.value for c in PolicyCategory}
    assert values("ActivityRecord", "type") == {t.value for t in AuditEventType}


def test_every_status_an_operation_answers_is_documented_with_its_codes() -> None:
    for method, _, operation in _operations():
        expected = operation_codes(method, operation)
        listed: dict[str, str] = {}
        for status, response in operation["responses"].items():
            if int(status) >= 400:
                assert response["content"]["application/json"]["schema"] == {
                    "$ref": "#/components/schemas/ApiErrorResponse"
                }
                for code in response["x-error-codes"]:
                    assert _status_of(code) == int(status), (operation["operationId"], code, status)
                listed |= response["x-error-codes"]
        assert set(listed) == {code.value for code in expected}, operation["operationId"]
    decide = served_document()["paths"]["/v1/sessions/{sessionId}/approvals/{approvalId}"]["post"]
    assert {"APPROVAL_ALREADY_DECIDED", "RUN_ENDED", "APPROVAL_EXPIRED"} <= set(
        decide["responses"]["409"]["x-error-codes"]
    )
    assert "WORKFLOW_UNAVAILABLE" in decide["responses"]["503"]["x-error-codes"]


def _status_of(code: str) -> int:
    if code in ApiErrorCode.__members__:
        return ApiErrorCode[code].status
    return gateway_status(GatewayErrorCode(code))


CASES = Path(__file__).with_name("api_contract_cases.py")


@pytest.mark.slow
def test_no_server_error_and_every_response_as_documented() -> None:
    """Schemathesis' cases (api_contract_cases.py) in a pytest process of their own: generated once,
    on the worker that runs them, not at every worker's collection."""
    run_pytest([str(CASES)], timeout=900)


if __name__ == "__main__":
    COMMITTED.write_text(json.dumps(served_document(), ensure_ascii=False, indent=2) + "\n", encoding="utf-8")


def test_a_generator_with_default_options_reads_the_document_as_the_server_means_it() -> None:
    """Properties of the whole document (service/openapi_clients.py), each closing a class of findings."""
    document = served_document()
    schemas = document["components"]["schemas"]
    requests, responses = _reachable(document, "requestBody"), _reachable(document, "responses")
    defaulted = [
        f"{n}.{p}" for n in requests for p, v in schemas[n].get("properties", {}).items() if "default" in v
    ]
    assert defaulted == []  # a default would make a generated request type require the field
    closed = [n for n in responses - requests if schemas[n].get("additionalProperties") is False]
    assert closed == []  # an added response field must not break a strict client
    for _, _, operation in _operations():
        for parameter in operation.get("parameters", []):
            assert "anyOf" not in parameter["schema"], parameter  # sent or not, never null
    posts = [op for method, _, op in _operations() if method == "post"]
    assert all(any(p["name"] == "Idempotency-Key" for p in op.get("parameters", [])) for op in posts)
    stamps = [
        (name, prop)
        for schema in schemas.values()
        for name, prop in schema.get("properties", {}).items()
        if name.endswith("At")
    ]
    assert stamps
    for name, prop in stamps:
        strings = [o for o in prop.get("anyOf", [prop]) if o.get("type") == "string"]
        assert strings, (name, prop)
        assert all(o.get("format") == "date-time" for o in strings), (name, prop)
    inline = [
        frozenset(prop["enum"])
        for schema in schemas.values()
        for prop in schema.get("properties", {}).values()
        if "enum" in prop
    ]
    assert len(inline) == len(set(inline))  # the same enum twice is one named schema


def _reachable(document: dict[str, Any], part: str) -> set[str]:
    schemas = document["components"]["schemas"]
    text = json.dumps([op.get(part, {}) for ops in document["paths"].values() for op in ops.values()])
    todo = re.findall(r"#/components/schemas/(\w+)", text)
    seen: set[str] = set()
    while todo:
        name = todo.pop()
        if name not in seen:
            seen.add(name)
            todo += re.findall(r"#/components/schemas/(\w+)", json.dumps(schemas[name]))
    return seen
