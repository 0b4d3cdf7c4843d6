"""The long run of summary conformance (issue 37), printing its numbers.

Run from the repository root:  .venv/bin/python scripts/approval_conformance.py [--commands 2000] [--seed N]

Starts a real WordPress network of its own (tests/fakes/wordpress.py) and generates destructive
commands in the spellings a red team used (tests/integration/conformance/approvals.py). Each is decided
as the agent decides it; a held one gets its approval text computed on the site, is approved (its argv
runs exactly), and the real change — every table's rows, the uploads and the WordPress tree — is
compared with what the text claimed (objects, site, permanence); then the site is put back. Prints
the tally and every mismatch; exits 1 if any.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.fakes.wordpress import running_wordpress
from tests.integration.conformance.approvals import ApprovalConformance
from tests.integration.conformance.long_run import start
from wp_agent.cli.terminal import out


def main() -> int:
    args, rng = start(__doc__, commands=2000, verbose_help="print every command and its text")
    with running_wordpress() as wordpress:
        run = ApprovalConformance(wordpress)
        for index in range(1, args.commands + 1):
            command = run.command(rng)
            mismatch = run.run(command)
            if args.verbose:
                out.line(f"{index}: {command}", flush=True)
            if mismatch is not None:
                out.line(f"MISMATCH {mismatch}", flush=True)
            if index % 100 == 0:
                out.line(
                    f"... {index} commands, {run.tally.approved} approved, {len(run.tally.mismatches)} mismatches",
                    flush=True,
                )
        for line in run.tally.lines():
            out.line(line)
    return 1 if run.tally.mismatches else 0


if __name__ == "__main__":
    sys.exit(main())
