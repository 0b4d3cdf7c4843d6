"""Base model that reads and writes the spec's camelCase JSON."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict
from pydantic.alias_generators import to_camel


class CamelModel(BaseModel):
    """Accepts camelCase (and snake_case in Python); serialises camelCase without unset optionals."""

    model_config = ConfigDict(
        alias_generator=to_camel,
        populate_by_name=True,
        extra="forbid",
        str_strip_whitespace=False,
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
