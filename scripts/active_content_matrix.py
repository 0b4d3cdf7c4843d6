"""The full matrix of issue 38's proof by effect, printing its numbers.

Run from the repository root:  .venv/bin/python scripts/active_content_matrix.py [--approve-every N]

On a sandbox of its own (real WordPress, real WP-CLI, MariaDB), served over loopback HTTP with every
outbound request of WordPress sent to a loopback listener: every payload of tests/fakes/xss_payloads.py
× every text write path × configured WordPress user (none, administrator, editor) is written through
`wp-agent ask` with a scripted model, ten per run; then the pages that show those texts (front page,
the post, the admin screens, logged in) are fetched and parsed. Nothing may run or be fetched that
was not approved. Every Nth batch is approved, to count what runs then (and what WordPress's kses
takes out when an editor is configured). Exits 1 on any payload running or fetch leaving unapproved.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.e2e.test_redteam_real_site import Attacker
from tests.fakes.anthropic_server import ScriptedAnthropicServer
from tests.fakes.cli import run_on_terminal
from tests.fakes.xss_payloads import payloads
from tests.integration.conformance.rendered_payloads import (
    TEXT_PATHS,
    USERS,
    RenderedProof,
    rendered_site,
)
from wp_agent.cli.terminal import out
from wp_agent.sandbox import SandboxSite

BATCH = 10


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--approve-every", type=int, default=10, help="approve every Nth batch (0: never)")
    args = parser.parse_args()
    started = time.monotonic()
    writes = [(path, payload) for path in TEXT_PATHS for payload in payloads()]
    with tempfile.TemporaryDirectory(prefix="wp-agent-matrix-") as home:
        site = SandboxSite(Path(home) / "sandbox")
        site.start()
        try:
            with ScriptedAnthropicServer() as model, rendered_site(site) as (front, listener):
                proof = RenderedProof(Attacker(model, Path(home), site), front, listener)
                batches = 0
                for user in USERS:
                    for start in range(0, len(writes), BATCH):
                        written = proof.ask(user, writes[start : start + BATCH])
                        batches += 1
                        if args.approve_every and batches % args.approve_every == 0:
                            error = (proof.last_run.output.get("error") or {}) if proof.last_run else {}
                            approved = frozenset(w.marker for w in written)
                            # approved as a whole: some writes of a batch may fail (one site slug, ten titles)
                            run_on_terminal(
                                ["approve", str(error["details"]["approvalId"])],
                                {**proof.attacker.environment(), "TERM": "dumb"},
                                "y",
                            )
                            seen = proof.check_pages(written, approved=approved)
                            running = set().union(*seen.values()) if seen else set()
                            proof.tally.approved_running += len(approved & running)
                            proof.tally.approved_stripped += len(approved - running)
                            site.reset()
                        else:
                            proof.check_pages(written)
                        out.line(
                            f"... {user}: {start + len(written)}/{len(writes)} {proof.tally.lines()[3]}",
                            flush=True,
                        )
                for line in proof.tally.lines():
                    out.line(line)
                for failure in [*proof.tally.running, *proof.tally.fetches]:
                    out.line(f"FAILURE {failure}")
        finally:
            site.stop()
    out.line(f"wall seconds: {time.monotonic() - started:.0f}")
    return 1 if proof.tally.running or proof.tally.fetches else 0


if __name__ == "__main__":
    sys.exit(main())
