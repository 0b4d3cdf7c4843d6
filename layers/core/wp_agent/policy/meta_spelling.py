"""A meta key written in another case than the one the site keeps reaches that key: WordPress compares
meta keys under the database's `_ci` collation, so `post meta update 10 Views 99` rewrites `views`
(tried on the sandbox: 1520 → 99, and WP-CLI said "Updated custom field 'Views'"), `post meta delete 10
Views` deletes it. The approval would name a key that is not the one changed, and the undo's before-image
(read by exact name) would miss it. So before a meta write runs or waits for approval, the agent reads the
object's key names (names only, through the same policy-checked reads as the write's other site checks)
and refuses a key that the database takes for a differently spelled one already there, naming that one.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence

from wp_agent.command_line.parsed_command import ParsedCommand
from wp_agent.masking import folded
from wp_agent.policy import PolicyCategory, PolicyDecision
from wp_agent.policy.site_reads import Path, ReadsFirst, StateReader, not_read_yet

SPELLING_RULE = "blocked.meta_key_spelling"
_WRITES = frozenset({"add", "update", "delete", "patch"})


def _writes_meta(path: Path) -> bool:
    """`<object> meta add|update|delete|patch`, and `post update` (its --meta_input)."""
    return (len(path) == 3 and path[1] == "meta" and path[2] in _WRITES) or path == ("post", "update")


READS_FIRST = (
    ReadsFirst(
        "meta_spelling", "書き込むメタキーと同じとみなされる既存のキーの名前（名前だけ）", _writes_meta
    ),
)


def guard_meta_spelling(decision: PolicyDecision, read: StateReader) -> PolicyDecision:
    """`decision`, or a refusal when a meta key it writes is another spelling of a key the object has.
    Reads not made yet leave the decision as it is (the turn reads and decides again)."""
    if decision.blocked:
        return decision
    cmd = ParsedCommand.from_argv(decision.argv)
    for obj, object_id, key in _written_keys(cmd, decision.command_path):
        argv = key_names_read(obj, object_id, cmd.url_tokens())
        answer = read(argv)
        kept = None if not_read_yet(read, argv) else kept_names(answer)
        same = other_spellings(key, kept or set())  # (unlisted: the write fails as WP-CLI says)
        if same:
            return _refused(decision, key, same[0])
    return decision


def key_names_read(obj: str, object_id: str, scope: Sequence[str] = ()) -> list[str]:
    """The read of an object's meta key names (names only: no value, so no secret)."""
    return [obj, "meta", "list", object_id, "--fields=meta_key", "--format=json", *scope]


def kept_names(answer: str | None) -> set[str] | None:
    """The key names `key_names_read` answered (None: no answer, or not one WP-CLI gives)."""
    if answer is None:
        return None
    try:
        return {str(row["meta_key"]) for row in json.loads(answer or "[]")}
    except (ValueError, TypeError, KeyError):
        return None


def other_spellings(key: str, kept: set[str]) -> list[str]:
    """The kept keys the database takes for `key` though spelled otherwise (case, width, accents)."""
    return sorted(k for k in kept if k != key and folded(k) == folded(key))


def _written_keys(cmd: ParsedCommand, path: tuple[str, ...]) -> list[tuple[str, str, str]]:
    """(object, id, key) of each meta key the write names: `<object> meta add|update|delete|patch <id>
    <key>`, and the keys of `post update <id>… --meta_input=<json>` on each post."""
    if len(path) == 3 and path[1] == "meta" and path[2] in _WRITES:
        args = cmd.args_after(path)[1 if path[2] == "patch" else 0 :]  # (patch: after its action)
        return [(path[0], args[0], args[1])] if len(args) >= 2 else []
    if path == ("post", "update"):
        try:
            given = [json.loads(v) for v in cmd.option_values("meta_input")]
        except ValueError:
            return []  # (WP-CLI refuses what is not JSON)
        keys = [str(k) for value in given if isinstance(value, dict) for k in value]
        return [("post", post_id, key) for post_id in cmd.args_after(path) for key in keys]
    return []


def _refused(decision: PolicyDecision, key: str, kept: str) -> PolicyDecision:
    return dataclasses.replace(
        decision,
        category=PolicyCategory.BLOCKED,
        rule=SPELLING_RULE,
        reason_ja=(
            f"メタキー「{key}」は、データベースが同じ名前とみなす既存の「{kept}」を変更します"
            f"（大文字・小文字などの違いは区別されません）。既存の名前「{kept}」で指定してください"
        ),
        pattern=key,
    )
