"""The long run of the effect-conformance property (issue 24), printing its numbers.

Run from the repository root:  .venv/bin/python scripts/effect_conformance.py [--commands 3000] [--seed N]

Starts a real WordPress network of its own (Debian's PHP, MariaDB and files, the verified WP-CLI phar;
seeded; tests/fakes/wordpress.py), runs every declaration's own examples, then generates commands from
the command table's grammar (tests/integration/conformance/command_grammar.py). Each goes through the
agent's own decision (the
policy, then the site checks the agent runs before a write); every command the policy lets run without
approval runs on the real site, and what it changed — every table's rows, the WordPress tree, the
uploads and a canary file outside both — is compared with the command's declared effect, then the site
is put back (only what changed). Prints the tally and every violation (a policy bug); exits 1 if any.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.fakes.wordpress import running_wordpress
from tests.integration.conformance.long_run import start
from tests.integration.conformance.runner import ConformanceRun, Tally
from wp_agent.cli.terminal import out
from wp_agent.policy.effects.table import WRITE_EFFECTS


def main() -> int:
    args, rng = start(__doc__, commands=3000, verbose_help="print every command and its decision")
    with running_wordpress() as wordpress:
        run = ConformanceRun(wordpress)
        for effect in WRITE_EFFECTS.values():  # every declaration's own examples first
            for example in effect.match:
                violation = run.run(example)
                if violation is not None:
                    out.line(f"VIOLATION {violation}", flush=True)
        examples = run.tally
        out.line(
            f"declared examples: {sum(examples.decisions.values())} "
            f"(run without approval: {examples.ran}; violations: {len(examples.violations)})",
            flush=True,
        )
        run.tally = Tally()  # the generated commands' own numbers
        for index in range(1, args.commands + 1):
            command = run.grammar.command(rng)
            violation = run.run(command)
            if args.verbose:
                out.line(f"{index}: {command}", flush=True)
            if violation is not None:
                out.line(f"VIOLATION {violation}", flush=True)
            if index % 250 == 0:
                out.line(
                    f"... {index} commands, {run.tally.ran} run, {len(run.tally.violations)} violations",
                    flush=True,
                )
        for line in run.tally.lines():
            out.line(line)
        for path, count in sorted(run.tally.paths.items()):
            failed = run.tally.failures.get(path, 0)
            out.line(f"  {path}: {count} run, {failed} failed in WP-CLI")
            if args.verbose and path in run.tally.last_errors:
                out.line(f"      e.g. {run.tally.last_errors[path]}")
    return 1 if run.tally.violations or examples.violations else 0


if __name__ == "__main__":
    sys.exit(main())
