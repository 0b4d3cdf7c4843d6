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
    """`decision`, or a refusal when the meta key it writes is another spelling of a key the object has.
    Reads not made yet leave the decision as it is (the turn reads and decides again)."""
    path = decision.command_path
    if decision.blocked or len(path) != 3 or path[1] != "meta" or path[2] not in _WRITES:
        return decision
    cmd = ParsedCommand.from_argv(decision.argv)
    args = cmd.args_after(path)[1 if path[2] == "patch" else 0 :]  # (patch: after its action)
    if len(args) < 2:
        return decision
    object_id, key = args[0], args[1]
    argv = [path[0], "meta", "list", object_id, "--fields=meta_key", "--format=json", *cmd.url_tokens()]
    answer = read(argv)
    if not_read_yet(read, argv) or answer is None:
        return decision  # (a write to an object that cannot be listed fails as WP-CLI says)
    try:
        kept = {str(row["meta_key"]) for row in json.loads(answer or "[]")}
    except (ValueError, TypeError, KeyError):
        return decision
    same = sorted(k for k in kept if k != key and folded(k) == folded(key))
    if not same:
        return decision
    return dataclasses.replace(
        decision,
        category=PolicyCategory.BLOCKED,
        rule=SPELLING_RULE,
        reason_ja=(
            f"メタキー「{key}」は、データベースが同じ名前とみなす既存の「{same[0]}」を変更します"
            f"（大文字・小文字などの違いは区別されません）。既存の名前「{same[0]}」で指定してください"
        ),
        pattern=key,
    )
