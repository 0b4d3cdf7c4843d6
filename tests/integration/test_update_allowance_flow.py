"""Updates an owner allows in advance, through the serverless stack: the owner sets the target's allowance
(PATCH /v1/targets/{id}), and a scheduled run (EventBridge Scheduler's input to the synthesized state
machine, moto) updates every plugin's minor release with nobody asked — guarded on the real WordPress
behind the real sshd: the good update kept, the broken one taken back, the audit naming the allowance as
what approved it. (Without the allowance a scheduled run waits for a person and expires:
test_serverless_flow.py's scheduled run; tests/unit/test_update_allowance.py for what it allows.)"""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from tests.fakes.anthropic_server import reply_text, reply_tool_use
from tests.fakes.serverless import OWNER, TARGET_ID, ServerlessStack
from wp_agent.policy.update_allowance import APPROVER
from wp_agent.sandbox import sample_updates
from wp_agent.sandbox.update_server import UpdateServer

pytestmark = pytest.mark.sshd
GOOD, BROKEN = "wpa-sample-good", "wpa-sample-front-fatal"


@pytest.fixture
def updates(serverless: ServerlessStack) -> Iterator[ServerlessStack]:
    site = serverless.site.site
    with UpdateServer(site, sample_updates.offered()) as server:
        for extension in sample_updates.installed():
            if extension.slug in {GOOD, BROKEN}:
                server.install(extension)
        assert site.wp("plugin", "activate", GOOD, BROKEN, check=False).returncode == 0
        yield serverless


def scheduled_run(stack: ServerlessStack, schedule_id: str, machine: str) -> tuple[str, str]:
    stack.model.enqueue(
        reply_tool_use(
            [("wp_cli", {"command": "plugin update --all --minor", "reason": "定期の安全な更新"})]
        ),
        reply_text("更新しました。"),
    )
    started = {
        "scheduleId": schedule_id,
        "ownerId": OWNER,
        "targetId": TARGET_ID,
        "agentInput": {"message": "プラグインを安全に更新して"},
        "scheduledTime": "2026-12-07T18:00:00Z",
    }
    execution = stack.sfn.start_execution(stateMachineArn=machine, input=json.dumps(started))["executionArn"]
    return execution, f"{schedule_id}-20261207180000"


def test_a_scheduled_run_updates_what_the_owner_allowed_guarded_and_without_asking(
    updates: ServerlessStack,
) -> None:
    stack = updates
    status, changed = stack.api(
        "PATCH", f"/v1/targets/{TARGET_ID}", body={"updateAllowance": {"plugins": "minor"}}
    )
    assert status == 200, changed
    assert changed["target"]["updateAllowance"] == {"core": "none", "plugins": "minor", "themes": "none"}
    execution, session = scheduled_run(stack, "sch_000000000000000000a1", stack.machine_arn)
    assert stack.wait_for_execution(execution) == "SUCCEEDED"
    view = stack.wait_for(session, "Completed")
    assert "WaitForApproval" not in {
        e["stateEnteredEventDetails"]["name"]
        for e in stack.history(execution)
        if "stateEnteredEventDetails" in e
    }
    site = stack.site.site
    version = {
        slug: site.wp("plugin", "get", slug, "--field=version").stdout.strip() for slug in (GOOD, BROKEN)
    }
    assert version == {GOOD: sample_updates.OFFERED, BROKEN: sample_updates.INSTALLED}  # read on the site
    approved = [r for r in stack.audit(session) if r["type"] == "approval_approved"]
    assert [r["approver"] for r in approved] == [APPROVER]
    executed = [r for r in stack.audit(session) if r["type"] == "command_executed"]
    assert any(
        "plugin update --all --minor" in json.dumps(r, ensure_ascii=False, default=str) for r in executed
    ), executed
    assert view["status"] == "Completed"
