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

from wp_agent.agent.site_reads import StateReader, not_read_yet
from wp_agent.command_line.parsed_command import ParsedCommand
from wp_agent.masking import folded
from wp_agent.policy import PolicyCategory, PolicyDecision

SPELLING_RULE = "blocked.meta_key_spelling"
_WRITES = frozenset({"add", "update", "delete", "patch"})


def guard_meta_spelling(decision: PolicyDecision, read: StateReader) -> PolicyDecision:
    """`decision`, or a refusal when a meta key it writes is another spelling of a key the object has.
    Reads not made yet leave the decision as it is (the turn reads and decides again)."""
    if decision.blocked:
        return decision
    cmd = ParsedCommand.from_argv(decision.argv)
    for obj, object_id, key in _written_keys(cmd, decision.command_path):
        argv = [obj, "meta", "list", object_id, "--fields=meta_key", "--format=json", *cmd.url_tokens()]
        answer = read(argv)
        if not_read_yet(read, argv) or answer is None:
            continue  # (a write to an object that cannot be listed fails as WP-CLI says)
        try:
            kept = {str(row["meta_key"]) for row in json.loads(answer or "[]")}
        except (ValueError, TypeError, KeyError):
            continue
        same = sorted(k for k in kept if k != key and folded(k) == folded(key))
        if same:
            return _refused(decision, key, same[0])
    return decision


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
