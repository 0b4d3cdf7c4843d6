"""Multisite scope: --url pinned to the session's site, network commands for network admins only."""

from __future__ import annotations

from typing import Any

import pytest

from tests.fakes.agent_doubles import RecordingWpCli, ScriptedModel, text_reply, tool_reply
from wp_agent.agent.lifecycle import new_session
from wp_agent.agent.ports import AgentDeps, InMemorySessionStore, MemoryAuditLog, NoApprovals, NoRateLimits
from wp_agent.agent.runner import AgentRunner
from wp_agent.config import CliSettings
from wp_agent.executors.port import CommandResult
from wp_agent.models.agent_io import AgentInput, MultisiteOptions
from wp_agent.policy import CommandPolicy, PolicyCategory
from wp_agent.policy.site_scope import apply_site_scope, normalise_site_url

POLICY = CommandPolicy()
EN = "https://example.test/en/"


def state(
    multisite: MultisiteOptions | None = None, *, site_url: str | None = None, network_admin: bool = False
) -> Any:
    s = new_session(
        AgentInput(message="x", multisite=multisite),
        session_id="s",
        user_id="u",
        target_id="t",
        site_url=site_url,
    )
    s.network_admin = network_admin
    return s


def scoped(command: str, session: Any) -> Any:
    return apply_site_scope(POLICY.classify(command), session.site_scope())


def test_commands_get_the_session_site_url() -> None:
    decision = scoped("post list --format=json", state(MultisiteOptions(site_url=EN), site_url=EN))
    assert decision.argv == ("post", "list", "--format=json", f"--url={EN}")
    assert decision.category is PolicyCategory.READ


@pytest.mark.parametrize("url", [EN, "https://example.test/en", "HTTPS://EXAMPLE.TEST/en/"])
def test_the_same_site_may_be_named(url: str) -> None:
    decision = scoped(f"post list --url={url}", state(MultisiteOptions(site_url=EN), site_url=EN))
    assert decision.category is PolicyCategory.READ


def test_another_site_is_refused() -> None:
    decision = scoped(
        "post delete 5 --url=https://example.test/shop/", state(MultisiteOptions(site_url=EN), site_url=EN)
    )
    assert decision.category is PolicyCategory.BLOCKED
    assert decision.rule == "scope.other_site"


@pytest.mark.parametrize(
    "command",
    [
        "site create --slug=tokyo --title=東京",
        "plugin activate akismet --network",
        "super-admin remove bob",
        "site delete 3 --yes",
    ],
)
def test_network_commands_need_a_network_admin(command: str) -> None:
    assert scoped(command, state()).rule == "scope.network_admin_required"
    assert (
        scoped(command, state(MultisiteOptions(site_url=EN), site_url=EN, network_admin=True)).rule
        == "scope.network_admin_required"
    )
    wide = MultisiteOptions(network_wide=True)
    assert scoped(command, state(wide, network_admin=True)).category is not PolicyCategory.BLOCKED
    # networkWide was accepted when the run started; a removed network administrator loses it.
    assert scoped(command, state(wide, network_admin=False)).rule == "scope.network_admin_required"
    assert scoped(command, state(network_admin=True)).category is not PolicyCategory.BLOCKED


def test_site_list_is_for_everyone() -> None:
    assert scoped("site list --format=json", state()).category is PolicyCategory.READ


def test_normalise() -> None:
    assert normalise_site_url("https://Example.test/en") == "https://example.test/en/"


def test_site_id_is_resolved_before_the_model_runs() -> None:
    def site_handler(argv: list[str]) -> CommandResult:
        if argv[:2] == ["site", "list"]:
            return CommandResult(EN + "\n", "", 0, 3)
        return CommandResult("[]", "", 0, 3)

    wp = RecordingWpCli(handler=site_handler)
    model = ScriptedModel([tool_reply("post list --format=json"), text_reply("英語サイトの投稿はありません")])
    deps = AgentDeps(
        model=model,
        wp_cli=wp,
        policy=POLICY,
        audit=MemoryAuditLog(),
        limiter=NoRateLimits(),
        store=InMemorySessionStore(),
        settings=CliSettings(anthropic_api_key="k"),
    )
    output = AgentRunner(deps, NoApprovals()).run(
        AgentInput(message="投稿一覧", multisite=MultisiteOptions(site_id=2))
    )
    assert output.success
    assert wp.commands() == [
        ["site", "list", "--site__in=2", "--field=url"],
        ["post", "list", "--format=json", f"--url={EN}"],
    ]
    facts = [c for c in wp.calls if c not in wp.commands()]
    assert len(facts) == 7  # the site's facts, of that site (no network listing: one site is chosen)
    assert all(c[-1] == f"--url={EN}" for c in facts)


def test_unknown_site_id_fails_clearly() -> None:
    wp = RecordingWpCli(handler=lambda argv: CommandResult("", "", 0, 3))
    deps = AgentDeps(
        model=ScriptedModel([]),
        wp_cli=wp,
        policy=POLICY,
        audit=MemoryAuditLog(),
        limiter=NoRateLimits(),
        store=InMemorySessionStore(),
        settings=CliSettings(anthropic_api_key="k"),
    )
    output = AgentRunner(deps, NoApprovals()).run(
        AgentInput(message="投稿一覧", multisite=MultisiteOptions(site_id=99))
    )
    assert output.error is not None
    assert "99" in output.error.message
    assert output.error.details == {"reason": "site_not_found", "siteId": 99}
