"""One tool call of the model, decided: validate → the policy (policy/decide.py: the command table, the
role and site scope, the checks that read the site) → loop guard → hold or run.

`ToolCallPipeline.decide` returns a typed outcome and changes nothing: the record it builds is new
(the turn adds it to the session), and what the site must be asked first is requested on the
`SiteReads` it is given (the turn reads it and decides again). The turn runs the `Run` outcomes
together, holds the `Hold` outcomes for one approval, and answers the others as they are.

A retried turn meets calls it already decided: their record is reused (never run twice) — a queued
one runs, a held one stays held, a started one is of unknown outcome, any other is answered as it ended.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import ValidationError

from wp_agent.agent.messages import ToolUseBlock
from wp_agent.agent.prompt import TOOL_NAME, FleetPlanToolInput, WpCliToolInput
from wp_agent.agent.session_state import CommandRecord, CommandStatus, SessionState
from wp_agent.agent.tool_results import tool_result
from wp_agent.command_line.parsed_command import ParsedCommand
from wp_agent.config import AgentSettings
from wp_agent.masking import mask_command
from wp_agent.policy import CommandPolicy, PolicyCategory, PolicyDecision
from wp_agent.policy.decide import decide
from wp_agent.policy.fleet_plan import PlanStepError, check_lookups, check_placement, fill, looked_up_value
from wp_agent.policy.site_reads import Argv, NeedsReads, SiteReads, not_read_yet
from wp_agent.policy.site_scope import SiteScope, as_run
from wp_agent.policy.update_allowance import APPROVER as UPDATE_ALLOWANCE_APPROVER
from wp_agent.policy.update_allowance import allowed_in_advance

MAX_TOOL_CALLS_PER_RESPONSE = 10
REPEAT_LIMIT = 2  # the same argv may run twice (e.g. check before and after); a third time is a loop
_COUNTED = {CommandStatus.QUEUED, CommandStatus.STARTED, CommandStatus.FINISHED, CommandStatus.UNKNOWN}
SKIP_CONFIRMATION_APPROVER = "system:skipDestructiveConfirmation"
# An undo run's step its plan approved: it deletes only a value the reverted run added.
PLAN_APPROVER = "system:undoPlan"


def plan_may_approve(argv: Sequence[str]) -> bool:
    """The only shape an undo plan approves itself: `<object> meta delete <id> <key>` (and the site's
    `--url`), read so by WP-CLI too — no word of it taken for another option (`--all` as a key)."""
    parsed = ParsedCommand.from_argv(tuple(argv))
    return (
        len(parsed.positionals) == 5
        and parsed.positionals[1:3] == ("meta", "delete")
        and all(option.name == "url" for option in parsed.options)
    )


StopReason = Literal["repeated_command", "command_cap"]


@dataclass(frozen=True)
class RunSoFar:
    """What a tool call is decided against, taken from the session by the turn."""

    run_id: str
    iteration: int
    commands: Sequence[CommandRecord]  # the run's commands so far
    scope: SiteScope
    skip_confirmation: bool  # asked for by the input and allowed by the deployment
    alone_in_reply: bool = True  # no other call of the same reply may change the site alongside it
    # Tool-use id -> argv: steps an undo run's own plan approved (SessionState.plan_approved_steps).
    plan_approved: Mapping[str, list[str]] = field(default_factory=dict)
    # A fleet run's planning on its canary: writes become the plan's steps and do not run.
    fleet_planning: bool = False
    # Lookup names the plan already reads, with their read commands (one name, one read, in a plan).
    fleet_lookups: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    def of(
        cls, state: SessionState, scope: SiteScope, *, skip_allowed: bool, alone_in_reply: bool = True
    ) -> RunSoFar:
        skip = state.input.skip_destructive_confirmation and skip_allowed
        planned = state.plan_approved_steps if state.reverts_run_id else {}
        lookups = {n: r for step in state.fleet.steps for n, r in step.lookups.items()} if state.fleet else {}
        return cls(
            state.run_id,
            state.iterations,
            state.run_commands(),
            scope,
            skip,
            alone_in_reply,
            planned,
            fleet_planning=state.fleet_planning,
            fleet_lookups=lookups,
        )


@dataclass(frozen=True)
class Answer:
    """Refused without a record (too many calls, another tool, bad input): this is the answer."""

    result: dict[str, Any]


@dataclass(frozen=True)
class Blocked:
    """Refused by the policy or the site scope (audited, counted, shown)."""

    record: CommandRecord
    answer: dict[str, Any]


@dataclass(frozen=True)
class LoopStopped:
    """Refused because the run would loop; the run stops after this step."""

    record: CommandRecord
    answer: dict[str, Any]
    stop_reason: StopReason


@dataclass(frozen=True)
class Run:
    record: CommandRecord
    approved_by: str | None = None  # a destructive command approved up front (audited as such)


@dataclass(frozen=True)
class Hold:
    """Waits for the requester's approval."""

    record: CommandRecord


@dataclass(frozen=True)
class Settled:
    """Handled by an earlier attempt: answered as its record says."""

    record: CommandRecord


@dataclass(frozen=True)
class Unknown:
    """Started by an earlier attempt that never recorded its end: of unknown outcome, never re-run."""

    record: CommandRecord


@dataclass(frozen=True)
class Planned:
    """A fleet plan's write: recorded as a step of the plan, not run (the record says how it was read on
    the canary, with the looked-up `values` filled in; it is not one of the session's commands)."""

    record: CommandRecord
    template: str  # the command as the model wrote it, `{name}` where a looked-up value goes
    lookups: dict[str, str]
    values: dict[str, str]


ToolCallOutcome = Answer | Blocked | LoopStopped | Run | Hold | Settled | Unknown | Planned
READ_REASON = "更新する投稿の種類を確認（読み取りのみ）"  # the audit reason of the reads it asks for
LOOKUP_REASON = "フリート計画: サイトごとの値と更新する投稿の種類を確認（読み取りのみ）"  # ... while planning


def _refused(tool_use_id: str, message_ja: str) -> dict[str, Any]:
    return tool_result(tool_use_id, message_ja, is_error=True)


class ToolCallPipeline:
    def __init__(self, policy: CommandPolicy, settings: AgentSettings) -> None:
        self._policy = policy
        self._settings = settings

    def decide(
        self, call: ToolUseBlock, index: int, existing: CommandRecord | None, run: RunSoFar, site: SiteReads
    ) -> ToolCallOutcome | NeedsReads:
        """The call's outcome, or the reads of the site it needs first (the turn reads them, decides again)."""
        tool_use_id = call.id
        if existing is not None:
            return _again(existing)
        if index >= MAX_TOOL_CALLS_PER_RESPONSE:
            return Answer(
                _refused(
                    tool_use_id,
                    f"一度に実行できるコマンドは{MAX_TOOL_CALLS_PER_RESPONSE}件までです。実行していません。",
                )
            )
        if call.name != TOOL_NAME:
            return Answer(_refused(tool_use_id, f"不明なツール「{call.name}」です。wp_cli だけが使えます。"))
        given = self._tool_input(call, run, site)
        if isinstance(given, Answer | NeedsReads):
            return given
        tool_input, planned = given
        decided = decide(self._policy, tool_input.command, run.scope, site, alone_in_reply=run.alone_in_reply)
        if isinstance(decided, NeedsReads):
            return decided
        decision = decided.decision
        if decision.blocked:
            record = new_record(run, tool_use_id, tool_input, decision, CommandStatus.BLOCKED)
            message = f"このコマンドはブロックされました（実行していません）: {decision.reason_ja}"
            return Blocked(record, _refused(tool_use_id, message))
        looping = loop_guard(run.commands, list(decision.argv), self._settings)
        if looping is not None:
            stop_reason, message = looping
            record = new_record(run, tool_use_id, tool_input, decision, CommandStatus.BLOCKED, message)
            record.rule = f"loop_guard.{stop_reason}"  # the refusal's rule, audited with it
            return LoopStopped(record, _refused(tool_use_id, f"{message}（実行していません）"), stop_reason)
        if run.fleet_planning and decision.category is not PolicyCategory.READ:
            record = new_record(run, tool_use_id, tool_input, decision, CommandStatus.HELD)
            return Planned(record, *planned)
        if not decision.needs_approval:
            return Run(new_record(run, tool_use_id, tool_input, decision, CommandStatus.QUEUED))
        if run.plan_approved.get(tool_use_id) == list(decision.argv) and plan_may_approve(decision.argv):
            record = new_record(run, tool_use_id, tool_input, decision, CommandStatus.QUEUED)
            return Run(record, approved_by=PLAN_APPROVER)
        if allowed_in_advance(decision, run.scope.update_allowance):
            record = new_record(run, tool_use_id, tool_input, decision, CommandStatus.QUEUED)
            return Run(record, approved_by=UPDATE_ALLOWANCE_APPROVER)
        if not run.skip_confirmation:
            return Hold(new_record(run, tool_use_id, tool_input, decision, CommandStatus.HELD))
        record = new_record(run, tool_use_id, tool_input, decision, CommandStatus.QUEUED)
        return Run(record, approved_by=SKIP_CONFIRMATION_APPROVER)

    def _tool_input(
        self, call: ToolUseBlock, run: RunSoFar, site: SiteReads
    ) -> tuple[WpCliToolInput, tuple[str, dict[str, str], dict[str, str]]] | Answer | NeedsReads:
        """The call's input; while a fleet is planned, with its lookups read on the canary and filled in
        (and the step as written: the command, its lookups, the values)."""
        try:
            tool_input = (FleetPlanToolInput if run.fleet_planning else WpCliToolInput).model_validate(
                call.input
            )
        except ValidationError:
            message = "wp_cli の入力が不正です。command（文字列）と reason を指定してください。"
            return Answer(_refused(call.id, message))
        template = tool_input.command.strip()
        if not isinstance(tool_input, FleetPlanToolInput):
            return tool_input, (template, {}, {})
        filled = self._fill_in(tool_input, run, site)
        if isinstance(filled, NeedsReads):
            return filled
        if isinstance(filled, str):
            return Answer(_refused(call.id, f"{filled}計画に記録していません。"))
        command = WpCliToolInput(command=fill(template, filled), reason=tool_input.reason)
        try:
            check_placement(template, len(self._policy.classify(command.command).command_path))
        except PlanStepError as refused:
            return Answer(_refused(call.id, f"{refused.message_ja}計画に記録していません。"))
        return command, (template, dict(tool_input.lookups), filled)

    def _fill_in(
        self, tool_input: FleetPlanToolInput, run: RunSoFar, site: SiteReads
    ) -> dict[str, str] | str | NeedsReads:
        """The canary's values of a planned step's lookups (each decided a read for the requester on this
        site, then read), or why the step cannot be planned, or the reads it needs first."""
        try:
            check_lookups(tool_input.command, tool_input.lookups)
        except PlanStepError as refused:
            return refused.message_ja
        values: dict[str, str] = {}
        waiting: list[Argv] = []
        for name, read in tool_input.lookups.items():
            known = run.fleet_lookups.get(name)
            if known is not None and known.strip() != read.strip():
                return f"lookups の「{name}」は計画の前の手順で別の読み取り（{known}）に使っています。別の名前にしてください。"
            decided = decide(self._policy, read, run.scope, site)
            if isinstance(decided, NeedsReads):
                waiting += decided.reads
                continue
            lookup = decided.decision
            if lookup.category is not PolicyCategory.READ:
                return f"lookups の「{name}」は読み取りコマンドにしてください（{lookup.reason_ja}）。"
            argv = list(lookup.argv)
            answer = site(argv)
            if not_read_yet(site, argv):
                waiting.append(tuple(argv))
                continue
            try:
                values[name] = looked_up_value(name, answer)
            except PlanStepError as refused:
                return refused.message_ja
        return NeedsReads(tuple(dict.fromkeys(waiting))) if waiting else values

    def changing_calls(self, calls: Sequence[ToolUseBlock]) -> set[int]:
        """The indexes of the reply's calls that may change the site when the reply runs: every wp_cli
        call the policy neither reads nor refuses (a held one counts too: the answer may be kept
        simple, it never makes a write run that would otherwise wait)."""
        changing: set[int] = set()
        for index, call in enumerate(calls[:MAX_TOOL_CALLS_PER_RESPONSE]):
            command = (
                call.input.get("command") if call.name == TOOL_NAME and isinstance(call.input, dict) else None
            )
            if not isinstance(command, str) or not command.strip():
                continue
            if self._policy.classify(command).may_change_site:
                changing.add(index)
        return changing


def _again(record: CommandRecord) -> ToolCallOutcome:
    """A retried turn meets a tool call it already handled: reuse its outcome, never re-run it."""
    if record.status is CommandStatus.QUEUED:
        return Run(record)
    if record.status is CommandStatus.STARTED:
        return Unknown(record)
    if record.status is CommandStatus.HELD:
        return Hold(record)
    return Settled(record)


def loop_guard(
    commands: Sequence[CommandRecord], argv: list[str], settings: AgentSettings
) -> tuple[StopReason, str] | None:
    """Why running `argv` next would make the run a loop (the run's stop reason and the message), or None."""
    same = sum(1 for r in commands if r.argv == argv and r.status is not CommandStatus.BLOCKED)
    if same >= REPEAT_LIMIT:
        return "repeated_command", "同じコマンドが繰り返し呼び出されたため、処理を中止しました"
    ran = sum(1 for r in commands if r.status in _COUNTED)
    if ran >= settings.agent_max_commands:
        return (
            "command_cap",
            f"1回の依頼で実行できるコマンド数の上限（{settings.agent_max_commands}件）に達したため、処理を中止しました",
        )
    return None


def new_record(
    run: RunSoFar,
    tool_use_id: str,
    tool_input: WpCliToolInput,
    decision: PolicyDecision,
    status: CommandStatus,
    policy_reason: str | None = None,
) -> CommandRecord:
    return CommandRecord(
        tool_use_id=tool_use_id,
        run_id=run.run_id,
        command=mask_command(as_run(tool_input.command.strip(), decision.argv)),
        argv=list(decision.argv),
        reason=tool_input.reason,
        category=decision.category,
        rule=decision.rule,
        policy_reason=policy_reason or decision.reason_ja,
        command_path=list(decision.command_path),
        pattern=decision.pattern,
        status=status,
        iteration=run.iteration,
    )
