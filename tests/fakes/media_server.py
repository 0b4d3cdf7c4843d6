"""A local HTTP server for media-import tests: images, redirects (to anywhere), HTML, huge bodies.

Bound to 127.0.0.1 on an ephemeral port; stops with the fixture. Routes:
    /img/<name>.jpg   a JPEG      /img/<name>.png   a valid 1x1 PNG
    /redirect?to=<url>            302 to <url> (e.g. http://169.254.169.254/…)
    /page.html        text/html   /huge   a body larger than the test cap
"""

from __future__ import annotations

import struct
import threading
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

import pytest

JPEG = b"\xff\xd8\xff\xe0\x00\x10JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00" + b"\x00" * 64 + b"\xff\xd9"


def tiny_png() -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        return (
            struct.pack(">I", len(data))
            + kind
            + data
            + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
        )

    header = struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(b"\x00\xff\x00\x00"))
        + chunk(b"IEND", b"")
    )


@dataclass
class MediaServer:
    server: ThreadingHTTPServer
    requests: list[str] = field(default_factory=list)

    @property
    def port(self) -> int:
        return int(self.server.server_address[1])

    @property
    def host_entry(self) -> str:
        """The WP_AGENT_MEDIA_TEST_HOSTS entry that lets the agent fetch from this server."""
        return f"127.0.0.1:{self.port}"

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}{path}"


def _handler(state: MediaServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: object) -> None:
            return

        def _send(
            self, status: int, body: bytes, content_type: str, extra: dict[str, str] | None = None
        ) -> None:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            for name, value in (extra or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:
            state.requests.append(self.path)
            parts = urlsplit(self.path)
            if parts.path.startswith("/img/") and parts.path.endswith(".jpg"):
                self._send(200, JPEG, "image/jpeg")
            elif parts.path.startswith("/img/") and parts.path.endswith(".png"):
                self._send(200, tiny_png(), "image/png")
            elif parts.path == "/redirect":
                target = parse_qs(parts.query)["to"][0]
                self._send(302, b"", "text/plain", {"Location": target})
            elif parts.path == "/page.html":
                self._send(200, b"<html><body>not an image</body></html>", "text/html")
            elif parts.path == "/huge":
                self._send(200, JPEG + b"\x00" * 3_000_000, "image/jpeg")
            else:
                self._send(404, b"not found", "text/plain")

    return Handler


@pytest.fixture
def media_server() -> Iterator[MediaServer]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), BaseHTTPRequestHandler)
    state = MediaServer(server)
    server.RequestHandlerClass = _handler(state)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
