"""The stored site: seeding, faults, bootstrap delay, concurrent writers, the `python -m` entry point."""

from __future__ import annotations

import json
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.fakes.simulator_fixtures import SimSite
from wp_agent.simulator import SITE_FILE_NAME, SiteStore, run_wp


@pytest.fixture
def site(tmp_path: Path) -> SimSite:
    return SimSite.create(tmp_path)


class SleepRecorder:
    def __init__(self) -> None:
        self.calls: list[float] = []

    def __call__(self, seconds: float) -> None:
        self.calls.append(seconds)


def test_site_file_is_seeded_under_the_wordpress_path(tmp_path: Path) -> None:
    result = run_wp([f"--path={tmp_path}", "option", "get", "home"], env={})
    assert result.stdout == "https://example.test\n"
    data = json.loads((tmp_path / SITE_FILE_NAME).read_text(encoding="utf-8"))
    assert data["format"] == "wp-sim-site/1"


def test_seed_is_deterministic(tmp_path: Path) -> None:
    first, second = SiteStore(tmp_path / "a.json"), SiteStore(tmp_path / "b.json")
    assert first.load() == second.load()


def test_store_helpers(site: SimSite) -> None:
    drafts = [post["ID"] for post in site.store.posts(status="draft")]
    assert drafts == [40, 41, 45, 46]
    assert site.store.get_option("blogname") == "Argo Note サンプルサイト"
    site.store.set_option("blogname", "変更後")
    assert site.wp("option", "get", "blogname").stdout == "変更後\n"


def test_seed_posts_for_the_benchmark(site: SimSite) -> None:
    ids = site.store.seed_posts(1000)
    assert len(ids) == 1000
    result = site.wp("post", "list", "--format=count")
    assert result.stdout == "1014"


# ------------------------------------------------------------------------------------ faults


def test_persistent_error_fault(site: SimSite) -> None:
    site.store.set_fault("media import", error="Unable to import file. Reason: Not Found", exit_code=1)
    for _ in range(2):
        result = site.wp("media", "import", "https://example.test/a.jpg")
        assert (result.exit_code, result.stdout, result.stderr) == (
            1,
            "",
            "Error: Unable to import file. Reason: Not Found\n",
        )
    assert site.wp("post", "list", "--format=count").exit_code == 0


def test_one_shot_fault_fires_once(site: SimSite) -> None:
    site.store.set_fault("post create", error="Database connection lost.", times=1)
    failed = site.wp("post", "create", "--post_title=x")
    assert failed.stderr == "Error: Database connection lost.\n"
    assert site.wp("post", "create", "--post_title=x").stdout == "Success: Created post 57.\n"
    assert site.store.faults() == []


def test_fault_matches_command_prefixes(site: SimSite) -> None:
    site.store.set_fault("post", error="boom", exit_code=2)
    assert site.wp("post", "meta", "list", "10").exit_code == 2
    assert site.wp("option", "get", "home").exit_code == 0
    site.store.clear_faults()
    site.store.set_fault("post create", error="boom")
    assert site.wp("post", "list", "--format=count").exit_code == 0


def test_delay_fault_sleeps_before_answering(site: SimSite) -> None:
    site.store.set_fault("post list", delay_ms=1500)
    recorder = SleepRecorder()
    result = run_wp([f"--path={site.root}", "post", "list", "--format=count"], env={}, sleep=recorder)
    assert result.stdout == "14"
    assert recorder.calls == [1.5]


def test_output_flood_fault(site: SimSite) -> None:
    size = 11 * 1024 * 1024
    site.store.set_fault("post list", stdout_bytes=size, times=1)
    result = site.wp("post", "list")
    assert result.exit_code == 0
    assert len(result.stdout.encode("utf-8")) == size
    assert site.wp("post", "list", "--format=count").stdout == "14"


# ------------------------------------------------------------------------------------ bootstrap delay


def test_bootstrap_delay_from_environment(site: SimSite) -> None:
    recorder = SleepRecorder()
    run_wp([f"--path={site.root}", "core", "version"], env={"WP_SIM_BOOTSTRAP_MS": "250"}, sleep=recorder)
    assert recorder.calls == [0.25]


def test_bootstrap_delay_from_site_file_and_env_wins(site: SimSite) -> None:
    site.store.set_bootstrap_ms(120)
    recorder = SleepRecorder()
    run_wp([f"--path={site.root}", "core", "version"], env={}, sleep=recorder)
    assert recorder.calls == [0.12]
    overridden = SleepRecorder()
    run_wp([f"--path={site.root}", "core", "version"], env={"WP_SIM_BOOTSTRAP_MS": "0"}, sleep=overridden)
    assert overridden.calls == []


# ------------------------------------------------------------------------------------ subprocess


def test_module_entry_point(site: SimSite) -> None:
    completed = site.wp_subprocess("post", "get", "47")
    assert (completed.returncode, completed.stdout, completed.stderr) == (
        1,
        "",
        "Error: Could not find the post with ID 47.\n",
    )
    listed = site.wp_subprocess("post", "list", "--post_status=draft", "--fields=ID,post_title")
    assert listed.returncode == 0
    assert listed.stdout.splitlines()[:2] == ["ID\tpost_title", "46\tWP-CLIで始める運用自動化"]


def test_bootstrap_delay_in_a_real_process(site: SimSite) -> None:
    started = time.perf_counter()
    completed = site.wp_subprocess("core", "version", env={"WP_SIM_BOOTSTRAP_MS": "300"})
    assert completed.stdout == "6.5.5\n"
    assert time.perf_counter() - started >= 0.3


def test_delay_fault_lets_callers_time_out(site: SimSite) -> None:
    site.store.set_fault("post list", delay_ms=5000)
    with pytest.raises(subprocess.TimeoutExpired):
        site.wp_subprocess("post", "list", timeout=1.0)


def test_concurrent_writers_lose_no_update(site: SimSite) -> None:
    titles = [f"並行記事 {number}" for number in range(20)]

    def create(title: str) -> subprocess.CompletedProcess[str]:
        return site.wp_subprocess("post", "create", f"--post_title={title}", "--porcelain")

    def add_meta(number: int) -> subprocess.CompletedProcess[str]:
        return site.wp_subprocess("post", "meta", "add", "10", "hits", str(number))

    with ThreadPoolExecutor(max_workers=5) as pool:
        created = list(pool.map(create, titles))
        metas = list(pool.map(add_meta, range(10)))

    assert all(process.returncode == 0 for process in created + metas)
    ids = sorted(int(process.stdout) for process in created)
    assert ids == list(range(57, 77))
    stored = {post["post_title"] for post in site.store.posts(status="draft")}
    assert set(titles) <= stored
    assert sorted(site.store.get_post_meta(10, "hits")) == sorted(str(number) for number in range(10))


def test_faults_written_as_raw_json(site: SimSite) -> None:
    # The shape an SSH-side test writes straight into the site file.
    with site.store.transaction() as data:
        data["faults"] = [
            {
                "id": 1,
                "command": "plugin install",
                "error": "Could not resolve host: downloads.wordpress.org",
                "exit_code": 1,
                "delay_ms": 0,
                "stdout_bytes": 0,
                "times": None,
            },
        ]
    result = site.wp("plugin", "install", "jetpack")
    assert (result.exit_code, result.stderr) == (
        1,
        "Error: Could not resolve host: downloads.wordpress.org\n",
    )


def test_clock_pinned_in_the_site_file(site: SimSite) -> None:
    site.store.pin_clock("2025-01-01 03:00:00")
    created = site.wp("post", "create", "--post_title=x", "--post_status=publish", "--porcelain")
    post = site.store.get_post(int(created.stdout))
    assert post is not None
    assert (post["post_date"], post["post_date_gmt"]) == ("2025-01-01 12:00:00", "2025-01-01 03:00:00")
