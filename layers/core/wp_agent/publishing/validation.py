"""Japanese, field-named messages for PublishArticleInput validation errors."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError
from pydantic.alias_generators import to_camel
from pydantic_core import ErrorDetails

from wp_agent.models import field_rules
from wp_agent.models.article import PublishArticleError, PublishArticleOutput
from wp_agent.publishing.outcome import PublishErrorCode

# Our own validators' messages (models/article.py), by leading text.
_VALUE_ERRORS_JA: tuple[tuple[str, str], ...] = (
    ("publishDate is required", "status が future のときは必須です"),
)


@dataclass(frozen=True)
class InputProblem:
    """One field of the input and what is wrong with it (Japanese)."""

    field: str
    reason_ja: str


def _location(loc: Sequence[int | str]) -> str:
    """The field as the input names it: `title`, `tags[1]`, `meta["description"]`. The input is flat,
    so only the first part is a field (defaults validated without input come by the Python name);
    later strings are meta keys, and a bad key itself is reported on `meta`."""
    if "[key]" in loc:
        loc = loc[: loc.index("[key]") - 1]
    text = ""
    for part in loc:
        if isinstance(part, int):
            text += f"[{part}]"
        else:
            text += json.dumps(part, ensure_ascii=False).join("[]") if text else to_camel(part)
    return text


def _type_reason(error: ErrorDetails) -> str:
    context: dict[str, Any] = dict(error.get("ctx") or {})
    kind = error["type"]
    simple = {
        "missing": "必須項目です",
        "string_type": "文字列で指定してください",
        "string_too_short": "空にできません",
        "list_type": "配列で指定してください",
        "dict_type": "オブジェクトで指定してください",
        "extra_forbidden": "定義されていない項目です",
        "model_type": "JSONオブジェクトで指定してください",
        "model_attributes_type": "JSONオブジェクトで指定してください",
    }
    if kind in simple:
        return simple[kind]
    if kind == "string_pattern_mismatch":
        return field_rules.REASONS_JA.get(str(context.get("pattern")), str(error["msg"]))
    if kind == "string_too_long":
        return f"長すぎます（最大{context.get('max_length')}文字）"
    if kind == "too_long":
        return f"多すぎます（最大{context.get('max_length')}件）"
    if kind == "literal_error":
        return f"{context.get('expected', '')} のいずれかを指定してください"
    return str(error["msg"])


def _reason(error: ErrorDetails) -> str:
    if error["type"] != "value_error":
        return _type_reason(error)
    cause = str((error.get("ctx") or {}).get("error", error["msg"]))
    for prefix, reason in _VALUE_ERRORS_JA:
        if cause.startswith(prefix):
            return reason
    return cause


def input_problems(exc: ValidationError) -> list[InputProblem]:
    problems: list[InputProblem] = []
    for error in exc.errors():
        field = _location(error["loc"])
        problems.append(InputProblem(field or "(入力全体)", _reason(error)))
    return problems


def describe_problems_ja(problems: Sequence[InputProblem]) -> str:
    listed = "、".join(f"{p.field}（{p.reason_ja}）" for p in problems)
    return f"入力内容に誤りがあります: {listed}"


def validation_output(problems: Sequence[InputProblem]) -> PublishArticleOutput:
    """VALIDATION_ERROR naming every field; nothing has been sent to WordPress."""
    message = describe_problems_ja(problems) + "。サイトには何も作成していません。"
    return PublishArticleOutput(
        success=False,
        error=PublishArticleError(code=PublishErrorCode.VALIDATION_ERROR.value, message=message),
    )
