"""History benchmark: a target's activity page and a user's session page on a table seeded with a year
of records, against a Scan of the same table (what a query without an index would cost), side by side.

Run from the repository root:  python bench/history_queries.py [--per-day 40]

The audit table (moto, the stack's keys and indexes) holds a year of records for the measured target,
as many for a second target, and the user's sessions. What DynamoDB bills and what makes a page slow
is how many items a request reads, so the figures are the items read per page (`ScannedCount`), as a
ratio of what a Scan reads (the table; for sessions, the user's sessions); moto's wall time for the
page and for the Scan is reported on stderr (moto evaluates every query in memory, so its times only
show the direction).

Prints, on stdout, exactly:
  BENCH activity_newest_page_items_read_ratio <ratio> ratio goal=<=0.01
  BENCH activity_one_day_page_items_read_ratio <ratio> ratio goal=<=0.01
  BENCH activity_rare_type_page_items_read_ratio <ratio> ratio goal=<=0.1
  BENCH sessions_page_items_read_ratio <ratio> ratio goal=<=0.05   (of the user's 2,000 sessions)
"""

from __future__ import annotations

import argparse
import os
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.support.timing import log, timed

REGION = "ap-northeast-1"
TARGET = "site-busy"
TYPES = ("command_executed", "approval_requested", "approval_approved", "run_summary")


def seed(per_day: int, days: int = 365) -> int:
    """A year of the target's records (and another target's), oldest first; the number written."""
    import boto3

    from wp_agent.adapters.aws.audit_log import DynamoAuditLog
    from wp_agent.adapters.aws.table_layout import LogicalTable
    from wp_agent.agent.audit_events import AuditEvent, AuditEventType
    from wp_agent.local_api.stack import TABLE_NAMES

    log_ = DynamoAuditLog(TABLE_NAMES[LogicalTable.AUDIT])
    table = boto3.resource("dynamodb", region_name=REGION).Table(TABLE_NAMES[LogicalTable.AUDIT])
    start = datetime(2025, 11, 1, tzinfo=UTC)
    written = 0
    with table.batch_writer() as batch:
        for day in range(days):
            for n in range(per_day):
                at = start + timedelta(days=day, seconds=n * 60)
                for target in (TARGET, "site-quiet"):
                    # one approval a day on the busy target: the rare type a filter looks for
                    kind = "approval_approved" if n == 0 and target == TARGET else TYPES[n % 2]
                    event = AuditEvent(
                        type=AuditEventType(kind),
                        timestamp=at.isoformat(timespec="milliseconds").replace("+00:00", "Z"),
                        user_id="user-1",
                        session_id=f"ses_bench_{day:04d}",
                        target_id=target,
                        run_id=f"run_{day:020d}",
                        command="post list --format=ids",
                        category="read",
                        success=True,
                    )
                    batch.put_item(Item=log_.put_request(event)["Item"])
                    written += 1
    return written


def seed_sessions(count: int) -> None:
    from wp_agent.adapters.aws.session_store import DynamoSessionStore
    from wp_agent.adapters.aws.table_layout import LogicalTable
    from wp_agent.agent.lifecycle import new_session
    from wp_agent.local_api.stack import TABLE_NAMES
    from wp_agent.models.agent_io import AgentInput

    store = DynamoSessionStore(TABLE_NAMES[LogicalTable.SESSIONS])
    for n in range(count):
        state = new_session(
            AgentInput(message=f"指示 {n}"),
            session_id=f"ses_bench_{n:05d}",
            user_id="user-1",
            target_id=TARGET,
        )
        state.started_at = (
            (datetime(2025, 11, 1, tzinfo=UTC) + timedelta(hours=n)).isoformat().replace("+00:00", "Z")
        )
        store.save(state)


class ReadCounter:
    """Items DynamoDB read (ScannedCount) per Query/Scan answer."""

    def __init__(self) -> None:
        self.read = 0

    def __call__(self, http_response: Any, parsed: dict[str, Any], **_: Any) -> None:
        self.read += int(parsed.get("ScannedCount", 0))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--per-day", type=int, default=40, help="records per day on each target")
    args = parser.parse_args()
    for name, value in {
        "AWS_DEFAULT_REGION": REGION,
        "AWS_ACCESS_KEY_ID": "bench",
        "AWS_SECRET_ACCESS_KEY": "bench",
    }.items():
        os.environ[name] = value

    from moto import mock_aws

    from wp_agent.adapters.aws.audit_log import DynamoAuditLog
    from wp_agent.adapters.aws.clients import client, reset_clients, resource
    from wp_agent.adapters.aws.session_store import DynamoSessionStore
    from wp_agent.adapters.aws.table_layout import LogicalTable
    from wp_agent.local_api.stack import TABLE_NAMES, create_tables

    reset_clients()
    with mock_aws():
        create_tables(REGION)
        total = seed(args.per_day)
        sessions = 2_000
        seed_sessions(sessions)
        log(f"seeded {total} audit records (a year, two targets) and {sessions} sessions")
        counter = ReadCounter()
        dynamodb = client("dynamodb")
        for events in (dynamodb.meta.events, resource("dynamodb").meta.client.meta.events):
            events.register("after-call.dynamodb.Query", counter)
            events.register("after-call.dynamodb.Scan", counter)
        audit = DynamoAuditLog(TABLE_NAMES[LogicalTable.AUDIT])

        def read(action: Any) -> tuple[int, float]:
            counter.read = 0
            seconds = timed(action)
            return counter.read, seconds

        def scan_all() -> None:
            kwargs: dict[str, Any] = {"TableName": TABLE_NAMES[LogicalTable.AUDIT]}
            while True:
                page = dynamodb.scan(**kwargs)
                if "LastEvaluatedKey" not in page:
                    return
                kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]

        scanned, scan_seconds = read(scan_all)
        everything = "0000", "9999"
        pages = {
            "activity_newest_page": (
                lambda: audit.page_for_target(
                    TARGET, since=everything[0], until=everything[1], types=None, limit=20
                ),
                0.01,
            ),
            "activity_one_day_page": (
                lambda: audit.page_for_target(
                    TARGET,
                    since="2026-05-01T00:00:00.000Z",
                    until="2026-05-02T00:00:00.000Z",
                    types=None,
                    limit=20,
                ),
                0.01,
            ),
            "activity_rare_type_page": (
                lambda: audit.page_for_target(
                    TARGET, since=everything[0], until=everything[1], types=["approval_approved"], limit=20
                ),
                0.1,
            ),
        }
        results: list[tuple[str, float, float]] = []
        for name, (action, goal) in pages.items():
            items, seconds = read(action)
            log(
                f"{name}: {items} items read in {seconds * 1000:.0f} ms (scan: {scanned} items, {scan_seconds * 1000:.0f} ms)"
            )
            results.append((name, items / scanned, goal))
        sessions_store = DynamoSessionStore(TABLE_NAMES[LogicalTable.SESSIONS])
        items, seconds = read(lambda: sessions_store.list_for_user("user-1", limit=20))
        log(f"sessions_page: {items} items read in {seconds * 1000:.0f} ms")
        results.append(("sessions_page", items / sessions, 0.05))
        for name, ratio, goal in results:
            print(f"BENCH {name}_items_read_ratio {ratio:.5f} ratio goal=<={goal}")
    reset_clients()


if __name__ == "__main__":
    main()
