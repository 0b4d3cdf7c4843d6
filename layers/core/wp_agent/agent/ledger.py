"""The ledger: every change a turn makes to a session, and the one place that makes them.

A command run (its user's quota taken once, its intent saved before it runs, its result and audit record
saved after), a command a crash left "started" (its outcome unknown: never run twice), the reads a
decision asks for (audited), the site's facts put into the run's first message, audit records, the run's end — and the save itself, the checkpoint, which
names its moment (`Moment`): saved, then the audit records it holds delivered (audit_outbox.save_and_deliver,
their one home). The turn and the approval flow change a session only through it.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from enum import StrEnum
from typing import Any, TypeVar

from wp_agent import clock
from wp_agent.agent import audit_outbox, lifecycle, site_facts
from wp_agent.agent.audit_events import AuditEventType
from wp_agent.agent.ports import AgentDeps, AuditLog, ProgressEvent, SessionStore
from wp_agent.agent.session_state import CommandRecord, CommandStatus, SessionState, SessionStatus
from wp_agent.agent.site_commands import SiteCommands
from wp_agent.agent.tool_results import outcome_fields, result_for
from wp_agent.errors import AgentErrorCode, WpAgentError
from wp_agent.policy import PolicyCategory
from wp_agent.policy.site_reads import NeedsReads, SiteReads

logger = logging.getLogger(__name__)
T = TypeVar("T")
Results = dict[str, dict[str, Any]]  # tool_result blocks by tool_use id


class Moment(StrEnum):
    """Why a session is saved. A retried turn starts from the last moment saved."""

    TURN_END = "turn_end"  # every advance ends saved (unless another writer saved first)
    DECIDED = "decided"  # the requester's decision, an expiry or a cancel recorded
    PLANNING = "planning"  # back to planning, before a model call
    MODEL_REPLY = "model_reply"  # the model's reply, before any tool call of it runs
    PLAN_OPENED = "plan_opened"  # an undo run's revert plan, written as its first reply
    SITE_FOUND = "site_found"  # multisite.siteId looked up: the run's site
    FACTS_READ = "facts_read"  # the site's facts in the run's first message
    INTENT = "intent"  # a command about to run
    RESULT = "result"  # a command's result and its audit record: what ran on the site
    REFUSED = "refused"  # a command over the user's quota, refused and audited
    # Outside a turn (the services: commit)
    RUN_STARTED = "run_started"  # a new or follow-up run, with its site and the requester's rights
    RUN_ENDED = "run_ended"  # ended by a service (its workflow did not start, its target is gone…)
    RIGHTS_CHECKED = "rights_checked"  # the requester's rights read from the registry (maybe ended)
    APPROVAL_WAITING = "approval_waiting"  # the workflow's wait for the answer began (its token kept)
    UPDATED = "updated"  # a read-change-write of a session another writer may change (session_updates)


def commit(store: SessionStore, log: AuditLog, state: SessionState, moment: Moment) -> bool:
    """Save a session, then deliver the audit records it holds (audit_outbox.save_and_deliver): the one
    save of the turn (Ledger.save) and of the services, each naming its moment. False when some audit
    record still waits in the session; StaleSessionError when another writer saved first."""
    logger.debug("checkpoint", extra={"session_id": state.session_id, "moment": moment.value})
    return audit_outbox.save_and_deliver(store, log, state)


class Ledger:
    """The session changes of one AgentTurn (shared by the sessions it serves). The commands of one tool
    step run in parallel threads; every change is made under the lock."""

    def __init__(self, deps: AgentDeps, site: SiteCommands) -> None:
        self._deps = deps
        self._site = site
        self._lock = threading.RLock()

    # -- the save and the audit ---------------------------------------------------------------------

    def save(self, state: SessionState, moment: Moment, *, ran: bool | None = None) -> None:
        """Save the state, then deliver the audit records it holds (they are true once saved). Records
        that say what ran on the site (`ran`; by default at a command's result) are delivered even
        when the session could not be saved (e.g. a cancel changed it meanwhile)."""
        said_ran = moment is Moment.RESULT if ran is None else ran
        with self._lock:
            try:
                commit(self._deps.store, self._deps.audit, state, moment)
            except Exception:
                if said_ran:
                    audit_outbox.deliver(state, self._deps.audit)
                raise

    def audit(self, state: SessionState, event_type: AuditEventType, **fields: Any) -> None:
        """A record into the session's outbox: it reaches the audit log with the next save."""
        event = audit_outbox.new_event(event_type, state.audit_about(), **fields)
        with self._lock:
            state.audit_outbox.append(event)

    def audit_record(
        self, state: SessionState, kind: AuditEventType, record: CommandRecord, **extra: Any
    ) -> None:
        self.audit(state, kind, **audit_outbox.command_fields(record, kind, **extra))

    def block(self, state: SessionState, record: CommandRecord, rule: str, reason_ja: str) -> None:
        """A command that will not run after all (refused when its approval was acted on, or over the
        user's quota): recorded and audited."""
        with self._lock:
            record.status, record.rule, record.policy_reason = CommandStatus.BLOCKED, rule, reason_ja
            self.audit_record(state, AuditEventType.COMMAND_BLOCKED, record)

    def reject(self, record: CommandRecord) -> None:
        record.status = CommandStatus.REJECTED  # the requester declined it (the approval's record says so)

    def ask(self, state: SessionState, records: Sequence[CommandRecord], asked: Sequence[CommandRecord],
            approval_id: str) -> None:  # fmt: skip
        """`records` belong to the approval `approval_id`; `asked` are audited as asked in it. The run
        waits for the answer."""
        for record in records:
            record.approval_id = approval_id
            if record.status is CommandStatus.QUEUED:  # an undo's write, waiting with the part asked about
                record.status = CommandStatus.HELD
        for record in asked:
            self.audit_record(state, AuditEventType.APPROVAL_REQUESTED, record, approval_id=approval_id)
        state.status = SessionStatus.AWAITING_APPROVAL

    def answered(self, state: SessionState, content: list[dict[str, Any]]) -> None:
        """The held commands' answers (and those held back while waiting) go to the model as one message."""
        state.messages.append({"role": "user", "content": content})
        state.held_results = []
        if not state.status.terminal:  # (an SSH failure while the approved ones ran ended the run)
            state.status = SessionStatus.EXECUTING

    def finish(self, state: SessionState, status: SessionStatus, **outcome: Any) -> None:
        """The run ends: its AgentOutput from the records (`response`, `error`)."""
        lifecycle.finish(state, status, simulated=self._deps.wp_cli.simulated, **outcome)

    # -- reads of the site, commands ----------------------------------------------------------------

    def add_site_facts(self, state: SessionState) -> None:
        """The site's facts (site_facts.py) head the run's first message, saved before the model sees them."""
        plan = site_facts.FactsPlan(state.site_url, self._deps.wp_user)
        answers, audited = self._site.facts(state.site_scope(), state.target_id, plan)
        for fields in audited:
            self.audit(state, AuditEventType.COMMAND_EXECUTED, **fields)
        facts = site_facts.describe(plan, answers, now=self._deps.clock())
        state.messages[-1]["content"] = site_facts.with_facts(state.messages[-1]["content"], facts)
        state.site_facts_run_id = state.run_id
        state.site_time_zone = site_facts.time_zone_of(answers) or state.site_time_zone
        state.status = SessionStatus.PLANNING
        self.save(state, Moment.FACTS_READ, ran=bool(audited))

    def decided(self, state: SessionState, reason: str, decide: Callable[[SiteReads], T | NeedsReads]) -> T:
        """What `decide` decides once the site has answered the reads it asks for (audited)."""
        decided, audited = self._site.decided(state.site_scope(), state.target_id, reason, decide)
        for fields in audited:
            self.audit(state, AuditEventType.COMMAND_EXECUTED, **fields)
        return decided

    def settled(self, state: SessionState, record: CommandRecord, *, stamp: bool = False) -> CommandRecord:
        """A record a crashed attempt left "started": its outcome is unknown (never run twice)."""
        if record.status is CommandStatus.STARTED:
            record.status = CommandStatus.UNKNOWN
            if stamp:
                record.finished_at = clock.now_iso()
            self.audit_record(state, AuditEventType.COMMAND_OUTCOME_UNKNOWN, record)
        return record

    def read_once(self, state: SessionState, record: CommandRecord) -> CommandRecord:
        """A read the turn asks itself (the site lookup), recorded and run once. One a crash left "started"
        is asked again (a read changes nothing; audited as unknown first); nothing else is run twice."""
        found = state.record(record.tool_use_id)
        if found is None:
            state.commands.append(record)
            return self.execute(state, record)
        if found.status is CommandStatus.STARTED:
            found = self.settled(state, found)
            if found.category is PolicyCategory.READ:
                found.status = CommandStatus.QUEUED
                return self.execute(state, found)
        return found

    def within_quota(self, state: SessionState, record: CommandRecord) -> bool:
        """The user's command quota, taken once per command (by its intent: a retried turn and an
        approved command find their count taken). A refusal is recorded, audited and saved."""
        refused = self._site.over_quota(state.user_id, state.intent_id(record))
        if refused is None:
            return True
        with self._lock:
            self.block(state, record, *refused)
            self.save(state, Moment.REFUSED)
        return False

    def run_commands(self, state: SessionState, records: Sequence[CommandRecord], results: Results) -> None:
        """Run `records` (reads side by side up to the executor's concurrency, each write alone, in
        the call order), their before- and after-images around them, putting each one's tool_result
        into `results`. An SSH failure ends the run."""
        if not records:
            return
        by_id = {r.tool_use_id: r for r in records}
        scope = state.site_scope()
        for tool_use_id, capture in self._deps.changes.before(records, scope, state.target_id).items():
            by_id[tool_use_id].undo = capture
        for batch in side_by_side(records):
            workers = max(1, min(len(batch), self._deps.wp_cli.max_concurrency))
            with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="wp-cli") as pool:
                for record in pool.map(lambda r: self.execute(state, r), batch):
                    results[record.tool_use_id] = self.result_for(record)
        for tool_use_id, capture in self._deps.changes.after(records, scope, state.target_id).items():
            by_id[tool_use_id].undo = capture
        fatal = next((r for r in records if r.error_code is AgentErrorCode.SSH_CONNECTION_FAILED), None)
        if fatal is not None:
            error = WpAgentError(
                AgentErrorCode.SSH_CONNECTION_FAILED,
                details={"command": fatal.command, "reason": fatal.stderr},
            )
            self.finish(state, SessionStatus.FAILED, error=error)

    def execute(self, state: SessionState, record: CommandRecord) -> CommandRecord:
        """One command: the user's command quota, intent saved, run, result saved with its audit record."""
        if not self.within_quota(state, record):
            return record
        with self._lock:
            record.status = CommandStatus.STARTED
            record.started_at = clock.now_iso()
            self.save(state, Moment.INTENT)
        self.emit("command_started", f"実行中: wp {record.command}", record.command)
        started = time.perf_counter()
        try:
            read = record.category is PolicyCategory.READ
            outcome = outcome_fields(self._site.run(state.target_id, record.argv, read=read))
        except WpAgentError as exc:
            outcome = {"exit_code": None, "stdout": "", "stderr": exc.message_ja, "error_code": exc.code}
        with self._lock:
            for key, value in outcome.items():
                setattr(record, key, value)
            record.status = CommandStatus.FINISHED
            record.finished_at = clock.now_iso()
            record.duration_ms = int((time.perf_counter() - started) * 1000)
            self.audit_record(state, AuditEventType.COMMAND_EXECUTED, record)  # saved with the result
            self.save(state, Moment.RESULT)
        self._site.report(record, **state.audit_about())
        done = f"{'完了' if record.succeeded else '失敗'}: wp {record.command}（{record.duration_ms}ms）"
        self.emit("command_finished", done, record.command)
        return record

    def result_for(self, record: CommandRecord) -> dict[str, Any]:
        timeout_ms, simulated = self._deps.settings.wp_cli_timeout, self._deps.wp_cli.simulated
        return result_for(record, timeout_ms=timeout_ms, simulated=simulated)

    def emit(self, kind: str, message: str, command: str | None = None) -> None:
        """Progress for the person watching (the CLI's lines); not part of the session."""
        if self._deps.progress is not None:
            self._deps.progress(ProgressEvent(kind, message, command))


def side_by_side(records: Sequence[CommandRecord]) -> list[list[CommandRecord]]:
    """The reply's commands in the order given, grouped into what may run at once: consecutive reads
    together, every write alone. Two writes of one reply can touch the same stored value (three
    `widget add` read-modify-write one option; a post and its meta): side by side, WordPress keeps
    one and each reports success."""
    batches: list[list[CommandRecord]] = []
    for record in records:
        read = record.category is PolicyCategory.READ
        if read and batches and all(r.category is PolicyCategory.READ for r in batches[-1]):
            batches[-1].append(record)
        else:
            batches.append([record])
    return batches
