"""A registered WordPress target: where a session's commands run and who may use it."""

from __future__ import annotations

import re

from pydantic import Field, field_validator

from wp_agent.models.base import RequestModel

_ID = re.compile(r"^[a-z0-9][a-z0-9\-]{1,62}$")
_USER_ID = re.compile(r"^[A-Za-z0-9._:@\-]{1,128}$")
_HOST = re.compile(r"^[A-Za-z0-9.\-:\[\]]{1,253}$")


def validate_user_id(value: str) -> str:
    if not _USER_ID.match(value):
        raise ValueError("user ids are 1-128 characters of letters, digits and . _ : @ -")
    return value


class Target(RequestModel):
    target_id: str
    host: str
    port: int = Field(default=22, ge=1, le=65_535)
    user: str = Field(default="root", min_length=1, max_length=64, pattern=r"^[a-z_][a-z0-9_\-]*$")
    wp_path: str = Field(default="/var/www/wordpress", min_length=1, max_length=512, pattern=r"^/[^\x00\n]*$")
    secret_arn: str = Field(min_length=20, max_length=2_048, pattern=r"^arn:aws[a-z\-]*:secretsmanager:")
    multisite: bool = False
    owners: list[str] = Field(min_length=1, max_length=1_000)
    network_admins: list[str] = Field(default_factory=list, max_length=1_000)
    description: str | None = Field(default=None, max_length=500)
    created_by: str | None = None
    created_at: str | None = None

    @field_validator("target_id")
    @classmethod
    def _id(cls, value: str) -> str:
        if not _ID.match(value):
            raise ValueError("targetId must be 2-63 lowercase letters, digits or '-'")
        return value

    @field_validator("host")
    @classmethod
    def _host(cls, value: str) -> str:
        if not _HOST.match(value):
            raise ValueError("host must be a DNS name or an IP address")
        return value

    @field_validator("owners", "network_admins")
    @classmethod
    def _users(cls, values: list[str]) -> list[str]:
        return [validate_user_id(v) for v in dict.fromkeys(values)]

    def owned_by(self, user_id: str) -> bool:
        return user_id in self.owners

    def network_admin(self, user_id: str) -> bool:
        return user_id in self.network_admins
