"""SshWpCli against a real OpenSSH sshd on 127.0.0.1 (tests/fakes/sshd.py) with the real WP-CLI as `wp`."""

from __future__ import annotations

import base64
import json
import logging
import socket
import subprocess
import threading
import time
import tracemalloc
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import paramiko
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ed25519
from moto import mock_aws

from tests.fakes.sshd import SshdRig, random_host_key_line
from tests.fakes.wordpress import TestWordPress
from wp_agent.errors import AgentErrorCode, WpAgentError
from wp_agent.executors.port import OUTPUT_LIMIT_BYTES, CommandResult, run_read
from wp_agent.executors.ssh import SshConnectionPool, SshWpCli, close_pooled_connections
from wp_agent.executors.ssh_keys import KeyMethod, SshCredentials, clear_secret_cache, load_ssh_credentials

pytestmark = pytest.mark.sshd


@pytest.fixture
def rig(sshd_server: SshdRig) -> SshdRig:
    """The shared sshd with no client connected, so the connections a test counts are its own."""
    sshd_server.wait_idle()
    return sshd_server


@pytest.fixture
def pool() -> Iterator[SshConnectionPool]:
    pool = SshConnectionPool()
    yield pool
    pool.close_all()


def _running(marker: str) -> list[str]:
    found = subprocess.run(["pgrep", "-af", marker], capture_output=True, text=True, check=False)
    return [line for line in found.stdout.splitlines() if "pgrep" not in line]


def _wait_gone(marker: str, seconds: float) -> list[str]:
    deadline = time.monotonic() + seconds
    while (left := _running(marker)) and time.monotonic() < deadline:
        time.sleep(0.1)
    return left


def _max_overlap(log: Path) -> int:
    events = []
    for line in log.read_text().splitlines():
        kind, stamp, _pid = line.split()
        events.append((float(stamp), 1 if kind == "start" else -1))
    # Ends sort before starts at the same instant so back-to-back commands do not count as overlapping.
    running = peak = 0
    for _, delta in sorted(events, key=lambda e: (e[0], e[1])):
        running += delta
        peak = max(peak, running)
    return peak


def _unused_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _new_key(passphrase: str | None = None) -> tuple[str, str]:
    key = ed25519.Ed25519PrivateKey.generate()
    encryption: serialization.KeySerializationEncryption = (
        serialization.BestAvailableEncryption(passphrase.encode())
        if passphrase
        else serialization.NoEncryption()
    )
    private = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.OpenSSH, encryption
    ).decode()
    public = key.public_key().public_bytes(serialization.Encoding.OpenSSH, serialization.PublicFormat.OpenSSH)
    return private, public.decode()


class _ConnectCounter:
    """Counts paramiko connect attempts (each retry is one)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.count = 0
        original = paramiko.SSHClient.connect

        def counting(client: paramiko.SSHClient, *args: Any, **kwargs: Any) -> None:
            self.count += 1
            original(client, *args, **kwargs)

        monkeypatch.setattr(paramiko.SSHClient, "connect", counting)


# --- commands ----------------------------------------------------------------------------------


def test_post_list_on_real_wordpress(
    rig: SshdRig, pool: SshConnectionPool, seeded_wordpress: TestWordPress
) -> None:
    wp = SshWpCli(rig.settings(), pool=pool)
    result = wp.run(["post", "list", "--format=json", "--fields=ID,post_status"])
    assert result.exit_code == 0, result.stderr
    assert result.stderr == ""  # the login user's session adds nothing to stderr
    posts = json.loads(result.stdout)
    facts = seeded_wordpress.facts
    # WP-CLI lists every status but trash unless --post_status says otherwise.
    listed = ["publish_post_ids", "future_post_ids", "private_post_ids", "pending_post_ids", "draft_post_ids"]
    assert sorted(p["ID"] for p in posts) == sorted(i for key in listed for i in facts[key])
    assert not result.truncated
    assert wp.simulated is False


def test_wp_cli_error_is_exit_1_with_error_line(rig: SshdRig, pool: SshConnectionPool) -> None:
    wp = SshWpCli(rig.settings(), pool=pool)
    result = wp.run(["post", "get", "987654"])
    assert result.exit_code == 1
    assert result.stderr == "Error: Could not find the post with ID 987654.\n"


def test_injected_faults_timeout_and_flood(rig: SshdRig, pool: SshConnectionPool) -> None:
    try:
        rig.set_fault("post list", delay_ms=30_000, times=1)
        slow = SshWpCli(rig.settings(wp_cli_timeout=1000), pool=pool)
        with pytest.raises(WpAgentError) as caught:
            slow.run(["post", "list", "--format=json"])
        assert caught.value.code is AgentErrorCode.COMMAND_TIMEOUT
        rig.clear_faults()
        rig.set_fault("post list", stdout_bytes=OUTPUT_LIMIT_BYTES + 1_000_000, times=1)
        flooded = SshWpCli(rig.settings(), pool=pool).run(["post", "list"])
        assert flooded.truncated
        assert len(flooded.stdout.encode()) == OUTPUT_LIMIT_BYTES
        # Consumed: the next `post list` is WordPress again.
        assert (
            SshWpCli(rig.settings(), pool=pool)
            .run(["post", "list", "--format=count"])
            .stdout.strip()
            .isdigit()
        )
    finally:
        rig.clear_faults()


def test_arguments_reach_wp_literally(rig: SshdRig, pool: SshConnectionPool) -> None:
    canary = rig.scratch_dir / f"pwned-{uuid.uuid4().hex}"  # where the login user could write it
    hostile = [
        "post",
        "create",
        f"--post_title=x; touch {canary}",
        f"--post_content=<p>$(touch {canary}) `touch {canary}` && echo | cat > {canary}</p>",
        'it\'s "quoted"',
        "",
    ]
    wp = SshWpCli(rig.settings(wp_cli_bin="wp-stub"), pool=pool)
    result = wp.run(hostile)
    assert result.exit_code == 0, result.stderr
    allow_root = ["--allow-root"] if rig.user == "root" else []
    assert json.loads(result.stdout) == [f"--path={rig.wp_path}", *allow_root, *hostile]
    assert not canary.exists()


def test_remote_command_format(rig: SshdRig) -> None:
    settings = rig.settings(wp_path="/var/www/my site", wp_cli_timeout=60_000, wp_cli_bin="php /opt/wp.phar")
    wp = SshWpCli(settings.model_copy(update={"vps_ssh_user": "deploy"}))
    assert wp.remote_command(["post", "list", "--post_title=a b"]) == (
        "exec timeout -k 5 60 php /opt/wp.phar '--path=/var/www/my site' post list '--post_title=a b'"
    )
    as_root = SshWpCli(settings.model_copy(update={"vps_ssh_user": "root"}))
    assert as_root.remote_command(["post", "list"]) == (
        "exec timeout -k 5 60 php /opt/wp.phar '--path=/var/www/my site' --allow-root post list"
    )
    as_author = SshWpCli(
        settings.model_copy(update={"vps_ssh_user": "deploy", "wp_agent_wp_user": "山田 太郎"})
    )
    assert as_author.remote_command(["post", "list"]) == (
        "exec timeout -k 5 60 php /opt/wp.phar '--path=/var/www/my site' '--user=山田 太郎' post list"
    )


def test_timeout_ends_the_remote_process(rig: SshdRig, pool: SshConnectionPool) -> None:
    marker = f"wpagent-ssh-{uuid.uuid4().hex}"
    wp = SshWpCli(rig.settings(wp_cli_bin="wp-stub", wp_cli_timeout=1000), pool=pool)
    with pytest.raises(WpAgentError) as caught:
        wp.run(["--stub-sleep=60", "--stub-child-sleep=60", f"--stub-marker={marker}"])
    assert caught.value.code is AgentErrorCode.COMMAND_TIMEOUT
    assert _wait_gone(marker, 5) == []
    # The connection is still usable afterwards.
    assert wp.run(["--stub-exit=0"]).exit_code == 0


@pytest.mark.slow
def test_local_deadline_closes_the_channel_and_remote_kill_follows(
    rig: SshdRig, pool: SshConnectionPool
) -> None:
    # The command ignores SIGTERM, so the remote `timeout` needs its -k 5 KILL; we stop waiting earlier.
    marker = f"wpagent-ssh-{uuid.uuid4().hex}"
    wp = SshWpCli(rig.settings(wp_cli_bin="wp-stub", wp_cli_timeout=500), pool=pool, local_grace_seconds=0.5)
    with pytest.raises(WpAgentError) as caught:
        wp.run(["--stub-ignore-term", "--stub-sleep=60", f"--stub-marker={marker}"])
    assert caught.value.code is AgentErrorCode.COMMAND_TIMEOUT
    assert _wait_gone(marker, 10) == []


def test_output_cap_flags_truncation_and_bounds_memory(rig: SshdRig, pool: SshConnectionPool) -> None:
    wp = SshWpCli(rig.settings(wp_cli_bin="wp-stub"), pool=pool)
    wp.run(["--stub-exit=0"])  # connect outside the measurement
    tracemalloc.start()
    try:
        result = wp.run([f"--stub-stdout-bytes={OUTPUT_LIMIT_BYTES * 3}", "--stub-stderr=Warning: big"])
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert result.truncated
    assert result.exit_code == 0  # read to the end, the command finished normally
    assert len(result.stdout.encode()) == OUTPUT_LIMIT_BYTES
    assert result.stderr == "Warning: big\n"
    # 30 MB went through; we kept 10 MB (bytes + decoded text) plus paramiko's window.
    assert peak < 35 * 1024 * 1024, peak


# --- host keys and authentication ----------------------------------------------------------------


def test_changed_host_key_is_refused_without_retry(
    rig: SshdRig, pool: SshConnectionPool, monkeypatch: pytest.MonkeyPatch
) -> None:
    counter = _ConnectCounter(monkeypatch)
    sleeps: list[float] = []
    wrong = random_host_key_line()
    wp = SshWpCli(rig.settings(vps_ssh_host_key=wrong), pool=pool, sleep=sleeps.append)
    with pytest.raises(WpAgentError) as caught:
        wp.run(["post", "list"])
    error = caught.value
    assert error.code is AgentErrorCode.SSH_CONNECTION_FAILED
    assert error.details["cause"] == "host_key_mismatch"
    expected_fp = load_ssh_credentials(rig.settings(vps_ssh_host_key=wrong)).host_fingerprints[0]
    presented_fp = load_ssh_credentials(rig.settings()).host_fingerprints[0]
    assert expected_fp in error.message_ja
    assert presented_fp in error.message_ja
    assert "ホスト鍵" in error.message_ja
    assert counter.count == 1
    assert sleeps == []


def test_rotated_server_host_key_is_refused_until_repinned(rig: SshdRig, pool: SshConnectionPool) -> None:
    old_settings = rig.settings(wp_cli_bin="wp-stub")
    assert SshWpCli(old_settings, pool=pool).run(["--stub-exit=0"]).exit_code == 0
    rig.rotate_host_key()
    with pytest.raises(WpAgentError) as caught:
        SshWpCli(old_settings, pool=SshConnectionPool()).run(["--stub-exit=0"])
    assert caught.value.details["cause"] == "host_key_mismatch"
    # The pooled connection died with the restart; reconnecting does not bypass the pin either.
    with pytest.raises(WpAgentError) as caught:
        SshWpCli(old_settings, pool=pool).run(["--stub-exit=0"])
    assert caught.value.details["cause"] == "host_key_mismatch"
    assert SshWpCli(rig.settings(wp_cli_bin="wp-stub"), pool=pool).run(["--stub-exit=0"]).ok


def test_unknown_host_key_is_refused(rig: SshdRig, pool: SshConnectionPool) -> None:
    loaded = load_ssh_credentials(rig.settings())
    no_pins = SshCredentials(method=KeyMethod.FILE, private_key=loaded.private_key, host_keys=())
    wp = SshWpCli(rig.settings(), credentials=no_pins, pool=pool)
    with pytest.raises(WpAgentError) as caught:
        wp.run(["post", "list"])
    assert caught.value.details["cause"] == "host_key_mismatch"
    assert caught.value.details["kind"] == "unknown"
    assert loaded.host_fingerprints[0] in caught.value.message_ja


def test_known_hosts_for_another_host_is_refused(rig: SshdRig, tmp_path: Path) -> None:
    known_hosts = tmp_path / "known_hosts"
    known_hosts.write_text(f"[127.0.0.1]:1 {rig.host_key_line}\n")
    with pytest.raises(WpAgentError) as caught:
        SshWpCli(rig.settings(vps_ssh_host_key=None, vps_ssh_known_hosts=known_hosts)).run(["post", "list"])
    assert "未登録" in caught.value.message_ja


def test_known_hosts_file_pin_works(rig: SshdRig, pool: SshConnectionPool) -> None:
    settings = rig.settings(
        vps_ssh_host_key=None, vps_ssh_known_hosts=rig.known_hosts_path, wp_cli_bin="wp-stub"
    )
    assert SshWpCli(settings, pool=pool).run(["--stub-exit=0"]).ok


def test_unauthorised_key_is_an_auth_error_without_retry(
    rig: SshdRig, pool: SshConnectionPool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    counter = _ConnectCounter(monkeypatch)
    stranger = tmp_path / "stranger"
    stranger.write_text(_new_key()[0])
    sleeps: list[float] = []
    wp = SshWpCli(rig.settings(vps_ssh_key_path=stranger), pool=pool, sleep=sleeps.append)
    with pytest.raises(WpAgentError) as caught:
        wp.run(["post", "list"])
    assert caught.value.details["cause"] == "auth_failed"
    assert "authorized_keys" in caught.value.message_ja
    assert counter.count == 1
    assert sleeps == []


# --- connection failures and retries ------------------------------------------------------------


def test_connection_refused_is_retried_once(
    rig: SshdRig, pool: SshConnectionPool, monkeypatch: pytest.MonkeyPatch
) -> None:
    counter = _ConnectCounter(monkeypatch)
    sleeps: list[float] = []
    wp = SshWpCli(
        rig.settings(vps_port=_unused_port()), pool=pool, retry_base_seconds=0.01, sleep=sleeps.append
    )
    with pytest.raises(WpAgentError) as caught:
        wp.run(["post", "list"])
    assert caught.value.code is AgentErrorCode.SSH_CONNECTION_FAILED
    assert caught.value.details["cause"] == "unreachable"
    # A closed port stays closed: one more try after the first back-off (an sshd restarting is back
    # by then), not the series a busy sshd gets (tests/unit/test_ssh_errors.py).
    assert counter.count == 2
    assert sleeps == [0.01]
    assert "2回試行" in caught.value.message_ja


def test_commands_queued_behind_a_failed_connect_share_its_failure(
    rig: SshdRig, pool: SshConnectionPool, monkeypatch: pytest.MonkeyPatch
) -> None:
    counter = _ConnectCounter(monkeypatch)
    wp = SshWpCli(rig.settings(vps_port=_unused_port()), pool=pool, retry_base_seconds=0.1)
    start = threading.Barrier(5)

    def run_together() -> AgentErrorCode:
        start.wait()
        with pytest.raises(WpAgentError) as caught:
            wp.run(["post", "list"])
        return caught.value.code

    with ThreadPoolExecutor(5) as workers:
        codes = list(workers.map(lambda _: run_together(), range(5)))
    assert codes == [AgentErrorCode.SSH_CONNECTION_FAILED] * 5
    assert counter.count == 2  # one round of attempts (a refused port: one retry) served all five
    with pytest.raises(WpAgentError):  # a command that comes later tries again
        wp.run(["post", "list"])
    assert counter.count == 4


def test_silent_server_hits_the_connect_timeout(
    rig: SshdRig, pool: SshConnectionPool, monkeypatch: pytest.MonkeyPatch
) -> None:
    counter = _ConnectCounter(monkeypatch)
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    accepted: list[socket.socket] = []
    stop = threading.Event()

    def accept_and_stay_silent() -> None:
        listener.settimeout(0.1)
        while not stop.is_set():
            try:
                accepted.append(listener.accept()[0])
            except TimeoutError:
                continue

    thread = threading.Thread(target=accept_and_stay_silent, daemon=True)
    thread.start()
    try:
        wp = SshWpCli(
            rig.settings(vps_port=listener.getsockname()[1], vps_ssh_connect_timeout=0.3),
            pool=pool,
            retry_base_seconds=0,
        )
        with pytest.raises(WpAgentError) as caught:
            wp.run(["post", "list"])
        assert caught.value.details["cause"] == "unreachable"
        assert counter.count == 4
    finally:
        stop.set()
        thread.join(timeout=2)
        for conn in accepted:
            conn.close()
        listener.close()


# --- pooling, reconnects, channel limits ------------------------------------------------------


def test_one_connection_serves_many_commands_and_instances(rig: SshdRig) -> None:
    close_pooled_connections()
    try:
        first = SshWpCli(rig.settings(wp_cli_bin="wp-stub"))
        for _ in range(5):
            assert first.run(["--stub-exit=0"]).ok
        # A later (warm) invocation builds a new executor from the same settings: same connection.
        second = SshWpCli(rig.settings(wp_cli_bin="wp-stub"))
        assert second.run(["--stub-exit=0"]).ok
        assert first.connects == 1
        assert second.connects == 1
        assert len(rig.session_pids()) == 1
    finally:
        close_pooled_connections()


def test_reconnects_after_the_server_dropped_the_connection(rig: SshdRig, pool: SshConnectionPool) -> None:
    wp = SshWpCli(rig.settings(wp_cli_bin="wp-stub"), pool=pool)
    assert wp.run(["--stub-exit=0"]).ok
    assert rig.drop_connections() == 1
    assert wp.run(["--stub-exit=0"]).ok  # immediately: the transport may not have noticed yet
    time.sleep(0.2)
    assert rig.drop_connections() == 1
    time.sleep(0.5)  # now the transport has seen the hang-up
    assert wp.run(["--stub-exit=0"]).ok
    assert wp.connects == 3


def _dropped_once_started(rig: SshdRig, log: Path, run: Any) -> Any:
    """`run()` while the server drops every connection once the command has started (its `--stub-log`
    says so): its result, or the error it raised."""

    def drop_when_started() -> None:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and "start" not in (log.read_text() if log.exists() else ""):
            time.sleep(0.02)
        rig.drop_connections()

    dropper = threading.Thread(target=drop_when_started)
    dropper.start()
    try:
        return run()
    except WpAgentError as exc:
        return exc
    finally:
        dropper.join()


def test_a_read_whose_connection_died_while_it_ran_runs_again_on_a_new_connection(
    rig: SshdRig, pool: SshConnectionPool
) -> None:
    wp = SshWpCli(rig.settings(wp_cli_bin="wp-stub"), pool=pool)
    first, second = (rig.scratch_dir / f"dropped-{uuid.uuid4().hex}.log" for _ in range(2))
    lost = _dropped_once_started(rig, first, lambda: wp.run(["--stub-sleep=1", f"--stub-log={first}"]))
    assert isinstance(lost, WpAgentError)  # a command (say, a write) is not run again
    assert lost.details["cause"] == "connection_lost"
    answered = _dropped_once_started(
        rig, second, lambda: run_read(wp, ["--stub-sleep=1", f"--stub-log={second}"])
    )
    assert isinstance(answered, CommandResult)
    assert answered.ok
    assert second.read_text().count("start") == 2  # it ran again, on a new connection
    assert first.read_text().count("start") == 1


@pytest.mark.parametrize(("max_channels", "commands"), [(3, 8), (5, 5)])
def test_concurrent_commands_respect_the_channel_limit(
    rig: SshdRig, pool: SshConnectionPool, max_channels: int, commands: int
) -> None:
    log = rig.scratch_dir / f"overlap-{uuid.uuid4().hex}.log"
    wp = SshWpCli(rig.settings(wp_cli_bin="wp-stub", vps_ssh_max_channels=max_channels), pool=pool)
    assert wp.max_concurrency == max_channels
    with ThreadPoolExecutor(max_workers=commands) as executor:
        results = list(
            executor.map(lambda _: wp.run(["--stub-sleep=0.6", f"--stub-log={log}"]), range(commands))
        )
    assert all(result.ok for result in results)
    assert _max_overlap(log) == max_channels
    assert wp.connects == 1


# --- secrets -----------------------------------------------------------------------------------


@pytest.fixture
def aws(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("AWS_DEFAULT_REGION", "ap-northeast-1")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    from aws_lambda_powertools.utilities.parameters.constants import DEFAULT_PROVIDERS

    DEFAULT_PROVIDERS.clear()
    clear_secret_cache()
    with mock_aws():
        yield
    DEFAULT_PROVIDERS.clear()
    clear_secret_cache()


def _secret_settings(rig: SshdRig, secret: dict[str, str]) -> Any:
    import boto3

    client = boto3.client("secretsmanager", region_name="ap-northeast-1")
    arn = client.create_secret(Name=f"wp-agent/ssh/{uuid.uuid4().hex}", SecretString=json.dumps(secret))[
        "ARN"
    ]
    return rig.settings(
        vps_ssh_key_path=None, vps_ssh_host_key=None, vps_ssh_key_secret_arn=arn, wp_cli_bin="wp-stub"
    )


def test_key_and_host_key_from_secrets_manager(aws: None, rig: SshdRig, pool: SshConnectionPool) -> None:
    secret = {"privateKey": rig.client_key_path.read_text(), "hostKey": rig.host_key_line}
    wp = SshWpCli(_secret_settings(rig, secret), pool=pool)
    result = wp.run(["post", "list"])
    assert result.ok, result.stderr


def test_no_secret_reaches_the_logs(
    aws: None, rig: SshdRig, pool: SshConnectionPool, caplog: pytest.LogCaptureFixture
) -> None:
    passphrase = f"pass-{uuid.uuid4().hex}"
    user_pass = f"UserPass-{uuid.uuid4().hex}"
    private_text, public_line = _new_key(passphrase)
    rig.authorize_key(public_line)
    secret = {"privateKey": private_text, "hostKey": rig.known_hosts_line, "passphrase": passphrase}
    settings = _secret_settings(rig, secret)  # test setup (its own botocore calls) happens before capture
    caplog.set_level(logging.DEBUG)
    for name in ("paramiko", "paramiko.transport", "wp_agent", "botocore", "aws_lambda_powertools"):
        caplog.set_level(logging.DEBUG, logger=name)

    wp = SshWpCli(settings, pool=pool)
    assert wp.run(["user", "create", "bob", "bob@example.com", f"--user_pass={user_pass}"]).ok
    assert wp.run(["user", "update", "1", "--user_pass", user_pass, "--stub-exit=1"]).exit_code == 1
    with pytest.raises(WpAgentError):
        SshWpCli(settings.model_copy(update={"wp_cli_timeout": 200}), pool=pool).run(
            ["--stub-sleep=5", f"--user_pass={user_pass}"]
        )
    encoded_key = base64.b64encode(private_text.encode()).decode()
    with pytest.raises(WpAgentError):
        SshWpCli(
            rig.settings(
                vps_ssh_key_path=None,
                vps_ssh_private_key=encoded_key,
                vps_ssh_host_key=random_host_key_line(),
            ),
            pool=pool,
        ).run(["post", "list"])

    assert len(caplog.records) > 20  # paramiko's DEBUG output was captured
    formatter = logging.Formatter("%(message)s")
    captured = "\n".join(formatter.format(record) + " " + repr(record.__dict__) for record in caplog.records)
    key_lines = [line for line in private_text.splitlines() if "PRIVATE KEY" not in line]
    for secret_text in [passphrase, user_pass, encoded_key[:40], *key_lines]:
        leaks = [
            r.name for r in caplog.records if secret_text in formatter.format(r) + " " + repr(r.__dict__)
        ]
        assert secret_text not in captured, leaks
