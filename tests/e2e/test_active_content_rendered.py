"""Issue 38, deliverable 5 (a bounded sample; scripts/active_content_matrix.py runs the whole matrix):
payloads of the OWASP XSS families written through `wp-agent ask` on the real sandbox as each configured
WordPress user, then the front page, the post and the admin screens fetched over loopback HTTP and
parsed: no payload runs unless approved; no fetch leaves the server for a host that was not approved.
The controls show the harness sees what it looks for: an approved script runs, an approved embed of an
unresolvable host is fetched."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.test_approvals_real_site import approve
from tests.e2e.test_redteam_real_site import Attacker
from tests.fakes.anthropic_server import ScriptedAnthropicServer
from tests.fakes.xss_payloads import Payload
from tests.integration.conformance.rendered_payloads import (
    TEXT_PATHS,
    USERS,
    OutboundListener,
    RenderedProof,
    rendered_site,
    sample,
)
from wp_agent.sandbox import SandboxSite
from wp_agent.sandbox.http_front import HttpFront

pytestmark = [pytest.mark.timeout(600), pytest.mark.slow]


@pytest.fixture(scope="module")
def rendered(session_sandbox: SandboxSite) -> Iterator[tuple[HttpFront, OutboundListener]]:
    with rendered_site(session_sandbox) as served:
        yield served


@pytest.fixture
def proof(
    scripted_anthropic: ScriptedAnthropicServer,
    tmp_path: Path,
    session_sandbox: SandboxSite,
    rendered: tuple[HttpFront, OutboundListener],
) -> RenderedProof:
    front, listener = rendered
    return RenderedProof(Attacker(scripted_anthropic, tmp_path, session_sandbox), front, listener)


def _approval_id(proof: RenderedProof) -> str:
    assert proof.last_run is not None
    error = proof.last_run.output.get("error") or {}
    assert error.get("code") == "CONFIRMATION_REQUIRED", proof.last_run.output
    return str(error["details"]["approvalId"])


def test_no_payload_runs_in_a_page_unless_approved(proof: RenderedProof) -> None:
    for index, user in enumerate(USERS):
        written = proof.ask(user, sample(8, seed=38 + index))
        proof.check_pages(written)
    tally = proof.tally
    assert tally.decisions["executed"] == 0, tally.lines()
    assert tally.decisions["approval_requested"] + tally.decisions["command_blocked"] == tally.written
    assert not tally.running, tally.running
    assert not tally.fetches, tally.fetches
    assert not tally.broken_pages, tally.broken_pages


def test_approved_a_script_runs_and_an_embed_of_an_unknown_host_is_fetched(
    proof: RenderedProof, session_sandbox: SandboxSite
) -> None:
    """The controls: what the harness looks for, it sees — once the person approved it, and only then."""
    content = next(p for p in TEXT_PATHS if p.name == "post content")
    excerpt = next(p for p in TEXT_PATHS if p.name == "post excerpt")
    writes = [(content, Payload("fetch", "<p>https://inward.example/{m}</p>")),
              (excerpt, Payload("script", "<script>alert('{m}')</script>"))]  # fmt: skip
    embed, script = proof.ask("none", writes)
    approval_id = _approval_id(proof)
    before = proof.check_pages([embed, script])
    assert not any(script.marker in running for running in before.values())
    assert not any("inward.example" in url for url in proof.listener.fetched)
    try:
        approve(proof.attacker, approval_id)
        after = proof.check_pages([embed, script], approved=frozenset({embed.marker, script.marker}))
        assert script.marker in after["/"]
        assert any(f"inward.example/{embed.marker}" in url for url in proof.listener.fetched)
    finally:
        session_sandbox.reset()
