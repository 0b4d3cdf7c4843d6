"""Where an SSH key comes from (spec FR-6.2 methods A–E): a file, AWS Secrets Manager, GCP Secret
Manager, HashiCorp Vault or the environment, each read into the same secret material (private key,
optional pinned host key and passphrase). Parsing and pinning the keys is ssh_keys.py's. Method F,
the person's ssh-agent, never hands out key material: ssh_agent_keys.py finds the agent's key.

Nothing here logs key material, passphrases or tokens.
"""

from __future__ import annotations

import base64
import binascii
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

from wp_agent.config import WpCliSettings
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
    AGENT = "F"


METHOD_VARIABLES: dict[KeyMethod, str] = {
    KeyMethod.FILE: "VPS_SSH_KEY_PATH",
    KeyMethod.AWS_SECRETS_MANAGER: "VPS_SSH_KEY_SECRET_ARN",
    KeyMethod.GCP_SECRET_MANAGER: "VPS_SSH_KEY_SECRET_ID",
    KeyMethod.VAULT: "VPS_SSH_KEY_VAULT_PATH",
    KeyMethod.ENV_BASE64: "VPS_SSH_PRIVATE_KEY",
    KeyMethod.AGENT: "VPS_SSH_AGENT_KEY",
}


@dataclass(frozen=True)
class SecretMaterial:
    private_key: str = field(repr=False)
    host_key: str | None = field(default=None, repr=False)
    passphrase: str | None = field(default=None, repr=False)


def config_error(message_ja: str, **details: Any) -> WpAgentError:
    return WpAgentError(
        AgentErrorCode.SSH_CONNECTION_FAILED, message_ja, details={"cause": "ssh_config", **details}
    )


def parse_secret(value: str | bytes | dict[str, Any], *, source: str) -> SecretMaterial:
    """JSON `{"privateKey", "hostKey"?, "passphrase"?}` (or an already-decoded dict) or bare key text."""
    if isinstance(value, bytes):
        try:
            value = value.decode("utf-8")
        except UnicodeDecodeError:
            raise config_error(
                f"シークレット（{source}）が UTF-8 テキストではありません。", source=source
            ) from None
    if isinstance(value, str):
        stripped = value.strip()
        if not stripped.startswith("{"):
            if not stripped:
                raise config_error(f"シークレット（{source}）が空です。", source=source)
            return SecretMaterial(private_key=stripped)
        try:
            decoded = json.loads(stripped)
        except json.JSONDecodeError:
            raise config_error(f"シークレット（{source}）の JSON を解析できません。", source=source) from None
        if not isinstance(decoded, dict):
            raise config_error(
                f"シークレット（{source}）の JSON はオブジェクトである必要があります。", source=source
            )
        value = decoded
    private_key = _text_field(value, "privateKey", "private_key")
    if not private_key:
        raise config_error(
            f"シークレット（{source}）に privateKey がありません。"
            '{"privateKey": "...", "hostKey": "ssh-ed25519 AAAA…"} の形式で保存してください。',
            source=source,
        )
    return SecretMaterial(
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
    return config_error(
        f"SSH秘密鍵ファイル（{path}）を読めません。VPS_SSH_KEY_PATH とファイルの権限を確認してください。",
        source="VPS_SSH_KEY_PATH",
    )


def check_key_file(settings: WpCliSettings) -> None:
    """Method A's file exists and is readable (its contents are checked when first used)."""
    path = Path(str(settings.vps_ssh_key_path)).expanduser()
    if not (path.is_file() and os.access(path, os.R_OK)):
        raise _key_file_unreadable(path)


def _load_from_file(settings: WpCliSettings) -> SecretMaterial:
    path = Path(str(settings.vps_ssh_key_path)).expanduser()
    try:
        return SecretMaterial(private_key=path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError):
        raise _key_file_unreadable(path) from None


def _load_from_env(settings: WpCliSettings) -> SecretMaterial:
    logger.warning(
        "VPS_SSH_PRIVATE_KEY (method E) is meant for temporary CI use only; use Secrets Manager in production"
    )
    assert settings.vps_ssh_private_key is not None  # noqa: S101 - configured_key_method chose E
    encoded = "".join(settings.vps_ssh_private_key.get_secret_value().split())
    try:
        decoded = base64.b64decode(encoded, validate=True)
    except (binascii.Error, ValueError):
        raise config_error(
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


def _load_from_aws(settings: WpCliSettings) -> SecretMaterial:
    return fetch_aws(str(settings.vps_ssh_key_secret_arn))


def fetch_aws(arn: str) -> SecretMaterial:
    _guard_botocore_logs()
    try:
        from aws_lambda_powertools.utilities import parameters
    except ImportError:
        raise config_error(
            "AWS Secrets Manager を使うためのライブラリ（aws-lambda-powertools）がインストールされていません。"
            "`pip install wp-agent` で依存関係を入れてください。",
            source="VPS_SSH_KEY_SECRET_ARN",
        ) from None
    try:
        value = parameters.get_secret(arn, max_age=SECRET_MAX_AGE_SECONDS)
    except Exception as exc:  # noqa: BLE001 - Powertools wraps SDK errors in GetParameterError; details logged by type
        logger.warning("reading the ssh key secret failed", extra={"error_type": type(exc).__name__})
        raise config_error(
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
        self._items: dict[str, tuple[float, SecretMaterial]] = {}

    def get_or_load(self, key: str, load: Callable[[], SecretMaterial]) -> SecretMaterial:
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
    return config_error(
        f"{library} がインストールされていないため {source} を使えません。"
        f"`pip install 'wp-agent[{extra}]'` でインストールしてください。",
        source=source,
        extra=extra,
    )


def _load_from_gcp(settings: WpCliSettings) -> SecretMaterial:
    secret_id = str(settings.vps_ssh_key_secret_id)
    if "/versions/" not in secret_id:
        secret_id = f"{secret_id}/versions/latest"
    return _SECRET_CACHE.get_or_load(f"gcp:{secret_id}", lambda: _fetch_gcp(secret_id))


def _fetch_gcp(secret_id: str) -> SecretMaterial:
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
        raise config_error(
            "GCP Secret Manager から SSH 秘密鍵を取得できませんでした。VPS_SSH_KEY_SECRET_ID と権限"
            "（roles/secretmanager.secretAccessor）を確認してください。",
            source="VPS_SSH_KEY_SECRET_ID",
        ) from None
    return parse_secret(payload, source="VPS_SSH_KEY_SECRET_ID")


def _load_from_vault(settings: WpCliSettings) -> SecretMaterial:
    path = str(settings.vps_ssh_key_vault_path).strip("/")
    if not settings.vault_addr or settings.vault_token is None:
        raise config_error(
            "VPS_SSH_KEY_VAULT_PATH を使うには VAULT_ADDR と VAULT_TOKEN の設定が必要です。",
            variables=["VAULT_ADDR", "VAULT_TOKEN"],
        )
    addr = settings.vault_addr
    token = settings.vault_token.get_secret_value()
    return _SECRET_CACHE.get_or_load(f"vault:{addr}:{path}", lambda: _fetch_vault(addr, token, path))


def _fetch_vault(addr: str, token: str, path: str) -> SecretMaterial:
    try:
        import hvac
    except ImportError:
        raise _missing_extra("hvac", "vault", "VPS_SSH_KEY_VAULT_PATH") from None
    try:
        client = hvac.Client(url=addr, token=token)
        response = client.read(path)
    except Exception as exc:  # noqa: BLE001 - hvac/requests raise many types; we only report the type
        logger.warning("reading the ssh key from vault failed", extra={"error_type": type(exc).__name__})
        raise config_error(
            "HashiCorp Vault から SSH 秘密鍵を取得できませんでした。VAULT_ADDR・VAULT_TOKEN・"
            "VPS_SSH_KEY_VAULT_PATH を確認してください。",
            source="VPS_SSH_KEY_VAULT_PATH",
        ) from None
    data = response.get("data") if isinstance(response, dict) else None
    # KV v2 (`secret/data/...`, as in the spec) nests the fields one level deeper than KV v1.
    if isinstance(data, dict) and isinstance(data.get("data"), dict):
        data = data["data"]
    if not isinstance(data, dict):
        raise config_error(
            f"Vault のパス（{path}）にシークレットが見つかりません。KV v2 の場合は secret/data/… の形で指定してください。",
            source="VPS_SSH_KEY_VAULT_PATH",
        )
    return parse_secret(data, source="VPS_SSH_KEY_VAULT_PATH")


MATERIAL_LOADERS: dict[KeyMethod, Callable[[WpCliSettings], SecretMaterial]] = {
    KeyMethod.FILE: _load_from_file,
    KeyMethod.AWS_SECRETS_MANAGER: _load_from_aws,
    KeyMethod.GCP_SECRET_MANAGER: _load_from_gcp,
    KeyMethod.VAULT: _load_from_vault,
    KeyMethod.ENV_BASE64: _load_from_env,
}
