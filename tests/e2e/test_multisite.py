"""UC-6 over the real sshd: a run scoped to one site of the real multisite network, and network commands."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.anthropic_server import (
    RecordedRequest,
    ScriptedAnthropicServer,
    reply_text,
    reply_tool_use,
    tool_results_text,
)
from tests.fakes.cli import ask_json
from tests.fakes.sshd import SshdRig
from tests.fakes.wordpress import TestWordPress

pytestmark = pytest.mark.sshd
EN = "https://example.test/en/"


@pytest.fixture
def site(rig_site: TestWordPress) -> TestWordPress:
    return rig_site


def ask(
    server: ScriptedAnthropicServer, rig: SshdRig, tmp_path: Path, *args: str
) -> tuple[int, dict[str, Any]]:
    code, output, _ = ask_json(server, rig, tmp_path, *args)
    return code, output


def test_run_scoped_to_one_site(
    sshd_server: SshdRig, site: TestWordPress, tmp_path: Path, scripted_anthropic: ScriptedAnthropicServer
) -> None:
    english = [p["ID"] for p in site.wp_json("post", "list", "--fields=ID", url=EN)]
    assert english  # the English site's own posts, not the main site's
    assert sorted(english) != sorted(p["ID"] for p in site.wp_json("post", "list", "--fields=ID"))

    def answer(request: RecordedRequest) -> Any:
        rows = json.loads(tool_results_text(request).split(">", 1)[1].rsplit("</tool_output>", 1)[0])
        return reply_text("英語サイトの投稿: " + ", ".join(str(r["ID"]) for r in rows))

    scripted_anthropic.enqueue(
        reply_tool_use(
            [("wp_cli", {"command": "post list --format=json --fields=ID,post_title", "reason": "一覧"})]
        ),
        answer,
    )
    code, output = ask(scripted_anthropic, sshd_server, tmp_path, "--site-url", EN, "投稿一覧を見せて")
    assert code == 0, output
    # the command as it really ran, with the --url the site scope added
    assert (
        output["executedCommands"][0]["command"]
        == f"post list --format=json --fields=ID,post_title --url={EN}"
    )
    shown = output["response"].split("\n")[0].removeprefix("英語サイトの投稿: ").split(", ")
    assert sorted(map(int, shown)) == sorted(english)
    content = scripted_anthropic.message_requests[0].json["messages"][-1]["content"]
    facts, instruction = content[0]["text"], content[-1]["text"]  # the site's facts head the first message
    assert EN in instruction
    assert f"ネットワークの1サイト {EN} が対象です" in facts


def test_site_id_is_resolved_and_other_sites_are_refused(
    sshd_server: SshdRig, site: TestWordPress, tmp_path: Path, scripted_anthropic: ScriptedAnthropicServer
) -> None:
    scripted_anthropic.enqueue(
        reply_tool_use(
            [
                (
                    "wp_cli",
                    {
                        "command": "post list --url=https://example.test/shop/ --format=count",
                        "reason": "別サイト",
                    },
                )
            ]
        ),
        reply_text("別のサイトは操作できませんでした。"),
    )
    code, output = ask(scripted_anthropic, sshd_server, tmp_path, "--site-id", "2", "ショップの投稿数は？")
    assert code == 1
    assert output["error"]["code"] == "COMMAND_BLOCKED"
    assert output["executedCommands"] == []  # the site was resolved by the CLI before the model ran
    assert "scope" not in json.dumps(output)  # the reason is Japanese, the rule id stays internal
    assert "https://example.test/en/" in output["error"]["details"]["reason"]


def test_network_admin_creates_a_site(
    sshd_server: SshdRig, site: TestWordPress, tmp_path: Path, scripted_anthropic: ScriptedAnthropicServer
) -> None:
    scripted_anthropic.enqueue(
        reply_tool_use(
            [
                (
                    "wp_cli",
                    {
                        # Without --email: the network's administrator becomes the new site's (an
                        # address would be a new login, which waits for approval).
                        "command": "site create --slug=tokyo --title='東京支店' --porcelain",
                        "reason": "作成",
                    },
                )
            ]
        ),
        reply_text("サイトを作成しました。"),
    )
    code, output = ask(
        scripted_anthropic, sshd_server, tmp_path, "--network-wide", "東京支店のサイトを作って"
    )
    assert code == 0, output
    assert "https://example.test/tokyo/" in [
        row["url"] for row in site.wp_json("site", "list", "--fields=url")
    ]


def test_a_site_check_reads_the_site_of_the_session(
    sshd_server: SshdRig, site: TestWordPress, tmp_path: Path, scripted_anthropic: ScriptedAnthropicServer
) -> None:
    """A featured image must be an image of the site the write goes to: in a session scoped to /en/
    the turn's check read carries that site's --url (and the scope lets it run), so the main site's
    image 58 does not confirm an English post's featured image — the write waits for approval."""
    english_post = str(site.wp_json("post", "list", "--fields=ID", url=EN)[0]["ID"])
    assert site.wp("post", "get", "58", "--field=post_type").stdout.strip() == "attachment"
    assert site.wp("post", "get", "58", "--field=post_type", url=EN).returncode != 0  # no 58 on /en/
    then = site.wp("post", "meta", "list", english_post, "--format=json", url=EN).stdout
    write = f"post meta update {english_post} _thumbnail_id 58"
    scripted_anthropic.enqueue(
        reply_tool_use([("wp_cli", {"command": write, "reason": "アイキャッチ"})]),
        reply_text("承認をお待ちしています。"),
    )
    code, output, audit = ask_json(
        scripted_anthropic, sshd_server, tmp_path, "--site-url", EN, "アイキャッチを設定して"
    )
    assert code == 3, output  # held for approval
    records = [json.loads(line) for line in audit.splitlines()]
    reads = [r["command"] for r in records if r["type"] == "command_executed"]
    # the check that 58 is an image ran on /en/ (not refused by the scope), as did the post's own
    [image_read] = [r for r in reads if r.startswith("post list --post__in=58 --post_type=attachment")]
    assert image_read.endswith(f"--url={EN}")
    assert f"post get {english_post} --field=post_type --url={EN}" in reads
    [held] = [r for r in records if r["type"] == "approval_requested"]
    assert held["command"] == f"{write} --url={EN}"
    assert held["rule"] == "confirm.site_check"
    [shown] = output["error"]["details"]["commands"]
    assert "画像（メディア）であることを確認できませんでした" in shown["impact"]  # what held it
    assert "範囲内のため承認なしで実行できます" not in shown["impact"]
    assert site.wp("post", "meta", "list", english_post, "--format=json", url=EN).stdout == then
