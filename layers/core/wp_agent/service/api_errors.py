"""Errors the API returns: an HTTP status, a stable code and a Japanese message; never internals."""

from __future__ import annotations


class ApiError(Exception):
    def __init__(self, status: int, code: str, message_ja: str, *, fields: list[str] | None = None) -> None:
        self.status = status
        self.code = code
        self.message_ja = message_ja
        self.fields = fields
        super().__init__(f"{status} {code}")

    def body(self) -> dict[str, object]:
        error: dict[str, object] = {"code": self.code, "message": self.message_ja}
        if self.fields:
            error["fields"] = self.fields
        return {"error": error}


def not_found(what: str, code: str) -> ApiError:
    return ApiError(404, code, f"{what}が見つかりません。")
