"""pytest fixtures for the real WordPress (tests/fakes/wordpress.py), the real-sshd rig in front of it,
and a sandbox for `wp-agent` run as a process in sandbox mode.

One WordPress and one sshd per test session. The site is restored from the seed dump only when a
test may have changed it: `fresh_wordpress` (a test that writes) marks it dirty, `seeded_wordpress`
(a test that only reads) uses it as it is when clean.

The version matrix: the session's WordPress is the sandbox's release (Debian unstable's 7.x once
`sandbox install` fetched it). `older_wordpress` is the system's package (bookworm: 6.1), started only
where a test asks for it; `matrix_wordpress` runs a module's tests on both (the bounded part of the
suite that keeps older sites covered: the policy's reads, effect conformance, a sample of undo).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path

import pytest

from tests.fakes.agent_doubles import ScriptedModel, text_reply, tool_reply
from tests.fakes.sshd import SshdRig
from tests.fakes.wordpress import TestWordPress, running_wordpress
from wp_agent.agent.ports import AutoApprove
from wp_agent.agent.runner import AgentRunner
from wp_agent.agent.session_state import SessionState
from wp_agent.cli.wiring import build_local_deps
from wp_agent.config import CliSettings
from wp_agent.models.agent_io import AgentInput
from wp_agent.sandbox import SandboxSite
from wp_agent.sandbox.http_front import HttpFront
from wp_agent.sandbox.release import WordPressRelease, chosen_release, system_release
from wp_agent.sandbox.seed_cache import CACHE_ENV, SeedCache

CURRENT: WordPressRelease = chosen_release()
OLDER: WordPressRelease = system_release()
# The tests that start the older release share one worker (pytest-xdist --dist loadgroup): one site.
OLDER_GROUP = "older-wordpress"
# Test ids name the version each runs on (`[wordpress-7.1.4]`, `[wordpress-6.1.x]`).
MATRIX_IDS = (f"wordpress-{CURRENT.version}", f"wordpress-{OLDER.version}")


@pytest.fixture(scope="session")
def wordpress() -> Iterator[TestWordPress]:
    """The session's WordPress network (its own MariaDB in a temp dir), seeded."""
    with running_wordpress() as site:
        yield site


# The fleet tests' modules share one worker (pytest-xdist --dist loadgroup), so one set of sites.
FLEET_GROUP = "fleet-sites"
FLEET_SITES = 4


@pytest.fixture(scope="session")
def fleet_sites() -> Iterator[list[tuple[TestWordPress, HttpFront]]]:
    """Four more WordPress sites, each with its own database server and loopback front (a fleet of
    separate sites beside the session's). A test restores each (`reset`) before it uses it."""
    with ExitStack() as stack:
        sites = []
        for _ in range(FLEET_SITES):
            wordpress = TestWordPress.create()
            stack.callback(wordpress.stop)
            sites.append((wordpress, stack.enter_context(HttpFront(wordpress.site, workers=2))))
        yield sites


@pytest.fixture(scope="session")
def older_wordpress() -> Iterator[TestWordPress]:
    """The system's WordPress (bookworm: 6.1), seeded like the session's; skipped where the sandbox's
    release is that same one (nothing fetched)."""
    if OLDER.tree == CURRENT.tree:
        pytest.skip(f"the sandbox itself runs the system's WordPress {OLDER.version}")
    with running_wordpress(OLDER) as site:
        yield site


@pytest.fixture(scope="module", params=("current", "older"), ids=MATRIX_IDS)
def matrix_wordpress(request: pytest.FixtureRequest) -> TestWordPress:
    """The session's WordPress, then the older one: a module's tests on both releases."""
    site: TestWordPress = request.getfixturevalue(
        "wordpress" if request.param == "current" else "older_wordpress"
    )
    return site


@pytest.fixture(scope="session")
def sshd_server(wordpress: TestWordPress) -> Iterator[SshdRig]:
    """One sshd for the test session, the real WP-CLI on the session's WordPress as `wp`."""
    rig = SshdRig(wordpress)
    rig.start()
    try:
        yield rig
    finally:
        rig.stop()


@pytest.fixture
def seeded_wordpress(wordpress: TestWordPress) -> TestWordPress:
    """The seeded site for a test that only reads it (restored first if an earlier test wrote)."""
    if wordpress.dirty:
        wordpress.reset()
    return wordpress


@pytest.fixture
def fresh_wordpress(wordpress: TestWordPress) -> TestWordPress:
    """The seeded site for a test that may change it (restored before the next test needs it)."""
    if wordpress.dirty:
        wordpress.reset()
    wordpress.dirty = True
    return wordpress


@pytest.fixture
def rig_site(sshd_server: SshdRig, fresh_wordpress: TestWordPress) -> Iterator[TestWordPress]:
    """The rig's WordPress, fresh for the test; faults injected on the rig are cleared afterwards."""
    try:
        yield fresh_wordpress
    finally:
        sshd_server.clear_faults()


@pytest.fixture(scope="session")
def session_sandbox(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SandboxSite]:
    """A sandbox site of the session (its own MariaDB), for `wp-agent` run with WP_CLI_MODE=sandbox."""
    site = SandboxSite(tmp_path_factory.mktemp("sandbox") / "sandbox")
    site.start()
    try:
        yield site
    finally:
        site.stop()


@pytest.fixture
def cli_sandbox(session_sandbox: SandboxSite) -> SandboxSite:
    """The session's sandbox, reset to the seed for this test."""
    session_sandbox.reset()
    return session_sandbox


def sandbox_environment(site: SandboxSite | None = None) -> dict[str, str]:
    """Environment variables for a `wp-agent` process on `site` (default: the process's default sandbox)
    that reuse this machine's seed cache instead of provisioning again under a test HOME."""
    env = {"WP_CLI_MODE": "sandbox", CACHE_ENV: str(SeedCache.default().root)}
    if site is not None:
        env["WP_AGENT_SANDBOX_SITE"] = str(site.home)
    return env


def sandbox_settings(sandbox: SandboxSite, home: Path, monkeypatch: pytest.MonkeyPatch) -> CliSettings:
    """The CLI's settings on the sandbox, as its environment gives them (`main` reads the same)."""
    for name, value in {
        **sandbox_environment(sandbox),
        "WP_AGENT_AUDIT_FILE": str(home / "audit.jsonl"),
        "ANTHROPIC_API_KEY": "test",
    }.items():
        monkeypatch.setenv(name, value)
    return CliSettings()


def asked_on_the_sandbox(settings: CliSettings, command: str) -> tuple[SessionState, ScriptedModel]:
    """A run of the agent (`sandbox_settings`) whose model asks for `command`, approved if held, then
    answers: the run's state and the model (what it was told)."""
    model = ScriptedModel([tool_reply(command), text_reply("しました")])
    runner = AgentRunner(build_local_deps(settings, model=model), AutoApprove("tester"))
    runner.run(AgentInput(message=command), user_id="local-user")
    assert runner.last_state is not None
    return runner.last_state, model
