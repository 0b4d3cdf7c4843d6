"""multisite.siteId → the site's URL (`site list`), before the model runs; every command of the
session then carries `--url=<that URL>` (site_scope). The turn runs the lookup; failing it ends the run."""

from __future__ import annotations

from wp_agent.agent.session_state import CommandRecord, CommandStatus
from wp_agent.errors import AgentErrorCode, SiteLookupIncompleteError, SiteNotFoundError, WpAgentError
from wp_agent.policy import CommandPolicy


def lookup(policy: CommandPolicy, run_id: str, site_id: int) -> CommandRecord:
    """The lookup command's record (queued); COMMAND_BLOCKED when the policy refuses it."""
    decision = policy.classify_argv(["site", "list", f"--site__in={site_id}", "--field=url"])
    if decision.blocked:
        command = " ".join(decision.argv)
        raise WpAgentError(AgentErrorCode.COMMAND_BLOCKED, decision.reason_ja, details={"command": command})
    return CommandRecord(
        tool_use_id=f"system-site-{run_id}",
        run_id=run_id,
        command=" ".join(decision.argv),
        argv=list(decision.argv),
        reason="マルチサイトの対象サイトIDをURLに変換",
        category=decision.category,
        rule=decision.rule,
        policy_reason=decision.reason_ja,
        command_path=list(decision.command_path),
        status=CommandStatus.QUEUED,
        iteration=0,
    )


def looked_up_site_url(found: CommandRecord, site_id: int) -> str:
    """The URL the site lookup gave; otherwise why it gave none, raised as the run's error."""
    if found.error_code is not None:  # SSH down, timeout: the site's state, not the site ID
        raise WpAgentError(found.error_code, found.stderr, details={"siteId": site_id})
    if found.status is not CommandStatus.FINISHED:  # held back (rate limit) or outcome unknown
        why = found.policy_reason if found.status is CommandStatus.BLOCKED else "処理が中断されました"
        raise SiteLookupIncompleteError(
            f"サイトID {site_id} の確認を完了できませんでした（{why}）。もう一度お試しください。",
            siteId=site_id,
        )
    first_line = found.stdout.strip().splitlines()[0].strip() if found.stdout.strip() else ""
    if found.exit_code != 0 or not first_line.startswith(("http://", "https://")):
        raise SiteNotFoundError(
            f"マルチサイトのサイトID {site_id} が見つかりません。site list で存在するサイトを確認してください。",
            siteId=site_id,
        )
    return first_line
