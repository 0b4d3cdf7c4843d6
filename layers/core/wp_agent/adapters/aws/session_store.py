"""SessionStore on DynamoDB, laid out so no item nears the 400 KB limit.

pk = SESSION#<id>:
  STATE             version, status, ids, task token; `core` = compressed state without the parts below
  MSG#<n>#<part>    one conversation message, compressed, split into ≤300 KB parts
  CMD#<id>#<part>   one command record incl. its full output (≤10 MB), compressed and split
  RESULT#<part>     the final AgentOutput, compressed and split
Saves are incremental (only new messages, changed commands) and the STATE write is conditional
on the version that was loaded: one writer at a time; a stale writer fails instead of clobbering.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
import zlib
from typing import Any

from wp_agent.adapters.aws.clients import resource
from wp_agent.agent.session_state import CommandRecord, SessionState
from wp_agent.errors import AgentErrorCode, WpAgentError
from wp_agent.models.agent_io import AgentOutput

PART_BYTES = 300_000
STATE_SK = "STATE"


class StaleSessionError(WpAgentError):
    """Another writer changed the session since it was loaded (e.g. it was cancelled)."""

    def __init__(self, session_id: str) -> None:
        super().__init__(
            AgentErrorCode.UNKNOWN_ERROR,
            "セッションが他の処理によって更新されました。",
            details={"reason": "stale_session", "sessionId": session_id},
        )


def _pk(session_id: str) -> str:
    return f"SESSION#{session_id}"


def _pack(value: Any) -> bytes:
    return zlib.compress(json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8"), 6)


def _unpack(blob: bytes) -> Any:
    return json.loads(zlib.decompress(blob).decode("utf-8"))


def _parts(blob: bytes) -> list[bytes]:
    return [blob[i : i + PART_BYTES] for i in range(0, len(blob), PART_BYTES)] or [b""]


class DynamoSessionStore:
    def __init__(self, table_name: str, *, ttl_days: int = 90) -> None:
        self._table_name = table_name
        self._ttl_seconds = ttl_days * 86_400
        # What this process last wrote/loaded per session, to save incrementally.
        self._written: dict[str, tuple[int, dict[str, str], str]] = {}
        self._lock = threading.Lock()

    @property
    def _table(self) -> Any:
        return resource("dynamodb").Table(self._table_name)

    # -- load -----------------------------------------------------------------------------------

    def load(self, session_id: str) -> SessionState | None:
        items = self._query(_pk(session_id))
        state_item = next((i for i in items if i["sk"] == STATE_SK), None)
        if state_item is None:
            return None
        core = _unpack(bytes(state_item["core"]))
        core["version"] = int(state_item["version"])
        message_count = int(state_item.get("message_count", 0))
        messages = self._group(items, "MSG#")
        commands = self._group(items, "CMD#")
        core["messages"] = [messages[f"{i:06d}"] for i in range(message_count)]
        order: list[str] = list(state_item.get("command_order", []))
        core["commands"] = [commands[c] for c in order if c in commands]
        result = self._group(items, "RESULT")
        core["result"] = result.get("", None)
        state = SessionState.model_validate(core)
        with self._lock:
            self._written[session_id] = (
                message_count,
                {r.tool_use_id: self._digest(r) for r in state.commands},
                self._result_digest(state.result),
            )
        return state

    def _query(self, pk: str) -> list[dict[str, Any]]:
        from boto3.dynamodb.conditions import Key

        items: list[dict[str, Any]] = []
        kwargs: dict[str, Any] = {"KeyConditionExpression": Key("pk").eq(pk), "ConsistentRead": True}
        while True:
            page = self._table.query(**kwargs)
            items.extend(page["Items"])
            if "LastEvaluatedKey" not in page:
                return items
            kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]

    @staticmethod
    def _group(items: list[dict[str, Any]], prefix: str) -> dict[str, Any]:
        """Reassemble split values: sk = <prefix><key>#<part>; returns key -> decoded value."""
        chunks: dict[str, list[tuple[int, bytes]]] = {}
        for item in items:
            sk: str = item["sk"]
            if not sk.startswith(prefix):
                continue
            key, _, part = sk[len(prefix) :].rpartition("#")
            chunks.setdefault(key, []).append((int(part), bytes(item["body"])))
        decoded: dict[str, Any] = {}
        for key, parts in chunks.items():
            parts.sort()
            if len(parts) != int(
                next(i for i in items if i["sk"] == f"{prefix}{key}#000").get("parts", len(parts))
            ):
                continue  # a half-written value (crash mid-save); its next save rewrites it
            decoded[key] = _unpack(b"".join(p for _, p in parts))
        return decoded

    # -- save -----------------------------------------------------------------------------------

    @staticmethod
    def _digest(record: CommandRecord) -> str:
        return hashlib.sha256(record.model_dump_json().encode()).hexdigest()

    @staticmethod
    def _result_digest(result: AgentOutput | None) -> str:
        return hashlib.sha256(result.model_dump_json().encode()).hexdigest() if result else ""

    def save(self, state: SessionState) -> None:
        pk = _pk(state.session_id)
        with self._lock:
            written_messages, written_commands, written_result = self._written.get(
                state.session_id, (0, {}, "")
            )
        expires_at = int(time.time()) + self._ttl_seconds
        puts: list[dict[str, Any]] = []
        for index in range(min(written_messages, len(state.messages)), len(state.messages)):
            puts.extend(self._blob_items(pk, f"MSG#{index:06d}", state.messages[index], expires_at))
        digests: dict[str, str] = {}
        for record in state.commands:
            digest = self._digest(record)
            digests[record.tool_use_id] = digest
            if written_commands.get(record.tool_use_id) != digest:
                puts.extend(
                    self._blob_items(
                        pk, f"CMD#{record.tool_use_id}", record.model_dump(mode="json"), expires_at
                    )
                )
        result_digest = self._result_digest(state.result)
        if state.result is not None and result_digest != written_result:
            puts.extend(self._blob_items(pk, "RESULT", state.result.model_dump(mode="json"), expires_at))
        with self._table.batch_writer() as batch:
            for item in puts:
                batch.put_item(Item=item)
        self._put_state(state, expires_at)
        with self._lock:
            self._written[state.session_id] = (len(state.messages), digests, result_digest)

    @staticmethod
    def _blob_items(pk: str, key: str, value: Any, expires_at: int) -> list[dict[str, Any]]:
        parts = _parts(_pack(value))
        return [
            {"pk": pk, "sk": f"{key}#{n:03d}", "body": part, "parts": len(parts), "expires_at": expires_at}
            for n, part in enumerate(parts)
        ]

    def _put_state(self, state: SessionState, expires_at: int) -> None:
        from botocore.exceptions import ClientError

        core = state.model_dump(mode="json", exclude={"messages", "commands", "result", "version"})
        item: dict[str, Any] = {
            "pk": _pk(state.session_id),
            "sk": STATE_SK,
            "core": _pack(core),
            "version": state.version + 1,
            "status": state.status.value,
            "user_id": state.user_id,
            "target_id": state.target_id,
            "run_id": state.run_id,
            "message_count": len(state.messages),
            "command_order": [r.tool_use_id for r in state.commands],
            "updated_at": int(time.time()),
            "expires_at": expires_at,
        }
        if state.pending_approval is not None:
            item["approval_id"] = state.pending_approval.approval_id
        condition = "attribute_not_exists(pk)" if state.version == 0 else "version = :expected"
        kwargs: dict[str, Any] = {"Item": item, "ConditionExpression": condition}
        if state.version:
            kwargs["ExpressionAttributeValues"] = {":expected": state.version}
        try:
            self._table.put_item(**kwargs)
        except ClientError as exc:
            if exc.response["Error"]["Code"] == "ConditionalCheckFailedException":
                raise StaleSessionError(state.session_id) from exc
            raise
        state.version += 1
