"""A held run is kept on disk for `wp-agent approve` only when it holds no secret (a held argv must be
kept exactly, so one with a password is approved where it runs instead)."""

from __future__ import annotations

import json

from wp_agent.agent.lifecycle import new_session
from wp_agent.agent.session_state import SessionState
from wp_agent.cli.pending import HeldRun, carries_secret
from wp_agent.models.agent_io import AgentInput
from wp_agent.models.target import Role


def _state(message: str, command: str) -> SessionState:
    state = new_session(AgentInput(message=message), session_id="s1", user_id="u", target_id="t")
    state.messages.append(
        {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "wp_cli",
                                           "input": {"command": command, "reason": "指示どおり"}}]}
    )  # fmt: skip
    return state


def test_an_ordinary_held_delete_can_be_kept() -> None:
    assert not carries_secret(_state("下書き45を削除して", "post delete 45 --force"))


def test_a_password_in_the_command_the_model_wrote_is_not_kept() -> None:
    state = _state("ユーザー3のパスワードを変えて", "user update 3 --user_pass=Correct-Horse-42")
    assert carries_secret(state)


def test_a_secret_value_in_the_person_s_message_is_not_kept() -> None:
    state = _state("このキー sk_live_4eC39HqLyjWDarjtT1zdp7dc を設定に入れて", "option get blogname")
    assert carries_secret(state)


def test_a_run_held_before_roles_resumes_as_the_operator() -> None:
    """Held runs kept by an earlier version carry no role; approved later, they run as the local
    operator (the site's administrator), not as a stranger refused everything."""
    state = _state("投稿45を削除して", "post delete 45")
    held = HeldRun(approval_id="apr_" + "0" * 20, user="u", target="local", held_at="t", state=state)
    stored = json.loads(held.model_dump_json())
    del stored["state"]["role"]
    assert HeldRun.model_validate_json(json.dumps(stored)).state.role is Role.ADMIN
    stored["state"]["role"] = "viewer"  # a role it carries is kept
    assert HeldRun.model_validate_json(json.dumps(stored)).state.role is Role.VIEWER
