"""A registered WordPress target: where a session's commands run and who may use it."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, field_validator

from wp_agent.models import field_rules
from wp_agent.models.base import WHOLE_NUMBER, RequestModel

UserId = Annotated[str, Field(pattern=field_rules.USER_ID)]


def validate_wp_user(value: str | None) -> str | None:
    if value is not None and not field_rules.matches(field_rules.WP_USER, value):
        raise ValueError("the WordPress user is a login, email or ID (1-100 printable characters)")
    return value


def validate_user_id(value: str) -> str:
    if not field_rules.matches(field_rules.USER_ID, value):
        raise ValueError("user ids are 1-128 characters of letters, digits and . _ : @ -")
    return value


class Target(RequestModel):
    target_id: str = Field(pattern=field_rules.TARGET_ID)
    host: str = Field(pattern=field_rules.HOST)
    port: Annotated[int, Field(ge=1, le=65_535), WHOLE_NUMBER] = 22
    user: str = Field(default="root", min_length=1, max_length=64, pattern=r"^[a-z_][a-z0-9_\-]*$")
    wp_path: str = Field(default="/var/www/wordpress", min_length=1, max_length=512, pattern=r"^/[^\x00\n]*$")
    secret_arn: str = Field(min_length=20, max_length=2_048, pattern=r"^arn:aws[a-z\-]*:secretsmanager:")
    multisite: bool = False
    owners: list[UserId] = Field(min_length=1, max_length=1_000)
    network_admins: list[UserId] = Field(default_factory=list, max_length=1_000)
    # The WordPress user every command runs as (WP-CLI --user); the model can never choose it.
    wp_user: str | None = Field(default=None, pattern=field_rules.WP_USER)
    description: str | None = Field(default=None, max_length=500)
    created_by: str | None = None
    created_at: str | None = None

    @field_validator("owners", "network_admins")
    @classmethod
    def _each_once(cls, values: list[str]) -> list[str]:
        return list(dict.fromkeys(values))

    def owned_by(self, user_id: str) -> bool:
        return user_id in self.owners

    def network_admin(self, user_id: str) -> bool:
        return user_id in self.network_admins
