// A backend's program against the client generated from the served OpenAPI document (openapi-typescript
// types + openapi-fetch). It is only type-checked (tsc --noEmit): it compiles when the document gives a
// generator what it needs — every operation by path and method, the required headers, typed bodies and
// answers, enums for statuses, error codes and decisions. `covered` must name every operation id, no more.
import createClient from "openapi-fetch";
import type { components, operations, paths } from "./generated/api";

type Schemas = components["schemas"];
type ErrorCode = Schemas["ApiErrorBody"]["code"];
type SessionStatus = Schemas["SessionView"]["status"];

const client = createClient<paths>({ baseUrl: "http://127.0.0.1:8787" });
const header = { "X-Argo-User-Id": "user-1" } as const;
const keyed = { ...header, "Idempotency-Key": "retry-1" } as const;
const sessionId = "ses_contract01";
const runId = "run_0123456789abcdef0123";
const targetId = "site-a";

export const covered: Record<keyof operations, true> = {
  postMessage: true,
  getSession: true,
  decideApproval: true,
  cancelRun: true,
  undoRun: true,
  listSessions: true,
  getRun: true,
  registerTarget: true,
  listTargets: true,
  getTarget: true,
  updateTarget: true,
  deleteTarget: true,
  checkTarget: true,
  getTargetActivity: true,
  listTargetMembers: true,
  putTargetMember: true,
  deleteTargetMember: true,
  publishArticle: true,
  getArticle: true,
  createSchedule: true,
  proposeSchedule: true,
  listSchedules: true,
  getSchedule: true,
  deleteSchedule: true,
  getOpenApiDocument: true,
  startFleetRun: true,
  getFleetRun: true,
  decideFleetRun: true,
};

function refused(code: ErrorCode): string {
  return code === "SESSION_NOT_FOUND" ? "no such session" : code;
}

export async function sessions(): Promise<string[]> {
  const seen: string[] = [];
  const started = await client.POST("/v1/sessions/{sessionId}/messages", {
    params: { path: { sessionId }, header: keyed },
    body: { message: "下書きの投稿を一覧で見せて", targetId },
  });
  if (started.error) return [refused(started.error.error.code)];
  const status: SessionStatus = started.data.status;
  seen.push(started.data.runId, status);

  const view = await client.GET("/v1/sessions/{sessionId}", { params: { path: { sessionId }, header } });
  const approvalId = view.data?.pendingApproval?.approvalId;
  if (approvalId) {
    const decided = await client.POST("/v1/sessions/{sessionId}/approvals/{approvalId}", {
      params: { path: { sessionId, approvalId }, header: keyed },
      body: { decision: "approve", comment: "OK" },
    });
    if (decided.data) seen.push(decided.data.decision);
  }
  const cancelled = await client.POST("/v1/sessions/{sessionId}/cancel", { params: { path: { sessionId }, header } });
  if (cancelled.error?.error.code === "RUN_NOT_ACTIVE") seen.push("nothing to cancel");

  const undo = await client.POST("/v1/sessions/{sessionId}/runs/{runId}/undo", {
    params: { path: { sessionId, runId }, header: keyed },
    body: { dryRun: true },
  });
  if (undo.data && "undoAvailable" in undo.data) seen.push(String(undo.data.undoAvailable));

  const page = await client.GET("/v1/sessions", {
    params: { header, query: { targetId, status: "Completed", limit: 20 } },
  });
  for (const session of page.data?.sessions ?? []) seen.push(session.sessionId, session.title);
  const next = page.data?.nextCursor;
  if (next) await client.GET("/v1/sessions", { params: { header, query: { cursor: next } } });

  const run = await client.GET("/v1/sessions/{sessionId}/runs/{runId}", {
    params: { path: { sessionId, runId }, header },
  });
  for (const command of run.data?.commands ?? []) {
    const decision: "read" | "write" | "destructive" | "blocked" = command.decision;
    seen.push(decision, command.outcome, String(command.undoAvailable));
  }
  if (run.data?.error) seen.push(run.data.error.code);
  return seen;
}

export async function targets(privateKey: string): Promise<string[]> {
  const seen: string[] = [];
  const registered = await client.POST("/v1/targets", {
    body: {
      targetId,
      host: "wp.example.com",
      port: 22,
      user: "wpagent",
      wpPath: "/var/www/wordpress",
      secretArn: "arn:aws:secretsmanager:ap-northeast-1:123456789012:secret:wp-agent/targets/site-a-AbCdEf",
      multisite: false,
      owners: ["user-1"],
    },
  });
  if (registered.data) seen.push(registered.data.targetId);
  const listed = await client.GET("/v1/targets", { params: { header } });
  seen.push(...(listed.data?.targets ?? []).map((target) => target.targetId));
  const one = await client.GET("/v1/targets/{targetId}", { params: { path: { targetId }, header } });
  if (one.data) seen.push(one.data.host);

  const changed = await client.PATCH("/v1/targets/{targetId}", {
    params: { path: { targetId }, header: keyed },
    body: { owners: ["user-1", "user-2"], sshKey: { privateKey }, hostKey: "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAA" },
  });
  for (const change of changed.data?.changes ?? []) seen.push(`${change.field}: ${change.old} -> ${change.new}`);

  const checked = await client.POST("/v1/targets/{targetId}/checks", { params: { path: { targetId }, header } });
  if (checked.data) seen.push(checked.data.summary, ...checked.data.checks.filter((c) => !c.ok).map((c) => c.fix ?? ""));

  const activity = await client.GET("/v1/targets/{targetId}/activity", {
    params: {
      path: { targetId },
      header,
      query: { from: "2026-01-01T00:00:00Z", to: "2027-01-01T00:00:00Z", type: ["run_summary", "target_updated"] },
    },
  });
  for (const record of activity.data?.records ?? []) seen.push(record.type, record.timestamp);

  const userId = "writer-2";
  const role: Schemas["Role"] = "editor";
  const member = await client.PUT("/v1/targets/{targetId}/members/{userId}", {
    params: { path: { targetId, userId }, header },
    body: { role },
  });
  if (member.error?.error.code === "MEMBER_IS_OWNER") seen.push("owners stay admins");
  const members = await client.GET("/v1/targets/{targetId}/members", { params: { path: { targetId }, header } });
  for (const m of members.data?.members ?? []) seen.push(`${m.userId}: ${m.role}${m.owner ? " (owner)" : ""}`);
  const removed = await client.DELETE("/v1/targets/{targetId}/members/{userId}", {
    params: { path: { targetId, userId }, header },
  });
  if (removed.data) seen.push(String(removed.data.removed));

  const deleted = await client.DELETE("/v1/targets/{targetId}", { params: { path: { targetId }, header } });
  if (deleted.data) seen.push(deleted.data.message, String(deleted.data.secretRecoveryWindowDays));
  return seen;
}

export async function articlesAndSchedules(): Promise<string[]> {
  const seen: string[] = [];
  const accepted = await client.POST("/v1/articles", {
    params: { header: keyed },
    body: { title: "お知らせ", content: "<p>本文</p>", status: "draft", targetId },
  });
  if (accepted.data) {
    const job = await client.GET("/v1/articles/{articleId}", {
      params: { path: { articleId: accepted.data.articleId }, header },
    });
    if (job.data?.result?.data) seen.push(job.data.result.data.postUrl);
  }
  const proposal = await client.POST("/v1/schedules/proposals", {
    params: { header },
    body: { text: "毎週月曜9時に下書きを一覧にして", targetId, timezone: "Asia/Tokyo" },
  });
  if (proposal.data?.status === "NEEDS_CLARIFICATION") seen.push(proposal.data.question ?? "");
  const created = await client.POST("/v1/schedules", {
    params: { header: keyed },
    body: {
      expression: "cron(0 9 ? * MON *)",
      timezone: "Asia/Tokyo",
      targetId,
      agentInput: { message: "下書きの投稿を一覧で見せて" },
    },
  });
  if (created.data) {
    const scheduleId = created.data.scheduleId;
    const one = await client.GET("/v1/schedules/{scheduleId}", { params: { path: { scheduleId }, header } });
    seen.push(...(one.data?.nextRuns ?? []));
    await client.DELETE("/v1/schedules/{scheduleId}", { params: { path: { scheduleId }, header } });
  }
  const all = await client.GET("/v1/schedules", { params: { header } });
  seen.push(...(all.data?.schedules ?? []).map((schedule) => schedule.name));
  const document = await client.GET("/v1/openapi.json");
  if (document.data) seen.push("document");
  return seen;
}

export async function fleetRuns(): Promise<string[]> {
  const seen: string[] = [];
  const started = await client.POST("/v1/fleet-runs", {
    params: { header: keyed },
    body: { message: "全サイトのプラグインを安全に更新して", tag: "clients", concurrency: 5, canary: 1, toleratedFailures: 0 },
  });
  if (started.error) return [started.error.error.code];
  const fleetRunId = started.data.fleetRunId;
  seen.push(fleetRunId, ...started.data.canary);
  const report = await client.GET("/v1/fleet-runs/{fleetRunId}", { params: { path: { fleetRunId }, header } });
  for (const step of report.data?.plan ?? []) seen.push(step.command, step.summaryJa, ...Object.keys(step.lookups ?? {}));
  if (report.data?.status === "awaitingApproval") {
    const decided = await client.POST("/v1/fleet-runs/{fleetRunId}/decision", {
      params: { path: { fleetRunId }, header },
      body: { decision: "approve" },
    });
    for (const site of decided.data?.results ?? []) {
      const status: "completed" | "rolledBack" | "skipped" | string = site.status;
      seen.push(site.site, status);
    }
  }
  return seen;
}

// What the generated types must refuse: each line fails to compile unless the document is wrong.
export function refusedAtCompileTime(): void {
  // @ts-expect-error X-Argo-User-Id is a required header
  const withoutCaller: operations["getSession"]["parameters"]["header"] = {};
  // @ts-expect-error the session status is an enum
  const running: SessionStatus = "Running";
  // @ts-expect-error error codes are an enum
  const code: ErrorCode = "NOT_A_CODE";
  void client.POST("/v1/sessions/{sessionId}/approvals/{approvalId}", {
    params: { path: { sessionId, approvalId: "apr_0123456789abcdef0123" }, header },
    // @ts-expect-error a decision is approve or reject
    body: { decision: "maybe" },
  });
  void withoutCaller;
  void running;
  void code;
}
