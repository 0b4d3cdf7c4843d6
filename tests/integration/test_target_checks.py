"""POST /v1/targets/{targetId}/checks on the serverless stack against the real sshd rig and WordPress:
every check passes on a healthy target, a changed host key and a key the server does not know fail
at their own step with the fix (and the fingerprints), an unreachable host at reachability — never
a model call, always audited."""

from __future__ import annotations

import socket
from typing import Any

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ed25519

from tests.fakes.aws import TABLES
from tests.fakes.serverless import TARGET_ID, ServerlessStack
from wp_agent.adapters.aws.registry import TargetRegistry

pytestmark = pytest.mark.sshd
CHECKS = f"/v1/targets/{TARGET_ID}/checks"


def names(result: dict[str, Any]) -> dict[str, bool]:
    return {check["name"]: check["ok"] for check in result["checks"]}


def new_key() -> tuple[str, str]:
    private = ed25519.Ed25519PrivateKey.generate()
    text = private.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.OpenSSH, serialization.NoEncryption()
    ).decode()
    public = private.public_key().public_bytes(
        serialization.Encoding.OpenSSH, serialization.PublicFormat.OpenSSH
    )
    return text, public.decode()


def test_a_healthy_target_passes_every_check(serverless: ServerlessStack) -> None:
    stack = serverless
    status, result = stack.api("POST", CHECKS)
    assert status == 200, result
    assert result["ok"] is True
    assert names(result) == {
        "ssh.credentials": True,
        "ssh.reachable": True,
        "ssh.host_key": True,
        "ssh.login": True,
        "wp.binary": True,
        "wp.php_launch": True,  # how PHP starts WP-CLI there (doctor's check too)
        "wp.wordpress": True,
        "wp.sites": True,
        # the site as visitors and administrators see it, fetched by the server itself
        "health.front": True,
        "health.post": True,
        "health.admin": True,
        "health.rest": True,
        "health.login": True,
        "health.address": True,
        "health.wpcli": True,
        "health.log": True,
    }
    detail = {c["name"]: c["detail"] for c in result["checks"]}
    assert detail["health.admin"].startswith("HTTP 200")
    assert detail["wp.binary"].startswith("WP-CLI 2.10")
    assert "opcache" in detail["wp.php_launch"] or "そのまま実行" in detail["wp.php_launch"]
    assert "https://example.test/en/" in detail["wp.sites"]
    assert stack.model.requests == []  # no model call
    (record,) = [r for r in stack.audit(f"target-{TARGET_ID}") if r["type"] == "target_checked"]
    assert record["details"] == {"ok": "true"}
    assert stack.api("POST", CHECKS, user="user-2")[0] == 404


def test_a_changed_host_key_fails_at_the_host_key_with_both_fingerprints(serverless: ServerlessStack) -> None:
    stack = serverless
    _, other_host = new_key()
    status, changed = stack.api("PATCH", f"/v1/targets/{TARGET_ID}", body={"hostKey": other_host})
    assert status == 200, changed
    status, result = stack.api("POST", CHECKS)
    assert status == 200
    assert result["ok"] is False
    assert names(result) == {"ssh.credentials": True, "ssh.reachable": True, "ssh.host_key": False}
    failed = result["checks"][-1]
    assert stack.rig.host_key_line.split()[0] in failed["detail"]  # the key the server presented
    assert "なりすまし" in failed["fix"]
    assert result["summary"].startswith("SSHホスト鍵")


def test_a_key_the_server_does_not_know_fails_at_the_login(serverless: ServerlessStack) -> None:
    stack = serverless
    private, _ = new_key()
    status, changed = stack.api("PATCH", f"/v1/targets/{TARGET_ID}", body={"sshKey": {"privateKey": private}})
    assert status == 200, changed
    status, result = stack.api("POST", CHECKS)
    assert names(result) == {
        "ssh.credentials": True,
        "ssh.reachable": True,
        "ssh.host_key": True,
        "ssh.login": False,
    }
    assert "authorized_keys" in result["checks"][-1]["fix"]


def test_an_unreachable_host_fails_at_reachability(serverless: ServerlessStack) -> None:
    stack = serverless
    registry = TargetRegistry(TABLES["registry"])
    target = registry.get(TARGET_ID)
    assert target is not None
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        closed = probe.getsockname()[1]
    registry.put(target.model_copy(update={"port": closed}), replace=True)
    _status, result = stack.api("POST", CHECKS)
    assert names(result) == {"ssh.credentials": True, "ssh.reachable": False}
    assert "ファイアウォール" in result["checks"][-1]["fix"]
