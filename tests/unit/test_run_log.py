"""`wp-agent history` read back from the audit file (cli/run_log.py): a run whose process died before its
end record still says what it was asked (its start record), and a run an undo put back says so."""

from __future__ import annotations

from pathlib import Path

import pytest

from wp_agent.agent.audit_events import AuditEvent, AuditEventType
from wp_agent.cli.run_log import local_iso, local_time, read_runs


def write(path: Path, *events: AuditEvent) -> None:
    path.write_text("".join(e.model_dump_json() + "\n" for e in events), encoding="utf-8")


def record(kind: AuditEventType, run_id: str, **fields: object) -> AuditEvent:
    about = {"user_id": "me", "session_id": "ses_1", "target_id": "local", "run_id": run_id}
    return AuditEvent.model_validate({"type": kind, **about, **fields})


def test_a_run_cut_short_still_says_what_it_was_asked(tmp_path: Path) -> None:
    log = tmp_path / "audit.jsonl"
    write(
        log,
        record(AuditEventType.RUN_STARTED, "run_a", instruction="下書きを一覧して"),
        record(AuditEventType.COMMAND_EXECUTED, "run_a", command="post list", category="read", success=True),
    )
    [run] = read_runs(log)
    assert (run.instruction, run.status, run.run_status.value) == ("下書きを一覧して", "unknown", "running")
    assert "終了の記録なし" in run.status_ja


def test_a_run_an_undo_put_back_says_so_and_keeps_how_it_ended(tmp_path: Path) -> None:
    log = tmp_path / "audit.jsonl"
    write(
        log,
        record(AuditEventType.RUN_STARTED, "run_a", instruction="題名を変えて"),
        record(
            AuditEventType.COMMAND_EXECUTED, "run_a", command="post update 1", category="write", success=True
        ),
        record(AuditEventType.RUN_SUMMARY, "run_a", instruction="題名を変えて", status="completed"),
        record(
            AuditEventType.RUN_SUMMARY,
            "run_b",
            instruction="戻す",
            status="completed",
            reverts_run_id="run_a",
        ),
    )
    runs = {run.run_id: run for run in read_runs(log)}
    assert (runs["run_a"].status, runs["run_a"].undone_by) == ("completed", "run_b")
    assert runs["run_a"].to_json()["runStatus"] == "undone"
    assert runs["run_a"].status_ja == "完了・取り消し済み（run_b）"
    assert runs["run_b"].to_json()["runStatus"] == "completed"


def test_a_run_whose_undo_was_undone_in_turn_is_not_undone(tmp_path: Path) -> None:
    # As the API and `wp-agent undo` decide it (undo/standing.py): undoing the undo brings the changes back.
    log = tmp_path / "audit.jsonl"
    write(
        log,
        record(AuditEventType.RUN_SUMMARY, "run_a", instruction="題名を変えて", status="completed"),
        record(
            AuditEventType.RUN_SUMMARY,
            "run_b",
            instruction="戻す",
            status="completed",
            reverts_run_id="run_a",
        ),
        record(
            AuditEventType.RUN_SUMMARY,
            "run_c",
            instruction="戻す",
            status="completed",
            reverts_run_id="run_b",
        ),
    )
    runs = {run.run_id: run for run in read_runs(log)}
    assert (runs["run_a"].undone_by, runs["run_b"].undone_by) == (None, "run_c")
    assert runs["run_a"].to_json()["runStatus"] == "completed"


@pytest.mark.parametrize(
    ("zone", "shown", "iso"),
    [
        ("Asia/Tokyo", "2026-12-31 00:30:00 Asia/Tokyo", "2026-12-31T00:30:00+09:00"),
        ("+05:30", "2026-12-30 21:00:00 +05:30", "2026-12-30T21:00:00+05:30"),
        ("-03:00", "2026-12-30 12:30:00 -03:00", "2026-12-30T12:30:00-03:00"),
        (None, "2026-12-30 15:30:00 UTC", None),
        ("Mars/Olympus", "2026-12-30 15:30:00 UTC", None),
        ("+24:00", "2026-12-30 15:30:00 UTC", None),  # a day or more is no offset
    ],
)
def test_a_run_time_is_shown_in_the_sites_zone(zone: str | None, shown: str, iso: str | None) -> None:
    assert local_time("2026-12-30T15:30:00Z", zone) == shown
    assert local_iso("2026-12-30T15:30:00Z", zone) == iso
