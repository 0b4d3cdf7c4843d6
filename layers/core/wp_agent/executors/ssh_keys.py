"""The SSH private key and the pinned host key(s) for one target (spec FR-6.2, methods A–E).

Exactly one key source must be configured:

- A `VPS_SSH_KEY_PATH`        a private key file (development)
- B `VPS_SSH_KEY_SECRET_ARN`  AWS Secrets Manager, read through Powertools Parameters (cached)
- C `VPS_SSH_KEY_SECRET_ID`   GCP Secret Manager (extra `wp-agent[gcp]`)
- D `VPS_SSH_KEY_VAULT_PATH`  HashiCorp Vault with `VAULT_ADDR` + `VAULT_TOKEN` (extra `wp-agent[vault]`)
- E `VPS_SSH_PRIVATE_KEY`     base64 of the key in the environment (CI only)

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
import json
import logging
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any

import paramiko
from cryptography.exceptions import UnsupportedAlgorithm
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa
from paramiko.pkey import UnknownKeyType

from wp_agent.config import Settings
from wp_agent.errors import AgentErrorCode, WpAgentError

logger = logging.getLogger(__name__)

# How long a secret fetched from B/C/D is reused before it is read again (key rotation delay).
SECRET_MAX_AGE_SECONDS = 300


class KeyMethod(StrEnum):
    FILE = "A"
    AWS_SECRETS_MANAGER = "B"
    GCP_SECRET_MANAGER = "C"  # noqa: S105 - a method label, not a secret
    VAULT = "D"
    ENV_BASE64 = "E"


_METHOD_VARIABLES: dict[KeyMethod, str] = {
    KeyMethod.FILE: "VPS_SSH_KEY_PATH",
    KeyMethod.AWS_SECRETS_MANAGER: "VPS_SSH_KEY_SECRET_ARN",
    KeyMethod.GCP_SECRET_MANAGER: "VPS_SSH_KEY_SECRET_ID",
    KeyMethod.VAULT: "VPS_SSH_KEY_VAULT_PATH",
    KeyMethod.ENV_BASE64: "VPS_SSH_PRIVATE_KEY",
}
_ALL_METHOD_VARIABLES = "、".join(_METHOD_VARIABLES.values())


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


@dataclass(frozen=True)
class _SecretMaterial:
    private_key: str = field(repr=False)
    host_key: str | None = field(default=None, repr=False)
    passphrase: str | None = field(default=None, repr=False)


def describe_key(key: paramiko.PKey) -> str:
    """`ssh-ed25519 SHA256:…` — type and OpenSSH-style fingerprint of the public half."""
    return f"{key.get_name()} {key.fingerprint}"


def _config_error(message_ja: str, **details: Any) -> WpAgentError:
    return WpAgentError(
        AgentErrorCode.SSH_CONNECTION_FAILED, message_ja, details={"cause": "ssh_config", **details}
    )


def configured_key_method(settings: Settings) -> KeyMethod:
    """The one configured key source; a clear error naming the variables when none or several are set."""
    values: dict[KeyMethod, object] = {
        KeyMethod.FILE: settings.vps_ssh_key_path,
        KeyMethod.AWS_SECRETS_MANAGER: settings.vps_ssh_key_secret_arn,
        KeyMethod.GCP_SECRET_MANAGER: settings.vps_ssh_key_secret_id,
        KeyMethod.VAULT: settings.vps_ssh_key_vault_path,
        KeyMethod.ENV_BASE64: settings.vps_ssh_private_key,
    }
    chosen = [method for method, value in values.items() if value not in (None, "")]
    if not chosen:
        raise _config_error(
            f"SSH秘密鍵の取得方法が設定されていません。{_ALL_METHOD_VARIABLES} のいずれか1つを設定してください。",
            variables=list(_METHOD_VARIABLES.values()),
        )
    if len(chosen) > 1:
        names = "、".join(_METHOD_VARIABLES[m] for m in chosen)
        raise _config_error(
            f"SSH秘密鍵の取得方法が複数設定されています（{names}）。いずれか1つだけを設定してください。",
            variables=[_METHOD_VARIABLES[m] for m in chosen],
        )
    return chosen[0]


def load_ssh_credentials(settings: Settings) -> SshCredentials:
    """Load the private key and the pinned host key(s) for `settings.vps_host:vps_port`."""
    if not settings.vps_host:
        raise _config_error("VPS_HOST（接続先ホスト）が設定されていません。", variables=["VPS_HOST"])
    method = configured_key_method(settings)
    material = _MATERIAL_LOADERS[method](settings)
    passphrase = material.passphrase
    if passphrase is None and settings.vps_ssh_key_passphrase is not None:
        passphrase = settings.vps_ssh_key_passphrase.get_secret_value() or None
    private_key = parse_private_key(material.private_key, passphrase, source=_METHOD_VARIABLES[method])
    host_keys = _pinned_host_keys(settings, material, settings.vps_host, settings.vps_port)
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
            raise _config_error(
                f"SSH秘密鍵（{source}）はパスフレーズで保護されています。"
                "シークレットの passphrase か VPS_SSH_KEY_PASSPHRASE を設定してください。",
                source=source,
            ) from None
        loaded = _load_without_password(data, source)
    except (ValueError, binascii.Error):
        raise _config_error(
            f"SSH秘密鍵（{source}）を読み込めませんでした。OpenSSH形式またはPEM形式の秘密鍵か、"
            "パスフレーズが正しいかを確認してください。",
            source=source,
        ) from None
    except UnsupportedAlgorithm:
        raise _config_error(
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
        raise _config_error(
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
        raise _config_error(
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
        raise _config_error(
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
            raise _config_error(f"ホスト鍵（{source}）の形式が正しくありません。", source=source)
        names = fields[0].split(",")
        if not any(_host_matches(pattern, alias) for pattern in names for alias in aliases):
            continue
        keys.append(_public_key(fields[1], fields[2], source))
    if not keys:
        raise _config_error(
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
        raise _config_error(
            f"ホスト鍵（{source}）を読み込めませんでした。'ssh-ed25519 AAAA…' 形式か known_hosts の行を指定してください。",
            source=source,
        ) from None


def _pinned_host_keys(
    settings: Settings, material: _SecretMaterial, host: str, port: int
) -> list[paramiko.PKey]:
    if material.host_key:
        return parse_host_keys(material.host_key, host, port, source="シークレットの hostKey")
    if settings.vps_ssh_host_key:
        return parse_host_keys(settings.vps_ssh_host_key, host, port, source="VPS_SSH_HOST_KEY")
    if settings.vps_ssh_known_hosts is not None:
        try:
            text = Path(settings.vps_ssh_known_hosts).expanduser().read_text(encoding="utf-8")
        except OSError:
            raise _config_error(
                f"VPS_SSH_KNOWN_HOSTS のファイル（{settings.vps_ssh_known_hosts}）を読めません。",
                source="VPS_SSH_KNOWN_HOSTS",
            ) from None
        return parse_host_keys(text, host, port, source="VPS_SSH_KNOWN_HOSTS")
    raise _config_error(
        "SSHホスト鍵が設定されていないため接続しません（なりすまし防止のため必須です）。"
        "シークレットの hostKey、VPS_SSH_HOST_KEY、VPS_SSH_KNOWN_HOSTS のいずれかを設定してください。",
        variables=["VPS_SSH_HOST_KEY", "VPS_SSH_KNOWN_HOSTS"],
    )


# --- key sources -------------------------------------------------------------------------------


def parse_secret(value: str | bytes | dict[str, Any], *, source: str) -> _SecretMaterial:
    """JSON `{"privateKey", "hostKey"?, "passphrase"?}` (or an already-decoded dict) or bare key text."""
    if isinstance(value, bytes):
        try:
            value = value.decode("utf-8")
        except UnicodeDecodeError:
            raise _config_error(
                f"シークレット（{source}）が UTF-8 テキストではありません。", source=source
            ) from None
    if isinstance(value, str):
        stripped = value.strip()
        if not stripped.startswith("{"):
            if not stripped:
                raise _config_error(f"シークレット（{source}）が空です。", source=source)
            return _SecretMaterial(private_key=stripped)
        try:
            decoded = json.loads(stripped)
        except json.JSONDecodeError:
            raise _config_error(
                f"シークレット（{source}）の JSON を解析できません。", source=source
            ) from None
        if not isinstance(decoded, dict):
            raise _config_error(
                f"シークレット（{source}）の JSON はオブジェクトである必要があります。", source=source
            )
        value = decoded
    private_key = _text_field(value, "privateKey", "private_key")
    if not private_key:
        raise _config_error(
            f"シークレット（{source}）に privateKey がありません。"
            '{"privateKey": "...", "hostKey": "ssh-ed25519 AAAA…"} の形式で保存してください。',
            source=source,
        )
    return _SecretMaterial(
        private_key=private_key,
        host_key=_text_field(value, "hostKey", "host_key"),
        passphrase=_text_field(value, "passphrase"),
    )


def _text_field(data: dict[str, Any], *names: str) -> str | None:
    for name in names:
        value = data.get(name)
        if isinstance(value, str) and value.strip():
            return value
    return None


def _key_file_unreadable(path: Path) -> WpAgentError:
    return _config_error(
        f"SSH秘密鍵ファイル（{path}）を読めません。VPS_SSH_KEY_PATH とファイルの権限を確認してください。",
        source="VPS_SSH_KEY_PATH",
    )


def check_key_file(settings: Settings) -> None:
    """Method A's file exists and is readable (its contents are checked when first used)."""
    path = Path(str(settings.vps_ssh_key_path)).expanduser()
    if not (path.is_file() and os.access(path, os.R_OK)):
        raise _key_file_unreadable(path)


def _load_from_file(settings: Settings) -> _SecretMaterial:
    path = Path(str(settings.vps_ssh_key_path)).expanduser()
    try:
        return _SecretMaterial(private_key=path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError):
        raise _key_file_unreadable(path) from None


def _load_from_env(settings: Settings) -> _SecretMaterial:
    logger.warning(
        "VPS_SSH_PRIVATE_KEY (method E) is meant for temporary CI use only; use Secrets Manager in production"
    )
    assert settings.vps_ssh_private_key is not None  # noqa: S101 - configured_key_method chose E
    encoded = "".join(settings.vps_ssh_private_key.get_secret_value().split())
    try:
        decoded = base64.b64decode(encoded, validate=True)
    except (binascii.Error, ValueError):
        raise _config_error(
            "VPS_SSH_PRIVATE_KEY を base64 として解読できません。秘密鍵ファイルを base64 エンコードして設定してください。",
            source="VPS_SSH_PRIVATE_KEY",
        ) from None
    return parse_secret(decoded, source="VPS_SSH_PRIVATE_KEY")


class _DropSecretValues(logging.Filter):
    """Drops botocore DEBUG records that carry a Secrets Manager payload (request or response body)."""

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            text = record.getMessage()
        except (TypeError, ValueError):
            return True
        return "SecretString" not in text and "SecretBinary" not in text


_SECRET_LOG_FILTER = _DropSecretValues()
# botocore logs whole request and response bodies at DEBUG: with LOG_LEVEL=debug the key would leak.
_BOTOCORE_BODY_LOGGERS = ("botocore.endpoint", "botocore.parsers", "botocore.httpchecksum")


def _guard_botocore_logs() -> None:
    for name in _BOTOCORE_BODY_LOGGERS:
        target = logging.getLogger(name)
        if _SECRET_LOG_FILTER not in target.filters:
            target.addFilter(_SECRET_LOG_FILTER)


def _load_from_aws(settings: Settings) -> _SecretMaterial:
    arn = str(settings.vps_ssh_key_secret_arn)
    _guard_botocore_logs()
    try:
        from aws_lambda_powertools.utilities import parameters
    except ImportError:
        raise _config_error(
            "AWS Secrets Manager を使うためのライブラリ（aws-lambda-powertools）がインストールされていません。"
            "`pip install wp-agent` で依存関係を入れてください。",
            source="VPS_SSH_KEY_SECRET_ARN",
        ) from None
    try:
        value = parameters.get_secret(arn, max_age=SECRET_MAX_AGE_SECONDS)
    except Exception as exc:  # noqa: BLE001 - Powertools wraps SDK errors in GetParameterError; details logged by type
        logger.warning("reading the ssh key secret failed", extra={"error_type": type(exc).__name__})
        raise _config_error(
            "AWS Secrets Manager から SSH 秘密鍵を取得できませんでした。VPS_SSH_KEY_SECRET_ARN、"
            "リージョン、IAM 権限（secretsmanager:GetSecretValue）を確認してください。",
            source="VPS_SSH_KEY_SECRET_ARN",
        ) from None
    return parse_secret(value, source="VPS_SSH_KEY_SECRET_ARN")


class _TtlCache:
    """A tiny per-process cache for C/D (B relies on Powertools' own cache)."""

    def __init__(self, max_age_seconds: float) -> None:
        self._max_age = max_age_seconds
        self._lock = threading.Lock()
        self._items: dict[str, tuple[float, _SecretMaterial]] = {}

    def get_or_load(self, key: str, load: Callable[[], _SecretMaterial]) -> _SecretMaterial:
        now = time.monotonic()
        with self._lock:
            hit = self._items.get(key)
            if hit is not None and now - hit[0] < self._max_age:
                return hit[1]
        material = load()
        with self._lock:
            self._items[key] = (now, material)
        return material

    def clear(self) -> None:
        with self._lock:
            self._items.clear()


_SECRET_CACHE = _TtlCache(SECRET_MAX_AGE_SECONDS)


def clear_secret_cache() -> None:
    """Forget cached C/D secrets and Powertools' cached B secrets (tests, forced rotation)."""
    _SECRET_CACHE.clear()
    try:
        from aws_lambda_powertools.utilities import parameters
    except ImportError:
        return
    parameters.clear_caches()  # type: ignore[no-untyped-call]


def _missing_extra(library: str, extra: str, source: str) -> WpAgentError:
    return _config_error(
        f"{library} がインストールされていないため {source} を使えません。"
        f"`pip install 'wp-agent[{extra}]'` でインストールしてください。",
        source=source,
        extra=extra,
    )


def _load_from_gcp(settings: Settings) -> _SecretMaterial:
    secret_id = str(settings.vps_ssh_key_secret_id)
    if "/versions/" not in secret_id:
        secret_id = f"{secret_id}/versions/latest"
    return _SECRET_CACHE.get_or_load(f"gcp:{secret_id}", lambda: _fetch_gcp(secret_id))


def _fetch_gcp(secret_id: str) -> _SecretMaterial:
    try:
        from google.cloud import secretmanager
    except ImportError:
        raise _missing_extra("google-cloud-secret-manager", "gcp", "VPS_SSH_KEY_SECRET_ID") from None
    try:
        client = secretmanager.SecretManagerServiceClient()
        response = client.access_secret_version(name=secret_id)
        payload: bytes = response.payload.data
    except Exception as exc:  # noqa: BLE001 - google.api_core raises many types; we only report the type
        logger.warning("reading the ssh key secret failed", extra={"error_type": type(exc).__name__})
        raise _config_error(
            "GCP Secret Manager から SSH 秘密鍵を取得できませんでした。VPS_SSH_KEY_SECRET_ID と権限"
            "（roles/secretmanager.secretAccessor）を確認してください。",
            source="VPS_SSH_KEY_SECRET_ID",
        ) from None
    return parse_secret(payload, source="VPS_SSH_KEY_SECRET_ID")


def _load_from_vault(settings: Settings) -> _SecretMaterial:
    path = str(settings.vps_ssh_key_vault_path).strip("/")
    if not settings.vault_addr or settings.vault_token is None:
        raise _config_error(
            "VPS_SSH_KEY_VAULT_PATH を使うには VAULT_ADDR と VAULT_TOKEN の設定が必要です。",
            variables=["VAULT_ADDR", "VAULT_TOKEN"],
        )
    addr = settings.vault_addr
    token = settings.vault_token.get_secret_value()
    return _SECRET_CACHE.get_or_load(f"vault:{addr}:{path}", lambda: _fetch_vault(addr, token, path))


def _fetch_vault(addr: str, token: str, path: str) -> _SecretMaterial:
    try:
        import hvac
    except ImportError:
        raise _missing_extra("hvac", "vault", "VPS_SSH_KEY_VAULT_PATH") from None
    try:
        client = hvac.Client(url=addr, token=token)
        response = client.read(path)
    except Exception as exc:  # noqa: BLE001 - hvac/requests raise many types; we only report the type
        logger.warning("reading the ssh key from vault failed", extra={"error_type": type(exc).__name__})
        raise _config_error(
            "HashiCorp Vault から SSH 秘密鍵を取得できませんでした。VAULT_ADDR・VAULT_TOKEN・"
            "VPS_SSH_KEY_VAULT_PATH を確認してください。",
            source="VPS_SSH_KEY_VAULT_PATH",
        ) from None
    data = response.get("data") if isinstance(response, dict) else None
    # KV v2 (`secret/data/...`, as in the spec) nests the fields one level deeper than KV v1.
    if isinstance(data, dict) and isinstance(data.get("data"), dict):
        data = data["data"]
    if not isinstance(data, dict):
        raise _config_error(
            f"Vault のパス（{path}）にシークレットが見つかりません。KV v2 の場合は secret/data/… の形で指定してください。",
            source="VPS_SSH_KEY_VAULT_PATH",
        )
    return parse_secret(data, source="VPS_SSH_KEY_VAULT_PATH")


_MATERIAL_LOADERS: dict[KeyMethod, Callable[[Settings], _SecretMaterial]] = {
    KeyMethod.FILE: _load_from_file,
    KeyMethod.AWS_SECRETS_MANAGER: _load_from_aws,
    KeyMethod.GCP_SECRET_MANAGER: _load_from_gcp,
    KeyMethod.VAULT: _load_from_vault,
    KeyMethod.ENV_BASE64: _load_from_env,
}
