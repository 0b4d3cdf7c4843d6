"""Settings from the environment (spec §4.1.2 plus ours), one class per entry point, validated at start.

Each part of the core takes the group it reads (`ModelSettings` for the model client, `WpCliSettings`
for an executor, …); each entry point's class is the groups its parts need — the CLI, the MCP server
and each Lambda — and makes required what that entry point cannot run without, so a missing setting
fails when the entry point starts (the CLI before any command, a Lambda when its runtime is built on
its first invocation), never when a setting is first used.
"""

from __future__ import annotations

import re
from enum import StrEnum
from pathlib import Path

from pydantic import Field, SecretStr, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from wp_agent.media.safe_download import DEFAULT_MAX_BYTES, parse_test_hosts
from wp_agent.models.target import validate_wp_user
from wp_agent.whole_values import whole

# Current, non-deprecated Claude model; override with ANTHROPIC_MODEL.
DEFAULT_MODEL = "claude-sonnet-5-5"


# Never passed on, even when an operator lists them (credentials of the agent itself).
_NEVER = re.compile(
    r"^(ANTHROPIC_|AWS_|VAULT_|VPS_SSH_|GOOGLE_|AZURE_|WP_AGENT_|OPENAI_)|(KEY|SECRET|TOKEN|PASSPHRASE)$|"
    r"^WP_CLI_STRICT_ARGS_MODE$",
    re.IGNORECASE,
)
_NAME = whole(r"[A-Za-z_][A-Za-z0-9_]*", "DB_HOST", "_x1")


def parse_passthrough(value: str) -> tuple[str, ...]:
    """`WP_AGENT_LOCAL_ENV_PASSTHROUGH`: comma-separated variable names wp-config.php reads."""
    names = tuple(n.strip() for n in value.split(",") if n.strip())
    bad = [n for n in names if not _NAME.fits(n) or _NEVER.search(n)]
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


class _FromEnvironment(BaseSettings):
    # Built on first use: a process builds only the settings it reads (a Lambda, one class).
    model_config = SettingsConfigDict(env_prefix="", case_sensitive=False, extra="ignore", defer_build=True)


# -- the groups: what each part of the core reads ---------------------------------------------------


class ModelSettings(_FromEnvironment):
    """The model API (agent/model_client.py)."""

    anthropic_api_key: SecretStr | None = None
    anthropic_base_url: str | None = None
    anthropic_model: str = DEFAULT_MODEL
    anthropic_max_tokens: int = Field(default=4096, ge=256, le=64_000)
    anthropic_timeout_seconds: float = Field(default=120.0, gt=0)
    anthropic_api_key_secret_arn: str | None = None
    wp_agent_model_provider: ModelProvider = ModelProvider.ANTHROPIC
    # NFR-2.2 base delay; retries wait base, 2*base, 4*base unless retry-after says otherwise.
    wp_agent_api_retry_base_seconds: float = Field(default=1.0, ge=0)

    def has_model_credentials(self) -> bool:
        """A key, the secret holding it, or Bedrock (whose credentials are the function's role)."""
        return bool(
            self.anthropic_api_key
            or self.anthropic_api_key_secret_arn
            or self.wp_agent_model_provider is ModelProvider.BEDROCK
        )


class MediaSettings(_FromEnvironment):
    """Media the agent downloads for `media import` (never WordPress itself); the policy reads the test
    hosts too."""

    wp_agent_media_max_bytes: int = Field(default=DEFAULT_MAX_BYTES, ge=1024, le=200 * 1024 * 1024)
    # Tests only: `ip:port` servers that may be fetched although private (never set in production).
    wp_agent_media_test_hosts: str = ""

    @field_validator("wp_agent_media_test_hosts")
    @classmethod
    def _test_hosts(cls, value: str) -> str:
        parse_test_hosts(value)
        return value


class WpCliSettings(MediaSettings):
    """Where and how WP-CLI runs (executors/): locally, in the sandbox, or over SSH."""

    wp_cli_mode: WpCliMode = WpCliMode.SANDBOX
    wp_local_path: Path | None = None
    wp_cli_bin: str = "wp"
    wp_cli_timeout: int = Field(default=60_000, ge=100, le=900_000, description="milliseconds")
    wp_agent_sandbox_site: Path | None = None
    # WordPress user for every command (WP-CLI --user); set by the operator, never by the model.
    wp_agent_wp_user: str | None = None
    # Local mode: extra variable names WP-CLI may see (e.g. ones wp-config.php reads).
    wp_agent_local_env_passthrough: str = ""

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
    # Method F: a key held by the person's ssh-agent (SSH_AUTH_SOCK), named by its SHA256 fingerprint.
    vps_ssh_agent_key: str | None = None
    vps_ssh_key_passphrase: SecretStr | None = None
    vps_ssh_host_key: str | None = None
    vps_ssh_known_hosts: Path | None = None
    vps_ssh_connect_timeout: float = Field(default=30.0, gt=0)
    vps_ssh_max_channels: int = Field(default=5, ge=1, le=20)

    # Plugin and theme changes run guarded: health baseline, backup, change, probe, back by itself when the
    # site got worse (executors/code_guard.py). Off: they run as WP-CLI runs them.
    wp_agent_guard_code_changes: bool = True
    # Tests only: `127.0.0.1:<port>` serving the site over plain HTTP, where the health probe's requests
    # go (as curl's --connect-to), or `<WordPress path>=127.0.0.1:<port>,…` for several sites; unset, the
    # server fetches its site's own URL. Never set in production.
    wp_agent_health_connect: str = ""

    # How PHP starts WP-CLI (local and ssh): through PHP with the opcache file cache in a private
    # directory when that runs the same program (executors/php_launch.py); false: `wp` as configured.
    wp_agent_opcache: bool = True

    @field_validator("wp_agent_wp_user")
    @classmethod
    def _wp_user(cls, value: str | None) -> str | None:
        return validate_wp_user(value or None)

    @field_validator("wp_agent_health_connect")
    @classmethod
    def _health_connect(cls, value: str) -> str:
        for entry in value.split(",") if value else []:
            host, _, port = entry.rpartition("=")[2].rpartition(":")
            if host not in {"127.0.0.1", "[::1]"} or not port.isdigit():
                raise ValueError(
                    "WP_AGENT_HEALTH_CONNECT は 127.0.0.1:<ポート>（サイトごとなら WordPressのパス=127.0.0.1:<ポート> を"
                    "カンマ区切り）の形式で指定してください（テスト用）"
                )
        return value

    @property
    def health_connect(self) -> str | None:
        """Where the health probe's requests go for this configuration's site (tests); None: its own URL."""
        here = str(self.wp_local_path) if self.wp_cli_mode is WpCliMode.LOCAL else self.wp_path
        return self.health_connect_for(here)

    def health_connect_for(self, wp_path: str) -> str | None:
        """… for the site whose WordPress is at `wp_path` (a registered target's): the one address, or
        the one given for that path."""
        value = self.wp_agent_health_connect
        if "=" not in value:
            return value or None
        found = (
            address for path, _, address in (e.rpartition("=") for e in value.split(",")) if path == wp_path
        )
        return next(found, None)

    @field_validator("wp_agent_local_env_passthrough")
    @classmethod
    def _passthrough(cls, value: str) -> str:
        parse_passthrough(value)
        return value

    @property
    def command_timeout_seconds(self) -> float:
        return self.wp_cli_timeout / 1000.0


class PolicySettings(MediaSettings):
    """The policy's configurable rules (FR-5.2)."""

    wp_agent_policy_file: Path | None = None
    wp_agent_policy_rules: str | None = None


class AgentSettings(WpCliSettings):
    """The agent's turn: its limits and approval wait, and the WP-CLI it runs."""

    agent_max_iterations: int = Field(default=10, ge=1, le=50)
    agent_max_commands: int = Field(default=30, ge=1, le=200)
    agent_allow_skip_confirmation: bool = False
    wp_agent_approval_timeout_seconds: int = Field(default=86_400, ge=60, le=7 * 86_400)
    # How long the site's facts (date and time zone, name, version, user, theme, sites) read for one run
    # serve the next runs on the same target; 0 reads them for every run.
    wp_agent_site_facts_ttl_seconds: int = Field(default=300, ge=0, le=3_600)


class LocalSettings(_FromEnvironment):
    """A process on someone's machine: its log level and audit file."""

    log_level: LogLevel = LogLevel.INFO
    # Under the home of the process that reads the settings (not the one that imported this module).
    wp_agent_audit_file: Path = Field(default_factory=lambda: Path.home() / ".wp-agent" / "audit.jsonl")

    @field_validator("log_level", mode="before")
    @classmethod
    def _lower(cls, value: object) -> object:
        return value.lower() if isinstance(value, str) else value


class RegistrySettings(_FromEnvironment):
    """The registered targets (DynamoDB) and the name prefix of their SSH secrets."""

    wp_agent_registry_table: str | None = None
    wp_agent_target_secret_prefix: str = "wp-agent/targets/"  # noqa: S105 - a name prefix, not a secret


class RateLimitSettings(_FromEnvironment):
    """Shared rate limits (spec §3.2)."""

    wp_agent_model_calls_per_minute: int = Field(default=60, ge=1)
    wp_agent_commands_per_user_per_minute: int = Field(default=10, ge=1)
    wp_agent_ssh_slots_per_target: int = Field(default=5, ge=1)


class AwsSettings(RegistrySettings):
    """The serverless deployment's resources (set by the CDK stack on each function)."""

    wp_agent_sessions_table: str | None = None
    wp_agent_audit_table: str | None = None
    wp_agent_rate_limit_table: str | None = None
    wp_agent_idempotency_table: str | None = None
    wp_agent_event_bus: str | None = None
    wp_agent_state_machine_arn: str | None = None
    wp_agent_admin_principals: str = ""
    wp_agent_schedule_group: str = "wp-agent"
    wp_agent_scheduler_role_arn: str | None = None
    wp_agent_session_ttl_days: int = Field(default=90, ge=1, le=3650)


# -- the entry points ------------------------------------------------------------------------------


class LocalAgentSettings(AgentSettings, PolicySettings, LocalSettings):
    """What a local agent needs (cli/wiring.py): WP-CLI, the turn's limits, the policy, the audit file."""


class CliSettings(ModelSettings, LocalAgentSettings, RegistrySettings):
    """`wp-agent` (every command but `mcp`); the README's configuration table mirrors this."""


class McpSettings(LocalAgentSettings):
    """`wp-agent mcp`: no model settings — the MCP client's own model plans, wp-agent guards."""


class LambdaSettings(ModelSettings, AgentSettings, PolicySettings, RateLimitSettings, AwsSettings):
    """What the Lambdas' shared runtime (service/runtime.py) may read. Each function's class below
    makes required what it uses, so the function fails at its start when one is missing."""


class _CallsTheModel(LambdaSettings):
    @model_validator(mode="after")
    def _model_credentials(self) -> _CallsTheModel:
        if not self.has_model_credentials():
            raise ValueError(
                "ANTHROPIC_API_KEY_SECRET_ARN (or ANTHROPIC_API_KEY, or WP_AGENT_MODEL_PROVIDER=bedrock)"
            )
        return self


class ApiSettings(_CallsTheModel):
    """functions/api: sessions, approvals, articles, targets, schedules (proposals ask the model)."""

    wp_agent_sessions_table: str
    wp_agent_audit_table: str
    wp_agent_registry_table: str
    wp_agent_idempotency_table: str
    wp_agent_event_bus: str
    wp_agent_state_machine_arn: str
    wp_agent_scheduler_role_arn: str


class TurnSettings(_CallsTheModel):
    """functions/turn: one agent turn (the model, SSH to the target, rate limits)."""

    wp_agent_sessions_table: str
    wp_agent_audit_table: str
    wp_agent_registry_table: str
    wp_agent_rate_limit_table: str
    wp_agent_event_bus: str


class ApprovalSettings(LambdaSettings):
    """functions/approval: the approval wait keeps its token on the session and announces it."""

    wp_agent_sessions_table: str
    wp_agent_audit_table: str
    wp_agent_event_bus: str


class WorkflowTasksSettings(LambdaSettings):
    """functions/workflow_tasks: a scheduled run's start, an approval's expiry, a failure's record."""

    wp_agent_sessions_table: str
    wp_agent_audit_table: str
    wp_agent_registry_table: str
    wp_agent_event_bus: str


class PublishArticleSettings(LambdaSettings):
    """functions/publish_article: one publishArticle job over SSH (no model)."""

    wp_agent_sessions_table: str
    wp_agent_audit_table: str
    wp_agent_registry_table: str
    wp_agent_event_bus: str
