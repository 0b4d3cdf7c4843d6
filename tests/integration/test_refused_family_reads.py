"""The harmless reads of the families refused as a whole (`db`, `config`, `cli`) run on the real site, and
none of them shows what wp-config.php keeps secret: every name the site's real wp-config.php defines is
tried through the policy, and whatever a read lets through is compared with the real password and salts."""

from __future__ import annotations

import json

from tests.fakes.wordpress import TestWordPress
from wp_agent.policy import CommandPolicy, PolicyCategory

POLICY = CommandPolicy()
READS = (
    "db size",
    "db size --tables --format=json",
    "db tables --all-tables",
    "db prefix",
    "db columns wp_users",
    "config path",
    "cli version",
    "cli info --format=json",
)


def test_no_read_of_the_refused_families_shows_a_secret(seeded_wordpress: TestWordPress) -> None:
    site = seeded_wordpress.site
    state = json.loads(site.state_file.read_text(encoding="utf-8"))
    secrets = {state["db_password"], *state["salts"].values()}
    defined = json.loads(site.wp("config", "list", "--format=json").stdout)  # the harness's own read
    assert {"DB_PASSWORD", "AUTH_KEY", "table_prefix"} <= {row["name"] for row in defined}

    shown: dict[str, str] = {}
    for command in READS:
        decision = POLICY.classify(command)
        assert decision.category is PolicyCategory.READ, (command, decision.reason_ja)
        done = site.wp(*decision.argv)
        shown[command] = done.stdout + done.stderr
    for row in defined:
        for verb in ("get", "has", "is-true"):
            decision = POLICY.classify(f"config {verb} {row['name']}")
            if decision.category is PolicyCategory.READ:
                done = site.wp(*decision.argv, check=False)
                shown[decision.command] = done.stdout + done.stderr
            else:
                assert decision.rule == "blocked.secret_config", decision
    leaked = {command: s for command, text in shown.items() for s in secrets if s in text}
    assert leaked == {}
    # What the reads are for still works: a constant that is no credential, and the table list.
    assert shown["config get table_prefix"].strip() == "wp_"
    assert "wp_posts" in shown["db tables --all-tables"]
    assert POLICY.classify("config get DB_PASSWORD").rule == "blocked.secret_config"
