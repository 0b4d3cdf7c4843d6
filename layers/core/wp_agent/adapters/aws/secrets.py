"""Secrets Manager reads for the Lambda wiring (cached for a few minutes per warm container)."""

from __future__ import annotations

from aws_lambda_powertools.utilities import parameters


def read_secret(secret_arn: str) -> str:
    return str(parameters.get_secret(secret_arn, max_age=300))
