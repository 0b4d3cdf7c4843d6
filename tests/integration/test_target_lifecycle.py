"""The target lifecycle over the API (moto): PATCH changes the WordPress user, owners and keys (keys
only ever as fingerprints, in the answer and the audit), DELETE stops the target at once, disables its
schedules and schedules its secret's deletion — owners and administrators only, every change audited
together with the change, nothing half-applied on a refusal."""

from __future__ import annotations

import json
from typing import Any

import boto3
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ed25519

import functions.api.handler as api
from tests.fakes.apigw import ADMIN_ROLE_ARN, call, rest_event
from tests.fakes.aws import REGION, TABLES
from tests.integration.test_api import (
    env,  # noqa: F401 - the fixture
    schedule_env,  # noqa: F401 - the fixture
)
from wp_agent.adapters.aws.audit_log import DynamoAuditLog
from wp_agent.adapters.aws.registry import TargetRegistry
from wp_agent.models.target import Target

TARGET = "site-k"


def key_pair() -> tuple[str, str, str]:
    """An OpenSSH private key, its public key line, and its SHA256 fingerprint as ssh-keygen shows it."""
    import paramiko

    private = ed25519.Ed25519PrivateKey.generate()
    text = private.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.OpenSSH, serialization.NoEncryption()
    ).decode()
    public = private.public_key().public_bytes(
        serialization.Encoding.OpenSSH, serialization.PublicFormat.OpenSSH
    )
    loaded = paramiko.Ed25519Key.from_private_key(__import__("io").StringIO(text))
    return text, public.decode(), f"ssh-ed25519 {loaded.fingerprint}"


def host_fingerprint(line: str) -> str:
    import base64

    import paramiko

    kind, blob = line.split()[:2]
    key = paramiko.PKey.from_type_string(kind, base64.b64decode(blob))
    return f"{kind} {key.fingerprint}"


@pytest.fixture
def target(env: dict[str, Any]) -> dict[str, str]:  # noqa: F811 - the fixture
    private, _, fingerprint = key_pair()
    _, host_line, _ = key_pair()
    secret = boto3.client("secretsmanager", region_name=REGION).create_secret(
        Name=f"wp-agent/targets/{TARGET}",
        SecretString=json.dumps({"privateKey": private, "hostKey": host_line}),
    )["ARN"]
    TargetRegistry(TABLES["registry"]).put(
        Target(target_id=TARGET, host="127.0.0.1", secret_arn=secret, owners=["user-1", "user-3"])
    )
    return {"secret": secret, "key": fingerprint, "host": host_fingerprint(host_line), "private": private}


def send(method: str, path: str, **kwargs: Any) -> tuple[int, Any]:
    return call(api.lambda_handler, rest_event(method, path, **kwargs))


def records(kind: str) -> list[dict[str, Any]]:
    items = DynamoAuditLog(TABLES["audit"]).for_session(f"target-{TARGET}")
    return [item for item in items if item["type"] == kind]


def secret_value(arn: str) -> dict[str, str]:
    return dict(
        json.loads(
            boto3.client("secretsmanager", region_name=REGION).get_secret_value(SecretId=arn)["SecretString"]
        )
    )


def test_owners_change_the_wordpress_user_and_owners_audited(target: dict[str, str]) -> None:
    status, body = send(
        "PATCH", f"/v1/targets/{TARGET}", body={"wpUser": "hanako", "owners": ["user-1", "user-4"]}
    )
    assert status == 200, body
    assert body["target"]["wpUser"] == "hanako"
    assert body["target"]["owners"] == ["user-1", "user-4"]
    assert {c["field"] for c in body["changes"]} == {"wpUser", "owners"}
    (record,) = records("target_updated")
    assert record["user_id"] == "user-1"
    assert record["details"] == {"owners": "user-1,user-3 -> user-1,user-4", "wpUser": "- -> hanako"}
    # user-3 is no longer an owner: the target is gone for them, and they can change nothing
    assert send("GET", f"/v1/targets/{TARGET}", user="user-3")[0] == 404
    status, body = send("PATCH", f"/v1/targets/{TARGET}", body={"wpUser": "x"}, user="user-3")
    assert (status, body["error"]["code"]) == (404, "TARGET_NOT_FOUND")
    status, _ = send(
        "PATCH",
        f"/v1/targets/{TARGET}",
        body={"description": "管理者が変更"},
        user=None,
        caller_arn=ADMIN_ROLE_ARN,
    )
    assert status == 200
    assert records("target_updated")[-1]["user_id"] == ADMIN_ROLE_ARN


@pytest.mark.parametrize(
    "body",
    [
        {},
        {"owners": []},
        {"owners": None},
        {"hostKey": "not a key"},
        {"sshKey": {"privateKey": "x"}},
        {"port": 23},
    ],
)
def test_bad_changes_are_400_and_change_nothing(target: dict[str, str], body: dict[str, Any]) -> None:
    before = TargetRegistry(TABLES["registry"]).record(TARGET)
    status, answer = send("PATCH", f"/v1/targets/{TARGET}", body=body)
    assert (status, answer["error"]["code"]) == (400, "VALIDATION_ERROR"), answer
    assert TargetRegistry(TABLES["registry"]).record(TARGET) == before
    assert records("target_updated") == []


def test_ssh_key_rotation_keeps_only_fingerprints(target: dict[str, str]) -> None:
    private, _, fingerprint = key_pair()
    status, body = send("PATCH", f"/v1/targets/{TARGET}", body={"sshKey": {"privateKey": private}})
    assert status == 200, body
    assert body["changes"] == [{"field": "sshKey", "old": target["key"], "new": fingerprint}]
    stored = secret_value(target["secret"])
    assert stored["privateKey"] == private
    assert stored["hostKey"]  # kept
    (record,) = records("target_updated")
    assert record["details"] == {"sshKey": f"{target['key']} -> {fingerprint}"}
    everything = json.dumps(
        DynamoAuditLog(TABLES["audit"]).for_session(f"target-{TARGET}"), default=str
    ) + json.dumps(body)
    assert "PRIVATE KEY" not in everything


def test_a_key_that_cannot_be_read_is_refused_and_the_secret_is_untouched(target: dict[str, str]) -> None:
    broken = "-----BEGIN OPENSSH PRIVATE KEY-----\n" + "A" * 120 + "\n-----END OPENSSH PRIVATE KEY-----\n"
    status, body = send("PATCH", f"/v1/targets/{TARGET}", body={"sshKey": {"privateKey": broken}})
    assert (status, body["error"]["code"]) == (400, "INVALID_SSH_KEY")
    assert secret_value(target["secret"])["privateKey"] == target["private"]
    assert records("target_updated") == []


def test_host_key_rotation_records_old_and_new_fingerprints(target: dict[str, str]) -> None:
    _, new_line, _ = key_pair()
    status, body = send("PATCH", f"/v1/targets/{TARGET}", body={"hostKey": new_line})
    assert status == 200, body
    assert body["changes"] == [{"field": "hostKey", "old": target["host"], "new": host_fingerprint(new_line)}]
    assert secret_value(target["secret"])["hostKey"] == new_line


def test_delete_stops_runs_disables_schedules_and_schedules_the_secrets_deletion(
    target: dict[str, str],
    schedule_env: dict[str, Any],  # noqa: F811 - the fixture
) -> None:
    status, schedule = send(
        "POST",
        "/v1/schedules",
        body={
            "expression": "cron(0 9 ? * MON *)",
            "timezone": "Asia/Tokyo",
            "targetId": TARGET,
            "agentInput": {"message": "下書きを一覧にして"},
        },
    )
    assert status == 201, schedule
    status, body = send("DELETE", f"/v1/targets/{TARGET}")
    assert status == 200, body
    assert body["schedulesDisabled"] == 1
    assert body["secretRecoveryWindowDays"] == 30
    assert body["secretDeletionDate"]
    assert "削除しました" in body["message"]
    scheduler = boto3.client("scheduler", region_name=REGION)
    assert scheduler.get_schedule(GroupName="wp-agent", Name=schedule["scheduleId"])["State"] == "DISABLED"
    secrets = boto3.client("secretsmanager", region_name=REGION)
    assert "DeletedDate" in secrets.describe_secret(SecretId=target["secret"])

    # gone for every request that would use it
    assert send("GET", f"/v1/targets/{TARGET}")[0] == 404
    status, refused = send(
        "POST", "/v1/sessions/ses_after_delete/messages", body={"message": "投稿一覧", "targetId": TARGET}
    )
    assert (status, refused["error"]["code"]) == (404, "TARGET_NOT_FOUND")
    assert send("POST", f"/v1/targets/{TARGET}/checks")[0] == 404
    assert send("PATCH", f"/v1/targets/{TARGET}", body={"wpUser": "x"})[0] == 404
    # its trail stays readable for its owners; the removal is on it
    status, trail = send("GET", f"/v1/targets/{TARGET}/activity")
    assert status == 200
    assert next(r["type"] for r in trail["records"]) == "target_deleted"
    # a repeat finishes (nothing left to do) and answers the same
    status, again = send("DELETE", f"/v1/targets/{TARGET}")
    assert status == 200
    assert again["deletedAt"] == body["deletedAt"]
    assert len(records("target_deleted")) == 1
    # another user is told it does not exist
    assert send("DELETE", f"/v1/targets/{TARGET}", user="user-2")[0] == 404


def test_a_secret_shared_with_a_live_target_is_kept(target: dict[str, str]) -> None:
    TargetRegistry(TABLES["registry"]).put(
        Target(target_id="site-twin", host="127.0.0.1", secret_arn=target["secret"], owners=["user-1"])
    )
    status, body = send("DELETE", f"/v1/targets/{TARGET}")
    assert status == 200
    assert body.get("secretDeletionDate") is None
    assert body["secretRecoveryWindowDays"] == 0
    assert "他の対象サイトでも使われている" in body["message"]
    secrets = boto3.client("secretsmanager", region_name=REGION)
    assert "DeletedDate" not in secrets.describe_secret(SecretId=target["secret"])


def test_registration_is_audited(env: dict[str, Any]) -> None:  # noqa: F811 - the fixture
    body = {
        "targetId": "site-new",
        "host": "203.0.113.9",
        "secretArn": "arn:aws:secretsmanager:ap-northeast-1:123456789012:secret:wp-agent/targets/site-new-AbCdEf",
        "owners": ["user-1"],
    }
    status, registered = send("POST", "/v1/targets", body=body, user=None, caller_arn=ADMIN_ROLE_ARN)
    assert status == 201, registered
    (record,) = list(DynamoAuditLog(TABLES["audit"]).for_session("target-site-new"))
    assert (record["type"], record["user_id"]) == ("target_registered", ADMIN_ROLE_ARN)
    assert send("POST", "/v1/targets", body=body, user=None, caller_arn=ADMIN_ROLE_ARN)[0] == 409
