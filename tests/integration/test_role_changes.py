"""The role changes that wait for approval do what their approval says, and nothing else, on the real site.

`role create` (no capability), `role delete` (a role WordPress did not create) and `cap remove` (not from
administrators) are held; what would grant a right is refused (policy/account_rules.py: wordpress_role_name,
cloned_role, wordpress_role_deletion, administrator_capabilities). Each held one is approved here exactly as decided (its argv runs), and the whole site is compared: only the
roles' definition (the `wp_user_roles` option of the site) changed, and as the text said.
"""

from __future__ import annotations

import json
from typing import Any

from tests.fakes.wordpress import TestWordPress
from wp_agent.policy import CommandPolicy
from wp_agent.policy.approval_summary import describe

POLICY = CommandPolicy()


def roles(site: TestWordPress) -> dict[str, Any]:
    done = site.wp("option", "get", "wp_user_roles", "--format=json")
    assert done.returncode == 0, done.stderr
    found: dict[str, Any] = json.loads(done.stdout)
    return found


def approve(site: TestWordPress, command: str) -> tuple[str, list[str]]:
    """The approval text of `command`, and the tables its approved run changed."""
    decision = POLICY.classify(command)
    assert decision.needs_approval, (command, decision.rule, decision.reason_ja)
    summary, impact = describe(decision)
    before = site.site.table_state()
    done = site.wp(*decision.argv)
    assert done.returncode == 0, done.stderr
    after = site.site.table_state()
    return summary + impact, sorted(t for t in {*before, *after} if before.get(t) != after.get(t))


def test_held_role_changes_change_only_what_they_say(fresh_wordpress: TestWordPress) -> None:
    site = fresh_wordpress
    text, changed = approve(site, "role create approver Approver")
    assert changed == ["wp_options"]
    assert "approver" in text
    assert "権限を1つも持たない" in text
    assert roles(site)["approver"] == {"name": "Approver", "capabilities": []}

    assert "upload_files" in roles(site)["author"]["capabilities"]
    text, changed = approve(site, "cap remove author upload_files")
    assert changed == ["wp_options"]
    assert "「author」から権限「upload_files」" in text
    author = roles(site)["author"]["capabilities"]
    assert "upload_files" not in author
    assert author.get("edit_posts") is True  # the rest of the role is as it was

    text, changed = approve(site, "role delete approver")
    assert changed == ["wp_options"]
    assert "「approver」を削除" in text
    assert "approver" not in roles(site)


def test_what_would_grant_a_right_is_refused(seeded_wordpress: TestWordPress) -> None:
    for command in (
        "role create shopadmin Shop --clone=administrator",
        "role create Administrator 管理者",
        "role delete editor",
        "cap add author manage_options",
        "cap remove administrator manage_options",
        "role reset author",
    ):
        assert POLICY.classify(command).blocked, command
