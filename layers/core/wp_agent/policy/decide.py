"""The policy's one entry point for a command someone asked to run: `decide`.

In this order, each step only ever tightening what the one before decided: the command table
(`CommandPolicy.classify`: grammar, category, argument rules), the requester's role and the session's
site (site_scope.py), then the checks that need the site's state — the post types a write names
(post_targets.py), the objects the role may change (role_targets.py), the spelling of a kept meta key
(meta_spelling.py). Those ask `site` (a StateReader; site_reads.SiteReads notes what it was asked) and
never read the site themselves: when `site.requested` is not empty after a call, the caller reads those
(as policy-checked reads) and decides again with the answers.
"""

from __future__ import annotations

from collections.abc import Sequence

from wp_agent.policy.command_policy import CommandPolicy, PolicyDecision
from wp_agent.policy.meta_spelling import guard_meta_spelling
from wp_agent.policy.post_targets import guard_post_targets
from wp_agent.policy.role_targets import guard_role_targets
from wp_agent.policy.site_reads import StateReader
from wp_agent.policy.site_scope import SiteScope, apply_site_scope


def decide(
    policy: CommandPolicy,
    command: str | Sequence[str],
    scope: SiteScope,
    site: StateReader,
    *,
    alone_in_reply: bool = True,
) -> PolicyDecision:
    """`command` (as the model wrote it, or an argv already read) decided for the requester and site of
    `scope`. `alone_in_reply`: no other call of the same reply may change the site alongside it
    (post_targets keeps its answer simple then)."""
    table = policy.classify(command) if isinstance(command, str) else policy.classify_argv(list(command))
    decision = apply_site_scope(table, scope)
    decision = guard_post_targets(decision, site, alone_in_reply=alone_in_reply)
    decision = guard_role_targets(decision, scope.role, site)
    return guard_meta_spelling(decision, site)
