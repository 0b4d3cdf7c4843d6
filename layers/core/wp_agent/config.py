"""Settings from the environment (spec §4.1.2 plus ours), validated once at start-up."""

from __future__ import annotations

import re
from enum import StrEnum
from pathlib import Path

from pydantic import Field, SecretStr, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from wp_agent.media.safe_download import DEFAULT_MAX_BYTES, parse_test_hosts
from wp_agent.models.target import validate_wp_user

# Current, non-deprecated Claude model; override with ANTHROPIC_MODEL.
DEFAULT_MODEL = "claude-sonnet-5-5"


# Never passed on, even when an operator lists them (credentials of the agent itself).
_NEVER = re.compile(
    r"^(ANTHROPIC_|AWS_|VAULT_|VPS_SSH_|GOOGLE_|AZURE_|WP_AGENT_|OPENAI_)|(KEY|SECRET|TOKEN|PASSPHRASE)$|"
    r"^WP_CLI_STRICT_ARGS_MODE$",
    re.IGNORECASE,
)
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def parse_passthrough(value: str) -> tuple[str, ...]:
    """`WP_AGENT_LOCAL_ENV_PASSTHROUGH`: comma-separated variable names wp-config.php reads."""
    names = tuple(n.strip() for n in value.split(",") if n.strip())
    bad = [n for n in names if not _NAME.match(n) or _NEVER.search(n)]
    if bad:
        raise ValueError(f"these variables cannot be passed to WP-CLI: {', '.join(bad)}")
    return names


class WpCliMode(StrEnum):
    LOCAL = "local"
    SSH = "ssh"
    SANDBOX = "sandbox"


class ModelProvider(StrEnum):
    ANTHROPIC = "anthropic"
    BEDROCK = "bedrock"


class LogLevel(StrEnum):
    DEBUG = "debug"
    INFO = "info"
    WARN = "warn"
    ERROR = "error"


class Settings(BaseSettings):
    """Every environment variable the core reads; the README's configuration table mirrors this."""

    model_config = SettingsConfigDict(env_prefix="", case_sensitive=False, extra="ignore")

    # Model
    anthropic_api_key: SecretStr | None = None
    anthropic_base_url: str | None = None
    anthropic_model: str = DEFAULT_MODEL
    anthropic_max_tokens: int = Field(default=4096, ge=256, le=64_000)
    anthropic_timeout_seconds: float = Field(default=120.0, gt=0)
    anthropic_api_key_secret_arn: str | None = None
    wp_agent_model_provider: ModelProvider = ModelProvider.ANTHROPIC
    # NFR-2.2 base delay; retries wait base, 2*base, 4*base unless retry-after says otherwise.
    wp_agent_api_retry_base_seconds: float = Field(default=1.0, ge=0)

    # Where WP-CLI runs
    wp_cli_mode: WpCliMode = WpCliMode.SANDBOX
    wp_local_path: Path | None = None
    wp_cli_bin: str = "wp"
    wp_cli_timeout: int = Field(default=60_000, ge=100, le=900_000, description="milliseconds")
    wp_agent_sandbox_site: Path | None = None
    # WordPress user for every command (WP-CLI --user); set by the operator, never by the model.
    wp_agent_wp_user: str | None = None
    # Local mode: extra variable names WP-CLI may see (e.g. ones wp-config.php reads).
    wp_agent_local_env_passthrough: str = ""
    # Media the agent downloads for `media import` (never WordPress itself).
    wp_agent_media_max_bytes: int = Field(default=DEFAULT_MAX_BYTES, ge=1024, le=200 * 1024 * 1024)
    # Tests only: `ip:port` servers that may be fetched although private (never set in production).
    wp_agent_media_test_hosts: str = ""

    # SSH (FR-2.1, FR-6.2)
    vps_host: str | None = None
    vps_port: int = Field(default=22, ge=1, le=65_535)
    vps_ssh_user: str = "root"
    wp_path: str = "/var/www/wordpress"
    vps_ssh_key_path: Path | None = None
    vps_ssh_key_secret_arn: str | None = None
    vps_ssh_key_secret_id: str | None = None
    vps_ssh_key_vault_path: str | None = None
    vault_addr: str | None = None
    vault_token: SecretStr | None = None
    vps_ssh_private_key: SecretStr | None = None
    vps_ssh_key_passphrase: SecretStr | None = None
    vps_ssh_host_key: str | None = None
    vps_ssh_known_hosts: Path | None = None
    vps_ssh_connect_timeout: float = Field(default=30.0, gt=0)
    vps_ssh_max_channels: int = Field(default=5, ge=1, le=20)

    # How PHP starts WP-CLI (local and ssh): through PHP with the opcache file cache in a private
    # directory when that runs the same program (executors/php_launch.py); false: `wp` as configured.
    wp_agent_opcache: bool = True

    # Agent
    agent_max_iterations: int = Field(default=10, ge=1, le=50)
    agent_max_commands: int = Field(default=30, ge=1, le=200)
    agent_allow_skip_confirmation: bool = False
    log_level: LogLevel = LogLevel.INFO
    wp_agent_audit_file: Path = Path.home() / ".wp-agent" / "audit.jsonl"

    # Policy (FR-5.2)
    wp_agent_policy_file: Path | None = None
    wp_agent_policy_rules: str | None = None

    # Serverless runtime (set by the CDK stack on each function)
    wp_agent_sessions_table: str | None = None
    wp_agent_audit_table: str | None = None
    wp_agent_registry_table: str | None = None
    wp_agent_rate_limit_table: str | None = None
    wp_agent_idempotency_table: str | None = None
    wp_agent_event_bus: str | None = None
    wp_agent_state_machine_arn: str | None = None
    wp_agent_approval_timeout_seconds: int = Field(default=86_400, ge=60, le=7 * 86_400)
    wp_agent_admin_principals: str = ""
    wp_agent_target_secret_prefix: str = "wp-agent/targets/"  # noqa: S105 - a name prefix, not a secret
    wp_agent_schedule_group: str = "wp-agent"
    wp_agent_scheduler_role_arn: str | None = None
    wp_agent_session_ttl_days: int = Field(default=90, ge=1, le=3650)

    # Shared rate limits (spec §3.2)
    wp_agent_model_calls_per_minute: int = Field(default=60, ge=1)
    wp_agent_commands_per_user_per_minute: int = Field(default=10, ge=1)
    wp_agent_ssh_slots_per_target: int = Field(default=5, ge=1)

    @field_validator("wp_agent_wp_user")
    @classmethod
    def _wp_user(cls, value: str | None) -> str | None:
        return validate_wp_user(value or None)

    @field_validator("wp_agent_local_env_passthrough")
    @classmethod
    def _passthrough(cls, value: str) -> str:
        parse_passthrough(value)
        return value

    @field_validator("wp_agent_media_test_hosts")
    @classmethod
    def _test_hosts(cls, value: str) -> str:
        parse_test_hosts(value)
        return value

    @field_validator("log_level", mode="before")
    @classmethod
    def _lower(cls, value: object) -> object:
        return value.lower() if isinstance(value, str) else value

    @property
    def command_timeout_seconds(self) -> float:
        return self.wp_cli_timeout / 1000.0


def load_settings() -> Settings:
    return Settings()
