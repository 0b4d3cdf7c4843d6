"""SessionStore on DynamoDB, laid out so no item nears the 400 KB limit and no write can corrupt.

pk = SESSION#<id>:
  STATE                     version, status, ids; `refs` = where each part of the state lives;
                            the listing attributes of the sessions_by_user(_target) indexes
  BLOB#<name>#<write>#<n>   one part of a compressed value: the core (everything small and large
                            except messages/commands/result), a message, a command record (with its
                            full output, up to 10 MB) or the result; split into ≤300 KB parts

Blobs are written under a fresh write id and never overwritten; only the conditional STATE put (on
the version that was loaded) makes them current. A crash midway, or a stale writer, leaves only
unreferenced blobs: the state a reader sees is always one that a single writer saved completely.
Saves are incremental (only values whose content changed get a new blob); a kept blob that would
expire before the session record is written again. Loads read only the blobs STATE refers to.
"""

from __future__ import annotations

import hashlib
import json
import logging
import threading
import time
import uuid
import zlib
from typing import Any

from wp_agent import clock
from wp_agent.adapters.aws.clients import resource
from wp_agent.adapters.aws.paging import Page, query_page
from wp_agent.adapters.aws.table_layout import (
    PARTITION_KEY,
    SESSIONS_BY_USER,
    SESSIONS_BY_USER_TARGET,
    SORT_KEY,
)
from wp_agent.agent.session_state import SessionState
from wp_agent.errors import SessionDataMissingError, SessionReadThrottledError, StaleSessionError
from wp_agent.masking import mask_text

logger = logging.getLogger(__name__)

PART_BYTES = 300_000
TITLE_CHARS = 200
STATE_SK = "STATE"
_DAY = 86_400
BATCH_GET_KEYS = 100  # DynamoDB's limit per BatchGetItem
_UNPROCESSED_ATTEMPTS = 8

Ref = tuple[str, int, str, int]  # (write id, number of parts, content digest, blob expiry)


def _pk(session_id: str) -> str:
    return f"SESSION#{session_id}"


def _encode(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True).encode("utf-8")


def _blob_sk(name: str, write_id: str, part: int) -> str:
    return f"BLOB#{name}#{write_id}#{part:03d}"


def _digest(raw: bytes) -> str:
    return hashlib.sha256(raw).hexdigest()[:32]


class DynamoSessionStore:
    def __init__(self, table_name: str, *, ttl_days: int = 90) -> None:
        self._table_name = table_name
        self._ttl_seconds = ttl_days * 86_400
        # The refs this process last saw per session, so unchanged values are not written again.
        self._known: dict[str, dict[str, Ref]] = {}
        self._lock = threading.Lock()

    @property
    def _table(self) -> Any:
        return resource("dynamodb").Table(self._table_name)

    # -- load -----------------------------------------------------------------------------------

    def load(self, session_id: str) -> SessionState | None:
        pk = _pk(session_id)
        state_item = self._table.get_item(Key={"pk": pk, "sk": STATE_SK}, ConsistentRead=True).get("Item")
        if state_item is None:
            return None
        refs: dict[str, Ref] = {
            k: (v[0], int(v[1]), v[2], int(v[3]))
            for k, v in json.loads(zlib.decompress(bytes(state_item["refs"]))).items()
        }
        blobs = self._read_blobs(
            pk, [_blob_sk(name, ref[0], n) for name, ref in refs.items() for n in range(ref[1])]
        )
        values = {name: self._assemble(session_id, name, ref, blobs) for name, ref in refs.items()}
        core = values.pop("core")
        messages = [values[f"msg:{i:06d}"] for i in range(int(state_item["message_count"]))]
        commands = [values[f"cmd:{tool_use_id}"] for tool_use_id in core.pop("command_order")]
        core.update(
            messages=messages,
            commands=commands,
            result=values.get("result"),
            version=int(state_item["version"]),
        )
        state = SessionState.model_validate(core)
        with self._lock:
            self._known[session_id] = refs
        return state

    def _read_blobs(self, pk: str, sort_keys: list[str]) -> dict[str, bytes]:
        """The named blobs only: superseded ones stay until their TTL and must not slow loads."""
        dynamodb = resource("dynamodb")
        blobs: dict[str, bytes] = {}
        for start in range(0, len(sort_keys), BATCH_GET_KEYS):
            request: dict[str, Any] = {
                self._table_name: {
                    "Keys": [{"pk": pk, "sk": sk} for sk in sort_keys[start : start + BATCH_GET_KEYS]],
                    "ConsistentRead": True,
                }
            }
            for attempt in range(_UNPROCESSED_ATTEMPTS):
                response = dynamodb.batch_get_item(RequestItems=request)
                blobs.update(
                    {
                        item["sk"]: bytes(item["body"])
                        for item in response["Responses"].get(self._table_name, [])
                    }
                )
                request = response.get("UnprocessedKeys") or {}
                if not request:
                    break
                time.sleep(0.05 * 2**attempt)  # throttled: DynamoDB asks to retry the rest
            else:
                raise SessionReadThrottledError()
        return blobs

    @staticmethod
    def _assemble(session_id: str, name: str, ref: Ref, blobs: dict[str, bytes]) -> Any:
        write_id, parts, _, _ = ref
        try:
            raw = b"".join(blobs[_blob_sk(name, write_id, n)] for n in range(parts))
        except KeyError:
            raise SessionDataMissingError(session_id, name) from None
        return json.loads(zlib.decompress(raw))

    # -- save -----------------------------------------------------------------------------------

    def save(self, state: SessionState) -> None:
        pk = _pk(state.session_id)
        with self._lock:
            known = dict(self._known.get(state.session_id, {}))
        values: dict[str, Any] = {f"msg:{index:06d}": message for index, message in enumerate(state.messages)}
        values.update(
            {f"cmd:{record.tool_use_id}": record.model_dump(mode="json") for record in state.commands}
        )
        if state.result is not None:
            values["result"] = state.result.model_dump(mode="json")
        core = state.model_dump(mode="json", exclude={"messages", "commands", "result", "version"})
        core["command_order"] = [record.tool_use_id for record in state.commands]
        values["core"] = core

        write_id = uuid.uuid4().hex[:12]
        now = clock.epoch_seconds()
        # Blobs live twice the session's rolling TTL; superseded and orphaned ones go with it. A kept
        # blob must outlive the STATE this save extends, so one past half its life is written anew.
        blob_expiry = now + 2 * self._ttl_seconds + _DAY
        keep_if_expiring_after = now + self._ttl_seconds + _DAY
        refs: dict[str, Ref] = {}
        puts: list[dict[str, Any]] = []
        for name, value in values.items():
            raw = _encode(value)
            digest = _digest(raw)
            previous = known.get(name)
            if previous is not None and previous[2] == digest and previous[3] > keep_if_expiring_after:
                refs[name] = previous  # unchanged: keep pointing at the blob already stored
                continue
            packed = zlib.compress(raw, 6)
            parts = [packed[i : i + PART_BYTES] for i in range(0, len(packed), PART_BYTES)] or [b""]
            refs[name] = (write_id, len(parts), digest, blob_expiry)
            puts.extend(
                {"pk": pk, "sk": _blob_sk(name, write_id, n), "body": part, "expires_at": blob_expiry}
                for n, part in enumerate(parts)
            )
        with self._table.batch_writer() as batch:
            for item in puts:
                batch.put_item(Item=item)
        self._put_state(state, refs, write_id)
        with self._lock:
            self._known[state.session_id] = refs

    def _put_state(self, state: SessionState, refs: dict[str, Ref], write_id: str) -> None:
        from botocore.exceptions import ClientError

        now = clock.epoch_seconds()  # one reading: the record's expiry counts from its update
        item: dict[str, Any] = {
            "pk": _pk(state.session_id),
            "sk": STATE_SK,
            "refs": zlib.compress(_encode(refs), 6),
            "version": state.version + 1,
            "status": state.status.value,
            "user_id": state.user_id,
            "target_id": state.target_id,
            "run_id": state.run_id,
            "message_count": len(state.messages),
            "write_id": write_id,
            "updated_at": now,
            "expires_at": now + self._ttl_seconds,
        }
        item.update(_listing(state))
        if state.pending_approval is not None:
            item["approval_id"] = state.pending_approval.approval_id
        condition = "attribute_not_exists(pk)" if state.version == 0 else "version = :expected"
        kwargs: dict[str, Any] = {"Item": item, "ConditionExpression": condition}
        if state.version:
            kwargs["ExpressionAttributeValues"] = {":expected": state.version}
        try:
            self._table.put_item(**kwargs)
        except Exception as exc:
            # The SDK retries a put whose answer was lost: the retry then fails the version check
            # (or the retries run out) although the first attempt landed.
            if self._landed(state.session_id, write_id):
                state.version += 1
                return
            if (
                isinstance(exc, ClientError)
                and exc.response["Error"]["Code"] == "ConditionalCheckFailedException"
            ):
                with self._lock:
                    self._known.pop(state.session_id, None)  # our picture is stale; reload will refresh it
                raise StaleSessionError(state.session_id) from exc
            raise
        state.version += 1

    # -- listing --------------------------------------------------------------------------------

    def list_for_user(
        self,
        user_id: str,
        *,
        target_id: str | None = None,
        status: str | None = None,
        limit: int,
        start_key: dict[str, str] | None = None,
    ) -> Page:
        """A user's sessions, newest first, from an index (never a scan); items carry `pk` and the
        listing attributes."""
        from boto3.dynamodb.conditions import Attr, Key

        index = SESSIONS_BY_USER if target_id is None else SESSIONS_BY_USER_TARGET
        partition = user_id if target_id is None else _user_target(user_id, target_id)
        return query_page(
            self._table,
            index_name=index.name,
            key_condition=Key(index.partition_key).eq(partition),
            partition=(index.partition_key, partition),
            key_attributes=(PARTITION_KEY, SORT_KEY, *index.key_attributes()),
            filter_expression=None if status is None else Attr("status").eq(status),
            limit=limit,
            start_key=start_key,
        )

    def _landed(self, session_id: str, write_id: str) -> bool:
        """Whether the current STATE is this write's (False when that cannot be read either)."""
        from botocore.exceptions import BotoCoreError, ClientError

        try:
            item = self._table.get_item(
                Key={"pk": _pk(session_id), "sk": STATE_SK},
                ConsistentRead=True,
                ProjectionExpression="write_id",
            ).get("Item")
        except (BotoCoreError, ClientError):
            logger.warning("could not check whether a failed save landed", extra={"session_id": session_id})
            return False
        return item is not None and item.get("write_id") == write_id


def _user_target(user_id: str, target_id: str) -> str:
    return f"{user_id}#{target_id}"  # neither id can hold a '#'


def _listing(state: SessionState) -> dict[str, Any]:
    """What a session listing shows; the sort key orders sessions by creation, then id."""
    return {
        SESSIONS_BY_USER.partition_key: state.user_id,
        SESSIONS_BY_USER_TARGET.partition_key: _user_target(state.user_id, state.target_id),
        SESSIONS_BY_USER.sort_key: f"{state.started_at}#{state.session_id}",
        "title": mask_text(state.input.message)[:TITLE_CHARS],
        "started_at": state.started_at,
    }
