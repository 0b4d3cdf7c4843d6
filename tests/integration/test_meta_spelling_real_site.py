"""On the real site, a meta key written in another case reaches the kept key (WordPress compares keys under
the `_ci` collation); the agent refuses it and names the kept spelling, and the kept value is untouched."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fakes.wordpress_fixtures import asked_on_the_sandbox, sandbox_settings
from wp_agent.policy.meta_spelling import SPELLING_RULE
from wp_agent.sandbox import SandboxSite


def test_another_spelling_of_a_kept_key_is_refused_on_the_real_site(
    cli_sandbox: SandboxSite, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = sandbox_settings(cli_sandbox, tmp_path, monkeypatch)
    views = cli_sandbox.wp("post", "meta", "get", "10", "views").stdout
    state, model = asked_on_the_sandbox(settings, "post meta update 10 Views 99")
    (record,) = [r for r in state.commands if r.command.startswith("post meta update")]
    assert record.rule == SPELLING_RULE
    assert "「views」" in model.last_tool_results()[0]["content"]
    assert cli_sandbox.wp("post", "meta", "get", "10", "views").stdout == views
