"""A model's tool definition generated from the pydantic model that validates the tool's input, so the
schema the model is shown and the checks its answer meets cannot drift apart."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel


def anthropic_tool(
    name: str, description: str, model: type[BaseModel], *, closed: bool = False
) -> dict[str, Any]:
    """The Messages API tool `name` whose `input_schema` is `model`'s JSON Schema: every field is
    required of the model (a default only forgives an omission), titles and defaults are left out, and
    `closed` forbids properties the model does not declare."""
    schema = model.model_json_schema()
    properties = {
        field: {key: value for key, value in spec.items() if key not in {"title", "default"}}
        for field, spec in schema["properties"].items()
    }
    input_schema: dict[str, Any] = {"type": "object", "properties": properties, "required": list(properties)}
    if closed:
        input_schema["additionalProperties"] = False
    return {"name": name, "description": description, "input_schema": input_schema}
