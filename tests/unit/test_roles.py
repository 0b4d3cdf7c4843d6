"""Roles per target (issue 27): the mapping's examples through the real policy, the mapping covers the
command table, and the role layer only ever tightens (property tests over the policy corpus)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from tests.unit.test_policy_corpus import DANGEROUS, ORDINARY
from wp_agent.command_line.parsed_command import ParsedCommand
from wp_agent.models.target import Role, Target
from wp_agent.policy import CommandPolicy, PolicyCategory, PolicyDecision
from wp_agent.policy.command_table import ALLOWED_COMMANDS
from wp_agent.policy.roles import (
    LEAST_ROLE,
    ROLE_EXAMPLES,
    ROLE_RULE,
    apply_role,
    family_of,
    role_needed,
)

POLICY = CommandPolicy()
ROLES = [None, *Role]
EXAMPLES = [(ex.role, c, True) for ex in ROLE_EXAMPLES for c in ex.allowed] + [
    (ex.role, c, False) for ex in ROLE_EXAMPLES for c in ex.refused
]
# Families no editor may touch (beyond reading): the site's code, accounts, settings and sites.
ADMIN_ONLY = ("plugin", "theme", "user", "option", "site", "super-admin", "role", "cap", "widget")


@pytest.mark.parametrize(("role", "command", "allowed"), EXAMPLES)
def test_role_examples(role: Role, command: str, allowed: bool) -> None:
    policy_decision = POLICY.classify(command)
    assert not policy_decision.blocked, f"the example must pass the policy itself: {policy_decision}"
    decided = apply_role(policy_decision, role)
    if allowed:
        assert decided == policy_decision
    else:
        assert decided.blocked
        assert decided.rule == ROLE_RULE
        assert role.label_ja in decided.reason_ja
        assert role_needed(policy_decision).label_ja in decided.reason_ja


def test_every_table_path_has_a_family() -> None:
    missing = [" ".join(p) for p in ALLOWED_COMMANDS if family_of(p) is None]
    assert missing == []


def test_editor_families_are_content_only() -> None:
    editor_families = {f[0] for f, r in LEAST_ROLE.items() if r is Role.EDITOR}
    assert editor_families == {"post", "media", "term", "comment", "menu"}


def test_the_reason_names_both_roles() -> None:
    decided = apply_role(POLICY.classify("plugin activate akismet"), Role.EDITOR)
    assert decided.reason_ja == (
        "この操作には管理者（admin）の権限が必要です。あなたの権限は編集者（editor）です。"
    )
    outsider = apply_role(POLICY.classify("post list"), None)
    assert outsider.blocked
    assert "メンバーではありません" in outsider.reason_ja


def test_unknown_family_needs_an_admin() -> None:
    custom = PolicyDecision(
        command="wc product list",
        category=PolicyCategory.READ,
        argv=("wc", "product", "list"),
        reason_ja="x",
        rule="custom.allow",
        command_path=("wc", "product", "list"),
    )
    assert role_needed(custom) is Role.ADMIN
    assert apply_role(custom, Role.EDITOR).rule == ROLE_RULE
    assert apply_role(custom, Role.ADMIN) == custom


# -- properties over the policy corpus -------------------------------------------------------------

_PATHS = [" ".join(p) for p in ALLOWED_COMMANDS]
_ARGS = st.sampled_from(
    [
        "45",
        "3",
        "akismet",
        "--format=json",
        "--post_title=x",
        "--post_type=page",
        "category",
        "blogname",
        "--skip-update-check",
        "--network",
        "--post_type=product",
        "product_cat",
        "post_tag",
        "--yes",
        "--force",
        "--all",
        "subtitle",
        "'秋の特集'",
        "10",
    ]
)


@st.composite
def corpus_commands(draw: st.DrawFn) -> str:
    """A command of the corpus (dangerous and ordinary forms) or a table path with drawn arguments."""
    if draw(st.booleans()):
        return draw(st.sampled_from(DANGEROUS + ORDINARY))
    return " ".join([draw(st.sampled_from(_PATHS)), *draw(st.lists(_ARGS, max_size=4))])


@settings(max_examples=400, deadline=None)
@given(command=corpus_commands(), role=st.sampled_from(ROLES))
def test_role_layer_never_loosens(command: str, role: Role | None) -> None:
    before = POLICY.classify(command)
    after = apply_role(before, role)
    assert after.category.rank >= before.category.rank
    assert after.argv == before.argv
    if before.blocked:
        assert after == before
    if after.category is not PolicyCategory.BLOCKED:
        assert after == before  # passed through untouched: the same category, rule and reason


@settings(max_examples=400, deadline=None)
@given(command=corpus_commands())
def test_a_viewer_never_gets_a_write_through(command: str) -> None:
    after = apply_role(POLICY.classify(command), Role.VIEWER)
    assert after.category in (PolicyCategory.READ, PolicyCategory.BLOCKED)


@settings(max_examples=400, deadline=None)
@given(command=corpus_commands())
def test_an_editor_never_gets_site_administration_through(command: str) -> None:
    after = apply_role(POLICY.classify(command), Role.EDITOR)
    if after.command_path and after.command_path[0] in ADMIN_ONLY:
        assert after.category in (PolicyCategory.READ, PolicyCategory.BLOCKED)
    if family_of(after.command_path) is None:
        assert after.blocked
    if after.category in (PolicyCategory.WRITE, PolicyCategory.DESTRUCTIVE):  # content types only
        assert set(ParsedCommand.from_argv(after.argv).option_values("post_type")) <= {"post", "page"}
        parsed = ParsedCommand.from_argv(after.argv)
        args = parsed.args_after(after.command_path)
        if after.command_path[:2] == ("post", "term"):
            assert args[1] in ("category", "post_tag")
        if after.command_path[:1] == ("term",) and after.command_path[:2] != ("term", "meta"):
            assert args[0] in ("category", "post_tag")


@pytest.mark.parametrize("command", DANGEROUS + ORDINARY)
def test_corpus_each_role(command: str) -> None:
    before = POLICY.classify(command)
    for role in ROLES:
        after = apply_role(before, role)
        assert after.category.rank >= before.category.rank
        if role is None:
            assert after.blocked
        if role is Role.ADMIN:
            assert after == before


# -- members in the target registry ----------------------------------------------------------------

_TARGET = {
    "targetId": "tgt-1",
    "host": "example.test",
    "secretArn": "arn:aws:secretsmanager:ap-northeast-1:123456789012:secret:x",
    "owners": ["owner-1"],
}


def test_members_and_owners() -> None:
    target = Target.model_validate({**_TARGET, "members": {"ed-1": "editor", "view-1": "viewer"}})
    assert target.role_of("owner-1") is Role.ADMIN
    assert target.role_of("ed-1") is Role.EDITOR
    assert target.role_of("view-1") is Role.VIEWER
    assert target.role_of("stranger") is None
    assert target.model_validate_json(target.to_json()) == target
    demoted = Target.model_validate({**_TARGET, "members": {"owner-1": "viewer"}})
    assert demoted.role_of("owner-1") is Role.ADMIN  # owners are admins


@pytest.mark.parametrize(
    "members",
    [{"ed-1": "author"}, {"ed-1": "Editor"}, {"bad user": "viewer"}, {"ed-1": 1}, {"ed-1": None}],
)
def test_bad_members_are_refused(members: dict[str, object]) -> None:
    with pytest.raises(ValidationError):
        Target.model_validate({**_TARGET, "members": members})


@pytest.mark.parametrize("path", _PATHS)
def test_every_table_path_for_each_role(path: str) -> None:
    before = POLICY.classify(path)
    viewer, editor, admin = (apply_role(before, role) for role in Role)
    assert viewer.category in (PolicyCategory.READ, PolicyCategory.BLOCKED)
    if path.split(maxsplit=1)[0] in ADMIN_ONLY:
        assert editor.category in (PolicyCategory.READ, PolicyCategory.BLOCKED)
    assert admin == before
