"""A registered WordPress target: where a session's commands run and who may use it."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Literal

from pydantic import Field, Strict, field_validator

from wp_agent.models import field_rules
from wp_agent.models.base import WHOLE_NUMBER, RequestModel

UserId = Annotated[str, Field(pattern=field_rules.USER_ID)]
Tag = Annotated[str, Field(pattern=field_rules.TAG)]
MAX_MEMBERS = 1_000
MAX_TAGS = 20


class Role(StrEnum):
    """What a member of a target may ask the agent for (wp_agent/policy/roles.py says which commands)."""

    VIEWER = "viewer"
    EDITOR = "editor"
    ADMIN = "admin"

    @property
    def rank(self) -> int:
        return _ROLE_RANK[self]

    def covers(self, needed: Role) -> bool:
        return self.rank >= needed.rank

    @property
    def label_ja(self) -> str:
        return _ROLE_LABEL_JA[self]


_ROLE_RANK = {Role.VIEWER: 0, Role.EDITOR: 1, Role.ADMIN: 2}
_ROLE_LABEL_JA = {
    Role.VIEWER: "閲覧者（viewer）",
    Role.EDITOR: "編集者（editor）",
    Role.ADMIN: "管理者（admin）",
}


class UpdateLevel(StrEnum):
    """How large an update an owner allows in advance: none, patch releases (1.3 → 1.3.3), or minor ones
    too (1.3 → 1.4). For core, "minor" is WordPress's own word for fixes within a branch (7.1 → 7.1.5)."""

    NONE = "none"
    PATCH = "patch"
    MINOR = "minor"

    @property
    def rank(self) -> int:
        return {UpdateLevel.NONE: 0, UpdateLevel.PATCH: 1, UpdateLevel.MINOR: 2}[self]


class UpdateAllowance(RequestModel):
    """Updates of this target that run without a per-change approval, always guarded (set by an owner).
    Core knows "minor" only: WordPress's fixes within a branch (`core update --minor`)."""

    core: Literal["none", "minor"] = "none"
    plugins: Annotated[UpdateLevel, Strict(False)] = UpdateLevel.NONE
    themes: Annotated[UpdateLevel, Strict(False)] = UpdateLevel.NONE

    @property
    def core_level(self) -> UpdateLevel:
        return UpdateLevel(self.core)

    @property
    def allows_any(self) -> bool:
        return any(level is not UpdateLevel.NONE for level in (self.core_level, self.plugins, self.themes))

    def describe_ja(self) -> str:
        """「本体: 同じ系列の修正版まで、プラグイン: パッチ版まで、テーマ: 承認が必要」."""
        words = {
            UpdateLevel.NONE: "毎回承認が必要",
            UpdateLevel.PATCH: "パッチ版（1.3 → 1.3.3）まで",
            UpdateLevel.MINOR: "マイナー版（1.3 → 1.4）まで",
        }
        core = "同じ系列の修正版（7.1 → 7.1.5）まで" if self.core == "minor" else words[UpdateLevel.NONE]
        return f"WordPress本体: {core}、プラグイン: {words[self.plugins]}、テーマ: {words[self.themes]}"


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
    # Members and their roles. Owners are admins whatever this says (an owner taken off `owners`
    # keeps the role given here).
    # A role is its JSON string (a strict enum would take only the Python member).
    members: dict[UserId, Annotated[Role, Strict(False)]] = Field(
        default_factory=dict,
        max_length=MAX_MEMBERS,
        json_schema_extra={"additionalProperties": False},  # only user ids are keys
    )
    # The WordPress user every command runs as (WP-CLI --user); the model can never choose it.
    wp_user: str | None = Field(default=None, pattern=field_rules.WP_USER)
    description: str | None = Field(default=None, max_length=500)
    # Updates an owner allows to run without a per-change approval (policy/update_allowance.py).
    update_allowance: UpdateAllowance | None = None
    # Labels a fleet run can choose the target by (POST /v1/fleet-runs {"tag": …})
    tags: list[Tag] = Field(default_factory=list, max_length=MAX_TAGS)
    created_by: str | None = None
    created_at: str | None = None

    @field_validator("owners", "network_admins", "tags")
    @classmethod
    def _each_once(cls, values: list[str]) -> list[str]:
        return list(dict.fromkeys(values))

    def owned_by(self, user_id: str) -> bool:
        return user_id in self.owners

    def role_of(self, user_id: str) -> Role | None:
        """The user's role on this target as the registry says (owners are admins); None: no access."""
        if user_id in self.owners:
            return Role.ADMIN
        return self.members.get(user_id)

    def network_admin(self, user_id: str) -> bool:
        return user_id in self.network_admins
