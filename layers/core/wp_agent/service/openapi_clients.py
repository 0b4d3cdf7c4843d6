"""The OpenAPI document as a client generator with its default options reads it (openapi-typescript,
openapi-generator): the last pass of api_contract.finish.

- A request field with a `default` is optional to send, but generators read `default` as "always
  present" (openapi-typescript makes it required). In request schemas the default is said in the
  description instead; the server still fills it in.
- A response may gain fields in /v1 (additive changes), so response schemas do not forbid unknown
  properties (`additionalProperties: false` would make every added field a breaking change for a
  strict client). Request schemas (also where a response repeats one) keep refusing unknown fields:
  the server does (400 VALIDATION_ERROR).
- An optional parameter (header, query) is its type when sent, never `null`.
- A time stamp (a property named `…At`) is a `date-time`.
- An enum used in more than one place is one named schema, referenced.
- A stored answer given again for the same Idempotency-Key says so (`Idempotent-Replayed: true`).
- Every answer names its request (`X-Request-Id`).
"""

from __future__ import annotations

import copy
import json
from typing import Any

_REF = "#/components/schemas/"
REPLAYED_HEADER = "Idempotent-Replayed"
REQUEST_ID_HEADER = "X-Request-Id"
_REQUEST_ID = {
    "description": "this request's id (API Gateway's; the logs name it too)",
    "schema": {"type": "string"},
}
_REPLAYED = {
    "description": "`true` when this is the stored answer of an earlier request with the same Idempotency-Key",
    "schema": {"type": "string", "enum": ["true"]},
}


def shape_for_clients(document: dict[str, Any]) -> None:
    schemas: dict[str, Any] = document["components"]["schemas"]
    requests, responses = _reachable(document, "requestBody"), _reachable(document, "responses")
    for name in requests:
        _defaults_into_descriptions(schemas[name])
    for name in responses - requests:  # a schema a request uses too still refuses what it does
        schemas[name].pop("additionalProperties", None)
    for operations in document["paths"].values():
        for operation in operations.values():
            for parameter in operation.get("parameters", []):
                parameter["schema"] = _not_null(parameter["schema"])
            keyed = any(p["name"] == "Idempotency-Key" for p in operation.get("parameters", []))
            for status, response in operation.get("responses", {}).items():
                headers = response.setdefault("headers", {})
                headers[REQUEST_ID_HEADER] = _REQUEST_ID
                if keyed and status.startswith("2"):
                    headers[REPLAYED_HEADER] = _REPLAYED
    for schema in schemas.values():
        _time_stamps(schema)
    _shared_enums(schemas)


def _reachable(document: dict[str, Any], part: str) -> set[str]:
    """The schemas an operation's request body (or its responses) refers to, directly or not."""
    schemas = document["components"]["schemas"]
    todo = [
        ref for ops in document["paths"].values() for op in ops.values() for ref in _refs(op.get(part, {}))
    ]
    seen: set[str] = set()
    while todo:
        name = todo.pop()
        if name not in seen and name in schemas:
            seen.add(name)
            todo.extend(_refs(schemas[name]))
    return seen


def _refs(node: Any) -> list[str]:
    if isinstance(node, dict):
        own = [node["$ref"].removeprefix(_REF)] if isinstance(node.get("$ref"), str) else []
        return own + [ref for value in node.values() for ref in _refs(value)]
    if isinstance(node, list):
        return [ref for value in node for ref in _refs(value)]
    return []


def _defaults_into_descriptions(schema: dict[str, Any]) -> None:
    for prop in schema.get("properties", {}).values():
        if "default" in prop:
            default = json.dumps(prop.pop("default"), ensure_ascii=False)
            said = prop.get("description", "").rstrip()
            prop["description"] = f"{said} (default: {default})".strip()


def _not_null(schema: dict[str, Any]) -> dict[str, Any]:
    options = schema.get("anyOf")
    if not isinstance(options, list):
        return schema
    kept = [option for option in options if option.get("type") != "null"]
    if len(kept) != 1:
        return schema
    return {**{k: v for k, v in schema.items() if k != "anyOf"}, **kept[0]}


def _time_stamps(node: Any) -> None:
    if isinstance(node, dict):
        for name, prop in node.get("properties", {}).items():
            if name.endswith("At"):
                for option in prop.get("anyOf", [prop]):
                    if option.get("type") == "string":
                        option["format"] = "date-time"
        for value in node.values():
            _time_stamps(value)
    elif isinstance(node, list):
        for value in node:
            _time_stamps(value)


def _shared_enums(schemas: dict[str, Any]) -> None:
    """Inline enums with the same values in two places or more become one schema (an existing named
    enum with those values, else a new one named after the property)."""
    named = {
        frozenset(s["enum"]): name for name, s in schemas.items() if "enum" in s and "properties" not in s
    }
    places: dict[frozenset[str], list[tuple[dict[str, Any], str]]] = {}
    for schema in schemas.values():
        for holder, prop_name in _inline_enums(schema):
            places.setdefault(frozenset(holder[prop_name]["enum"]), []).append((holder, prop_name))
    for values, found in places.items():
        if len(found) < 2 and values not in named:
            continue
        name = named.get(values)
        if name is None:
            first_holder, first_prop = found[0]
            name = _free_name(schemas, first_prop[:1].upper() + first_prop[1:])
            enum = copy.deepcopy(first_holder[first_prop])
            enum.pop("description", None)
            enum.pop("default", None)
            schemas[name] = enum
            named[values] = name
        for holder, prop_name in found:
            own = holder[prop_name]
            holder[prop_name] = {"$ref": _REF + name}
            if "description" in own:  # kept beside the reference (OpenAPI 3.1)
                holder[prop_name]["description"] = own["description"]


def _inline_enums(schema: dict[str, Any]) -> list[tuple[dict[str, Any], str]]:
    found: list[tuple[dict[str, Any], str]] = []
    properties = schema.get("properties", {})
    for name, prop in properties.items():
        if isinstance(prop, dict) and "enum" in prop:
            found.append((properties, name))
    for option in schema.get("anyOf", []):
        if isinstance(option, dict):
            found.extend(_inline_enums(option))
    return found


def _free_name(schemas: dict[str, Any], wanted: str) -> str:
    name, number = wanted, 2
    while name in schemas:
        name, number = f"{wanted}{number}", number + 1
    return name
