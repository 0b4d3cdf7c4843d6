"""Updates a target's owner allows in advance: which held updates run without a per-change approval.

An owner may allow small updates — core's fixes within its branch, plugins' and themes' patch or minor
releases — to run unattended (a scheduled 「毎週月曜の朝3時に安全に更新して」 among them). The command
still waits unless it is exactly such an update, read as WP-CLI reads it:

- `core update --minor`, when core is allowed;
- `plugin update <names…> | --all` and `theme update …` with `--patch` or `--minor` at most as large as
  the owner allowed (`--patch` inside a `minor` allowance too), `--exclude` to leave some out;
- nothing else on the line but the site (`--url`) and what only changes the output;
- and held for no other reason than being that update (a rule that held it for something else — the
  network, a version, a value — keeps it waiting).

It runs guarded like every code change (executors/code_guard.py: probed, taken back when the site got
worse) and is audited as approved by the allowance.
"""

from __future__ import annotations

from wp_agent.command_line.parsed_command import ParsedCommand
from wp_agent.models.target import UpdateAllowance, UpdateLevel
from wp_agent.policy.approval_flags import OUTPUT_FLAGS
from wp_agent.policy.command_policy import PolicyDecision

APPROVER = "system:ownerUpdateAllowance"
_LEVEL_FLAGS = {"patch": UpdateLevel.PATCH, "minor": UpdateLevel.MINOR}
_EXTENSION_FLAGS = frozenset({"all", "exclude", *_LEVEL_FLAGS})
_ALL = "confirm.flag.all"


def _held_as(path: tuple[str, ...]) -> str:
    return f"confirm.{'.'.join(path)}"


def allowed_in_advance(decision: PolicyDecision, allowance: UpdateAllowance | None) -> bool:
    """Whether the owner's allowance approves this held command (see the module's rules)."""
    path = decision.command_path
    # Held as that update, or as updating all of them (`--all`, which the allowance covers too).
    if allowance is None or not decision.needs_approval or decision.rule not in {_held_as(path), _ALL}:
        return False
    parsed = ParsedCommand.from_argv(decision.argv)
    names = {option.name for option in parsed.options}
    if path == ("core", "update"):
        return (
            allowance.core_level is UpdateLevel.MINOR
            and parsed.has_flag("minor")
            and not parsed.args_after(path)
            and names <= {"minor", *OUTPUT_FLAGS}
        )
    if path not in {("plugin", "update"), ("theme", "update")}:
        return False
    allowed = allowance.plugins if path[0] == "plugin" else allowance.themes
    levels = [level for flag, level in _LEVEL_FLAGS.items() if parsed.has_flag(flag)]
    # (a value on these bare flags, `--minor=0`, is refused by the grammar before this is asked)
    return len(levels) == 1 and levels[0].rank <= allowed.rank and names <= _EXTENSION_FLAGS | OUTPUT_FLAGS
