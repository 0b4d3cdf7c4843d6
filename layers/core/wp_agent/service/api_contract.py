"""The published OpenAPI document, finished from what Powertools generates so a client generator can
use it as the contract:

- SigV4 (IAM) is the security scheme of every operation, with API Gateway's extension;
- path parameters and headers are named as clients send them (`{sessionId}`, `X-Argo-User-Id`);
- every status an operation can answer is listed with the error body, and under `x-error-codes`
  every code it can carry with when (the operation's own refusals, and those of every request:
  the body checks, the user header, Idempotency-Key, the server, API Gateway in front);
- status and code fields are enums of the values the server really sends (ApiErrorCode and
  API Gateway's codes, the session status, audit record types);
- no trace of the validation shape Powertools documents but the API never sends (it answers 400 in ours).
"""

from __future__ import annotations

import copy
import re
from collections.abc import Iterable
from enum import StrEnum
from typing import Any

from wp_agent.agent.audit_events import AuditEventType
from wp_agent.agent.session_state import SessionStatus
from wp_agent.models.api import ApiErrorResponse
from wp_agent.service.api_errors import ApiErrorCode, GatewayErrorCode
from wp_agent.service.openapi_clients import shape_for_clients

C = ApiErrorCode
ERROR_SCHEMA = {"$ref": "#/components/schemas/ApiErrorResponse"}
SECURITY_SCHEME = "sigv4"
_POWERTOOLS_ONLY = ("HTTPValidationError", "ValidationError", "ResponseValidationError")
_HEADER_NAMES = {"x-argo-user-id": "X-Argo-User-Id", "idempotency-key": "Idempotency-Key"}
_DESCRIPTIONS = {
    400: "invalid input",
    401: "no caller: X-Argo-User-Id is missing",
    403: "not allowed (IAM signature or policy, or an administrator route)",
    404: "not found (also another user's resource)",
    405: "the path exists with other methods",
    409: "conflict with the resource's state",
    413: "body too large",
    415: "body is not application/json",
    422: "valid, but cannot be carried out as sent",
    429: "too many requests",
    500: "internal error",
    502: "the function (or a service it calls) failed",
    503: "a service the request needs is unavailable; retry",
    504: "the function did not answer in time (API Gateway)",
}

Codes = dict[StrEnum, str]
# Any request: the server and API Gateway in front of it.
_EVERY_REQUEST: Codes = {
    C.INTERNAL_ERROR: "an unexpected error (nothing half-applied is kept)",
    C.CONFIGURATION_ERROR: "the deployment is misconfigured",
    C.VALIDATION_ERROR: "a parameter or the body breaks the schema (fields names them)",
    GatewayErrorCode.MISSING_AUTHENTICATION_TOKEN: "unsigned request (API Gateway)",
    GatewayErrorCode.INVALID_SIGNATURE: "bad SigV4 signature (API Gateway)",
    GatewayErrorCode.EXPIRED_TOKEN: "expired credentials (API Gateway)",
    GatewayErrorCode.ACCESS_DENIED: "the principal may not invoke the API (API Gateway)",
    GatewayErrorCode.GATEWAY_REFUSED: "refused by API Gateway before the function ran",
    GatewayErrorCode.THROTTLED: "over the stage's rate limit (API Gateway)",
    GatewayErrorCode.GATEWAY_ERROR: "the function failed before it answered (API Gateway)",
    GatewayErrorCode.GATEWAY_TIMEOUT: "the function did not answer in time (API Gateway)",
    GatewayErrorCode.INTEGRATION_FAILURE: "the function could not be invoked (API Gateway)",
}
_WITH_BODY: Codes = {
    C.BODY_TOO_LARGE: "the body is over 1 MiB",
    C.BODY_TOO_DEEP: "the body nests deeper than 32 levels (free-form history content blocks)",
    C.UNSUPPORTED_MEDIA_TYPE: "the body is not application/json (UTF-8)",
}
_WITH_USER: Codes = {
    C.USER_ID_REQUIRED: "X-Argo-User-Id is missing (administrator principals may leave it out where optional)",
    C.INVALID_USER_ID: "X-Argo-User-Id breaks its pattern",
}
_WITH_KEY: Codes = {
    C.INVALID_IDEMPOTENCY_KEY: "Idempotency-Key breaks its pattern",
    C.IDEMPOTENCY_KEY_REUSED: "the Idempotency-Key was used before with another body",
    C.REQUEST_IN_PROGRESS: "the first request with this Idempotency-Key is still running",
}
_WITH_PATH: Codes = {
    C.METHOD_NOT_ALLOWED: "the path is served with other methods",
    C.ROUTE_NOT_FOUND: "a path parameter makes the URL one the API does not serve (e.g. an encoded /)",
}
_WITH_SESSION: Codes = {
    C.INVALID_SESSION_ID: "sessionId breaks its pattern",
    C.SESSION_NOT_FOUND: "no such session (or another user's)",
}
_MULTISITE: Codes = {
    C.NOT_MULTISITE: "multisite options (or siteUrl) for a target that is not a multisite",
    C.NETWORK_ADMIN_REQUIRED: "networkWide by a user who is not one of the target's network admins",
}
_RUN_START: Codes = {
    C.TARGET_NOT_FOUND: "no such target, or the caller does not own it",
    C.SESSION_BUSY: "the session has a run going",
    C.WORKFLOW_UNAVAILABLE: "the run could not be started; send again",
    **_MULTISITE,
}
_TARGET: Codes = {
    C.TARGET_NOT_FOUND: "no such target (or deleted), or the caller neither owns nor administers it"
}
_OWNERS_ONLY: Codes = {C.OWNER_REQUIRED: "the caller is a member of the target, not an owner"}
_PAGED: Codes = {C.INVALID_CURSOR: "the cursor is not a nextCursor of this same listing"}

# Each operation's own refusals: rules of stored state, the clock or another service.
OPERATION_CODES: dict[str, Codes] = {
    "postMessage": {
        C.TARGET_REQUIRED: "the session's first message has no targetId",
        C.TARGET_MISMATCH: "targetId differs from the session's target",
        **_RUN_START,
    },
    "getSession": {},
    "decideApproval": {
        C.APPROVAL_NOT_FOUND: "no such approval in the session",
        C.APPROVAL_ALREADY_DECIDED: "the approval was decided before (another decision)",
        C.RUN_ENDED: "the run this approval belonged to has ended",
        C.APPROVAL_EXPIRED: "the approval's time ran out",
        C.SESSION_CHANGED: "the session kept changing while the decision was stored; send again",
        C.WORKFLOW_UNAVAILABLE: "the decision is stored but did not reach the run; send the same again",
    },
    "cancelRun": {
        C.RUN_NOT_ACTIVE: "the session has no run going",
        C.SESSION_CHANGED: "the session kept changing while the cancel was stored; send again",
    },
    "undoRun": {
        C.RUN_NOT_FOUND: "the session has no run with this id (or the caller is not its requester)",
        C.NOTHING_TO_UNDO: "no command of the run changed something that can be undone",
        **_RUN_START,
    },
    "listSessions": dict(_PAGED),
    "getRun": {C.RUN_NOT_FOUND: "the session has no run with this id"},
    "registerTarget": {
        C.ADMIN_REQUIRED: "the caller is not an administrator principal",
        C.TARGET_EXISTS: "a target with this id exists",
        C.SECRET_OUTSIDE_PREFIX: "secretArn names a secret outside the deployment's target prefix",
    },
    "listTargets": {},
    "getTarget": dict(_TARGET),
    "updateTarget": {
        **_TARGET,
        **_OWNERS_ONLY,
        C.TARGET_CHANGED: "the target changed meanwhile; read it and send again",
        C.INVALID_SSH_KEY: "sshKey.privateKey cannot be read (format or passphrase)",
        C.INVALID_HOST_KEY: "hostKey is not an SSH public key",
        C.SECRET_UNAVAILABLE: "the target's secret could not be read or written; send again",
    },
    "deleteTarget": {
        **_TARGET,
        **_OWNERS_ONLY,
        C.TARGET_CHANGED: "the target changed meanwhile; send again",
        C.SECRET_UNAVAILABLE: "the target is removed but its secret's deletion is not scheduled yet; send again",
    },
    "checkTarget": {**_TARGET, **_OWNERS_ONLY},
    "listTargetMembers": {
        **_TARGET,
        C.MEMBER_ADMIN_REQUIRED: "the caller is a viewer or editor of the target",
    },
    "putTargetMember": {
        **_TARGET,
        C.MEMBER_ADMIN_REQUIRED: "the caller is a viewer or editor of the target",
        C.MEMBER_IS_OWNER: "the user is an owner (always admin; change owners with updateTarget)",
        C.TARGET_CHANGED: "the target kept changing meanwhile; send again",
    },
    "deleteTargetMember": {
        **_TARGET,
        C.MEMBER_ADMIN_REQUIRED: "the caller is a viewer or editor of the target",
        C.MEMBER_IS_OWNER: "the user is an owner (change owners with updateTarget)",
        C.TARGET_CHANGED: "the target kept changing meanwhile; send again",
    },
    "getTargetActivity": {
        **_TARGET,
        **_OWNERS_ONLY,
        **_PAGED,
        C.INVALID_TIME_RANGE: "`from` is not before `to`",
    },
    "publishArticle": {
        C.TARGET_NOT_FOUND: "no such target, or the caller is neither an owner nor a member of it",
        C.EDITOR_REQUIRED: "the caller is a viewer of the target (articles are content: editors and admins)",
        C.NOT_MULTISITE: "siteUrl for a target that is not a multisite",
        C.ARTICLE_TOO_LARGE: "the article is too large to keep for its publish job (over ~350 KB)",
        C.WORKFLOW_UNAVAILABLE: "the job could not be started; send again",
    },
    "getArticle": {C.ARTICLE_NOT_FOUND: "no such publish job (or another user's)"},
    "startFleetRun": {
        C.TARGET_NOT_FOUND: "a named target does not exist, or the caller is neither an owner nor a member of it",
        C.FLEET_NO_TARGETS: "no target the caller may use has the tag",
        C.WORKFLOW_UNAVAILABLE: "the fleet run could not be started; send again",
    },
    "getFleetRun": {C.FLEET_RUN_NOT_FOUND: "no such fleet run (or another user's)"},
    "decideFleetRun": {
        C.FLEET_RUN_NOT_FOUND: "no such fleet run (or another user's)",
        C.FLEET_NOT_AWAITING_APPROVAL: "the plan is not waiting for a decision (decided, still planning, or ended)",
        C.SESSION_CHANGED: "the fleet run kept changing while the decision was stored; send again",
    },
    "createSchedule": {
        C.TARGET_NOT_FOUND: "no such target, or the caller does not own it",
        C.INVALID_SCHEDULE_EXPRESSION: (
            "the expression has cron field values EventBridge does not take, fires more often than "
            "every 15 minutes, or never fires again (a past at() or year)"
        ),
        C.INVALID_TIMEZONE: "the time zone is not an IANA zone",
        C.AGENT_INPUT_TOO_LARGE: "agentInput is over the 8 KB a scheduled run can carry",
        C.SCHEDULE_REJECTED: "EventBridge Scheduler refused the schedule",
        C.SCHEDULE_LIMIT_REACHED: "the owner has the most schedules allowed",
        C.SCHEDULE_STORE_UNAVAILABLE: "the schedule could not be stored; send again",
        C.SCHEDULER_UNAVAILABLE: "EventBridge Scheduler could not be reached; send again",
        **_MULTISITE,
    },
    "proposeSchedule": {
        C.TARGET_NOT_FOUND: "no such target, or the caller does not own it",
        C.INVALID_TIMEZONE: "the time zone is not an IANA zone",
        C.PROPOSAL_FAILED: "the model gave no valid schedule for the text after its corrections",
        C.MODEL_RATE_LIMITED: "the model's rate limit was reached; retry later",
        C.MODEL_ERROR: "the model could not be called; retry later",
    },
    "listSchedules": {C.SCHEDULE_STORE_UNAVAILABLE: "the schedules could not be read; retry"},
    "getSchedule": {C.SCHEDULE_NOT_FOUND: "no such schedule (or another user's)"},
    "deleteSchedule": {
        C.SCHEDULE_NOT_FOUND: "no such schedule (or another user's)",
        C.SCHEDULE_STORE_UNAVAILABLE: "the schedule could not be removed from the store; send again",
        C.SCHEDULER_UNAVAILABLE: "EventBridge Scheduler could not be reached; send again",
    },
    "getOpenApiDocument": {},
}

# Response fields whose values come from an enum of the core (schema, property) -> the enum.
_ENUMS: dict[tuple[str, str], Iterable[str]] = {
    ("ApiErrorBody", "code"): [*ApiErrorCode, *GatewayErrorCode],
    ("SessionView", "status"): list(SessionStatus),
    ("RunAccepted", "status"): list(SessionStatus),
    ("ApprovalDecided", "status"): list(SessionStatus),
    ("SessionSummary", "status"): list(SessionStatus),
    ("ActivityRecord", "type"): list(AuditEventType),
}


def finish(generated: dict[str, Any]) -> dict[str, Any]:
    document = copy.deepcopy(generated)
    document["info"]["description"] = (
        "The Argo Note WP-CLI Agent. Every request is signed with SigV4 (service execute-api) by an "
        "allowed IAM principal and names the requester in X-Argo-User-Id. `wp-agent api serve` serves "
        "the same API on 127.0.0.1 without signatures."
    )
    document["paths"] = {_camel_path(path): operations for path, operations in document["paths"].items()}
    for operations in document["paths"].values():
        for method, operation in operations.items():
            _finish_operation(method, operation)
    components = document.setdefault("components", {})
    components["securitySchemes"] = {
        SECURITY_SCHEME: {
            "type": "apiKey",
            "name": "Authorization",
            "in": "header",
            "description": "AWS Signature Version 4 (service execute-api) of an allowed IAM principal",
            "x-amazon-apigateway-authtype": "awsSigv4",
        }
    }
    schemas = components.setdefault("schemas", {})
    for name in _POWERTOOLS_ONLY:
        schemas.pop(name, None)
    error_schema = ApiErrorResponse.model_json_schema(
        by_alias=True, ref_template="#/components/schemas/{model}"
    )
    schemas.update(error_schema.pop("$defs", {}))
    schemas["ApiErrorResponse"] = error_schema
    for (schema, field), values in _ENUMS.items():
        if schema in schemas:
            schemas[schema]["properties"][field] = {"type": "string", "enum": sorted(str(v) for v in values)}
    shape_for_clients(document)
    components["schemas"] = dict(sorted(schemas.items()))
    document["components"] = dict(sorted(components.items()))
    return document


def operation_codes(method: str, operation: dict[str, Any]) -> Codes:
    """Every code the operation can answer with, and when."""
    codes: Codes = dict(_EVERY_REQUEST)
    names = {p.get("name", "").lower() for p in operation.get("parameters", [])}
    places = {p.get("in") for p in operation.get("parameters", [])}
    if "requestBody" in operation or method.upper() in ("POST", "PUT", "PATCH"):
        codes |= _WITH_BODY  # a body sent where none is taken is still checked (api_requests.py)
    if "x-argo-user-id" in names:
        codes |= _WITH_USER
    if "idempotency-key" in names:
        codes |= _WITH_KEY
    if "path" in places:
        codes |= _WITH_PATH
    if "sessionid" in names or "session_id" in names:
        codes |= _WITH_SESSION
    return codes | OPERATION_CODES[operation["operationId"]]


def _finish_operation(method: str, operation: dict[str, Any]) -> None:
    operation["security"] = [{SECURITY_SCHEME: []}]
    codes = operation_codes(method, operation)
    for parameter in operation.get("parameters", []):
        parameter["name"] = document_name(parameter["in"], parameter["name"])
    responses: dict[str, Any] = operation.setdefault("responses", {})
    responses.pop("422", None)
    by_status: dict[int, dict[str, str]] = {}
    for code, when in codes.items():
        by_status.setdefault(_status(code), {})[code.value] = when
    for status in sorted(by_status):
        responses[str(status)] = {
            "description": _DESCRIPTIONS[status],
            "content": {"application/json": {"schema": ERROR_SCHEMA}},
            "x-error-codes": dict(sorted(by_status[status].items())),
        }


_GATEWAY_STATUS = {
    GatewayErrorCode.MISSING_AUTHENTICATION_TOKEN: 403,
    GatewayErrorCode.INVALID_SIGNATURE: 403,
    GatewayErrorCode.EXPIRED_TOKEN: 403,
    GatewayErrorCode.ACCESS_DENIED: 403,
    GatewayErrorCode.GATEWAY_REFUSED: 400,
    GatewayErrorCode.THROTTLED: 429,
    GatewayErrorCode.GATEWAY_ERROR: 502,
    GatewayErrorCode.GATEWAY_TIMEOUT: 504,
    GatewayErrorCode.INTEGRATION_FAILURE: 504,
}


def _status(code: StrEnum) -> int:
    return code.status if isinstance(code, ApiErrorCode) else _GATEWAY_STATUS[GatewayErrorCode(code)]


def gateway_status(code: GatewayErrorCode) -> int:
    """The status API Gateway answers a gateway-only code with (infra/api_construct.py uses it)."""
    return _GATEWAY_STATUS[code]


def document_name(location: str, name: str) -> str:
    """A parameter's name as the document (and every error that names it) spells it: path parameters
    in camelCase, headers in their usual capitals."""
    if location == "path":
        return _camel(name)
    if location == "header":
        return _HEADER_NAMES.get(name.lower(), name)
    return name


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


def _camel_path(path: str) -> str:
    return re.sub(r"\{([a-z_]+)\}", lambda m: "{" + _camel(m.group(1)) + "}", path)


# Codes that say a request broke the published schema: never a refusal of a schema-valid request.
SCHEMA_CODES = frozenset(
    {
        C.VALIDATION_ERROR,
        C.INVALID_USER_ID,
        C.INVALID_IDEMPOTENCY_KEY,
        C.INVALID_SESSION_ID,
        C.INVALID_TIMEZONE,
    }
)


def documented_refusals(operation: dict[str, Any], status: int) -> dict[str, str]:
    """The codes the operation documents for `status` that a request following the schema can
    still get (rules of stored state, the clock or another service, or that JSON Schema cannot state)."""
    listed: dict[str, str] = operation.get("responses", {}).get(str(status), {}).get("x-error-codes", {})
    return {code: when for code, when in listed.items() if code not in SCHEMA_CODES}


def allowed_methods(document: dict[str, Any], path: str) -> list[str]:
    """The methods the document declares for the path (empty when no path matches)."""
    for template, operations in document["paths"].items():
        pattern = "".join(
            "[^/]+" if part.startswith("{") else re.escape(part)
            for part in re.split(r"(\{[^/]+\})", template)
        )
        if re.fullmatch(pattern, path):
            return sorted(method.upper() for method in operations)
    return []
