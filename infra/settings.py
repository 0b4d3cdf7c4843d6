"""Deploy-time settings of the stack: read once from CDK context, validated, then passed as props."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

from infra import names

# The same bounds as wp_agent.config.Settings.wp_agent_approval_timeout_seconds, which the api
# function validates at start-up: a value the runtime would reject fails the synth instead.
MIN_APPROVAL_TIMEOUT_SECONDS: Final = 60
MAX_APPROVAL_TIMEOUT_SECONDS: Final = 7 * 24 * 60 * 60
# An IAM/STS ARN, optionally a prefix ending in "/" or "*" (wp_agent.service.api_identity.is_admin):
# SigV4 callers using a role appear as arn:aws:sts::<account>:assumed-role/<RoleName>/<session>.
_IAM_PRINCIPAL_ARN: Final = re.compile(r"^arn:aws[a-z-]*:(iam|sts)::\d{12}:[\w+=,.@/-]+\*?$")
# What a resource policy can name by aws:PrincipalArn: an IAM role or user (a session of an assumed
# role is matched by its role's ARN), optionally a prefix ending in "*".
_BACKEND_PRINCIPAL_ARN: Final = re.compile(r"^arn:aws[a-z-]*:iam::\d{12}:(role|user)/[\w+=,.@/-]+\*?$")
_SECRET_ARN: Final = re.compile(r"^arn:aws[a-z-]*:secretsmanager:[a-z0-9-]+:\d{12}:secret:.+-[A-Za-z0-9]{6}$")
# Accepted by both Powertools Logger and wp_agent.config.LogLevel.
_LOG_LEVELS: Final = frozenset({"DEBUG", "INFO", "WARN", "ERROR"})


class SettingsError(ValueError):
    """A context value is missing or malformed; the message names the context key."""


@dataclass(frozen=True)
class StackSettings:
    """What varies between deployments of the same code."""

    backend_principals: tuple[str, ...]
    admin_principals: tuple[str, ...] = ()
    approval_timeout_seconds: int = names.DEFAULT_APPROVAL_TIMEOUT_SECONDS
    anthropic_secret_arn: str | None = None
    log_level: str = names.DEFAULT_LOG_LEVEL

    def __post_init__(self) -> None:
        # Decision: no default. The API trusts X-Argo-User-Id from whoever may invoke it, so an
        # API invocable by every principal of the account would let any of them act as any user;
        # a deny-all default would deploy a stack nobody can use. The synth fails instead.
        if not self.backend_principals:
            raise SettingsError(
                f"{names.CONTEXT_BACKEND_PRINCIPALS} is required: the IAM role ARN(s) of the Argo Note "
                f"backend, the only principals allowed to invoke the API (e.g. -c "
                f"{names.CONTEXT_BACKEND_PRINCIPALS}=arn:aws:iam::123456789012:role/ArgoNoteBackend)"
            )
        for principal in self.backend_principals:
            if not _BACKEND_PRINCIPAL_ARN.match(principal):
                raise SettingsError(
                    f"{names.CONTEXT_BACKEND_PRINCIPALS}: {principal!r} is not an IAM role or user ARN "
                    "(arn:aws:iam::<account>:role/<name>, optionally ending in *)"
                )
        for principal in self.admin_principals:
            if not _IAM_PRINCIPAL_ARN.match(principal):
                raise SettingsError(
                    f"{names.CONTEXT_ADMIN_PRINCIPALS}: {principal!r} is not an IAM role/user ARN"
                )
        if not MIN_APPROVAL_TIMEOUT_SECONDS <= self.approval_timeout_seconds <= MAX_APPROVAL_TIMEOUT_SECONDS:
            raise SettingsError(
                f"{names.CONTEXT_APPROVAL_TIMEOUT_SECONDS} must be between {MIN_APPROVAL_TIMEOUT_SECONDS} and "
                f"{MAX_APPROVAL_TIMEOUT_SECONDS} seconds, got {self.approval_timeout_seconds}"
            )
        if self.anthropic_secret_arn is not None and not _SECRET_ARN.match(self.anthropic_secret_arn):
            raise SettingsError(
                f"{names.CONTEXT_ANTHROPIC_SECRET_ARN} must be a complete secret ARN "
                "(ending in the 6-character suffix Secrets Manager adds)"
            )
        if self.log_level not in _LOG_LEVELS:
            raise SettingsError(f"{names.CONTEXT_LOG_LEVEL} must be one of {sorted(_LOG_LEVELS)}")

    @classmethod
    def from_context(cls, context: Mapping[str, object]) -> StackSettings:
        """Build settings from `cdk -c key=value` / cdk.json context (values may be strings)."""
        timeout = context.get(names.CONTEXT_APPROVAL_TIMEOUT_SECONDS, names.DEFAULT_APPROVAL_TIMEOUT_SECONDS)
        try:
            approval_timeout_seconds = int(str(timeout))
        except ValueError:
            raise SettingsError(
                f"{names.CONTEXT_APPROVAL_TIMEOUT_SECONDS} must be an integer, got {timeout!r}"
            ) from None
        secret_arn = context.get(names.CONTEXT_ANTHROPIC_SECRET_ARN)
        return cls(
            backend_principals=_principals(context.get(names.CONTEXT_BACKEND_PRINCIPALS)),
            admin_principals=_principals(context.get(names.CONTEXT_ADMIN_PRINCIPALS)),
            approval_timeout_seconds=approval_timeout_seconds,
            anthropic_secret_arn=str(secret_arn) if secret_arn else None,
            log_level=str(context.get(names.CONTEXT_LOG_LEVEL, names.DEFAULT_LOG_LEVEL)).upper(),
        )


def _principals(raw: object) -> tuple[str, ...]:
    """Accept a list (cdk.json), a JSON list string or a comma-separated string (-c on the CLI)."""
    if raw is None or raw == "":
        return ()
    if isinstance(raw, str) and raw.lstrip().startswith("["):
        raw = json.loads(raw)
    items = raw if isinstance(raw, list) else str(raw).split(",")
    return tuple(dict.fromkeys(str(item).strip() for item in items if str(item).strip()))
