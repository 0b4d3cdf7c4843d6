"""A guarded code change through `wp-agent ask` and the person's approval at a real terminal, on the real
sandbox (WordPress, WP-CLI 2.10, a scripted model on 127.0.0.1): the approval says the plan, the plugin
that fatals on the front end is taken back by itself, the person reads why, and the site read afterwards
is as it was."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.test_approvals_real_site import held, wp
from tests.e2e.test_redteam_real_site import Attacker
from tests.fakes.anthropic_server import ScriptedAnthropicServer
from tests.fakes.cli import run_on_terminal
from wp_agent.sandbox import SandboxSite

pytestmark = pytest.mark.timeout(600)
BROKEN = "wp-agent-front-fatal"


@pytest.fixture
def attacker(
    scripted_anthropic: ScriptedAnthropicServer, tmp_path: Path, session_sandbox: SandboxSite
) -> Iterator[Attacker]:
    session_sandbox.reset()
    plugin = Path(session_sandbox.wordpress) / "wp-content" / "plugins" / BROKEN
    plugin.mkdir(parents=True, exist_ok=True)
    main = plugin / f"{BROKEN}.php"
    main.write_text(
        f"<?php\n/*\nPlugin Name: {BROKEN}\nVersion: 1.0\n*/\n"
        "add_action( 'template_redirect', static function () { wp_agent_no_such_function(); } );\n",
        encoding="utf-8",
    )
    for path in (plugin, main):
        shutil.chown(path, session_sandbox.owner)
    try:
        yield Attacker(scripted_anthropic, tmp_path, session_sandbox)
    finally:
        shutil.rmtree(plugin, ignore_errors=True)
        session_sandbox.reset()


def test_an_approved_activation_that_breaks_the_front_end_is_taken_back(attacker: Attacker) -> None:
    asked = held(attacker, f"plugin activate {BROKEN}")
    assert "自動で変更前の状態に戻し" in asked["impact"]  # the plan, before the person approves
    code, shown = run_on_terminal(
        ["approve", asked["approval_id"]], {**attacker.environment(), "TERM": "dumb"}, "y"
    )
    screen = shown.decode("utf-8", "replace")
    assert code == 1, screen  # approved, run, taken back: the change did not stick
    assert "トップページ" in screen
    assert "戻しました" in screen
    active = wp(attacker.sandbox, "plugin", "list", "--status=active", "--field=name", "--skip-update-check")
    assert BROKEN not in active.split()
