"""HTTP on 127.0.0.1 for the local stack: each request becomes the API Gateway REST proxy event the
api Lambda gets (no signature: the caller is a fixed local principal, never an administrator), the
API's real routes answer it. Only loopback is ever bound, and a request whose Host is not this
loopback address and port is refused (a web page cannot reach the server through DNS rebinding)."""

from __future__ import annotations

import json
import logging
import threading
import uuid
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

logger = logging.getLogger(__name__)

LOOPBACK = "127.0.0.1"
MAX_BODY_BYTES = 2 * 1024 * 1024  # the API refuses over 1 MiB itself, with its own error
ApiHandler = Callable[[dict[str, Any]], dict[str, Any]]


def proxy_event(
    method: str,
    raw_path: str,
    headers: dict[str, str],
    body: str | None,
    *,
    caller_arn: str,
    source_ip: str = LOOPBACK,
) -> dict[str, Any]:
    """The REST (v1) proxy event API Gateway would hand the api function for this request."""
    split = urlsplit(raw_path)
    query = parse_qs(split.query, keep_blank_values=True)
    return {
        "resource": split.path,
        "path": split.path,
        "httpMethod": method,
        "headers": headers,
        "multiValueHeaders": {k: [v] for k, v in headers.items()},
        "queryStringParameters": {k: v[-1] for k, v in query.items()} or None,
        "multiValueQueryStringParameters": query or None,
        "pathParameters": None,
        "stageVariables": None,
        "requestContext": {
            "resourcePath": split.path,
            "httpMethod": method,
            "path": split.path,
            "stage": "local",
            "requestId": str(uuid.uuid4()),
            "accountId": "123456789012",
            "identity": {"userArn": caller_arn, "caller": caller_arn, "sourceIp": source_ip},
        },
        "body": body,
        "isBase64Encoded": False,
    }


class LocalApiServer:
    """The API on http://127.0.0.1:<port>/ until `stop`."""

    def __init__(self, handle: ApiHandler, *, port: int, caller_arn: str) -> None:
        self._handle = handle
        self._caller_arn = caller_arn
        self._server = ThreadingHTTPServer((LOOPBACK, port), self._handler_class())
        self._server.daemon_threads = True
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    @property
    def url(self) -> str:
        return f"http://{LOOPBACK}:{self.port}"

    def start(self) -> None:
        self._thread = threading.Thread(target=self._server.serve_forever, name="wp-agent-api", daemon=True)
        self._thread.start()

    def serve_forever(self) -> None:
        self._server.serve_forever()

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                logger.debug("api request", extra={"line": format % args})

            def do_GET(self) -> None:
                self._serve()

            def do_POST(self) -> None:
                self._serve()

            def do_PATCH(self) -> None:
                self._serve()

            def do_PUT(self) -> None:
                self._serve()

            def do_DELETE(self) -> None:
                self._serve()

            def _serve(self) -> None:
                if self.headers.get("Host") not in (f"{LOOPBACK}:{server.port}", f"localhost:{server.port}"):
                    self._send(
                        421,
                        {
                            "error": {
                                "code": "MISDIRECTED_REQUEST",
                                "message": "このサーバーは 127.0.0.1 宛てのリクエストだけを受け付けます。",
                            }
                        },
                    )
                    return
                length = int(self.headers.get("Content-Length") or 0)
                if length > MAX_BODY_BYTES:
                    self._send(
                        413,
                        {"error": {"code": "BODY_TOO_LARGE", "message": "リクエスト本文が大きすぎます。"}},
                    )
                    return
                raw = self.rfile.read(length) if length else b""
                body = raw.decode("utf-8", "surrogateescape") if raw else None
                headers = dict(self.headers.items())
                event = proxy_event(self.command, self.path, headers, body, caller_arn=server._caller_arn)
                try:
                    response = server._handle(event)
                except Exception:
                    logger.exception("the local API failed")
                    self._send(
                        500,
                        {
                            "error": {
                                "code": "INTERNAL_ERROR",
                                "message": "サーバー内部でエラーが発生しました。",
                            }
                        },
                    )
                    return
                payload = str(response.get("body") or "").encode("utf-8")
                self.send_response(int(response["statusCode"]))
                merged = dict(response.get("headers") or {})
                merged.update({k: v[-1] for k, v in (response.get("multiValueHeaders") or {}).items() if v})
                for key, value in merged.items():
                    if key.lower() != "content-length":
                        self.send_header(key, str(value))
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def _send(self, status: int, body: dict[str, Any]) -> None:
                payload = json.dumps(body, ensure_ascii=False).encode("utf-8")
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

        return Handler
