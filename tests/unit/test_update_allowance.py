"""An owner's update allowance approves exactly the small updates it names, read as WP-CLI reads them,
and nothing held for any other reason."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from wp_agent.models.target import UpdateAllowance, UpdateLevel
from wp_agent.policy import CommandPolicy
from wp_agent.policy.update_allowance import allowed_in_advance

POLICY = CommandPolicy()
ALL_MINOR = UpdateAllowance(core="minor", plugins=UpdateLevel.MINOR, themes=UpdateLevel.MINOR)
PATCH_ONLY = UpdateAllowance(plugins=UpdateLevel.PATCH, themes=UpdateLevel.PATCH)

ALLOWED = {
    "core update --minor": ALL_MINOR,
    "plugin update --all --minor": ALL_MINOR,
    "plugin update akismet --patch": ALL_MINOR,
    "plugin update --all --patch --exclude=woocommerce": PATCH_ONLY,
    "theme update --all --minor --format=json": ALL_MINOR,
    "plugin update akismet --minor --url=example.test/en/": ALL_MINOR,
}
STILL_HELD = {
    "core update": ALL_MINOR,  # the newest release: maybe a new branch
    "core update --version=7.1.5": ALL_MINOR,
    "core update --minor": PATCH_ONLY,  # core not allowed
    "plugin update --all": ALL_MINOR,  # no level: majors too
    "plugin update --all --minor": PATCH_ONLY,  # larger than allowed
    "plugin update --all --minor --patch": ALL_MINOR,  # two levels: WP-CLI's reading is not ours to guess
    "plugin update akismet --version=5.0": ALL_MINOR,
    "plugin update --all --minor --dry-run": ALL_MINOR,
    "plugin update --all --minor --network": ALL_MINOR,
    "plugin install akismet --minor": ALL_MINOR,
    "plugin activate akismet": ALL_MINOR,
    "theme activate twentytwentyfour": ALL_MINOR,
    "plugin delete akismet": ALL_MINOR,
}


@pytest.mark.parametrize("command", list(ALLOWED))
def test_the_updates_it_names_run_without_a_per_change_approval(command: str) -> None:
    decision = POLICY.classify(command)
    assert decision.needs_approval
    assert allowed_in_advance(decision, ALLOWED[command])


@pytest.mark.parametrize("command", list(STILL_HELD))
def test_anything_else_still_waits(command: str) -> None:
    decision = POLICY.classify(command)
    assert not allowed_in_advance(decision, STILL_HELD[command])


def test_no_allowance_allows_nothing() -> None:
    for command in ALLOWED:
        assert not allowed_in_advance(POLICY.classify(command), None)
        assert not allowed_in_advance(POLICY.classify(command), UpdateAllowance())


WORDS = st.sampled_from(
    ["plugin", "theme", "core", "update", "install", "activate", "akismet", "--all", "--minor", "--patch",
     "--version=1.0", "--exclude=x", "--network", "--dry-run", "--url=example.test/en/", "--format=json",
     "--force", "--activate", "x.zip", "--minor=0", "--skip-plugins"]
)  # fmt: skip


@settings(max_examples=500, deadline=None)
@given(st.lists(WORDS, min_size=2, max_size=6))
def test_what_it_allows_is_an_update_that_waits_and_changes_no_more_than_an_update(words: list[str]) -> None:
    """Whatever the words: allowed only where the policy held the command, the command is an update of
    core, plugins or themes, and it names a level."""
    decision = POLICY.classify(" ".join(words))
    if allowed_in_advance(decision, ALL_MINOR):
        assert decision.needs_approval
        assert decision.command_path in {("core", "update"), ("plugin", "update"), ("theme", "update")}
        assert {"--minor", "--patch"} & set(words)
        assert not {"--version=1.0", "--network", "--force", "--activate", "x.zip", "--skip-plugins"} & set(
            words
        )


def test_core_is_allowed_minor_updates_only() -> None:
    with pytest.raises(ValueError, match="core"):  # (its fixes within a branch are its "minor")
        UpdateAllowance.model_validate({"core": "patch"})
