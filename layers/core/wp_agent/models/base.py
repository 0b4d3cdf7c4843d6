"""Base model that reads and writes the spec's camelCase JSON."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, BeforeValidator, ConfigDict
from pydantic.alias_generators import to_camel


class CamelModel(BaseModel):
    """Accepts camelCase (and snake_case in Python); serialises camelCase without unset optionals."""

    model_config = ConfigDict(
        alias_generator=to_camel,
        populate_by_name=True,
        extra="forbid",
        str_strip_whitespace=False,
        defer_build=True,
    )

    def to_json_dict(self) -> dict[str, Any]:
        return self.model_dump(mode="json", by_alias=True, exclude_none=True)

    def to_json(self) -> str:
        return self.model_dump_json(by_alias=True, exclude_none=True)


class RequestModel(CamelModel):
    """A body (or part of one) that callers send: JSON types only, never coerced (`true` is not 1,
    "yes" is not true). Stored copies that come back with other types (DynamoDB numbers are
    Decimal) are read with `model_validate(..., strict=False)`."""

    model_config = CamelModel.model_config | {"strict": True}


def _whole_number(value: Any) -> Any:
    # JSON has one number type: 405.0 is the integer 405 (as JSON Schema's "integer" counts it).
    # Only that: 405.5, "405" and true stay refused by the strict int.
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


WHOLE_NUMBER = BeforeValidator(_whole_number)
"""For an int in a request body, after its constraints (so the schema keeps them):
`Annotated[int, Field(ge=1), WHOLE_NUMBER]`."""
