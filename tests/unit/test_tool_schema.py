"""The tools' schemas come from the models that check the model's answers (issue 39): what the model is
shown and what its answer must meet are one declaration."""

from __future__ import annotations

import jsonschema
import pytest
from pydantic import BaseModel, ValidationError

from wp_agent.agent.prompt import WP_CLI_TOOL, WpCliToolInput
from wp_agent.scheduling.proposal import PROPOSE_SCHEDULE_TOOL, _ProposedSchedule

TOOLS: list[tuple[dict[str, object], type[BaseModel]]] = [
    (WP_CLI_TOOL, WpCliToolInput),
    (PROPOSE_SCHEDULE_TOOL, _ProposedSchedule),
]


@pytest.mark.parametrize(("tool", "model"), TOOLS, ids=lambda t: getattr(t, "__name__", "tool"))
def test_every_field_of_the_model_is_in_the_schema_and_required(
    tool: dict[str, object], model: type[BaseModel]
) -> None:
    schema = tool["input_schema"]
    assert isinstance(schema, dict)
    jsonschema.Draft202012Validator.check_schema(schema)
    assert list(schema["properties"]) == list(model.model_fields) == schema["required"]
    assert all(spec.get("description") for spec in schema["properties"].values())


def test_a_value_the_schema_refuses_the_model_refuses_too() -> None:
    too_long = {"command": "x" * 200_001, "reason": "r"}
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(too_long, WP_CLI_TOOL["input_schema"])
    with pytest.raises(ValidationError):
        WpCliToolInput.model_validate(too_long)
