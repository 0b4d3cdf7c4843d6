"""DynamoDB tables: sessions, audit (append-only), registry, rate limits, idempotency records.

All tables are on-demand with point-in-time recovery, encrypted with the AWS managed KMS key
`aws/dynamodb` (SSEType KMS). A customer-managed key would add a key policy to maintain, a KMS
grant on every function role and $1/month per key, and buys control we do not use (cross-account
access, disabling the key to crypto-shred). Unlike the default AWS-owned key, the managed key's use
shows up in CloudTrail, which matters for an audit table.

Retention: audit, sessions and registry hold records people and operators rely on (approvals, the
audit trail, registered targets and schedules), so they keep deletion protection and survive stack
deletion. Rate-limit counters and idempotency records are short-lived by design (TTL) and are
destroyed with the stack.
"""

from __future__ import annotations

from aws_cdk import RemovalPolicy
from aws_cdk import aws_dynamodb as dynamodb
from constructs import Construct

from infra import names

# What CDK's grantReadWriteData gives on a table, without its indexes (a grant on the table alone).
TABLE_READ_WRITE = (
    "dynamodb:BatchGetItem",
    "dynamodb:BatchWriteItem",
    "dynamodb:ConditionCheckItem",
    "dynamodb:DeleteItem",
    "dynamodb:DescribeTable",
    "dynamodb:GetItem",
    "dynamodb:GetRecords",
    "dynamodb:GetShardIterator",
    "dynamodb:PutItem",
    "dynamodb:Query",
    "dynamodb:Scan",
    "dynamodb:UpdateItem",
)


class StorageConstruct(Construct):
    """The five tables of the contract; `tables[names.Table.X]` gives each."""

    def __init__(self, scope: Construct, construct_id: str) -> None:
        super().__init__(scope, construct_id)
        self.tables: dict[names.Table, dynamodb.Table] = {
            names.Table.SESSIONS: self._table(names.Table.SESSIONS, ttl=names.TTL_ATTRIBUTE, keep=True),
            names.Table.AUDIT: self._table(names.Table.AUDIT, ttl=names.TTL_ATTRIBUTE, keep=True),
            names.Table.REGISTRY: self._table(names.Table.REGISTRY, ttl=None, keep=True),
            names.Table.RATE_LIMITS: self._table(
                names.Table.RATE_LIMITS, ttl=names.TTL_ATTRIBUTE, keep=False
            ),
            names.Table.IDEMPOTENCY: self._table(
                names.Table.IDEMPOTENCY,
                ttl=names.IDEMPOTENCY_TTL_ATTRIBUTE,
                keep=False,
                partition_key=names.IDEMPOTENCY_KEY,
                sort_key=None,
            ),
        }
        # The history's indexes, as the adapters query them (wp_agent/adapters/aws/table_layout.py):
        # a user's sessions (all, or on one target), a requester's and a target's audit records.
        for table, layout in names.TABLE_LAYOUT.items():
            for index in layout.indexes:
                self.tables[table].add_global_secondary_index(
                    index_name=index.name,
                    partition_key=dynamodb.Attribute(
                        name=index.partition_key, type=dynamodb.AttributeType.STRING
                    ),
                    sort_key=dynamodb.Attribute(name=index.sort_key, type=dynamodb.AttributeType.STRING),
                    projection_type=(
                        dynamodb.ProjectionType.ALL
                        if index.projected is None
                        else dynamodb.ProjectionType.INCLUDE
                    ),
                    non_key_attributes=list(index.projected) if index.projected is not None else None,
                )

    @property
    def sessions(self) -> dynamodb.Table:
        return self.tables[names.Table.SESSIONS]

    @property
    def audit(self) -> dynamodb.Table:
        return self.tables[names.Table.AUDIT]

    @property
    def registry(self) -> dynamodb.Table:
        return self.tables[names.Table.REGISTRY]

    @property
    def rate_limits(self) -> dynamodb.Table:
        return self.tables[names.Table.RATE_LIMITS]

    @property
    def idempotency(self) -> dynamodb.Table:
        return self.tables[names.Table.IDEMPOTENCY]

    def _table(
        self,
        table: names.Table,
        *,
        ttl: str | None,
        keep: bool,
        partition_key: str = names.PARTITION_KEY,
        sort_key: str | None = names.SORT_KEY,
    ) -> dynamodb.Table:
        return dynamodb.Table(
            self,
            table.value,
            partition_key=dynamodb.Attribute(name=partition_key, type=dynamodb.AttributeType.STRING),
            sort_key=(
                dynamodb.Attribute(name=sort_key, type=dynamodb.AttributeType.STRING) if sort_key else None
            ),
            billing_mode=dynamodb.BillingMode.PAY_PER_REQUEST,
            encryption=dynamodb.TableEncryption.AWS_MANAGED,
            point_in_time_recovery_specification=dynamodb.PointInTimeRecoverySpecification(
                point_in_time_recovery_enabled=True
            ),
            time_to_live_attribute=ttl,
            deletion_protection=keep,
            removal_policy=RemovalPolicy.RETAIN if keep else RemovalPolicy.DESTROY,
        )
