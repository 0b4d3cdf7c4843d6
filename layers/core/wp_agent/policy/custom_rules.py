"""FR-5.2: deployment-specific allow / deny / confirm rules from a JSON file or environment variable.

Format (both sources are merged; deny wins over everything, hard blocks cannot be allowed):
    {"allow":   ["widget list", {"command": "widget add", "category": "write"}],
     "deny":    ["plugin install", {"command": "user create", "reason": "…"}],
     "confirm": ["plugin activate"]}
A rule's command is a WP-CLI command path prefix ("plugin" matches every plugin subcommand),
resolved to WP-CLI's canonical words like every command ("option set" is the rule "option update").
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from wp_agent.command_line.aliases import canonical_path
from wp_agent.errors import ConfigurationError
from wp_agent.whole_values import whole

_PATH_WORD = whole(r"[a-z][a-z0-9\-]*", "post", "site-health", "v2")


class _Rule(BaseModel):
    model_config = ConfigDict(extra="forbid")
    command: str
    reason: str | None = Field(default=None, max_length=500)

    @field_validator("command")
    @classmethod
    def _path(cls, value: str) -> str:
        words = value.split()
        if not words or not all(_PATH_WORD.fits(w) for w in words):
            raise ValueError("command must be WP-CLI command words such as 'plugin install'")
        return " ".join(words)

    @property
    def path(self) -> tuple[str, ...]:
        return canonical_path(self.command.split())


class AllowRule(_Rule):
    category: Literal["read", "write", "destructive"] = "write"


class CustomRules(BaseModel):
    model_config = ConfigDict(extra="forbid")
    allow: list[AllowRule] = Field(default_factory=list)
    deny: list[_Rule] = Field(default_factory=list)
    confirm: list[_Rule] = Field(default_factory=list)

    @field_validator("allow", "deny", "confirm", mode="before")
    @classmethod
    def _strings_are_commands(cls, value: object) -> object:
        if isinstance(value, list):
            return [{"command": v} if isinstance(v, str) else v for v in value]
        return value

    def merged(self, other: CustomRules) -> CustomRules:
        return CustomRules(
            allow=[*self.allow, *other.allow],
            deny=[*self.deny, *other.deny],
            confirm=[*self.confirm, *other.confirm],
        )


def _parse(text: str, source: str) -> CustomRules:
    try:
        return CustomRules.model_validate(json.loads(text))
    except (json.JSONDecodeError, ValidationError) as exc:
        raise ConfigurationError(
            f"ポリシー設定（{source}）を読み込めません: {exc}".replace("\n", " "), setting=source
        ) from exc


def load_custom_rules(policy_file: Path | None, policy_rules_json: str | None) -> CustomRules:
    rules = CustomRules()
    if policy_file is not None:
        try:
            text = policy_file.read_text(encoding="utf-8")
        except OSError as exc:
            raise ConfigurationError(
                f"ポリシー設定ファイル {policy_file} を読めません: {exc.strerror}",
                setting="WP_AGENT_POLICY_FILE",
            ) from exc
        rules = rules.merged(_parse(text, "WP_AGENT_POLICY_FILE"))
    if policy_rules_json:
        rules = rules.merged(_parse(policy_rules_json, "WP_AGENT_POLICY_RULES"))
    return rules
