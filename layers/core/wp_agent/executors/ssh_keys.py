"""The SSH private key and the pinned host key(s) for one target (spec FR-6.2, methods A–E).

Exactly one key source must be configured:

(the sources themselves are read in ssh_key_sources.py)

- A `VPS_SSH_KEY_PATH`        a private key file (development)
- B `VPS_SSH_KEY_SECRET_ARN`  AWS Secrets Manager, read through Powertools Parameters (cached)
- C `VPS_SSH_KEY_SECRET_ID`   GCP Secret Manager (extra `wp-agent[gcp]`)
- D `VPS_SSH_KEY_VAULT_PATH`  HashiCorp Vault with `VAULT_ADDR` + `VAULT_TOKEN` (extra `wp-agent[vault]`)
- E `VPS_SSH_PRIVATE_KEY`     base64 of the key in the environment (CI only)
- F `VPS_SSH_AGENT_KEY`       the SHA256 fingerprint of a key in the person's ssh-agent (`sites add`
                              without `--key`); the key itself never leaves the agent

A secret (B/C/D, and E after base64) is either JSON
`{"privateKey": "...", "hostKey": "...", "passphrase": "..."}` (hostKey and passphrase optional) or
the bare private key text. The host key comes from the secret's `hostKey`, else `VPS_SSH_HOST_KEY`,
else the `VPS_SSH_KNOWN_HOSTS` file; without one we refuse to connect. Nothing here logs key
material, passphrases or tokens.
"""

from __future__ import annotations

import base64
import binascii
import io
import logging
from dataclasses import dataclass, field
from pathlib import Path

import paramiko
from cryptography.exceptions import UnsupportedAlgorithm
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa
from paramiko.pkey import UnknownKeyType

from wp_agent.config import WpCliSettings
from wp_agent.executors.ssh_agent_keys import agent_key
from wp_agent.executors.ssh_key_sources import (
    MATERIAL_LOADERS,
    METHOD_VARIABLES,
    SECRET_MAX_AGE_SECONDS,
    KeyMethod,
    SecretMaterial,
    check_key_file,
    clear_secret_cache,
    config_error,
    fetch_aws,
    parse_secret,
)
from wp_agent.executors.ssh_target import SshTarget

__all__ = [  # key sources stay importable from here
    "SECRET_MAX_AGE_SECONDS",
    "KeyMethod",
    "SshCredentials",
    "check_key_file",
    "clear_secret_cache",
    "configured_key_method",
    "describe_key",
    "known_hosts_name",
    "load_ssh_credentials",
    "parse_host_keys",
    "parse_private_key",
    "parse_secret",
]

logger = logging.getLogger(__name__)


_ALL_METHOD_VARIABLES = "、".join(METHOD_VARIABLES.values())


@dataclass(frozen=True)
class SshCredentials:
    """A loaded client key plus the host keys pinned for one `host:port`; repr never shows the key."""

    method: KeyMethod
    private_key: paramiko.PKey = field(repr=False)
    host_keys: tuple[paramiko.PKey, ...] = field(repr=False)

    @property
    def client_fingerprint(self) -> str:
        return str(self.private_key.fingerprint)

    @property
    def host_fingerprints(self) -> tuple[str, ...]:
        return tuple(sorted(describe_key(key) for key in self.host_keys))


def describe_key(key: paramiko.PKey) -> str:
    """`ssh-ed25519 SHA256:…` — type and OpenSSH-style fingerprint of the public half."""
    return f"{key.get_name()} {key.fingerprint}"


def configured_key_method(settings: WpCliSettings) -> KeyMethod:
    """The one configured key source; a clear error naming the variables when none or several are set."""
    values: dict[KeyMethod, object] = {
        KeyMethod.FILE: settings.vps_ssh_key_path,
        KeyMethod.AWS_SECRETS_MANAGER: settings.vps_ssh_key_secret_arn,
        KeyMethod.GCP_SECRET_MANAGER: settings.vps_ssh_key_secret_id,
        KeyMethod.VAULT: settings.vps_ssh_key_vault_path,
        KeyMethod.ENV_BASE64: settings.vps_ssh_private_key,
        KeyMethod.AGENT: settings.vps_ssh_agent_key,
    }
    chosen = [method for method, value in values.items() if value not in (None, "")]
    if not chosen:
        raise config_error(
            f"SSH秘密鍵の取得方法が設定されていません。{_ALL_METHOD_VARIABLES} のいずれか1つを設定してください。",
            variables=list(METHOD_VARIABLES.values()),
        )
    if len(chosen) > 1:
        names = "、".join(METHOD_VARIABLES[m] for m in chosen)
        raise config_error(
            f"SSH秘密鍵の取得方法が複数設定されています（{names}）。いずれか1つだけを設定してください。",
            variables=[METHOD_VARIABLES[m] for m in chosen],
        )
    return chosen[0]


def load_ssh_credentials(settings: WpCliSettings, target: SshTarget | None = None) -> SshCredentials:
    """Load the private key and the pinned host key(s) for the target (VPS_* by default; a
    registered target's key and host key come from its own secret only)."""
    if target is None:
        if not settings.vps_host:
            raise config_error("VPS_HOST（接続先ホスト）が設定されていません。", variables=["VPS_HOST"])
        target = SshTarget.from_settings(settings)
    if target.key_secret_arn:
        method = KeyMethod.AWS_SECRETS_MANAGER
        material = fetch_aws(target.key_secret_arn)
    else:
        method = configured_key_method(settings)
        material = (
            SecretMaterial(private_key="")
            if method is KeyMethod.AGENT
            else MATERIAL_LOADERS[method](settings)
        )
    private_key: paramiko.PKey
    if method is KeyMethod.AGENT:
        private_key = agent_key(str(settings.vps_ssh_agent_key))
    else:
        passphrase = material.passphrase
        if passphrase is None and settings.vps_ssh_key_passphrase is not None:
            passphrase = settings.vps_ssh_key_passphrase.get_secret_value() or None
        private_key = parse_private_key(material.private_key, passphrase, source=METHOD_VARIABLES[method])
    host_keys = _pinned_host_keys(
        settings, material, target.host, target.port, settings_fallback=not target.key_secret_arn
    )
    logger.info(
        "ssh credentials loaded",
        extra={
            "key_method": method.value,
            "client_key": describe_key(private_key),
            "pinned_host_keys": [describe_key(key) for key in host_keys],
        },
    )
    return SshCredentials(method=method, private_key=private_key, host_keys=tuple(host_keys))


# --- private key -------------------------------------------------------------------------------


def parse_private_key(text: str, passphrase: str | None, *, source: str) -> paramiko.PKey:
    """An ed25519, ECDSA or RSA key from OpenSSH or PEM (PKCS#1/SEC1/PKCS#8, optionally encrypted) text.

    paramiko 5.1 only offers type detection from a *path* (`PKey.from_path`), and its text readers
    accept OpenSSH and traditional PEM only; so cryptography detects the type and decrypts, and we
    hand paramiko the key re-serialised as unencrypted OpenSSH text in memory.
    """
    data = _normalise_pem(text).encode()
    password = passphrase.encode() if passphrase else None
    loaded: object
    try:
        try:
            loaded = serialization.load_ssh_private_key(data, password=password)
        except ValueError:
            loaded = serialization.load_pem_private_key(data, password=password)
    except TypeError:
        # cryptography: encrypted key without a password, or a password for a plain key.
        if password is None:
            raise config_error(
                f"SSH秘密鍵（{source}）はパスフレーズで保護されています。"
                "シークレットの passphrase か VPS_SSH_KEY_PASSPHRASE を設定してください。",
                source=source,
            ) from None
        loaded = _load_without_password(data, source)
    except (ValueError, binascii.Error):
        raise config_error(
            f"SSH秘密鍵（{source}）を読み込めませんでした。OpenSSH形式またはPEM形式の秘密鍵か、"
            "パスフレーズが正しいかを確認してください。",
            source=source,
        ) from None
    except UnsupportedAlgorithm:
        raise config_error(
            f"SSH秘密鍵（{source}）の形式に対応していません（ed25519・ECDSA・RSA に対応）。", source=source
        ) from None

    key_class: type[paramiko.PKey]
    if isinstance(loaded, ed25519.Ed25519PrivateKey):
        key_class = paramiko.Ed25519Key
    elif isinstance(loaded, ec.EllipticCurvePrivateKey):
        key_class = paramiko.ECDSAKey
    elif isinstance(loaded, rsa.RSAPrivateKey):
        key_class = paramiko.RSAKey
    else:
        raise config_error(
            f"SSH秘密鍵（{source}）の鍵種別に対応していません（ed25519・ECDSA・RSA に対応）。",
            source=source,
            key_type=type(loaded).__name__,
        )
    openssh_text = loaded.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.OpenSSH, serialization.NoEncryption()
    ).decode()
    try:
        return key_class.from_private_key(io.StringIO(openssh_text))
    except (paramiko.SSHException, ValueError):
        raise config_error(
            f"SSH秘密鍵（{source}）を読み込めませんでした（対応していない曲線や鍵長の可能性があります）。",
            source=source,
        ) from None


def _load_without_password(data: bytes, source: str) -> object:
    # A passphrase was configured but the key is not encrypted: use the key as is.
    try:
        try:
            return serialization.load_ssh_private_key(data, password=None)
        except ValueError:
            return serialization.load_pem_private_key(data, password=None)
    except (ValueError, TypeError):
        raise config_error(
            f"SSH秘密鍵（{source}）を読み込めませんでした。パスフレーズが正しいかを確認してください。",
            source=source,
        ) from None


def _normalise_pem(text: str) -> str:
    # Secrets pasted by hand often carry CRLF or literal "\n" escapes instead of newlines.
    text = text.strip().replace("\r\n", "\n")
    if "\n" not in text and "\\n" in text:
        text = text.replace("\\n", "\n")
    return text + "\n"


# --- host keys ---------------------------------------------------------------------------------


def known_hosts_name(host: str, port: int) -> str:
    """The name OpenSSH and paramiko look a host up by: `host` on port 22, else `[host]:port`."""
    return host if port == 22 else f"[{host}]:{port}"


def parse_host_keys(text: str, host: str, port: int, *, source: str) -> list[paramiko.PKey]:
    """Pinned keys for host:port from bare `type base64` lines or known_hosts lines (hashed names too).

    Known-hosts lines for other hosts are skipped; an error if nothing is left for this host.
    """
    wanted = known_hosts_name(host, port)
    aliases = {wanted, f"[{host}]:{port}"}
    bare_types = {identifier for cls in paramiko.key_classes for identifier in cls.identifiers()}
    keys: list[paramiko.PKey] = []
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("@"):
            logger.warning(
                "known_hosts marker lines are not supported; line skipped", extra={"source": source}
            )
            continue
        fields = line.split()
        if fields[0] in bare_types:
            keys.append(_public_key(fields[0], fields[1] if len(fields) > 1 else "", source))
            continue
        if len(fields) < 3:
            raise config_error(f"ホスト鍵（{source}）の形式が正しくありません。", source=source)
        names = fields[0].split(",")
        if not any(_host_matches(pattern, alias) for pattern in names for alias in aliases):
            continue
        keys.append(_public_key(fields[1], fields[2], source))
    if not keys:
        raise config_error(
            f"{wanted} のホスト鍵が {source} に見つかりません。接続先の正しいホスト鍵を登録してください"
            "（未登録のホストには接続しません）。",
            source=source,
            host=wanted,
        )
    return keys


def _host_matches(pattern: str, hostname: str) -> bool:
    if pattern.startswith("|1|"):
        return bool(paramiko.HostKeys.hash_host(hostname, pattern) == pattern)
    return pattern == hostname


def _public_key(key_type: str, blob: str, source: str) -> paramiko.PKey:
    try:
        return paramiko.PKey.from_type_string(key_type, base64.b64decode(blob, validate=True))
    except (binascii.Error, ValueError, paramiko.SSHException, UnknownKeyType):
        raise config_error(
            f"ホスト鍵（{source}）を読み込めませんでした。'ssh-ed25519 AAAA…' 形式か known_hosts の行を指定してください。",
            source=source,
        ) from None


def _pinned_host_keys(
    settings: WpCliSettings, material: SecretMaterial, host: str, port: int, *, settings_fallback: bool = True
) -> list[paramiko.PKey]:
    if material.host_key:
        return parse_host_keys(material.host_key, host, port, source="シークレットの hostKey")
    if settings_fallback and settings.vps_ssh_host_key:
        return parse_host_keys(settings.vps_ssh_host_key, host, port, source="VPS_SSH_HOST_KEY")
    if settings_fallback and settings.vps_ssh_known_hosts is not None:
        try:
            text = Path(settings.vps_ssh_known_hosts).expanduser().read_text(encoding="utf-8")
        except OSError:
            raise config_error(
                f"VPS_SSH_KNOWN_HOSTS のファイル（{settings.vps_ssh_known_hosts}）を読めません。",
                source="VPS_SSH_KNOWN_HOSTS",
            ) from None
        return parse_host_keys(text, host, port, source="VPS_SSH_KNOWN_HOSTS")
    raise config_error(
        "SSHホスト鍵が設定されていないため接続しません（なりすまし防止のため必須です）。"
        "シークレットの hostKey、VPS_SSH_HOST_KEY、VPS_SSH_KNOWN_HOSTS のいずれかを設定してください。",
        variables=["VPS_SSH_HOST_KEY", "VPS_SSH_KNOWN_HOSTS"],
    )


# --- key sources -------------------------------------------------------------------------------
