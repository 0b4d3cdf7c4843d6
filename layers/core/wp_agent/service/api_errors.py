"""Errors the API returns, as types: every code once, with its HTTP status and Japanese message.

Services raise `ApiError(ApiErrorCode.X)` (a domain refusal; never internals); the API handler maps
it to `{"error": {"code", "message", "fields"?}}` with the code's status through Powertools'
`exception_handler`. A call site passes its own message only when it says something more specific
(a limit, a name) than the code's default.
"""

from __future__ import annotations

from enum import StrEnum


class ApiErrorCode(StrEnum):
    """A stable API error code; `.status` is its HTTP status, `.message_ja` its default message."""

    status: int
    message_ja: str

    def __new__(cls, value: str, status: int, message_ja: str) -> ApiErrorCode:
        member = str.__new__(cls, value)
        member._value_ = value
        member.status = status
        member.message_ja = message_ja
        return member

    # -- the request itself ----------------------------------------------------------------------
    VALIDATION_ERROR = "VALIDATION_ERROR", 400, "入力内容が正しくありません。"
    BODY_TOO_DEEP = "BODY_TOO_DEEP", 400, "本文の入れ子が深すぎます。"
    BODY_TOO_LARGE = "BODY_TOO_LARGE", 413, "リクエスト本文が大きすぎます。"
    UNSUPPORTED_MEDIA_TYPE = (
        "UNSUPPORTED_MEDIA_TYPE",
        415,
        "本文は Content-Type: application/json（UTF-8）で送ってください。",
    )
    USER_ID_REQUIRED = "USER_ID_REQUIRED", 401, "X-Argo-User-Id ヘッダーで利用者IDを指定してください。"
    INVALID_USER_ID = "INVALID_USER_ID", 400, "X-Argo-User-Id の値が正しくありません。"
    INVALID_SESSION_ID = (
        "INVALID_SESSION_ID",
        400,
        "セッションIDは英数字・-・_ の8〜64文字で指定してください。",
    )
    INVALID_IDEMPOTENCY_KEY = (
        "INVALID_IDEMPOTENCY_KEY",
        400,
        "Idempotency-Key は1〜128文字の表示可能なASCII文字で指定してください。",
    )
    IDEMPOTENCY_KEY_REUSED = (
        "IDEMPOTENCY_KEY_REUSED",
        422,
        "同じ Idempotency-Key が別の内容のリクエストに使われています。",
    )
    REQUEST_IN_PROGRESS = (
        "REQUEST_IN_PROGRESS",
        409,
        "同じリクエストを処理中です。少し待ってから結果を確認してください。",
    )
    INVALID_CURSOR = (
        "INVALID_CURSOR",
        400,
        "cursor が正しくありません。前のページの nextCursor を、同じ条件のまま指定してください。",
    )
    INVALID_TIME_RANGE = (
        "INVALID_TIME_RANGE",
        400,
        "期間の指定が正しくありません（from は to より前にしてください）。",
    )
    ROUTE_NOT_FOUND = "ROUTE_NOT_FOUND", 404, "そのURLとメソッドの組み合わせは提供していません。"
    METHOD_NOT_ALLOWED = "METHOD_NOT_ALLOWED", 405, "このURLではそのメソッドは使えません。"
    ADMIN_REQUIRED = "ADMIN_REQUIRED", 403, "対象サイトの登録は管理者だけが行えます。"
    # -- sessions and approvals ------------------------------------------------------------------
    SESSION_NOT_FOUND = "SESSION_NOT_FOUND", 404, "セッションが見つかりません。"
    SESSION_BUSY = (
        "SESSION_BUSY",
        409,
        "このセッションでは処理が実行中です。完了するか中止してから送信してください。",
    )
    SESSION_CHANGED = "SESSION_CHANGED", 409, "セッションが更新中です。もう一度お試しください。"
    TARGET_REQUIRED = (
        "TARGET_REQUIRED",
        400,
        "最初のメッセージでは targetId（操作するサイト）を指定してください。",
    )
    TARGET_MISMATCH = "TARGET_MISMATCH", 400, "このセッションは別のサイトを対象にしています。"
    RUN_NOT_ACTIVE = "RUN_NOT_ACTIVE", 409, "実行中の処理はありません。"
    RUN_NOT_FOUND = "RUN_NOT_FOUND", 404, "実行が見つかりません。"
    NOTHING_TO_UNDO = "NOTHING_TO_UNDO", 409, "この実行には元に戻せる変更がありません。"
    RUN_ENDED = (
        "RUN_ENDED",
        409,
        "この承認リクエストの処理は既に終了しています。もう一度指示を送ってください。",
    )
    APPROVAL_NOT_FOUND = "APPROVAL_NOT_FOUND", 404, "承認リクエストが見つかりません。"
    APPROVAL_ALREADY_DECIDED = "APPROVAL_ALREADY_DECIDED", 409, "この承認リクエストは既に判断されています。"
    APPROVAL_EXPIRED = (
        "APPROVAL_EXPIRED",
        409,
        "承認の期限が切れています。もう一度指示を送ってください。",
    )
    WORKFLOW_UNAVAILABLE = (
        "WORKFLOW_UNAVAILABLE",
        503,
        "処理を開始できませんでした。しばらくしてから再度お試しください。",
    )
    # -- targets -----------------------------------------------------------------------------------
    TARGET_NOT_FOUND = "TARGET_NOT_FOUND", 404, "対象サイトが見つかりません。"
    TARGET_EXISTS = "TARGET_EXISTS", 409, "対象サイトは既に登録されています。"
    SECRET_OUTSIDE_PREFIX = (
        "SECRET_OUTSIDE_PREFIX",
        400,
        "SSH鍵のシークレット名がこのデプロイの接頭辞で始まっていません。",
    )
    TARGET_CHANGED = (
        "TARGET_CHANGED",
        409,
        "対象サイトが同時に更新されました。内容を確認してからもう一度お試しください。",
    )
    INVALID_SSH_KEY = (
        "INVALID_SSH_KEY",
        400,
        "SSH秘密鍵を読み込めません（形式、またはパスフレーズを確認してください）。",
    )
    INVALID_HOST_KEY = "INVALID_HOST_KEY", 400, "SSHホスト鍵を読み込めません（例: ssh-ed25519 AAAA…）。"
    SECRET_UNAVAILABLE = (
        "SECRET_UNAVAILABLE",
        503,
        "SSH鍵のシークレットを読み書きできませんでした。しばらくしてから再度お試しください。",
    )
    NOT_MULTISITE = "NOT_MULTISITE", 400, "対象サイトはマルチサイトではありません。"
    NETWORK_ADMIN_REQUIRED = (
        "NETWORK_ADMIN_REQUIRED",
        403,
        "ネットワーク全体の操作はネットワーク管理者だけが行えます。",
    )
    OWNER_REQUIRED = (
        "OWNER_REQUIRED",
        403,
        "この操作は対象サイトの所有者とAPI管理者だけが行えます（メンバーは対象サイトの閲覧と実行だけができます）。",
    )
    MEMBER_ADMIN_REQUIRED = (
        "MEMBER_ADMIN_REQUIRED",
        403,
        "メンバーと権限の管理は、対象サイトの所有者と管理者（admin）だけが行えます。",
    )
    EDITOR_REQUIRED = (
        "EDITOR_REQUIRED",
        403,
        "記事の公開は、対象サイトの所有者・管理者（admin）・編集者（editor）だけが行えます。閲覧者（viewer）は公開できません。",
    )
    MEMBER_IS_OWNER = (
        "MEMBER_IS_OWNER",
        409,
        "所有者は常に管理者（admin）です。所有者の変更は PATCH /v1/targets/{targetId} の owners で行ってください。",
    )
    # -- articles ----------------------------------------------------------------------------------
    ARTICLE_NOT_FOUND = "ARTICLE_NOT_FOUND", 404, "記事の公開リクエストが見つかりません。"
    ARTICLE_TOO_LARGE = (
        "ARTICLE_TOO_LARGE",
        413,
        "記事が大きすぎて受け付けられません。埋め込み画像（data: URL）などはメディアとして"
        "アップロードし、本文からはURLで参照してください。",
    )
    # -- fleet runs --------------------------------------------------------------------------------
    FLEET_RUN_NOT_FOUND = "FLEET_RUN_NOT_FOUND", 404, "フリート実行が見つかりません。"
    FLEET_NO_TARGETS = "FLEET_NO_TARGETS", 404, "このタグの付いた、利用できる対象サイトがありません。"
    FLEET_NOT_AWAITING_APPROVAL = (
        "FLEET_NOT_AWAITING_APPROVAL",
        409,
        "このフリート実行の計画は承認待ちではありません（判断済み、または計画中・終了済み）。",
    )
    # -- schedules ---------------------------------------------------------------------------------
    SCHEDULE_NOT_FOUND = "SCHEDULE_NOT_FOUND", 404, "スケジュールが見つかりません。"
    SCHEDULE_LIMIT_REACHED = "SCHEDULE_LIMIT_REACHED", 409, "登録できるスケジュールの上限に達しています。"
    SCHEDULE_REJECTED = (
        "SCHEDULE_REJECTED",
        400,
        "EventBridge Scheduler がこのスケジュールを受け付けませんでした。式とタイムゾーンを確認してください。",
    )
    SCHEDULE_STORE_UNAVAILABLE = (
        "SCHEDULE_STORE_UNAVAILABLE",
        503,
        "スケジュールを保存できませんでした。しばらくしてから再度お試しください。",
    )
    SCHEDULER_UNAVAILABLE = (
        "SCHEDULER_UNAVAILABLE",
        503,
        "スケジュールの登録・削除ができませんでした。しばらくしてから再度お試しください。",
    )
    INVALID_SCHEDULE_EXPRESSION = "INVALID_SCHEDULE_EXPRESSION", 400, "スケジュールの式が正しくありません。"
    INVALID_TIMEZONE = "INVALID_TIMEZONE", 400, "タイムゾーンが正しくありません。"
    AGENT_INPUT_TOO_LARGE = "AGENT_INPUT_TOO_LARGE", 400, "agentInput が大きすぎます。"
    PROPOSAL_FAILED = "PROPOSAL_FAILED", 422, "スケジュールの案を作れませんでした。"
    MODEL_RATE_LIMITED = (
        "MODEL_RATE_LIMITED",
        429,
        "AIモデルの呼び出し回数の上限に達しました。少し時間をおいてから再度お試しください。",
    )
    MODEL_ERROR = "MODEL_ERROR", 502, "AIモデルの呼び出しに失敗しました。しばらくしてから再度お試しください。"
    # -- the server --------------------------------------------------------------------------------
    CONFIGURATION_ERROR = (
        "CONFIGURATION_ERROR",
        500,
        "サーバーの設定に問題があります。管理者に連絡してください。",
    )
    INTERNAL_ERROR = (
        "INTERNAL_ERROR",
        500,
        "サーバー内部でエラーが発生しました。時間をおいて再度お試しください。",
    )


class GatewayErrorCode(StrEnum):
    """Codes only API Gateway answers with (its gateway responses, in the API's error shape:
    infra/api_construct.py); the document lists them with ApiErrorCode's as the error body's `code`."""

    MISSING_AUTHENTICATION_TOKEN = "MISSING_AUTHENTICATION_TOKEN"  # noqa: S105 - an error code
    INVALID_SIGNATURE = "INVALID_SIGNATURE"
    EXPIRED_TOKEN = "EXPIRED_TOKEN"  # noqa: S105 - an error code
    ACCESS_DENIED = "ACCESS_DENIED"
    THROTTLED = "THROTTLED"
    GATEWAY_TIMEOUT = "GATEWAY_TIMEOUT"
    INTEGRATION_FAILURE = "INTEGRATION_FAILURE"
    GATEWAY_REFUSED = "GATEWAY_REFUSED"
    GATEWAY_ERROR = "GATEWAY_ERROR"


class ApiError(Exception):
    """A service's refusal: a stable code (status and default message from the code), never internals."""

    def __init__(
        self,
        code: ApiErrorCode,
        message_ja: str | None = None,
        *,
        fields: list[str] | None = None,
        violations: list[dict[str, object]] | None = None,
    ) -> None:
        self.code = code
        self.message_ja = message_ja or code.message_ja
        self.fields = fields
        self.violations = violations
        super().__init__(f"{code.status} {code.value}")

    @property
    def status(self) -> int:
        return self.code.status

    def body(self) -> dict[str, object]:
        error: dict[str, object] = {"code": self.code.value, "message": self.message_ja}
        if self.fields:
            error["fields"] = self.fields
        if self.violations:
            error["violations"] = self.violations
        return {"error": error}
