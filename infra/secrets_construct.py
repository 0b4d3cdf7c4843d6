"""Secrets Manager: the Anthropic API key, and the name pattern of the per-target SSH secrets.

The Anthropic key secret is created empty (no version): the operator stores the key with
`aws secretsmanager put-secret-value`, and until then GetSecretValue fails loudly instead of the
agent calling the model with a placeholder. Alternatively an existing secret is imported by its
complete ARN (context `anthropicApiKeySecretArn`).

Rotation is manual: Anthropic keys are issued in the Anthropic console, so there is no API a
rotation Lambda could call. Runbook: create a new key in the console, put-secret-value, wait for
warm functions to pick it up (Powertools caches secrets for 5 minutes), then revoke the old key.

Target secrets (`wp-agent/targets/<targetId>`, JSON privateKey/hostKey/passphrase) are created by
operators, not by this stack; the turn function may read exactly that name prefix. They must use
the default `aws/secretsmanager` key, which needs no extra KMS grant.
"""

from __future__ import annotations

from typing import cast

from aws_cdk import Arn, ArnComponents, ArnFormat, Stack
from aws_cdk import aws_secretsmanager as secretsmanager
from constructs import Construct

from infra import names
from infra.nag import acknowledge


class SecretsConstruct(Construct):
    """The Anthropic key secret and the ARN pattern of target secrets."""

    def __init__(self, scope: Construct, construct_id: str, *, anthropic_secret_arn: str | None) -> None:
        super().__init__(scope, construct_id)
        if anthropic_secret_arn:
            self.anthropic_api_key: secretsmanager.ISecret = secretsmanager.Secret.from_secret_complete_arn(
                self, "AnthropicApiKey", anthropic_secret_arn
            )
        else:
            secret = secretsmanager.Secret(
                self,
                "AnthropicApiKey",
                secret_name=names.ANTHROPIC_SECRET_NAME,
                description="Anthropic API key for wp-agent (put the value with put-secret-value)",
            )
            # No GenerateSecretString: the secret starts without a value, see the module docstring.
            cfn_secret = cast(secretsmanager.CfnSecret, secret.node.default_child)
            cfn_secret.add_property_deletion_override("GenerateSecretString")
            acknowledge(
                secret,
                "AwsSolutions-SMG4",
                "Third-party API key issued in the Anthropic console: no API for a rotation Lambda. "
                "Rotated manually by the runbook in infra/secrets_construct.py.",
            )
            self.anthropic_api_key = secret

        # secret:wp-agent/targets/* — the trailing * also covers the 6-character suffix of each ARN.
        self.target_secrets_arn_pattern = Arn.format(
            ArnComponents(
                service="secretsmanager",
                resource="secret",
                resource_name=f"{names.TARGET_SECRET_PREFIX}*",
                arn_format=ArnFormat.COLON_RESOURCE_NAME,
            ),
            Stack.of(self),
        )
