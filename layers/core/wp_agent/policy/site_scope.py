"""The requester's rights in a session: their role on the target (issue 27: policy/roles.py), and the
multisite scope (UC-6): commands go to the session's site, network-level commands only run for
network administrators. Applied after the policy wherever a command is decided, so it only ever
tightens."""

from __future__ import annotations

import dataclasses
import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from urllib.parse import urlsplit

from wp_agent.command_line.parsed_command import ParsedCommand
from wp_agent.models.agent_io import MultisiteOptions
from wp_agent.models.target import Role, UpdateAllowance
from wp_agent.policy import PolicyCategory, PolicyDecision
from wp_agent.policy.network_scope import is_network_command
from wp_agent.policy.roles import apply_role


def normalise_site_url(url: str) -> str:
    parts = urlsplit(url.strip())
    path = parts.path if parts.path.endswith("/") else parts.path + "/"
    return f"{parts.scheme.lower()}://{parts.netloc.lower()}{path}"


def network_commands_allowed(options: MultisiteOptions | None, network_admin: bool) -> bool:
    """Whether a session with these multisite options, of a requester who is (or is not) a network
    administrator of the target, may run network-level commands."""
    if options is not None and options.network_wide:
        # The API accepts networkWide only from a network administrator; every turn rechecks it
        # (state.network_admin), so a removed administrator loses it at the next turn.
        return network_admin
    if options is not None and (options.site_id is not None or options.site_url is not None):
        return False  # scoped to one site
    return network_admin


@dataclass(frozen=True)
class SiteScope:
    """Where a session's commands may go: its site (None: not one site), whether network-level
    commands are allowed, and the requester's role (None: not a member). Taken from the session when
    a step begins (SessionState.site_scope)."""

    site_url: str | None
    network_allowed: bool
    role: Role | None
    update_allowance: UpdateAllowance | None = None  # what the owner allows without approval


def _blocked(decision: PolicyDecision, rule: str, reason: str) -> PolicyDecision:
    return dataclasses.replace(decision, category=PolicyCategory.BLOCKED, rule=rule, reason_ja=reason)


def apply_site_scope(decision: PolicyDecision, scope: SiteScope) -> PolicyDecision:
    """The policy's decision for this requester and site: their role first (its refusal names the
    role needed), then the network and the site."""
    decision = apply_role(decision, scope.role)
    if decision.blocked:
        return decision
    parsed = ParsedCommand.from_argv(decision.argv)
    if is_network_command(parsed, decision.command_path) and not scope.network_allowed:
        return _blocked(
            decision,
            "scope.network_admin_required",
            "ネットワーク全体に関わる操作（サイトの作成・削除、--network など）はネットワーク管理者だけが実行できます",
        )
    if scope.site_url is None:
        return decision
    urls = parsed.option_values("url")
    target = normalise_site_url(scope.site_url)
    if any(normalise_site_url(u) != target for u in urls):
        return _blocked(
            decision,
            "scope.other_site",
            f"このセッションの対象は {scope.site_url} です。別のサイトは操作できません",
        )
    if not urls:
        return dataclasses.replace(decision, argv=(*decision.argv, f"--url={scope.site_url}"))
    return decision


def as_run(command: str, argv: Sequence[str]) -> str:
    """The command as it really runs: what the policy (`--yes` where WP-CLI would ask) and the scope
    (`--url`) appended to the argv is shown as well."""
    written = ParsedCommand.from_argv(tuple(command.split()))
    for word in argv[-2:]:
        name = word.split("=", 1)[0].removeprefix("--")
        added = name == "yes" or word.startswith("--url=")
        if added and not written.has_flag(name) and f"--{name}" not in command:
            command = f"{command} {shlex.quote(word)}"
    return command
