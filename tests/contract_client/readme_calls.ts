// The README's calls with nothing more than the README sends, against a client generated with
// openapi-typescript's default options: a field the server defaults (skipDestructiveConfirmation,
// dryRun, networkWide…) must not be required, an optional header is a plain string.
import createClient from "openapi-fetch";
import type { paths } from "./generated/api";

const client = createClient<paths>({ baseUrl: "http://127.0.0.1:8787" });

export async function readmeCalls(): Promise<string[]> {
  const started = await client.POST("/v1/sessions/{sessionId}/messages", {
    params: { path: { sessionId: "sess-0001" }, header: { "X-Argo-User-Id": "user-123", "Idempotency-Key": "msg-0001" } },
    body: { message: "下書きの投稿を一覧で見せて", targetId: "blog-prod" },
  });
  const undone = await client.POST("/v1/sessions/{sessionId}/runs/{runId}/undo", {
    params: { path: { sessionId: "sess-0001", runId: "run_0123456789abcdef0123" }, header: { "X-Argo-User-Id": "user-123" } },
    body: {},
  });
  const decided = await client.POST("/v1/sessions/{sessionId}/approvals/{approvalId}", {
    params: {
      path: { sessionId: "sess-0001", approvalId: "apr_0123456789abcdef0123" },
      header: { "X-Argo-User-Id": "user-123" },
    },
    body: { decision: "approve" },
  });
  const article = await client.POST("/v1/articles", {
    params: { header: { "X-Argo-User-Id": "user-123" } },
    body: { title: "秋の新メニューのお知らせ", content: "<p>本文</p>", targetId: "blog-prod" },
  });
  return [started.data?.runId ?? "", undone.data ? "undo" : "", decided.data ? "decided" : "", article.data?.articleId ?? ""];
}
