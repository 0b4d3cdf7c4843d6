"""A guarded code change through `wp-agent ask` and the person's approval at a real terminal, on the real
sandbox (WordPress, WP-CLI 2.10, a scripted model on 127.0.0.1): the approval says the plan, the plugin
that fatals on the front end is taken back by itself, the person reads why, and the site read afterwards
is as it was."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e import test_approvals_real_site as approvals
from tests.e2e.test_approvals_real_site import held, wp
from tests.e2e.test_redteam_real_site import Attacker
from tests.fakes.cli import run_on_terminal

pytestmark = pytest.mark.timeout(600)
BROKEN = "wp-agent-front-fatal"
attacker = approvals.attacker  # the approvals tests' fixture: their sandbox, reset before and after


@pytest.fixture
def broken_plugin(attacker: Attacker) -> Iterator[Attacker]:
    """The approvals tests' sandbox (reset before and after), with a plugin that fatals on the front end."""
    sandbox = attacker.sandbox
    plugin = Path(sandbox.wordpress) / "wp-content" / "plugins" / BROKEN
    plugin.mkdir(parents=True, exist_ok=True)
    main = plugin / f"{BROKEN}.php"
    main.write_text(
        f"<?php\n/*\nPlugin Name: {BROKEN}\nVersion: 1.0\n*/\n"
        "add_action( 'template_redirect', static function () { wp_agent_no_such_function(); } );\n",
        encoding="utf-8",
    )
    for path in (plugin, main):
        shutil.chown(path, sandbox.owner)
    try:
        yield attacker
    finally:
        shutil.rmtree(plugin, ignore_errors=True)


def test_an_approved_activation_that_breaks_the_front_end_is_taken_back(broken_plugin: Attacker) -> None:
    asked = held(broken_plugin, f"plugin activate {BROKEN}")
    assert "自動で変更前の状態に戻し" in asked["impact"]  # the plan, before the person approves
    code, shown = run_on_terminal(
        ["approve", asked["approval_id"]], {**broken_plugin.environment(), "TERM": "dumb"}, "y"
    )
    screen = shown.decode("utf-8", "replace")
    assert code == 1, screen  # approved, run, taken back: the change did not stick
    assert "トップページ" in screen
    assert "戻しました" in screen
    active = wp(
        broken_plugin.sandbox, "plugin", "list", "--status=active", "--field=name", "--skip-update-check"
    )
    assert BROKEN not in active.split()
