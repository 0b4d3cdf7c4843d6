"""Deploy-time settings from CDK context, and the imported-secret variant of the secrets construct."""

from __future__ import annotations

import pytest
from aws_cdk import App, Stack
from aws_cdk import aws_secretsmanager as secretsmanager

from infra import names
from infra.secrets_construct import SecretsConstruct
from infra.settings import SettingsError, StackSettings

ROLE = "arn:aws:iam::111122223333:role/argo-note-admin"
SESSION_PREFIX = "arn:aws:sts::111122223333:assumed-role/ArgoAdmin/"
SECRET_ARN = "arn:aws:secretsmanager:ap-northeast-1:111122223333:secret:shared/anthropic-AbC123"


BACKEND = "arn:aws:iam::111122223333:role/ArgoNoteBackend"
REQUIRED = {names.CONTEXT_BACKEND_PRINCIPALS: BACKEND}


def test_defaults() -> None:
    settings = StackSettings.from_context(REQUIRED)
    assert settings == StackSettings(backend_principals=(BACKEND,))
    assert settings.approval_timeout_seconds == 86_400
    assert settings.admin_principals == ()
    assert settings.anthropic_secret_arn is None
    assert settings.log_level == "INFO"


@pytest.mark.parametrize(
    "raw",
    [
        f"{ROLE}, {SESSION_PREFIX}",  # -c adminPrincipals=a,b
        f'["{ROLE}", "{SESSION_PREFIX}"]',  # -c adminPrincipals='["a","b"]'
        [ROLE, SESSION_PREFIX],  # cdk.json list
    ],
)
def test_admin_principals_forms(raw: object) -> None:
    settings = StackSettings.from_context({**REQUIRED, names.CONTEXT_ADMIN_PRINCIPALS: raw})
    assert settings.admin_principals == (ROLE, SESSION_PREFIX)


def test_without_backend_principals_the_synth_fails_clearly() -> None:
    with pytest.raises(SettingsError, match="backendPrincipals is required"):
        StackSettings.from_context({})


@pytest.mark.parametrize(
    "bad",
    [
        "*",
        "123456789012",
        "arn:aws:sts::111122223333:assumed-role/ArgoNoteBackend/session",
        "arn:aws:iam::1:role/x",
    ],
)
def test_backend_principals_are_iam_roles_or_users(bad: str) -> None:
    with pytest.raises(SettingsError, match="backendPrincipals"):
        StackSettings.from_context({names.CONTEXT_BACKEND_PRINCIPALS: bad})


def test_strings_from_the_cli_are_parsed() -> None:
    settings = StackSettings.from_context(
        {
            **REQUIRED,
            names.CONTEXT_APPROVAL_TIMEOUT_SECONDS: "3600",
            names.CONTEXT_LOG_LEVEL: "debug",
            names.CONTEXT_ANTHROPIC_SECRET_ARN: SECRET_ARN,
        }
    )
    assert (settings.approval_timeout_seconds, settings.log_level) == (3600, "DEBUG")
    assert settings.anthropic_secret_arn == SECRET_ARN


@pytest.mark.parametrize(
    ("context", "message"),
    [
        ({names.CONTEXT_ADMIN_PRINCIPALS: "admin"}, "adminPrincipals"),
        ({names.CONTEXT_APPROVAL_TIMEOUT_SECONDS: "soon"}, "integer"),
        ({names.CONTEXT_APPROVAL_TIMEOUT_SECONDS: "59"}, "between 60 and 604800"),
        ({names.CONTEXT_APPROVAL_TIMEOUT_SECONDS: str(8 * 86_400)}, "between 60 and 604800"),
        ({names.CONTEXT_ANTHROPIC_SECRET_ARN: SECRET_ARN[:-7]}, "complete secret ARN"),
        ({names.CONTEXT_LOG_LEVEL: "verbose"}, "logLevel"),
    ],
)
def test_bad_context_fails_the_synth_with_the_key_named(context: dict[str, object], message: str) -> None:
    with pytest.raises(SettingsError, match=message):
        StackSettings.from_context({**REQUIRED, **context})


def test_an_existing_anthropic_secret_can_be_imported() -> None:
    stack = Stack(App(), "Secrets")
    secrets = SecretsConstruct(stack, "Secrets", anthropic_secret_arn=SECRET_ARN)
    assert stack.resolve(secrets.anthropic_api_key.secret_arn) == SECRET_ARN
    assert not [c for c in stack.node.find_all() if isinstance(c, secretsmanager.CfnSecret)]
