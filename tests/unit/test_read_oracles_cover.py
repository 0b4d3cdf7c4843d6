"""Every read of the command table that names a stored value by its key (`<key>` in its synopsis:
`network meta get <id> <key>`, `site option pluck <key> <key-path>...`) is one the oracle rules know,
so a secret name is refused there as in `option get` — a row added without it fails here."""

from __future__ import annotations

from wp_agent.policy import CommandPolicy, PolicyCategory
from wp_agent.policy.command_grammar import synopses
from wp_agent.policy.command_table import ALLOWED_COMMANDS
from wp_agent.policy.read_oracles import names_a_stored_value

POLICY = CommandPolicy()


def test_every_read_that_takes_a_key_refuses_a_secret_one() -> None:
    keyed = [
        path
        for path, entry in ALLOWED_COMMANDS.items()
        if entry.category is PolicyCategory.READ and "<key>" in synopses()[path].text.split(" ")[:2]
    ]
    assert ("network", "meta", "get") in keyed
    assert [" ".join(p) for p in keyed if not names_a_stored_value(p)] == []
    for path in keyed:
        at = 0 if synopses()[path].text.startswith("<key>") else 1
        command = " ".join([*path, *(["1"] * at), "api_token", *(["x"] if "pluck" in path else [])])
        assert POLICY.classify(command).blocked, command
