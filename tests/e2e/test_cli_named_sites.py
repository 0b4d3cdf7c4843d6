"""Named sites, walked through as a new user would on the real sshd rig: `sites add` fetches the host
key and pins it once its fingerprint is confirmed; then ask, approve later, reject, undo, history and
Ctrl-C run against the site with no environment variable but the model's (key and the scripted
endpoint), each `--json` one object naming its run; an unreachable site is one Japanese line before
any model call."""

from __future__ import annotations

import json
import os
import re
import signal
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.anthropic_server import ScriptedAnthropicServer, delay, reply_text, reply_tool_use
from tests.fakes.cli import run_cli, run_on_terminal
from tests.fakes.network import closed_loopback_port
from tests.fakes.sshd import SshdRig, generate_ed25519_key, random_host_key_line
from tests.fakes.wordpress import TestWordPress
from tests.fakes.wordpress_fixtures import CURRENT


def model_only(server: ScriptedAnthropicServer) -> dict[str, str]:
    """The only settings a site owner gives after `sites add`: the model's."""
    return {"ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": server.base_url}


def add_site(
    home: Path, rig: SshdRig, *extra: str, key_file: bool = True, **env: str
) -> subprocess.CompletedProcess[str]:
    key_args = ["--key", str(rig.client_key_path)] if key_file else []
    return run_cli(
        home, "sites", "add", "blog", "--ssh", f"{rig.user}@{rig.host}:{rig.port}", "--wp-path", rig.wp_path,
        *key_args, *extra, **env,
    )  # fmt: skip


def fingerprint_of(rig: SshdRig) -> str:
    done = subprocess.run(
        ["ssh-keygen", "-lf", f"{rig.host_key_path}.pub"], capture_output=True, text=True, check=True
    )
    return done.stdout.split()[1]


def test_sites_add_shows_the_fingerprint_and_pins_it_only_once_confirmed(
    tmp_path: Path, sshd_server: SshdRig, rig_site: TestWordPress
) -> None:
    unconfirmed = add_site(tmp_path, sshd_server)
    assert unconfirmed.returncode == 3, unconfirmed.stderr
    [line] = unconfirmed.stderr.strip().splitlines()
    assert "HOST_KEY_CONFIRMATION_REQUIRED" in line
    assert fingerprint_of(sshd_server) in line  # what `ssh-keygen -lf` prints on the server
    assert not (tmp_path / ".config" / "wp-agent" / "sites.json").exists()

    wrong = add_site(tmp_path, sshd_server, "--host-key", "SHA256:" + "A" * 43)
    assert wrong.returncode == 1
    assert "[HOST_KEY_MISMATCH]" in wrong.stderr
    assert not (tmp_path / ".config" / "wp-agent" / "sites.json").exists()

    done = add_site(tmp_path, sshd_server, "--host-key", fingerprint_of(sshd_server), "--json")
    assert done.returncode == 0, done.stderr
    added = json.loads(done.stdout)
    assert added["default"] is True
    assert added["wordpressVersion"] == CURRENT.version
    book = tmp_path / ".config" / "wp-agent" / "sites.json"
    assert stat.S_IMODE(book.stat().st_mode) == 0o600
    assert stat.S_IMODE(book.parent.stat().st_mode) == 0o700
    text = book.read_text()
    assert str(sshd_server.client_key_path) in text
    assert "PRIVATE KEY" not in text  # the key's path, never its contents
    assert sshd_server.host_key_line.split()[1] in text  # the pinned host key

    listed = json.loads(run_cli(tmp_path, "sites", "list", "--json").stdout)
    assert listed["default"] == "blog"
    [site] = listed["sites"]
    assert site["hostKeyFingerprint"] == f"ssh-ed25519 {fingerprint_of(sshd_server)}"

    again = add_site(tmp_path, sshd_server, "--host-key", fingerprint_of(sshd_server))
    assert again.returncode == 2
    assert "[SITE_EXISTS]" in again.stderr


@pytest.mark.slow
def test_ask_approve_reject_undo_and_history_on_a_named_site_with_only_the_model_settings(
    tmp_path: Path, sshd_server: SshdRig, rig_site: TestWordPress, scripted_anthropic: ScriptedAnthropicServer
) -> None:
    """The walk of a new user: a fresh HOME and XDG_CONFIG_HOME, only the model's settings; every step's
    `--json` is one object that names its run (and the approval when one is held)."""
    config = tmp_path / "xdg"
    env = {**model_only(scripted_anthropic), "XDG_CONFIG_HOME": str(config)}
    added = add_site(
        tmp_path, sshd_server, "--host-key", sshd_server.host_key_line, XDG_CONFIG_HOME=str(config)
    )
    assert added.returncode == 0, added.stderr
    assert (config / "wp-agent" / "sites.json").is_file()
    assert not (tmp_path / ".config").exists()
    title_before = rig_site.post(1)["post_title"]  # type: ignore[index]
    other_status = rig_site.status_of(46)
    scripted_anthropic.enqueue(
        reply_tool_use(
            [("wp_cli", {"command": "post update 1 --post_title=名前付きサイト", "reason": "題名の変更"})]
        ),
        reply_text("題名を変えました。"),
        reply_tool_use([("wp_cli", {"command": "post delete 45", "reason": "指示された下書きを削除"})]),
        reply_text("削除しました。"),
        reply_tool_use([("wp_cli", {"command": "post delete 46", "reason": "指示された投稿を削除"})]),
        reply_text("削除をやめました。"),
        delay(60, reply_text("呼ばれる前に中断されます")),
    )
    changed = run_cli(tmp_path, "ask", "--json", "-", stdin_text="ID 1 の題名を変えて\n", **env)
    assert changed.returncode == 0, changed.stderr
    output = json.loads(changed.stdout)
    run_id = output["runId"]
    assert re.fullmatch(r"run_[0-9a-f]{20}", run_id)
    assert "approvalId" not in output
    assert rig_site.post(1)["post_title"] == "名前付きサイト"  # type: ignore[index]
    assert "ID 1 の題名を変えて" in json.dumps(
        scripted_anthropic.requests[0].json["messages"][0], ensure_ascii=False
    )

    held = run_cli(tmp_path, "ask", "--json", "ID 45 の下書きを削除して", **env)
    assert held.returncode == 3, held.stderr
    held_output = json.loads(held.stdout)
    approval_id = held_output["approvalId"]
    assert held_output["runId"] != run_id
    assert f"approve {approval_id}" in held.stderr
    assert rig_site.status_of(45) == "draft"

    approved = run_cli(tmp_path, "approve", approval_id, "--json", **env)  # no --site: the held run's site
    assert approved.returncode == 0, approved.stderr
    assert json.loads(approved.stdout)["runId"] == held_output["runId"]
    assert rig_site.status_of(45) == "trash"

    second = json.loads(run_cli(tmp_path, "ask", "--json", "ID 46 を削除して", **env).stdout)
    rejected = run_cli(tmp_path, "reject", second["approvalId"], "--json", **env)
    assert rejected.returncode == 7, rejected.stderr  # declined: nothing of it ran
    assert json.loads(rejected.stdout)["runId"] == second["runId"]
    assert rig_site.status_of(46) == other_status

    undone = run_cli(tmp_path, "undo", run_id, "--yes", "--json", **env)  # the run's site, remembered
    assert undone.returncode == 0, undone.stderr
    undo_output = json.loads(undone.stdout)
    assert undo_output["revertsRunId"] == run_id
    assert rig_site.post(1)["post_title"] == title_before  # type: ignore[index]

    interrupted = interrupt_when_the_model_is_asked(
        tmp_path, scripted_anthropic, "ask", "--json", "投稿一覧", **env
    )
    assert interrupted.returncode == 130, interrupted.stderr
    document = json.loads(interrupted.stdout)
    assert (document["exitCode"], document["error"]["code"]) == (130, "INTERRUPTED")

    history = json.loads(run_cli(tmp_path, "history", "--json", "--site", "blog", **env).stdout)
    listed = {run["runId"] for run in history}
    assert {run_id, held_output["runId"], second["runId"], undo_output["runId"], document["runId"]} <= listed
    assert scripted_anthropic.request_count == 7


def interrupt_when_the_model_is_asked(
    home: Path, server: ScriptedAnthropicServer, *args: str, **env: str
) -> subprocess.CompletedProcess[str]:
    """`wp-agent <args>` without a terminal, sent SIGINT (as a supervisor's Ctrl-C) once its model
    request has arrived."""
    asked = server.request_count + 1
    process = subprocess.Popen(
        [sys.executable, "-m", "wp_agent.cli.main", *args],
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={"PATH": os.environ["PATH"], "HOME": str(home), **env},
    )  # fmt: skip
    try:
        assert server.wait_for_requests(asked, timeout=60), "the model was never asked"
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(timeout=10)
    return subprocess.CompletedProcess(process.args, process.returncode, out, err)


def test_a_default_site_gives_way_to_the_environment_and_says_so(
    tmp_path: Path, sshd_server: SshdRig, rig_site: TestWordPress, scripted_anthropic: ScriptedAnthropicServer
) -> None:
    assert add_site(tmp_path, sshd_server, "--host-key", sshd_server.host_key_line).returncode == 0
    unreachable = {"WP_CLI_MODE": "ssh", "VPS_HOST": "127.0.0.1", "VPS_PORT": str(closed_loopback_port())}
    done = run_cli(tmp_path, "ask", "投稿一覧", **model_only(scripted_anthropic), **unreachable)
    assert done.returncode == 5  # the environment won: no key for it
    first = done.stderr.splitlines()[0]
    assert (
        "環境変数 WP_CLI_MODE、VPS_HOST、VPS_PORT の接続設定を使います（既定のサイト「blog」は使いません"
        in first
    )
    scripted_anthropic.enqueue(reply_text("一覧です。"))
    named = run_cli(
        tmp_path, "ask", "--site", "blog", "投稿一覧", **model_only(scripted_anthropic), **unreachable
    )
    assert named.returncode == 0, named.stderr
    assert (
        "--site で指定したサイト「blog」を使います（環境変数 WP_CLI_MODE、VPS_HOST、VPS_PORT" in named.stderr
    )
    unknown = run_cli(
        tmp_path, "ask", "--site", "nope", "--json", "投稿一覧", **model_only(scripted_anthropic)
    )
    assert unknown.returncode == 2
    assert json.loads(unknown.stdout)["error"]["code"] == "SITE_NOT_REGISTERED"


# --- failures a person can cause: one Japanese line, no model call -----------------------------------


@pytest.fixture
def not_ssh_port() -> Iterator[int]:
    """A port that answers like a web server, not SSH."""
    import socket
    import threading

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    listener.settimeout(0.2)
    stop = threading.Event()

    def answer() -> None:
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            with conn:
                conn.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")

    thread = threading.Thread(target=answer, daemon=True)
    thread.start()
    yield int(listener.getsockname()[1])
    stop.set()
    thread.join(timeout=2)
    listener.close()


def _write_site(home: Path, rig: SshdRig, **changes: Any) -> None:
    """A site as `sites add` would keep it, changed (a server that moved, a key taken back)."""
    site = {
        "name": "blog", "kind": "ssh", "wpPath": rig.wp_path, "host": rig.host, "port": rig.port,
        "user": rig.user, "keyPath": str(rig.client_key_path), "hostKey": rig.host_key_line,
        "addedAt": "2026-01-01T00:00:00Z", **changes,
    }  # fmt: skip
    book = home / ".config" / "wp-agent"
    book.mkdir(parents=True, mode=0o700)
    (book / "sites.json").write_text(json.dumps({"version": 1, "default": "blog", "sites": {"blog": site}}))
    (book / "sites.json").chmod(0o600)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("case", "code", "words"),
    [
        ("closed port", "SSH_CONNECTION_FAILED", "接続が拒否されました"),
        ("not ssh", "SSH_CONNECTION_FAILED", "SSHサーバーとして応答しませんでした"),
        ("refused key", "SSH_CONNECTION_FAILED", "SSH認証に失敗しました"),
        ("wrong host key", "SSH_CONNECTION_FAILED", "登録した鍵と一致しない"),
    ],
)
def test_an_unreachable_site_is_one_japanese_line_before_any_model_call(
    tmp_path: Path,
    sshd_server: SshdRig,
    rig_site: TestWordPress,
    scripted_anthropic: ScriptedAnthropicServer,
    not_ssh_port: int,
    case: str,
    code: str,
    words: str,
) -> None:
    all_changes: dict[str, dict[str, Any]] = {
        "closed port": {"port": closed_loopback_port()},
        "not ssh": {"port": not_ssh_port},
        "refused key": {"keyPath": str(tmp_path / "other_key")},
        "wrong host key": {"hostKey": generate_ed25519_key()[1]},
    }
    changes = all_changes[case]
    if case == "refused key":
        generate_ed25519_key(tmp_path / "other_key")
    _write_site(tmp_path, sshd_server, **changes)
    scripted_anthropic.enqueue(reply_text("呼ばれてはいけません"))
    done = run_cli(tmp_path, "ask", "投稿一覧", **model_only(scripted_anthropic))
    assert done.returncode == 1, done.stderr
    [line] = done.stderr.strip().splitlines()
    assert line.startswith(f"エラー [{code}]: ")
    assert words in line
    assert "Traceback" not in done.stderr
    assert "WARNING" not in done.stderr
    assert scripted_anthropic.request_count == 0  # nothing paid for
    if case != "closed port":
        return
    as_json = run_cli(tmp_path, "ask", "--json", "投稿一覧", **model_only(scripted_anthropic))
    document = json.loads(as_json.stdout)
    assert (as_json.returncode, document["success"], document["error"]["code"]) == (1, False, code)
    assert document["error"]["details"]["cause"] == "unreachable"  # as in a run's AgentOutput
    assert document["error"]["details"]["reason"] == "refused"
    assert scripted_anthropic.request_count == 0


# --- the ssh-agent ---------------------------------------------------------------------------------


@pytest.fixture
def ssh_agent(tmp_path: Path) -> Iterator[str]:
    socket_path = tmp_path / "agent.sock"
    agent = subprocess.Popen(["ssh-agent", "-D", "-a", str(socket_path)], stdout=subprocess.DEVNULL)
    deadline = time.monotonic() + 10
    while not socket_path.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    try:
        yield str(socket_path)
    finally:
        agent.terminate()
        agent.wait(timeout=10)


def test_without_a_key_file_the_agents_key_is_used_and_only_its_fingerprint_kept(
    tmp_path: Path,
    sshd_server: SshdRig,
    rig_site: TestWordPress,
    scripted_anthropic: ScriptedAnthropicServer,
    ssh_agent: str,
) -> None:
    other = tmp_path / "unrelated_key"
    generate_ed25519_key(other)
    for key in (other, sshd_server.client_key_path):  # the server accepts only the second
        subprocess.run(["ssh-add", str(key)], env={**os.environ, "SSH_AUTH_SOCK": ssh_agent}, check=True,
                       capture_output=True)  # fmt: skip
    no_agent = add_site(tmp_path, sshd_server, "--host-key", sshd_server.host_key_line, key_file=False)
    assert no_agent.returncode == 5
    assert "[SSH_AGENT_UNAVAILABLE]" in no_agent.stderr

    done = add_site(
        tmp_path,
        sshd_server,
        "--host-key",
        sshd_server.host_key_line,
        key_file=False,
        SSH_AUTH_SOCK=ssh_agent,
    )
    assert done.returncode == 0, done.stderr
    text = (tmp_path / ".config" / "wp-agent" / "sites.json").read_text()
    accepted = subprocess.run(
        ["ssh-keygen", "-lf", str(sshd_server.client_key_path)], capture_output=True, text=True, check=True
    ).stdout.split()[1]
    assert json.loads(text)["sites"]["blog"]["agentKey"] == accepted
    assert "keyPath" not in text
    assert "PRIVATE KEY" not in text

    scripted_anthropic.enqueue(
        reply_tool_use([("wp_cli", {"command": "option get blogname", "reason": "サイト名"})]),
        reply_text("名前です。"),
    )
    asked = run_cli(
        tmp_path, "ask", "--json", "サイト名は？", SSH_AUTH_SOCK=ssh_agent, **model_only(scripted_anthropic)
    )
    assert asked.returncode == 0, asked.stderr
    assert json.loads(asked.stdout)["executedCommands"][0]["success"] is True


def test_a_change_that_failed_is_told_without_field_names(
    tmp_path: Path, sshd_server: SshdRig, rig_site: TestWordPress, scripted_anthropic: ScriptedAnthropicServer
) -> None:
    assert add_site(tmp_path, sshd_server, "--host-key", sshd_server.host_key_line).returncode == 0
    scripted_anthropic.enqueue(
        reply_tool_use([("wp_cli", {"command": "post update 99999 --post_title=x", "reason": "題名の変更"})]),
        reply_text("変更できませんでした。"),
    )
    done = run_cli(tmp_path, "ask", "ID 99999 の題名を変えて", **model_only(scripted_anthropic))
    assert done.returncode == 1, done.stderr
    assert (
        "[UNKNOWN_ERROR] 操作を実行できませんでした（1件が失敗）。各操作の失敗の理由を確認してください。"
        in done.stdout
    )
    assert "理由: Warning: 無効な投稿 ID です。" in done.stdout  # what WordPress said, in its language
    shown = done.stdout + done.stderr
    assert not re.search(r"\b(partialSuccess|executedCommands|undoAvailable|errorCode)\b", shown)


@pytest.mark.parametrize(("answer", "exit_code"), [("n", 1), ("y", 0)])
def test_at_a_terminal_the_person_compares_the_fingerprint_and_answers(
    tmp_path: Path, sshd_server: SshdRig, rig_site: TestWordPress, answer: str, exit_code: int
) -> None:
    args = [
        "sites", "add", "blog", "--ssh", f"{sshd_server.user}@{sshd_server.host}:{sshd_server.port}",
        "--wp-path", sshd_server.wp_path, "--key", str(sshd_server.client_key_path),
    ]  # fmt: skip
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path)}
    code, seen = run_on_terminal(args, env, answers=answer, prompt=b"[y/N]")
    shown = seen.decode()
    assert f"ホスト鍵の指紋: ssh-ed25519 {fingerprint_of(sshd_server)}" in shown
    assert "ssh-keygen -lf /etc/ssh/ssh_host_ed25519_key.pub" in shown
    assert code == exit_code, shown
    saved = tmp_path / ".config" / "wp-agent" / "sites.json"
    if answer == "y":
        assert "サイト「blog」を登録しました" in shown
        assert saved.exists()
    else:
        assert "[HOST_KEY_NOT_CONFIRMED]" in shown
        assert not saved.exists()


def test_a_local_site_needs_its_wp_cli_found_and_then_runs_like_any_other(
    tmp_path: Path, sshd_server: SshdRig, rig_site: TestWordPress, scripted_anthropic: ScriptedAnthropicServer
) -> None:
    no_wp = {"PATH": "/usr/bin:/bin"}  # no WP-CLI on it
    missing = run_cli(tmp_path, "sites", "add", "shop", "--local", str(rig_site.path), **no_wp)
    assert missing.returncode == 5, missing.stderr
    [line] = missing.stderr.strip().splitlines()
    assert line.startswith(
        "設定エラー [WP_CLI_NOT_FOUND]: このコンピューターで WP-CLI（wp）が見つかりません。"
    )
    assert "--wp-bin" in line  # the option of this command, not an environment variable
    assert not (tmp_path / ".config" / "wp-agent" / "sites.json").exists()

    wp_bin = str(sshd_server.bin_dir / "wp")  # the real WP-CLI on this WordPress
    added = run_cli(
        tmp_path, "sites", "add", "shop", "--local", str(rig_site.path), "--wp-bin", wp_bin, "--json"
    )
    assert added.returncode == 0, added.stderr
    assert json.loads(added.stdout)["site"]["kind"] == "local"
    scripted_anthropic.enqueue(
        reply_tool_use([("wp_cli", {"command": "option get blogname", "reason": "サイト名"})]),
        reply_text("サイト名です。"),
    )
    asked = run_cli(
        tmp_path, "ask", "--json", "--site", "shop", "サイト名は？", **model_only(scripted_anthropic)
    )
    assert asked.returncode == 0, asked.stderr
    [command] = json.loads(asked.stdout)["executedCommands"]
    assert command["success"] is True
    removed = run_cli(tmp_path, "sites", "remove", "shop", "--json")
    assert removed.returncode == 0, removed.stderr
    assert json.loads(run_cli(tmp_path, "sites", "list", "--json").stdout)["sites"] == []


def test_after_a_host_key_change_sites_trust_pins_the_new_key_once_confirmed(
    tmp_path: Path, sshd_server: SshdRig, rig_site: TestWordPress
) -> None:
    assert add_site(tmp_path, sshd_server, "--host-key", fingerprint_of(sshd_server)).returncode == 0
    book_path = tmp_path / ".config" / "wp-agent" / "sites.json"
    # The server's key "changed" (as seen from the pin: another key pinned than the server presents).
    book = json.loads(book_path.read_text(encoding="utf-8"))
    book["sites"]["blog"]["hostKey"] = random_host_key_line()
    book_path.write_text(json.dumps(book), encoding="utf-8")

    refused = run_cli(tmp_path, "doctor", "--site", "blog")
    assert refused.returncode != 0
    assert "sites trust blog" in refused.stdout + refused.stderr  # the fix is named, not "add it again"

    unconfirmed = run_cli(tmp_path, "sites", "trust", "blog")
    assert unconfirmed.returncode == 3, unconfirmed.stderr
    assert fingerprint_of(sshd_server) in unconfirmed.stderr
    wrong = run_cli(tmp_path, "sites", "trust", "blog", "--host-key", "SHA256:" + "A" * 43)
    assert (wrong.returncode, "[HOST_KEY_MISMATCH]" in wrong.stderr) == (1, True)
    assert (
        json.loads(book_path.read_text(encoding="utf-8"))["sites"]["blog"]["hostKey"]
        == book["sites"]["blog"]["hostKey"]
    )

    trusted = run_cli(tmp_path, "sites", "trust", "blog", "--host-key", fingerprint_of(sshd_server), "--json")
    assert trusted.returncode == 0, trusted.stderr
    answer = json.loads(trusted.stdout)
    assert (answer["changed"], fingerprint_of(sshd_server) in answer["after"]) == (True, True)
    after = json.loads(book_path.read_text(encoding="utf-8"))["sites"]["blog"]
    assert after["hostKey"] == sshd_server.host_key_line.strip()
    assert {k: v for k, v in after.items() if k != "hostKey"} == {
        k: v for k, v in book["sites"]["blog"].items() if k != "hostKey"
    }  # nothing else changed
    again = run_cli(tmp_path, "sites", "trust", "blog", "--host-key", fingerprint_of(sshd_server))
    assert (again.returncode, "変わっていません" in again.stdout) == (0, True)
