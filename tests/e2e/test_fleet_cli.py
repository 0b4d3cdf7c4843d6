"""Fleet runs from the CLI on four real WordPress sites (each its own MariaDB, files and loopback front, the
sandbox's WordPress.org offering the sample plugins' newer versions): `wp-agent fleet ask` plans on the
canary, the plan waits for its one approval, `fleet approve` runs it — the canary first, then the rest at
most `--concurrency` at a time — and one report says what became of every site.

  - one approval covers every site; a guarded update that breaks one site is taken back there and
    reported (rolledBack), the others keep theirs; at most two sites ran at once, none before the canary ended;
  - per-site values come from the plan's lookups (a post's ID differs on every site); a site where the
    approval text differs (the post is already in the trash there) waits for its own approval, a site
    without the post has nothing to do;
  - a canary taken back stops the rest (their plugins stay as they were)."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.anthropic_server import ScriptedAnthropicServer, reply_text, reply_tool_use
from tests.fakes.cli import run_cli
from tests.fakes.sshd import SshdRig
from tests.fakes.timeline import most_at_once
from tests.fakes.wordpress import TestWordPress
from tests.fakes.wordpress_fixtures import FLEET_GROUP
from wp_agent.sandbox import sample_updates
from wp_agent.sandbox.http_front import HttpFront
from wp_agent.sandbox.sample_updates import INSTALLED, OFFERED
from wp_agent.sandbox.update_server import UpdateServer

# (slow: started first, see conftest; the fleet's sites are shared with the API's fleet tests)
pytestmark = [pytest.mark.slow, pytest.mark.timeout(420), pytest.mark.xdist_group(FLEET_GROUP)]
GOOD, BROKEN = "wpa-sample-good", "wpa-sample-front-fatal"
NAMES = ("s1", "s2", "s3", "s4")


@dataclass
class FleetSite:
    name: str
    wordpress: TestWordPress
    server: UpdateServer
    front: HttpFront

    def version(self, slug: str) -> str:
        return self.wordpress.wp("plugin", "get", slug, "--field=version").stdout.strip()


@pytest.fixture
def fleet(fleet_sites: list[tuple[TestWordPress, HttpFront]]) -> Iterator[list[FleetSite]]:
    """The four sites as seeded, each with its update server (the sample plugins' newer versions)."""
    with ExitStack() as stack:
        sites = []
        for name, (wordpress, front) in zip(NAMES, fleet_sites, strict=True):
            wordpress.reset()  # (the database as seeded; an update server's routing is put back below)
            server = stack.enter_context(UpdateServer(wordpress.site, sample_updates.offered()))
            sites.append(FleetSite(name, wordpress, server, front))
        yield sites


def _prepare(sites: list[FleetSite], *, broken_on: set[str]) -> None:
    """The good sample plugin at its installed version and active everywhere; the broken one too where named."""
    extensions = {e.slug: e for e in sample_updates.installed()}
    for site in sites:
        for slug in (GOOD, BROKEN):
            site.server.install(extensions[slug])
        active = [GOOD, BROKEN] if site.name in broken_on else [GOOD]
        assert site.wordpress.wp("plugin", "activate", *active).returncode == 0


def _cli(home: Path, sites: list[FleetSite], model: ScriptedAnthropicServer, sshd: SshdRig) -> Any:
    connect = ",".join(f"{s.wordpress.path}=127.0.0.1:{s.front.port}" for s in sites)
    env = {
        "ANTHROPIC_API_KEY": "test-key",
        "ANTHROPIC_BASE_URL": model.base_url,
        "WP_AGENT_HEALTH_CONNECT": connect,
    }
    wp_bin = str(sshd.bin_dir / "wp")
    for site in sites:
        added = run_cli(
            home, "sites", "add", site.name, "--local", str(site.wordpress.path), "--wp-bin", wp_bin
        )
        assert added.returncode == 0, added.stderr
        tagged = run_cli(home, "sites", "tags", site.name, "--add", "clients")
        assert tagged.returncode == 0, tagged.stderr

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return run_cli(home, *args, **env)

    return cli


def _audit(home: Path) -> list[dict[str, Any]]:
    path = home / ".wp-agent" / "audit.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _spans(audit: list[dict[str, Any]], run_ids: list[str]) -> dict[str, tuple[datetime, datetime]]:
    spans = {}
    for run_id in run_ids:
        times = [datetime.fromisoformat(r["timestamp"]) for r in audit if r.get("run_id") == run_id]
        spans[run_id] = (min(times), max(times))
    return spans


def _plans_all_updates(model: ScriptedAnthropicServer) -> None:
    """The model's planning on the canary: one step, every plugin updated (guarded)."""
    model.enqueue(
        reply_tool_use([("wp_cli", {"command": "plugin update --all", "reason": "全プラグインを更新"})]),
        reply_text("全てのプラグインを、確認しながら更新する計画です。"),
    )


def test_one_approval_runs_the_plan_everywhere_and_reports_the_site_it_was_taken_back_on(
    tmp_path: Path, fleet: list[FleetSite], scripted_anthropic: ScriptedAnthropicServer, sshd_server: SshdRig
) -> None:
    _prepare(fleet, broken_on={"s3"})
    cli = _cli(tmp_path, fleet, scripted_anthropic, sshd_server)
    _plans_all_updates(scripted_anthropic)
    planned = cli(
        "fleet",
        "ask",
        "--tag",
        "clients",
        "--concurrency",
        "2",
        "--tolerated-failures",
        "25%",  # of 4 sites: one (without it, s4 would not start if s3 had been taken back first)
        "--json",
        "全サイトのプラグインを安全に更新して",
    )
    assert planned.returncode == 3, planned.stderr  # the plan waits for its one approval
    shown = json.loads(planned.stdout)
    assert shown["status"] == "awaitingApproval"
    assert shown["canary"] == ["s1"]
    assert shown["sites"] == list(NAMES)
    assert (shown["toleratedFailures"], shown["toleratedFailurePercentage"]) == (1, 25)
    assert [step["command"] for step in shown["plan"]] == ["plugin update --all"]
    assert "自動で変更前の状態に戻し" in shown["plan"][0]["impactJa"]
    assert {site.version(GOOD) for site in fleet} == {INSTALLED}  # planning ran nothing, not even on s1
    assert len(scripted_anthropic.requests) == 2  # the model planned once, on the canary

    ran = cli("fleet", "approve", shown["fleetRunId"], "--json")
    assert ran.returncode == 6, ran.stdout  # partial failure: one site was taken back
    report = json.loads(ran.stdout)
    by_site = {r["site"]: r for r in report["results"]}
    assert {site: r["status"] for site, r in by_site.items()} == {
        "s1": "completed", "s2": "completed", "s3": "rolledBack", "s4": "completed",
    }  # fmt: skip
    assert [name for name, r in by_site.items() if r["canary"]] == ["s1"]
    assert "戻しました" in by_site["s3"]["detailJa"]
    assert {site.name: site.version(GOOD) for site in fleet} == dict.fromkeys(NAMES, OFFERED)
    assert fleet[2].version(BROKEN) == INSTALLED  # taken back on s3; the site works as before
    assert fleet[2].front.get("/").status == 200
    assert len(scripted_anthropic.requests) == 2  # running the plan asked the model nothing

    audit = _audit(tmp_path)
    run_ids = [by_site[name]["runId"] for name in NAMES]
    approvals = [r for r in audit if r["type"] == "approval_approved" and r["run_id"] in run_ids]
    assert sorted(r["run_id"] for r in approvals) == sorted(run_ids)  # each site's update, approved once
    assert {r["approver"] for r in approvals} == {f"fleet:{report['fleetRunId']}:cli:local-user"}
    assert not [r for r in audit if r["type"] == "approval_requested" and r["run_id"] in run_ids]
    told = {r["run_id"]: r["status"] for r in audit if r["type"] == "fleet_site_result"}
    assert told == {by_site[name]["runId"]: by_site[name]["status"] for name in NAMES}  # in each site's trail
    spans = _spans(audit, run_ids)
    canary_end = spans[run_ids[0]][1]
    assert all(start >= canary_end for start, _ in (spans[r] for r in run_ids[1:]))  # the canary first
    assert most_at_once([spans[r] for r in run_ids[1:]]) == 2  # side by side, never more than asked


def test_per_site_values_are_looked_up_and_a_site_whose_text_differs_waits_for_its_own_approval(
    tmp_path: Path, fleet: list[FleetSite], scripted_anthropic: ScriptedAnthropicServer, sshd_server: SshdRig
) -> None:
    _prepare(fleet, broken_on=set())
    ids = {}
    for number, site in enumerate(fleet[:3]):
        for _ in range(number):  # a different ID on every site
            site.wordpress.wp("post", "create", "--post_title=filler", "--post_status=draft")
        created = site.wordpress.wp("post", "create", "--post_title=お知らせ", "--post_name=fleet-notice",
                                    "--post_status=publish", "--porcelain")  # fmt: skip
        ids[site.name] = created.stdout.strip()
    assert len(set(ids.values())) == 3
    fleet[2].wordpress.wp("post", "delete", ids["s3"])  # in the trash on s3: deleting it there is final
    cli = _cli(tmp_path, fleet, scripted_anthropic, sshd_server)
    # (by title: WordPress renames a trashed post's slug)
    lookup = "post list --title=お知らせ --post_type=post --post_status=publish,trash --field=ID"
    scripted_anthropic.enqueue(
        reply_tool_use([("wp_cli", {"command": "post delete {post}", "lookups": {"post": lookup}, "reason": "お知らせを削除"})]),
        reply_text("各サイトの「お知らせ」をゴミ箱に移す計画です。"),
    )  # fmt: skip
    planned = cli("fleet", "ask", "--sites", "s1,s2,s3,s4", "--json", "全サイトのお知らせの投稿を削除して")
    assert planned.returncode == 3, planned.stderr
    shown = json.loads(planned.stdout)
    [step] = shown["plan"]
    assert (step["command"], step["lookups"]) == ("post delete {post}", {"post": lookup})
    assert step["summaryJa"] == "投稿（ID: {post}）をゴミ箱へ移動します"

    ran = cli("fleet", "approve", shown["fleetRunId"], "--json")
    report = json.loads(ran.stdout)
    by_site = {r["site"]: r for r in report["results"]}
    assert {site: r["status"] for site, r in by_site.items()} == {
        "s1": "completed", "s2": "completed", "s3": "awaitingApproval", "s4": "skipped",
    }, ran.stdout  # fmt: skip
    assert ran.returncode == 3  # a site waits for its own approval
    assert by_site["s3"]["approvalId"].startswith("apr_")
    assert "「post」に当たるものがこのサイトにありません" in by_site["s4"]["detailJa"]
    assert fleet[0].wordpress.status_of(int(ids["s1"])) == "trash"
    assert fleet[1].wordpress.status_of(int(ids["s2"])) == "trash"
    assert fleet[2].wordpress.status_of(int(ids["s3"])) == "trash"  # not deleted for good: it waits
    kept = tmp_path / ".wp-agent" / "pending" / f"{by_site['s3']['approvalId']}.json"
    assert kept.exists()  # for `wp-agent approve <id> --site s3`


def test_a_canary_taken_back_stops_the_rest(
    tmp_path: Path, fleet: list[FleetSite], scripted_anthropic: ScriptedAnthropicServer, sshd_server: SshdRig
) -> None:
    _prepare(fleet, broken_on={"s3"})
    cli = _cli(tmp_path, fleet, scripted_anthropic, sshd_server)
    _plans_all_updates(scripted_anthropic)
    ran = cli("fleet", "ask", "--sites", "s3,s1,s2,s4", "--yes", "--json", "全サイトのプラグインを更新して")
    assert ran.returncode == 1, ran.stderr
    report = json.loads(ran.stdout)
    assert report["status"] == "stopped"
    statuses = {r["site"]: r["status"] for r in report["results"]}
    assert statuses == {"s3": "rolledBack", "s1": "skipped", "s2": "skipped", "s4": "skipped"}
    assert all("カナリア" in r["detailJa"] for r in report["results"][1:])
    assert {site.name: site.version(GOOD) for site in fleet} == {
        "s1": INSTALLED,
        "s2": INSTALLED,
        "s3": OFFERED,
        "s4": INSTALLED,
    }
