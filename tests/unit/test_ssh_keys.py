"""SSH key sources A–E, secret formats, key types and pinned host keys (no network)."""

from __future__ import annotations

import base64
import json
import logging
import sys
import types
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import paramiko
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa
from moto import mock_aws

from wp_agent.config import CliSettings
from wp_agent.errors import AgentErrorCode, WpAgentError
from wp_agent.executors.ssh_keys import (
    KeyMethod,
    SshCredentials,
    clear_secret_cache,
    configured_key_method,
    describe_key,
    known_hosts_name,
    load_ssh_credentials,
    parse_host_keys,
    parse_private_key,
    parse_secret,
)

HOST = "203.0.113.10"
PORT = 2222
PASSPHRASE = "correct horse battery staple"


def _ed25519_text(passphrase: str | None = None) -> str:
    key = ed25519.Ed25519PrivateKey.generate()
    encryption: serialization.KeySerializationEncryption = (
        serialization.BestAvailableEncryption(passphrase.encode())
        if passphrase
        else serialization.NoEncryption()
    )
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.OpenSSH, encryption
    ).decode()


def _host_line() -> str:
    key = ed25519.Ed25519PrivateKey.generate()
    return (
        key.public_key()
        .public_bytes(serialization.Encoding.OpenSSH, serialization.PublicFormat.OpenSSH)
        .decode()
    )


def _settings(**values: Any) -> CliSettings:
    base: dict[str, Any] = {
        "vps_host": HOST,
        "vps_port": PORT,
        "vps_ssh_key_path": None,
        "vps_ssh_key_secret_arn": None,
        "vps_ssh_key_secret_id": None,
        "vps_ssh_key_vault_path": None,
        "vps_ssh_private_key": None,
        "vps_ssh_key_passphrase": None,
        "vps_ssh_host_key": None,
        "vps_ssh_known_hosts": None,
        "vault_addr": None,
        "vault_token": None,
    }
    base.update(values)
    return CliSettings(**base)


@pytest.fixture(autouse=True)
def _fresh_secret_cache() -> Iterator[None]:
    clear_secret_cache()
    yield
    clear_secret_cache()


# --- private keys ------------------------------------------------------------------------------

KEY_CASES: dict[str, tuple[Callable[[], Any], serialization.PrivateFormat, type[paramiko.PKey]]] = {
    "ed25519-openssh": (
        ed25519.Ed25519PrivateKey.generate,
        serialization.PrivateFormat.OpenSSH,
        paramiko.Ed25519Key,
    ),
    "ecdsa-openssh": (
        lambda: ec.generate_private_key(ec.SECP256R1()),
        serialization.PrivateFormat.OpenSSH,
        paramiko.ECDSAKey,
    ),
    "ecdsa-sec1-pem": (
        lambda: ec.generate_private_key(ec.SECP384R1()),
        serialization.PrivateFormat.TraditionalOpenSSL,
        paramiko.ECDSAKey,
    ),
    "ecdsa-pkcs8-pem": (
        lambda: ec.generate_private_key(ec.SECP521R1()),
        serialization.PrivateFormat.PKCS8,
        paramiko.ECDSAKey,
    ),
    "rsa-pkcs1-pem": (
        lambda: rsa.generate_private_key(public_exponent=65537, key_size=2048),
        serialization.PrivateFormat.TraditionalOpenSSL,
        paramiko.RSAKey,
    ),
    "rsa-openssh": (
        lambda: rsa.generate_private_key(public_exponent=65537, key_size=2048),
        serialization.PrivateFormat.OpenSSH,
        paramiko.RSAKey,
    ),
    "ed25519-pkcs8-pem": (
        ed25519.Ed25519PrivateKey.generate,
        serialization.PrivateFormat.PKCS8,
        paramiko.Ed25519Key,
    ),
}


@pytest.mark.parametrize("case", sorted(KEY_CASES))
@pytest.mark.parametrize("encrypted", [False, True])
def test_parse_private_key_accepts_common_types_and_formats(case: str, encrypted: bool) -> None:
    make, fmt, expected_class = KEY_CASES[case]
    private = make()
    encryption: serialization.KeySerializationEncryption = (
        serialization.BestAvailableEncryption(PASSPHRASE.encode())
        if encrypted
        else serialization.NoEncryption()
    )
    text = private.private_bytes(serialization.Encoding.PEM, fmt, encryption).decode()
    key = parse_private_key(text, PASSPHRASE if encrypted else None, source="test")
    assert isinstance(key, expected_class)
    public_line = private.public_key().public_bytes(
        serialization.Encoding.OpenSSH, serialization.PublicFormat.OpenSSH
    )
    assert key.get_base64() == public_line.decode().split()[1]
    # The key signs (what the SSH handshake needs).
    assert key.can_sign()


def test_encrypted_key_without_passphrase_is_a_clear_error() -> None:
    with pytest.raises(WpAgentError) as caught:
        parse_private_key(_ed25519_text(PASSPHRASE), None, source="VPS_SSH_KEY_PATH")
    assert caught.value.code is AgentErrorCode.SSH_CONNECTION_FAILED
    assert "パスフレーズ" in caught.value.message_ja
    assert "VPS_SSH_KEY_PASSPHRASE" in caught.value.message_ja


def test_wrong_passphrase_is_a_clear_error_without_key_text() -> None:
    text = _ed25519_text(PASSPHRASE)
    with pytest.raises(WpAgentError) as caught:
        parse_private_key(text, "wrong", source="VPS_SSH_KEY_PATH")
    body = text.splitlines()[1]
    assert body not in str(caught.value)
    assert body not in json.dumps(caught.value.details, ensure_ascii=False)
    assert caught.value.__cause__ is None


def test_garbage_is_rejected() -> None:
    with pytest.raises(WpAgentError) as caught:
        parse_private_key("not a key", None, source="VPS_SSH_PRIVATE_KEY")
    assert "VPS_SSH_PRIVATE_KEY" in caught.value.message_ja


def test_passphrase_for_an_unencrypted_key_is_tolerated() -> None:
    key = parse_private_key(_ed25519_text(), "unused", source="test")
    assert isinstance(key, paramiko.Ed25519Key)


def test_literal_backslash_n_escapes_are_normalised() -> None:
    text = _ed25519_text().strip().replace("\n", "\\n")
    assert isinstance(parse_private_key(text, None, source="test"), paramiko.Ed25519Key)


# --- method selection --------------------------------------------------------------------------


def test_no_key_method_names_every_variable() -> None:
    with pytest.raises(WpAgentError) as caught:
        configured_key_method(_settings())
    for name in (
        "VPS_SSH_KEY_PATH",
        "VPS_SSH_KEY_SECRET_ARN",
        "VPS_SSH_KEY_SECRET_ID",
        "VPS_SSH_KEY_VAULT_PATH",
        "VPS_SSH_PRIVATE_KEY",
    ):
        assert name in caught.value.message_ja


def test_two_key_methods_are_refused_naming_both(tmp_path: Path) -> None:
    with pytest.raises(WpAgentError) as caught:
        configured_key_method(
            _settings(vps_ssh_key_path=tmp_path / "k", vps_ssh_key_secret_arn="arn:aws:secretsmanager:x")
        )
    assert "VPS_SSH_KEY_PATH" in caught.value.message_ja
    assert "VPS_SSH_KEY_SECRET_ARN" in caught.value.message_ja
    assert "複数" in caught.value.message_ja


def test_method_a_reads_the_file_and_pins_the_host_key(tmp_path: Path) -> None:
    key_path = tmp_path / "id_ed25519"
    key_path.write_text(_ed25519_text())
    host_line = _host_line()
    creds = load_ssh_credentials(_settings(vps_ssh_key_path=key_path, vps_ssh_host_key=host_line))
    assert creds.method is KeyMethod.FILE
    assert isinstance(creds.private_key, paramiko.Ed25519Key)
    assert [key.get_base64() for key in creds.host_keys] == [host_line.split()[1]]
    assert "PRIVATE KEY" not in repr(creds)


def test_method_a_with_passphrase_from_the_environment(tmp_path: Path) -> None:
    key_path = tmp_path / "id_ed25519"
    key_path.write_text(_ed25519_text(PASSPHRASE))
    creds = load_ssh_credentials(
        _settings(vps_ssh_key_path=key_path, vps_ssh_key_passphrase=PASSPHRASE, vps_ssh_host_key=_host_line())
    )
    assert creds.private_key.can_sign()


def test_method_a_missing_file(tmp_path: Path) -> None:
    with pytest.raises(WpAgentError) as caught:
        load_ssh_credentials(_settings(vps_ssh_key_path=tmp_path / "nope", vps_ssh_host_key=_host_line()))
    assert "VPS_SSH_KEY_PATH" in caught.value.message_ja


def test_method_e_decodes_base64_and_warns(caplog: pytest.LogCaptureFixture) -> None:
    encoded = base64.b64encode(_ed25519_text().encode()).decode()
    with caplog.at_level(logging.WARNING, logger="wp_agent.executors.ssh_key_sources"):
        creds = load_ssh_credentials(_settings(vps_ssh_private_key=encoded, vps_ssh_host_key=_host_line()))
    assert creds.method is KeyMethod.ENV_BASE64
    assert any("CI" in record.getMessage() for record in caplog.records)


def test_method_e_rejects_non_base64() -> None:
    with pytest.raises(WpAgentError) as caught:
        load_ssh_credentials(_settings(vps_ssh_private_key="***not base64***", vps_ssh_host_key=_host_line()))
    assert "base64" in caught.value.message_ja


def test_missing_host_key_is_refused(tmp_path: Path) -> None:
    key_path = tmp_path / "id"
    key_path.write_text(_ed25519_text())
    with pytest.raises(WpAgentError) as caught:
        load_ssh_credentials(_settings(vps_ssh_key_path=key_path))
    assert "VPS_SSH_HOST_KEY" in caught.value.message_ja
    assert caught.value.details["cause"] == "ssh_config"


def test_missing_host_is_refused(tmp_path: Path) -> None:
    with pytest.raises(WpAgentError) as caught:
        load_ssh_credentials(_settings(vps_host=None, vps_ssh_key_path=tmp_path / "id"))
    assert "VPS_HOST" in caught.value.message_ja


# --- host keys ---------------------------------------------------------------------------------


def test_host_keys_from_known_hosts_lines_match_host_and_port(tmp_path: Path) -> None:
    ours, other, hashed = _host_line(), _host_line(), _host_line()
    hashed_name = paramiko.HostKeys.hash_host(known_hosts_name(HOST, PORT))
    text = "\n".join(
        [
            "# comment",
            f"other.example.com {other}",
            f"[{HOST}]:{PORT},{HOST} {ours} comment",
            f"{hashed_name} {hashed}",
            f"{HOST} {other}",  # port 22 entry: not ours
        ]
    )
    keys = parse_host_keys(text, HOST, PORT, source="test")
    assert [key.get_base64() for key in keys] == [ours.split()[1], hashed.split()[1]]
    known_hosts = tmp_path / "known_hosts"
    known_hosts.write_text(text)
    key_path = tmp_path / "id"
    key_path.write_text(_ed25519_text())
    creds = load_ssh_credentials(_settings(vps_ssh_key_path=key_path, vps_ssh_known_hosts=known_hosts))
    assert len(creds.host_keys) == 2


def test_port_22_uses_the_bare_host_name() -> None:
    line = _host_line()
    assert known_hosts_name(HOST, 22) == HOST
    assert len(parse_host_keys(f"{HOST} {line}", HOST, 22, source="test")) == 1


def test_known_hosts_without_our_host_is_refused() -> None:
    with pytest.raises(WpAgentError) as caught:
        parse_host_keys(f"other.example.com {_host_line()}", HOST, PORT, source="VPS_SSH_KNOWN_HOSTS")
    assert f"[{HOST}]:{PORT}" in caught.value.message_ja
    assert "未登録" in caught.value.message_ja


def test_malformed_host_key_is_refused() -> None:
    with pytest.raises(WpAgentError) as caught:
        parse_host_keys("ssh-ed25519 !!!notbase64!!!", HOST, PORT, source="VPS_SSH_HOST_KEY")
    assert "VPS_SSH_HOST_KEY" in caught.value.message_ja


def test_describe_key_shows_type_and_sha256() -> None:
    key = parse_host_keys(_host_line(), HOST, PORT, source="test")[0]
    assert describe_key(key).startswith("ssh-ed25519 SHA256:")


# --- secret formats ----------------------------------------------------------------------------


def test_parse_secret_json_plain_and_dict() -> None:
    key_text = _ed25519_text()
    full = parse_secret(json.dumps({"privateKey": key_text, "hostKey": "h", "passphrase": "p"}), source="s")
    assert (full.private_key, full.host_key, full.passphrase) == (key_text, "h", "p")
    plain = parse_secret(key_text, source="s")
    assert plain.private_key == key_text.strip()
    assert plain.host_key is None
    assert parse_secret({"private_key": key_text}, source="s").private_key == key_text
    assert "PRIVATE" not in repr(full)


@pytest.mark.parametrize("value", ['{"hostKey": "x"}', "{not json", '{"privateKey": 5}', "   "])
def test_parse_secret_rejects_bad_shapes(value: str) -> None:
    with pytest.raises(WpAgentError):
        parse_secret(value, source="VPS_SSH_KEY_SECRET_ARN")


@pytest.fixture
def aws_env(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("AWS_DEFAULT_REGION", "ap-northeast-1")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.delenv("AWS_PROFILE", raising=False)
    from aws_lambda_powertools.utilities.parameters.constants import DEFAULT_PROVIDERS

    DEFAULT_PROVIDERS.clear()  # a provider (and its boto3 client) made before the mock must not be reused
    with mock_aws():
        yield
    DEFAULT_PROVIDERS.clear()


def test_method_b_reads_json_secret_via_powertools_with_caching(aws_env: None) -> None:
    import boto3

    client = boto3.client("secretsmanager", region_name="ap-northeast-1")
    host_line = _host_line()
    arn = client.create_secret(
        Name="wp-agent/ssh/site-1",
        SecretString=json.dumps(
            {"privateKey": _ed25519_text(PASSPHRASE), "hostKey": host_line, "passphrase": PASSPHRASE}
        ),
    )["ARN"]
    settings = _settings(vps_ssh_key_secret_arn=arn)
    creds = load_ssh_credentials(settings)
    assert creds.method is KeyMethod.AWS_SECRETS_MANAGER
    assert [k.get_base64() for k in creds.host_keys] == [host_line.split()[1]]

    # Rotated in Secrets Manager: the cached copy is used until the cache is cleared (max_age).
    client.put_secret_value(
        SecretId=arn, SecretString=json.dumps({"privateKey": _ed25519_text(), "hostKey": host_line})
    )
    assert load_ssh_credentials(settings).client_fingerprint == creds.client_fingerprint
    clear_secret_cache()
    assert load_ssh_credentials(settings).client_fingerprint != creds.client_fingerprint


def test_method_b_plain_key_secret_takes_host_key_from_env(aws_env: None) -> None:
    import boto3

    client = boto3.client("secretsmanager", region_name="ap-northeast-1")
    arn = client.create_secret(Name="plain", SecretString=_ed25519_text())["ARN"]
    creds = load_ssh_credentials(_settings(vps_ssh_key_secret_arn=arn, vps_ssh_host_key=_host_line()))
    assert isinstance(creds.private_key, paramiko.Ed25519Key)


def test_method_b_missing_secret_is_a_clear_error(aws_env: None) -> None:
    arn = "arn:aws:secretsmanager:ap-northeast-1:123456789012:secret:missing-AbCdEf"
    with pytest.raises(WpAgentError) as caught:
        load_ssh_credentials(_settings(vps_ssh_key_secret_arn=arn, vps_ssh_host_key=_host_line()))
    assert "Secrets Manager" in caught.value.message_ja
    assert "secretsmanager:GetSecretValue" in caught.value.message_ja


def test_method_c_without_the_extra_says_how_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "google.cloud.secretmanager", None)
    monkeypatch.setitem(sys.modules, "google.cloud", None)
    with pytest.raises(WpAgentError) as caught:
        load_ssh_credentials(_settings(vps_ssh_key_secret_id="projects/p/secrets/s"))
    assert "pip install 'wp-agent[gcp]'" in caught.value.message_ja


def test_method_d_without_the_extra_says_how_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "hvac", None)
    with pytest.raises(WpAgentError) as caught:
        load_ssh_credentials(
            _settings(
                vps_ssh_key_vault_path="secret/data/ssh/vps", vault_addr="https://vault.test", vault_token="t"
            )
        )
    assert "pip install 'wp-agent[vault]'" in caught.value.message_ja


def test_method_d_requires_vault_addr_and_token() -> None:
    with pytest.raises(WpAgentError) as caught:
        load_ssh_credentials(_settings(vps_ssh_key_vault_path="secret/data/ssh/vps"))
    assert "VAULT_ADDR" in caught.value.message_ja
    assert "VAULT_TOKEN" in caught.value.message_ja


def test_method_c_reads_latest_version(monkeypatch: pytest.MonkeyPatch) -> None:
    key_text, host_line = _ed25519_text(), _host_line()
    seen: list[str] = []

    class FakeClient:
        def access_secret_version(self, name: str) -> Any:
            seen.append(name)
            payload = json.dumps({"privateKey": key_text, "hostKey": host_line}).encode()
            return types.SimpleNamespace(payload=types.SimpleNamespace(data=payload))

    fake = types.ModuleType("google.cloud.secretmanager")
    fake.SecretManagerServiceClient = FakeClient  # type: ignore[attr-defined]
    google_cloud = types.ModuleType("google.cloud")
    google_cloud.secretmanager = fake  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "google.cloud", google_cloud)
    monkeypatch.setitem(sys.modules, "google.cloud.secretmanager", fake)
    settings = _settings(vps_ssh_key_secret_id="projects/p/secrets/ssh")
    creds = load_ssh_credentials(settings)
    load_ssh_credentials(settings)  # cached
    assert creds.method is KeyMethod.GCP_SECRET_MANAGER
    assert seen == ["projects/p/secrets/ssh/versions/latest"]


def test_method_d_reads_kv_v2(monkeypatch: pytest.MonkeyPatch) -> None:
    key_text, host_line = _ed25519_text(PASSPHRASE), _host_line()

    class FakeClient:
        def __init__(self, url: str, token: str) -> None:
            assert (url, token) == ("https://vault.test", "hvs.token")

        def read(self, path: str) -> dict[str, Any]:
            assert path == "secret/data/ssh/vps"
            return {
                "data": {"data": {"privateKey": key_text, "hostKey": host_line, "passphrase": PASSPHRASE}}
            }

    fake = types.ModuleType("hvac")
    fake.Client = FakeClient  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "hvac", fake)
    creds = load_ssh_credentials(
        _settings(
            vps_ssh_key_vault_path="secret/data/ssh/vps",
            vault_addr="https://vault.test",
            vault_token="hvs.token",
        )
    )
    assert creds.method is KeyMethod.VAULT
    assert isinstance(creds, SshCredentials)
