"""Secrets Manager: reads for the Lambda wiring (cached for a few minutes per warm container), and the
targets' SSH secrets as the target lifecycle changes them."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from aws_lambda_powertools.utilities import parameters

from wp_agent import clock
from wp_agent.adapters.aws.clients import client


def read_secret(secret_arn: str) -> str:
    return str(parameters.get_secret(secret_arn, max_age=300))


class SecretStoreError(Exception):
    """Secrets Manager could not read or write a target's secret (`missing`: it does not exist)."""

    def __init__(self, code: str) -> None:
        self.code = code
        self.missing = code == "ResourceNotFoundException"
        super().__init__(code)


class TargetSecrets:
    """A registered target's SSH secret: read fresh (never from a cache: a rotation reads what is
    there now), write a new version, schedule the deletion."""

    def read(self, secret_arn: str) -> str:
        response = self._call("get_secret_value", SecretId=secret_arn)
        return str(response["SecretString"])

    def write(self, secret_arn: str, value: str, *, request_token: str) -> None:
        """A new current version; the token makes a repeat of the same write a no-op."""
        self._call(
            "put_secret_value", SecretId=secret_arn, SecretString=value, ClientRequestToken=request_token
        )

    def schedule_deletion(self, secret_arn: str, *, recovery_days: int) -> str | None:
        """When the secret will be deleted; None when it does not exist. A secret already scheduled
        keeps its date, so a repeated DELETE answers the same one, whether or not the store would
        reschedule it."""
        try:
            described = self._call("describe_secret", SecretId=secret_arn)
        except SecretStoreError as exc:
            if exc.missing:
                return None
            raise
        if "DeletedDate" in described:
            return _scheduled(described["DeletedDate"], recovery_days)
        try:
            response = self._call("delete_secret", SecretId=secret_arn, RecoveryWindowInDays=recovery_days)
        except SecretStoreError as exc:
            if exc.missing:
                return None
            if exc.code != "InvalidRequestException":  # a twin request scheduled it meanwhile
                raise
            described = self._call("describe_secret", SecretId=secret_arn)
            if "DeletedDate" not in described:
                raise
            return _scheduled(described["DeletedDate"], recovery_days)
        return _iso(response["DeletionDate"])

    @staticmethod
    def _call(operation: str, **kwargs: Any) -> Any:
        from botocore.exceptions import BotoCoreError, ClientError

        try:
            return getattr(client("secretsmanager"), operation)(**kwargs)
        except ClientError as exc:
            raise SecretStoreError(str(exc.response["Error"]["Code"])) from None
        except BotoCoreError as exc:
            raise SecretStoreError(type(exc).__name__) from None


def _scheduled(deleted_date: datetime, recovery_days: int) -> str:
    """The deletion date of a secret already marked. AWS documents DeletedDate both as the day the secret
    goes (DescribeSecret) and as the moment it was marked (ListSecrets): a date still ahead is the
    former, one past is the latter, to which the recovery window is added."""
    if deleted_date <= clock.now():
        deleted_date += timedelta(days=recovery_days)
    return _iso(deleted_date)


def _iso(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")
