"""On the real site, a meta key written in another case reaches the kept key (WordPress compares keys under
the `_ci` collation); the agent refuses it and names the kept spelling, and the kept value is untouched."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fakes.agent_doubles import ScriptedModel, text_reply, tool_reply
from tests.fakes.wordpress_fixtures import sandbox_environment
from wp_agent.agent.meta_spelling import SPELLING_RULE
from wp_agent.agent.ports import AutoApprove
from wp_agent.agent.runner import AgentRunner
from wp_agent.cli.wiring import build_local_deps
from wp_agent.config import CliSettings
from wp_agent.models.agent_io import AgentInput
from wp_agent.sandbox import SandboxSite


def test_another_spelling_of_a_kept_key_is_refused_on_the_real_site(
    cli_sandbox: SandboxSite, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, value in {
        **sandbox_environment(cli_sandbox),
        "WP_AGENT_AUDIT_FILE": str(tmp_path / "a.jsonl"),
    }.items():
        monkeypatch.setenv(name, value)
    views = cli_sandbox.wp("post", "meta", "get", "10", "views").stdout
    model = ScriptedModel([tool_reply("post meta update 10 Views 99"), text_reply("できませんでした")])
    runner = AgentRunner(
        build_local_deps(CliSettings(anthropic_api_key="test"), model=model), AutoApprove("t")
    )
    runner.run(AgentInput(message="閲覧数を99に"), user_id="local-user")
    state = runner.last_state
    assert state is not None
    (record,) = [r for r in state.commands if r.command.startswith("post meta update")]
    assert record.rule == SPELLING_RULE
    assert "「views」" in model.last_tool_results()[0]["content"]
    assert cli_sandbox.wp("post", "meta", "get", "10", "views").stdout == views
