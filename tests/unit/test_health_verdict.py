"""The health probe's reading of what the server fetched, and the verdict of a change (no site needed:
tests/integration/test_health_probe.py runs the probe on a real WordPress)."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from wp_agent.diagnostics.health import health_checks
from wp_agent.executors.port import CommandResult
from wp_agent.executors.site_health import HealthReport, Probed, compare, probe


class Answering:
    """A WpCli and FileStager whose `eval-file` prints the given probe answer."""

    def __init__(self, answer: dict[str, Any] | None, stderr: str = "", exit_code: int = 0) -> None:
        self.answer, self.stderr, self.exit_code = answer, stderr, exit_code
        self.argv: list[str] = []

    def run(self, argv: Sequence[str]) -> CommandResult:
        self.argv = list(argv)
        stdout = json.dumps(self.answer) if self.answer is not None else ""
        return CommandResult(stdout, self.stderr, self.exit_code, 5)

    @contextmanager
    def staged_files(self, files: Sequence[tuple[str, bytes]]) -> Iterator[list[str]]:
        yield [f"/tmp/staged/{name}" for name, _ in files]

    def close(self) -> None:
        pass


def page(name: str, status: int | None = 200, **more: Any) -> dict[str, Any]:
    return {"name": name, "url": "https://example.test/", "status": status, "bytes": 1000, "fatal": [],
            "rest": name == "rest" or None, "admin": name == "admin" or None, "login": name == "login" or None,
            "ms": 30, **more}  # fmt: skip


def answer(*pages: dict[str, Any], log: dict[str, Any] | None = None) -> dict[str, Any]:
    return {
        "pages": list(pages),
        "log": log or {"found": False, "size": None, "lines": []},
        "address": {"home": "https://example.test/", "siteurl": "https://example.test/"},
    }


HEALTHY = answer(page("front"), page("post"), page("admin"), page("rest"), page("login"))


def test_a_healthy_answer_passes_every_check_and_runs_the_staged_probe() -> None:
    wp = Answering(HEALTHY)
    report = probe(wp, wp, log_from=10)  # type: ignore[arg-type]
    assert report.healthy
    assert wp.argv[:2] == ["eval-file", "/tmp/staged/wp-agent-health-probe.php"]
    assert json.loads(wp.argv[2]) == {"connect": None, "log_from": 10, "fresh": []}


def test_what_each_page_answered_decides_it() -> None:
    cases = {
        "front": page("front", 500),
        "post": page("post", 200, bytes=0),
        "admin": page("admin", 302, redirect="https://example.test/wp-login.php"),
        "rest": page("rest", 200, rest=False),
    }
    for name, broken in cases.items():
        pages = [broken if p["name"] == name else p for p in HEALTHY["pages"]]
        wp = Answering(answer(*pages))
        assert probe(wp, wp).failing() == {name}, name  # type: ignore[arg-type]
    wp = Answering(answer(page("front", 200, fatal=["Fatal error"]), *HEALTHY["pages"][1:]))
    assert probe(wp, wp).failing() == {"front"}  # type: ignore[arg-type]


def test_wordpress_that_cannot_load_is_the_finding() -> None:
    wp = Answering(None, "PHP Fatal error:  Uncaught Error: Call to undefined function x()", 255)
    report = probe(wp, wp)  # type: ignore[arg-type]
    assert report.failing() == {"wpcli"}
    assert "undefined function" in report.probed[0].detail


def test_new_fatal_lines_in_the_log_fail_and_are_masked() -> None:
    log = {"found": True, "size": 900, "lines": ["PHP Fatal error: boom api_key=sk_live_abcdefghijklmnop"]}
    wp = Answering(answer(*HEALTHY["pages"], log=log))
    report = probe(wp, wp, log_from=100)  # type: ignore[arg-type]
    assert report.failing() == {"log"}
    assert report.log_size == 900
    assert "sk_live_abcdefghijklmnop" not in " ".join(report.new_log_lines)


def test_the_verdict_blames_a_change_only_for_what_it_broke() -> None:
    def report(*failing: str) -> HealthReport:
        names = ("front", "post", "admin", "rest", "wpcli", "log")
        return HealthReport(tuple(Probed(n, n not in failing, "x") for n in names))

    assert not compare(report(), report()).got_worse
    worse = compare(report(), report("admin"))
    assert worse.worse == ("admin",)
    assert "管理画面" in worse.text_ja()
    already = compare(report("front"), report("front"))
    assert not already.got_worse
    assert already.already_broken == ("front",)
    assert "変更前から" in already.text_ja()
    assert compare(report("front"), report()).text_ja() == "サイトは正常です。"


def probed(answer: dict[str, Any]) -> HealthReport:
    wp = Answering(answer)
    return probe(wp, wp)  # type: ignore[arg-type]


def test_a_backup_left_by_a_change_stopped_midway_is_shown_as_a_warning_not_a_failure() -> None:
    left = {
        "backup": "/tmp/wp-agent-guard-" + "0" * 32,
        "made": "2026-12-01 03:00 UTC",
        "holds": ["plugins:akismet"],
    }
    report = probed({**HEALTHY, "leftovers": [left]})
    assert report.healthy  # the site itself is fine
    [check] = [c for c in health_checks(report) if c.name == "health.leftover_backups"]
    assert check.ok
    assert "plugins:akismet" in check.detail
    assert "2026-12-01 03:00 UTC" in check.detail
    assert "削除" in check.warning
    assert not [c for c in health_checks(probed(HEALTHY)) if "leftover" in c.name]


def test_the_fresh_step_is_said_only_when_the_web_servers_cache_could_not_be_told() -> None:
    told = {"reached": True, "enabled": True, "invalidated": 3, "restricted": False}
    assert probed({**HEALTHY, "fresh": told}).notes == ()
    assert "3秒待って" in probed({**HEALTHY, "fresh": {"reached": False, "waited": 3}}).notes[0]
    never = {"reached": True, "restricted": True, "validate_timestamps": False, "waited": 0}
    assert "PHP を再起動するまで" in probed({**HEALTHY, "fresh": never}).notes[0]


def checked(*pages: dict[str, Any]) -> dict[str, Probed]:
    wp = Answering(answer(*pages))
    return {p.name: p for p in probe(wp, wp).probed}  # type: ignore[arg-type]


def test_a_page_sent_to_another_site_or_visitors_sent_to_the_login_is_broken() -> None:
    found = checked(
        page("front", 302, redirect="https://evil.example/landing"),
        page("post", 302, redirect="/wp-login.php?redirect_to=%2F"),
        page("rest", 301, redirect="https://example.test/wp-json/"),  # within the site: fine
    )
    assert not found["front"].ok
    assert "別のサイト（evil.example）" in found["front"].detail
    assert not found["post"].ok
    assert "ログイン画面へ転送" in found["post"].detail
    assert found["rest"].ok


def test_a_login_page_without_its_form_is_broken() -> None:
    found = checked(page("login", 200, login=False), page("front", 200))
    assert not found["login"].ok
    assert "ログインフォーム" in found["login"].detail


def test_a_probe_drowned_by_output_of_wordpress_says_what_was_printed() -> None:
    class Printing(Answering):
        def run(self, argv: Sequence[str]) -> CommandResult:
            return CommandResult('garbage before headers{"pages": []}', "", 0, 5)

    wp = Printing(None)
    [found] = probe(wp, wp).probed  # type: ignore[arg-type]
    assert not found.ok
    assert "余計な出力があります: garbage before headers" in found.detail


def test_a_change_on_a_site_of_the_network_is_probed_there() -> None:
    wp = Answering(HEALTHY)
    probe(wp, wp, site=("--url=https://example.test/shop/",))  # type: ignore[arg-type]
    assert wp.argv[-1] == "--url=https://example.test/shop/"
