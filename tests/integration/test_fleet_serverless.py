"""Fleet runs through the API on the serverless stack: the synthesized state machine in moto (its fleet
branch's Distributed Map included), the real handlers, four real WordPress sites behind the sshd rig
(each its own database and files; the targets differ by WordPress path), the sandbox's WordPress.org
offering the sample plugins' newer versions.

What moto (5.x) does not emulate, and how this test stands with it: a Distributed Map's items run as
threads of the parent execution, not as child executions one can list or describe; and the tolerated
failure count is read but not enforced (a failed item becomes null, the map succeeds). The fleet's own
rule — a site does not start once more sites failed than tolerated (service/fleets.py, site_start) —
holds either way; on AWS the map's ToleratedFailureCount backs it. A `.waitForTaskToken` inside an item
(a site waiting for its own approval) works in moto as on AWS."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import ExitStack
from datetime import datetime
from typing import Any

import pytest

from tests.fakes import aws as aws_fakes
from tests.fakes.anthropic_server import reply_text, reply_tool_use
from tests.fakes.serverless import OWNER, TARGET_ID, ServerlessStack
from tests.fakes.timeline import most_at_once
from tests.fakes.wordpress import TestWordPress
from tests.fakes.wordpress_fixtures import FLEET_GROUP
from wp_agent.adapters.aws.registry import TargetRegistry
from wp_agent.models.target import Role
from wp_agent.sandbox import sample_updates
from wp_agent.sandbox.http_front import HttpFront
from wp_agent.sandbox.sample_updates import INSTALLED, OFFERED
from wp_agent.sandbox.update_server import UpdateServer

pytestmark = [
    pytest.mark.sshd,
    pytest.mark.slow,
    pytest.mark.timeout(300),
    pytest.mark.xdist_group(FLEET_GROUP),
]
GOOD, BROKEN = "wpa-sample-good", "wpa-sample-front-fatal"
OTHERS = ("site-b", "site-c", "site-d")


@pytest.fixture
def four_sites(
    serverless: ServerlessStack,
    fleet_sites: list[tuple[TestWordPress, HttpFront]],
    monkeypatch: pytest.MonkeyPatch,
) -> Iterator[dict[str, TestWordPress]]:
    """The rig's site (site-a) and three more behind the same sshd, all tagged `clients`; each with its
    update server (the good sample plugin active everywhere, the broken one active on site-c) and a
    loopback front for the health probe. And site-e, tagged too, where the requester is only a viewer."""
    stack = serverless
    registry = TargetRegistry(aws_fakes.TABLES["registry"])
    first = registry.get(TARGET_ID)
    assert first is not None
    with ExitStack() as cleanup:
        sites = {TARGET_ID: stack.site}
        fronts = {TARGET_ID: stack.rig.health_connect}
        for target_id, (wordpress, front) in zip(OTHERS, fleet_sites, strict=False):
            wordpress.reset()  # (shared with the CLI's fleet tests)
            sites[target_id], fronts[target_id] = wordpress, f"127.0.0.1:{front.port}"
            registry.put(first.model_copy(update={"target_id": target_id, "wp_path": str(wordpress.path)}))
        connect = ",".join(f"{sites[t].path}={fronts[t]}" for t in sites)
        monkeypatch.setenv("WP_AGENT_HEALTH_CONNECT", connect)
        extensions = {e.slug: e for e in sample_updates.installed()}
        for target_id, wordpress in sites.items():
            server = cleanup.enter_context(UpdateServer(wordpress.site, sample_updates.offered()))
            for slug in (GOOD, BROKEN):
                server.install(extensions[slug])
            active = [GOOD, BROKEN] if target_id == "site-c" else [GOOD]
            assert wordpress.wp("plugin", "activate", *active).returncode == 0
            status, body = stack.api("PATCH", f"/v1/targets/{target_id}", body={"tags": ["clients"]})
            assert status == 200, body
        viewer_only = {"owners": ["someone-else"], "members": {OWNER: Role.VIEWER}, "tags": ["clients"]}
        registry.put(first.model_copy(update={"target_id": "site-e", **viewer_only}))
        yield sites


def _fleet(
    stack: ServerlessStack, fleet_run_id: str, *statuses: str, timeout: float = 120.0
) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    view: Any = None
    while time.monotonic() < deadline:
        status, view = stack.api("GET", f"/v1/fleet-runs/{fleet_run_id}", user=OWNER)
        assert status == 200, view
        if view["status"] in statuses:
            return dict(view)
        time.sleep(0.2)
    raise AssertionError(f"fleet run {fleet_run_id} did not reach {statuses}; last: {view}")


def _version(site: TestWordPress, slug: str) -> str:
    return site.wp("plugin", "get", slug, "--field=version").stdout.strip()


def _plans_all_updates(stack: ServerlessStack) -> None:
    stack.model.enqueue(
        reply_tool_use([("wp_cli", {"command": "plugin update --all", "reason": "全プラグインを更新"})]),
        reply_text("全てのプラグインを、確認しながら更新する計画です。"),
    )


def _approve(stack: ServerlessStack, fleet_run_id: str) -> dict[str, Any]:
    status, decided = stack.api("POST", f"/v1/fleet-runs/{fleet_run_id}/decision", body={"decision": "approve"},
                                user=OWNER)  # fmt: skip
    assert status == 200, decided
    return _fleet(stack, fleet_run_id, "completed", "partialFailure", "stopped", "failed")


def test_one_approval_over_the_api_runs_the_plan_on_every_site_and_reports_each(
    serverless: ServerlessStack, four_sites: dict[str, TestWordPress]
) -> None:
    stack = serverless

    # A canary the change breaks: taken back there, and no other site runs.
    _plans_all_updates(stack)
    body = {"message": "プラグインを更新して", "targetIds": ["site-c", TARGET_ID, "site-b", "site-d"]}
    status, accepted = stack.api("POST", "/v1/fleet-runs", body=body, user=OWNER)
    assert status == 202, accepted
    _fleet(stack, accepted["fleetRunId"], "awaitingApproval")
    stopped = _approve(stack, accepted["fleetRunId"])
    assert stopped["status"] == "stopped", stopped
    assert [(r["site"], r["status"]) for r in stopped["results"]] == [
        ("site-c", "rolledBack"), (TARGET_ID, "skipped"), ("site-b", "skipped"), ("site-d", "skipped"),
    ]  # fmt: skip
    assert all("カナリア" in r["detailJa"] for r in stopped["results"][1:])
    assert {t: _version(four_sites[t], GOOD) for t in (TARGET_ID, "site-b", "site-d")} == dict.fromkeys(
        (TARGET_ID, "site-b", "site-d"), INSTALLED
    )
    assert _version(four_sites["site-c"], BROKEN) == INSTALLED

    # Every site with the tag: a healthy canary, the rest two at a time.
    _plans_all_updates(stack)
    every: dict[str, object] = {
        "message": "全サイトのプラグインを安全に更新して",
        "tag": "clients",
        "concurrency": 2,
        "toleratedFailurePercentage": 20,  # of 5 sites: one
    }
    status, accepted = stack.api("POST", "/v1/fleet-runs", body=every, user=OWNER)
    assert status == 202, accepted
    assert accepted["sites"] == [TARGET_ID, *OTHERS, "site-e"]
    assert accepted["canary"] == [TARGET_ID]
    fleet_run_id = accepted["fleetRunId"]

    shown = _fleet(stack, fleet_run_id, "awaitingApproval", "failed")
    assert [step["command"] for step in shown["plan"]] == ["plugin update --all"]
    assert (shown["toleratedFailures"], shown["toleratedFailurePercentage"]) == (1, 20)
    assert _version(four_sites[TARGET_ID], GOOD) == INSTALLED  # planning ran nothing
    ready = [e for e in stack.events_until("Fleet Plan Ready") if e["detail-type"] == "Fleet Plan Ready"]
    assert [e["detail"]["fleetRunId"] for e in ready][-1] == fleet_run_id
    status, refused = stack.api("POST", f"/v1/fleet-runs/{fleet_run_id}/decision", body={"decision": "approve"},
                                user="someone-else")  # fmt: skip
    assert status == 404, refused  # only the requester decides, and nobody else learns it exists
    report = _approve(stack, fleet_run_id)
    by_site = {r["site"]: r for r in report["results"]}
    assert {site: r["status"] for site, r in by_site.items()} == {
        TARGET_ID: "completed", "site-b": "completed", "site-c": "rolledBack", "site-d": "completed",
        "site-e": "skipped",
    }, report  # fmt: skip
    assert "閲覧のみ" in by_site["site-e"]["detailJa"]  # a site the requester may not change
    assert report["status"] == "partialFailure"
    assert report["approvedBy"] == OWNER
    assert {t: _version(site, GOOD) for t, site in four_sites.items()} == dict.fromkeys(four_sites, OFFERED)
    assert _version(four_sites["site-c"], BROKEN) == INSTALLED  # taken back there

    finished = [
        e for e in stack.events_until("Fleet Run Finished") if e["detail-type"] == "Fleet Run Finished"
    ]
    assert {s["targetId"]: s["status"] for s in finished[-1]["detail"]["sites"]} == {
        t: r["status"] for t, r in by_site.items()
    }
    spans = []
    for target_id in (TARGET_ID, *OTHERS):
        audit = stack.audit(by_site[target_id]["sessionId"])
        [said] = [r for r in audit if r["type"] == "fleet_site_result"]
        assert said["status"] == by_site[target_id]["status"]
        approved = [r for r in audit if r["type"] == "approval_approved"]
        assert [r["approver"] for r in approved] == [f"fleet:{fleet_run_id}:{OWNER}"]
        times = [datetime.fromisoformat(r["timestamp"]) for r in audit]
        spans.append((min(times), max(times)))
    assert all(start >= spans[0][1] for start, _ in spans[1:])  # the canary first
    assert most_at_once(spans[1:]) <= 2  # never more than the concurrency asked


def test_a_rejected_plan_runs_nowhere_and_the_decision_is_taken_once(serverless: ServerlessStack) -> None:
    stack = serverless
    stack.model.enqueue(
        reply_tool_use([("wp_cli", {"command": "plugin deactivate akismet", "reason": "無効化"})]),
        reply_text("Akismet を無効化する計画です。"),
    )
    body = {"message": "Akismet を止めて", "targetIds": [TARGET_ID, TARGET_ID]}  # named twice: runs once
    status, accepted = stack.api("POST", "/v1/fleet-runs", body=body, user=OWNER)
    assert status == 202, accepted
    assert accepted["sites"] == [TARGET_ID]
    fleet_run_id = accepted["fleetRunId"]
    _fleet(stack, fleet_run_id, "awaitingApproval")
    assert stack.site.wp("plugin", "is-active", "akismet").returncode == 0  # planning ran nothing

    path = f"/v1/fleet-runs/{fleet_run_id}/decision"
    status, decided = stack.api("POST", path, body={"decision": "reject"}, user=OWNER)
    assert status == 200, decided
    status, again = stack.api("POST", path, body={"decision": "approve"}, user=OWNER)
    assert (status, again["error"]["code"]) == (409, "FLEET_NOT_AWAITING_APPROVAL")
    report = _fleet(stack, fleet_run_id, "declined")
    assert report["results"] == []
    assert "却下" in report["detailJa"]
    assert stack.site.wp("plugin", "is-active", "akismet").returncode == 0
    finished = [
        e for e in stack.events_until("Fleet Run Finished") if e["detail-type"] == "Fleet Run Finished"
    ]
    assert finished[0]["detail"]["status"] == "declined"

    status, missing = stack.api("GET", "/v1/fleet-runs/flt_00000000000000000000", user=OWNER)
    assert (status, missing["error"]["code"]) == (404, "FLEET_RUN_NOT_FOUND")
    status, other = stack.api("GET", f"/v1/fleet-runs/{fleet_run_id}", user="someone-else")
    assert status == 404, other
    status, refused = stack.api(
        "POST", "/v1/fleet-runs", body={"message": "x", "tag": "nobody-has-it"}, user=OWNER
    )
    assert (status, refused["error"]["code"]) == (404, "FLEET_NO_TARGETS")
