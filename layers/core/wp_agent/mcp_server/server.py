"""`wp-agent mcp`: the guarded wp_cli tool, approvals, the policy check and publishArticle for any
MCP client, on the official SDK's MCPServer (stdio, or streamable HTTP on 127.0.0.1)."""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Callable, Iterable
from contextvars import ContextVar
from typing import Annotated, Any

import anyio
from mcp.server.connection import Connection
from mcp.server.mcpserver import Context, MCPServer
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import Field, ValidationError, WithJsonSchema

from wp_agent import __version__
from wp_agent.agent.audit_events import AuditEvent
from wp_agent.agent.model_client import ModelReply
from wp_agent.agent.ports import AgentDeps, AuditLog
from wp_agent.config import McpSettings
from wp_agent.errors import InternalStateError
from wp_agent.mcp_server.approvals import (
    MODEL_APPROVAL_WARNING_JA,
    NOT_KEPT_JA,
    HandOver,
    ask_person,
    handed_to_person,
    left_to_model,
)
from wp_agent.mcp_server.resources import policy_rules_ja, site_summary
from wp_agent.mcp_server.session import CallOutcome, McpSession
from wp_agent.models.article import PublishArticleInput
from wp_agent.policy import PolicyCategory
from wp_agent.policy.command_spec import spec_of
from wp_agent.policy.command_table import ALLOWED_COMMANDS
from wp_agent.policy.site_scope import normalise_site_url
from wp_agent.publishing import ArticlePublisher, InputProblem, input_problems, validation_output

SITE_RESOURCE = "wp-agent://site"
POLICY_RESOURCE = "wp-agent://policy"
_SESSION_KEY = "wp_agent.mcp_session"
_CLIENT_NAME = re.compile(r"[^A-Za-z0-9._-]+")

# The client sees the article's real schema; the value is validated here, so that a bad field gets
# the same Japanese field problems as `wp-agent publish` (not the SDK's English validation text).
ArticleArgument = Annotated[
    dict[str, Any], WithJsonSchema(PublishArticleInput.model_json_schema(by_alias=True))
]

Command = Annotated[
    str, Field(description="WP-CLIコマンド（先頭の wp は省略可）。例: post list --post_status=draft")
]
Reason = Annotated[str, Field(description="このコマンドを実行する理由（日本語、監査ログに記録）")]
ApprovalId = Annotated[str, Field(description="wp_cli が返した承認ID（apr_…）")]

_INSTRUCTIONS_COMMON = (
    "WordPress を WP-CLI で操作するツールです。wp_cli は1回に1つのコマンドを受け取り、ポリシーで判定して"
    "読み取り・変更は実行、ブロック対象は理由を返して拒否、破壊的な操作は利用者の承認まで保留します。"
    "実行前の判定だけなら check、記事の投稿は publish_article を使います。"
)
INSTRUCTIONS = (
    _INSTRUCTIONS_COMMON
    + "保留された操作を承認するのは利用者本人です。対応するクライアントでは確認画面（elicitation）で尋ねます。"
    "それ以外では、返された要約と承認IDを利用者にそのまま伝え、利用者が端末で wp-agent approve <承認ID> を"
    "実行します。AIが承認する手段はありません。"
)
INSTRUCTIONS_MODEL_APPROVAL = (
    _INSTRUCTIONS_COMMON
    + MODEL_APPROVAL_WARNING_JA
    + "保留された操作は、必ず利用者本人に要約を見せて確認を取ってから approve / reject を呼んでください。"
)


# The SDK gives static resources no Context; the request's Context is kept here while one is read.
_reading_context: ContextVar[Context | None] = ContextVar("wp_agent_mcp_resource_context", default=None)


class _Server(MCPServer):
    async def read_resource(self, uri: Any, context: Context | None = None) -> Iterable[Any] | Any:
        token = _reading_context.set(context)
        try:
            return await super().read_resource(uri, context)
        finally:
            _reading_context.reset(token)


class ChannelAuditLog:
    """Names the front door (the MCP client) on every record this connection writes."""

    def __init__(self, inner: AuditLog, channel: str) -> None:
        self._inner = inner
        self._channel = channel

    def append(self, event: AuditEvent) -> None:
        self._inner.append(event.model_copy(update={"channel": self._channel}))


class NoPlanner:
    """The server never plans: each call's own ClientToolCall replaces this in the turn's deps."""

    def create(
        self, *, system: list[dict[str, Any]], tools: list[dict[str, Any]], messages: list[dict[str, Any]]
    ) -> ModelReply:
        raise InternalStateError("mcp_no_planner")


def annotations_for(categories: set[PolicyCategory], *, title: str) -> ToolAnnotations:
    """readOnlyHint / destructiveHint from the categories the policy can give the tool's commands."""
    runs = categories - {PolicyCategory.BLOCKED}
    return ToolAnnotations(
        title=title,
        read_only_hint=runs <= {PolicyCategory.READ},
        destructive_hint=PolicyCategory.DESTRUCTIVE in runs,
        idempotent_hint=runs <= {PolicyCategory.READ},
        open_world_hint=False,
    )


def client_channel(ctx: Context) -> str:
    """`mcp:<clientInfo.name>` (the name the client gave at initialize, reduced to safe characters)."""
    params = ctx.session.client_params
    name = params.client_info.name if params is not None else ""
    cleaned = _CLIENT_NAME.sub("-", name).strip("-")[:64]
    return f"mcp:{cleaned or 'unknown-client'}"


def _text(text: str, *, is_error: bool = False, data: Any = None) -> CallToolResult:
    return CallToolResult(
        content=[TextContent(type="text", text=text)], structured_content=data, is_error=is_error
    )


class WpAgentMcp:
    """Builds the MCPServer; one McpSession per MCP connection (kept in the SDK's connection state).

    A held command is decided by a person (approvals.py): `hand_over` keeps it for the person's
    terminal. `allow_model_approval` adds the model-callable approve / reject tools instead."""

    def __init__(
        self,
        settings: McpSettings,
        deps: AgentDeps,
        *,
        user_id: str,
        site_url: str | None,
        hand_over: HandOver,
        allow_model_approval: bool = False,
    ) -> None:
        self._settings = settings
        self._deps = deps
        self._user_id = user_id
        self._site_url = site_url
        self._hand_over = hand_over
        self._model_approves = allow_model_approval
        instructions = INSTRUCTIONS_MODEL_APPROVAL if allow_model_approval else INSTRUCTIONS
        self.server: MCPServer = _Server(
            name="wp-agent", version=__version__, instructions=instructions, log_level="WARNING"
        )
        self._register()

    def close(self) -> None:
        self._deps.wp_cli.close()

    # -- sessions -------------------------------------------------------------------------------

    def session_for(self, ctx: Context) -> McpSession:
        state = _connection_state(ctx)
        session = state.get(_SESSION_KEY)
        if not isinstance(session, McpSession):
            channel = client_channel(ctx)
            deps = dataclasses.replace(self._deps, audit=ChannelAuditLog(self._deps.audit, channel))
            session = McpSession(deps, channel=channel, user_id=self._user_id, site_url=self._site_url)
            state[_SESSION_KEY] = session
            connection = _connection_of(ctx)
            connection.exit_stack.callback(session.close)  # held approvals end with the connection
        return session

    # -- tools ----------------------------------------------------------------------------------

    def _register(self) -> None:
        # What each tool can make WordPress run, in the policy's own terms: wp_cli anything the
        # allow-list holds, approve only what was held (destructive), publish_article its fixed steps,
        # check and reject nothing at all.
        allow_list = {entry.category for entry in ALLOWED_COMMANDS.values()}
        publish_steps = {
            self._deps.policy.classify(c).category
            for c in ("term create category x", "post create --post_title=x", "post meta update 1 k v")
        }
        tools: list[tuple[Callable[..., Any], str, str, set[PolicyCategory], str]] = [
            (
                self.wp_cli,
                "wp_cli",
                "WP-CLIコマンドの実行",
                allow_list,
                "WP-CLIコマンドを1つ実行します（先頭の wp は不要）。読み取り・変更は実行、ポリシーでブロック"
                "されるものは理由を返し、破壊的な操作は利用者の承認まで保留して承認IDを返します。reason には"
                "実行理由を日本語で書いてください（監査ログに残ります）。",
            ),
            (
                self.check,
                "check",
                "ポリシー判定",
                set(),
                "コマンドがポリシーで許可・承認待ち・ブロックのどれになるかを返します（実行しません）。",
            ),
            (
                self.publish_article,
                "publish_article",
                "記事の投稿",
                publish_steps,
                "記事を決められたWP-CLI手順で投稿します（publishArticle）。カテゴリ・タグは無ければ作成、"
                "アイキャッチ画像はURLから取り込み、失敗したら作成したものを削除して元に戻します。",
            ),
        ]
        if self._model_approves:  # only behind the documented option: the model decides holds
            tools += [
                (
                    self.approve,
                    "approve",
                    "保留中の操作を承認",
                    {PolicyCategory.DESTRUCTIVE},
                    "このセッションで保留中の操作を、利用者本人が承認した場合にだけ実行します（保留時のコマンドそのまま）。"
                    + MODEL_APPROVAL_WARNING_JA,
                ),
                (
                    self.reject,
                    "reject",
                    "保留中の操作を拒否",
                    set(),
                    "このセッションで保留中の操作を取りやめます（何も実行しません）。",
                ),
            ]
        for function, name, title, categories, description in tools:
            self.server.add_tool(
                function,
                name=name,
                description=description,
                annotations=annotations_for(categories, title=title),
                structured_output=False,
            )
        self.server.resource(
            SITE_RESOURCE,
            name="site",
            title="サイトの概要",
            description="サイト名・URL・WordPressのバージョン・マルチサイトのサイト一覧",
            mime_type="application/json",
        )(self._site_resource)
        self.server.resource(
            POLICY_RESOURCE,
            name="policy",
            title="コマンドポリシー",
            description="wp_cli を判定するポリシーのルール（日本語）",
            mime_type="text/markdown",
        )(self._policy_resource)

    async def wp_cli(self, command: Command, reason: Reason, ctx: Context) -> CallToolResult:
        session = self.session_for(ctx)
        outcome = await anyio.to_thread.run_sync(session.run_command, command, reason)
        pending = outcome.pending
        if pending is None:
            return _from_outcome(outcome)
        if _can_elicit(ctx):
            timeout = self._settings.wp_agent_approval_timeout_seconds
            decided = await ask_person(ctx, session, pending, timeout_seconds=timeout)
            if decided is not None:
                return _from_outcome(decided)
        if self._model_approves:
            text, data = left_to_model(pending)
            return _text(text, data=data)
        kept = await anyio.to_thread.run_sync(session.hand_over, pending.approval_id, self._hand_over)
        if not kept:
            return _text(
                NOT_KEPT_JA, is_error=True, data={"status": "expired", "approvalId": pending.approval_id}
            )
        text, data = handed_to_person(pending, self._user_id)
        return _text(text, data=data)

    async def approve(self, approvalId: ApprovalId, ctx: Context) -> CallToolResult:  # noqa: N803 (MCP argument name)
        session = self.session_for(ctx)
        outcome = await anyio.to_thread.run_sync(
            lambda: session.decide(approvalId, approved=True, decided_by=f"{session.channel}:approve")
        )
        return _from_outcome(outcome)

    async def reject(self, approvalId: ApprovalId, ctx: Context) -> CallToolResult:  # noqa: N803 (MCP argument name)
        session = self.session_for(ctx)
        outcome = await anyio.to_thread.run_sync(
            lambda: session.decide(
                approvalId, approved=False, decided_by=f"{session.channel}:reject", comment="MCP: reject"
            )
        )
        if outcome.record is None:
            return _from_outcome(outcome)
        return _text(
            "操作を取りやめました（実行していません）。",
            data={"approvalId": approvalId, "status": "rejected"},
        )

    async def check(self, command: Command, ctx: Context) -> CallToolResult:
        session = self.session_for(ctx)
        decision = session.check(command)
        shown = decision.check_json() | {"explain": session.explain(command)}
        if (row := spec_of(decision.command_path)) is not None:  # as `wp-agent check --explain` shows it
            shown["row"] = row.to_json()
        text = f"判定: {decision.decision}（{decision.category.value}）\n理由: {shown['reason']}\nルール: {decision.rule}"
        if any(step["waitsForSite"] for step in shown["explain"]):
            text += "\n（実行時はサイトの状態を読んで判定が変わることがあります: 投稿の種類・権限で変更できる対象・メタキーの綴り）"
        return _text(text, data=shown)

    async def publish_article(self, article: ArticleArgument, ctx: Context) -> CallToolResult:
        session = self.session_for(ctx)
        try:
            parsed = PublishArticleInput.model_validate(article)
        except ValidationError as exc:
            return _refused(input_problems(exc))
        if (
            session.site_url
            and parsed.site_url
            and (normalise_site_url(parsed.site_url) != normalise_site_url(session.site_url))
        ):
            return _refused([InputProblem("siteUrl", f"このセッションの対象は {session.site_url} です")])
        publisher = ArticlePublisher(
            self._deps.wp_cli,
            self._deps.policy,
            audit=ChannelAuditLog(self._deps.audit, session.channel),
            user_id=self._user_id,
            session_id=session.session_id,
            target_id="local",
            site_url=session.site_url,
        )
        output = await anyio.to_thread.run_sync(publisher.publish, parsed)
        document = json.loads(output.to_json())
        if output.error is not None:
            return _text(f"[{output.error.code}] {output.error.message}", is_error=True, data=document)
        prefix = "【サンドボックス】" if session.simulated else ""
        data = output.data
        text = f"{prefix}記事を投稿しました（投稿ID {data.post_id if data else '?'}）"
        return _text(text, data=document)

    # -- resources ------------------------------------------------------------------------------

    async def _site_resource(self) -> str:
        ctx = _reading_context.get()
        if ctx is None:
            raise InternalStateError("mcp_no_request")
        session = self.session_for(ctx)
        summary = await anyio.to_thread.run_sync(site_summary, session, self._settings)
        return json.dumps(summary, ensure_ascii=False)

    def _policy_resource(self) -> str:
        return policy_rules_ja(self._settings)


def _connection_of(ctx: Context) -> Connection:
    """The SDK's connection of this request (the request's ServerSession holds it)."""
    connection = getattr(ctx.session, "_connection", None)
    if not isinstance(connection, Connection):
        raise InternalStateError("mcp_connection")
    return connection


def _connection_state(ctx: Context) -> dict[str, Any]:
    """The SDK's per-connection scratch state (`Connection.state`, alive as long as the connection):
    held approvals live there, so no other connection can name them."""
    return _connection_of(ctx).state


def _can_elicit(ctx: Context) -> bool:
    capabilities = ctx.client_capabilities
    return capabilities is not None and capabilities.elicitation is not None and ctx.session.can_send_request


def _from_outcome(outcome: CallOutcome) -> CallToolResult:
    record = outcome.record
    data = None
    if record is not None:
        data = {
            "command": record.command,
            "category": record.category.value,
            "status": record.status.value,
            "exitCode": record.exit_code,
            "rule": record.rule,
        }
    return _text(outcome.text, is_error=outcome.is_error, data=data)


def _refused(problems: list[InputProblem]) -> CallToolResult:
    output = validation_output(problems)
    message = output.error.message if output.error is not None else "入力が正しくありません"
    return _text(message, is_error=True, data=json.loads(output.to_json()))
