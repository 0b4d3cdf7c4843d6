"""The CLI installed on its own (the built wheel in a fresh virtualenv, runtime dependencies only, no
PHP, MariaDB or WP-CLI on PATH, run outside the checkout) works against a site over SSH, and names
the one command that installs the sandbox instead of installing anything by itself."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.fakes.anthropic_server import ScriptedAnthropicServer, reply_text
from tests.fakes.installed_cli import install_alone, runtime_closure
from tests.fakes.sshd import SshdRig
from tests.fakes.wordpress import TestWordPress
from tests.fakes.wordpress_fixtures import CURRENT

pytestmark = pytest.mark.slow

DEV_AND_INFRA_ONLY = (
    "pytest",
    "moto",
    "aws_cdk",
    "constructs",
    "cdk_nag",
    "hypothesis",
    "schemathesis",
    "mypy",
)


@pytest.fixture(scope="module")
def installed_bin(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return install_alone(tmp_path_factory.mktemp("installed"))


def run_installed(
    bin_dir: Path, home: Path, *args: str, on_path: bool = True, **env: str
) -> subprocess.CompletedProcess[str]:
    """`wp-agent` from that virtualenv: PATH holds only its bin directory (or nothing), the working
    directory is not the checkout, HOME is the test's."""
    return subprocess.run(
        [str(bin_dir / "wp-agent"), *args],
        capture_output=True, text=True, timeout=120, check=False, cwd=home, stdin=subprocess.DEVNULL,
        env={"PATH": str(bin_dir) if on_path else str(home / "bin"), "HOME": str(home),
             "AWS_EC2_METADATA_DISABLED": "true", **env},
    )  # fmt: skip


def test_the_runtime_needs_nothing_of_the_dev_and_infra_extras() -> None:
    closure = runtime_closure()
    assert {"anthropic", "paramiko", "pydantic", "mcp", "rich", "boto3"} <= set(closure)
    assert not {"pytest", "moto", "aws-cdk-lib", "constructs", "cdk-nag", "mypy", "ruff"} & set(closure)


def test_installed_alone_it_runs_against_a_site_over_ssh(
    installed_bin: Path,
    tmp_path: Path,
    sshd_server: SshdRig,
    rig_site: TestWordPress,
    scripted_anthropic: ScriptedAnthropicServer,
) -> None:
    python = installed_bin / "python"
    where = subprocess.run(
        [str(python), "-c", "import wp_agent; print(wp_agent.__file__)"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "site-packages" in where  # the installed wheel, not the checkout
    for module in DEV_AND_INFRA_ONLY:
        missing = subprocess.run([str(python), "-c", f"import {module}"], capture_output=True, check=False)
        assert missing.returncode != 0, f"{module} is importable"

    helped = run_installed(installed_bin, tmp_path, "--help")
    assert helped.returncode == 0, helped.stderr
    assert "sites" in helped.stdout

    added = run_installed(
        installed_bin, tmp_path, "sites", "add", "blog", "--ssh", f"{sshd_server.user}@{sshd_server.host}:{sshd_server.port}",
        "--wp-path", sshd_server.wp_path, "--key", str(sshd_server.client_key_path),
        "--host-key", sshd_server.host_key_line,
    )  # fmt: skip
    assert added.returncode == 0, added.stderr
    assert '使い方: wp-agent ask --site blog "' in added.stderr  # on PATH: its name

    doctor = run_installed(
        installed_bin, tmp_path, "doctor", "--json", ANTHROPIC_API_KEY="test-key",
        WP_AGENT_HEALTH_CONNECT=sshd_server.health_connect,  # the rig's site over loopback HTTP
    )  # fmt: skip
    assert doctor.returncode == 0, doctor.stdout + doctor.stderr
    report = json.loads(doctor.stdout)
    assert report["site"] == "blog"  # the default site, nothing else configured
    checks = {check["name"]: check for check in report["checks"]}
    assert checks["ssh.host_key"]["ok"]
    assert checks["wp.wordpress"]["detail"].startswith(f"バージョン {CURRENT.version}")

    scripted_anthropic.enqueue(reply_text("下書きは4件です。"))
    asked = run_installed(
        installed_bin, tmp_path, "ask", "--json", "下書きは何件？",
        ANTHROPIC_API_KEY="test-key", ANTHROPIC_BASE_URL=scripted_anthropic.base_url,
    )  # fmt: skip
    assert asked.returncode == 0, asked.stderr
    assert json.loads(asked.stdout)["response"] == "下書きは4件です。"


def test_installed_alone_the_sandbox_names_the_command_that_installs_it(
    installed_bin: Path, tmp_path: Path, scripted_anthropic: ScriptedAnthropicServer
) -> None:
    if os.environ.get("WP_CLI_PHAR"):
        pytest.skip("WP_CLI_PHAR points at a WP-CLI for the sandbox")
    done = run_installed(
        installed_bin, tmp_path, "ask", "投稿一覧", on_path=False,
        ANTHROPIC_API_KEY="test-key", ANTHROPIC_BASE_URL=scripted_anthropic.base_url,
    )  # fmt: skip
    assert done.returncode == 5, done.stderr
    [line] = done.stderr.strip().splitlines()
    assert line.startswith("設定エラー [SANDBOX_NOT_INSTALLED]: ")
    assert "PHP" in line  # not on this PATH
    assert f"{installed_bin}/wp-agent sandbox install で入れてください" in line  # not on PATH: its path
    assert scripted_anthropic.request_count == 0
    assert not (tmp_path / ".wp-agent" / "sandbox").exists()  # nothing was set up behind the person's back
