"""Download media for WordPress without server-side request forgery.

WordPress's own `media import <url>` fetches whatever the URL points at: its URL check does not
refuse 169.254.169.254 (cloud metadata) or 100.64.0.0/10, follows redirects, and a DNS name can
resolve anywhere. So the agent downloads the file itself: every hop's host is resolved, every
address checked (loopback, private, link-local, CGNAT, unique-local, multicast, reserved, and
IPv4 embedded in IPv6 forms), the connection goes to the checked address (Host header and TLS SNI
keep the name, so a second DNS answer cannot change where it goes), redirects are followed by hand
and checked the same way, and size and type are capped. WordPress then imports the staged file.
"""

from __future__ import annotations

import http.client
import ipaddress
import re
import socket
import ssl
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from urllib.parse import unquote, urljoin, urlsplit

from wp_agent.errors import AgentErrorCode, WpAgentError

DEFAULT_MAX_BYTES = 20 * 1024 * 1024
MAX_REDIRECTS = 5
_WEB_PORTS = frozenset({80, 443, 8080, 8443})
_NAT64 = ipaddress.ip_network("64:ff9b::/96")
_USER_AGENT = "wp-agent-media/1"

Resolver = Callable[[str, int], Sequence[str]]


class MediaDownloadError(WpAgentError):
    """The media could not be fetched safely; the message says why (Japanese)."""

    def __init__(self, message_ja: str, **details: object) -> None:
        super().__init__(AgentErrorCode.COMMAND_BLOCKED, message_ja, details=dict(details))


@dataclass(frozen=True)
class MediaType:
    extension: str
    mime: str


@dataclass(frozen=True)
class DownloadedMedia:
    data: bytes
    filename: str  # ASCII, with the extension of the detected type
    media_type: MediaType
    final_url: str


def _sniff(data: bytes) -> MediaType | None:
    """The media type by magic bytes (the server's Content-Type is not trusted). No SVG: it is
    markup that can carry script."""
    if data.startswith(b"\xff\xd8\xff"):
        return MediaType("jpg", "image/jpeg")
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        return MediaType("png", "image/png")
    if data[:6] in (b"GIF87a", b"GIF89a"):
        return MediaType("gif", "image/gif")
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return MediaType("webp", "image/webp")
    if data[4:8] == b"ftyp" and data[8:12] in (b"avif", b"avis"):
        return MediaType("avif", "image/avif")
    if data[4:8] == b"ftyp" and data[8:12] in (b"heic", b"heix", b"mif1"):
        return MediaType("heic", "image/heic")
    if data.startswith(b"BM") and len(data) > 14:
        return MediaType("bmp", "image/bmp")
    if data.startswith(b"%PDF-"):
        return MediaType("pdf", "application/pdf")
    return None


def is_public_address(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    """Globally routable unicast, also for IPv4 inside IPv6 (mapped, 6to4, NAT64); Teredo never."""
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            return is_public_address(address.ipv4_mapped)
        if address.sixtofour is not None:
            return is_public_address(address.sixtofour)
        if address.teredo is not None:
            return False
        if address in _NAT64:
            return is_public_address(ipaddress.IPv4Address(int(address) & 0xFFFFFFFF))
    return address.is_global and not address.is_multicast and not address.is_reserved


def system_resolver(host: str, port: int) -> list[str]:
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, proto=socket.IPPROTO_TCP)
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


def parse_test_hosts(value: str) -> frozenset[tuple[str, int]]:
    """`WP_AGENT_MEDIA_TEST_HOSTS`: `ip:port` entries (tests only) that may be fetched although private."""
    entries: set[tuple[str, int]] = set()
    for raw in (v.strip() for v in value.split(",") if v.strip()):
        host, _, port = raw.rpartition(":")
        try:
            address = ipaddress.ip_address(host.strip("[]"))
            entries.add((str(address), int(port)))
        except ValueError as exc:
            raise ValueError(f"media test hosts are ip:port entries, not {raw!r}") from exc
    return frozenset(entries)


class _PinnedHttp(http.client.HTTPConnection):
    def __init__(self, host: str, port: int, address: str, timeout: float) -> None:
        super().__init__(host, port, timeout=timeout)
        self._address = address

    def connect(self) -> None:
        self.sock = socket.create_connection((self._address, self.port), self.timeout)


class _PinnedHttps(http.client.HTTPSConnection):
    def __init__(self, host: str, port: int, address: str, timeout: float) -> None:
        super().__init__(host, port, timeout=timeout, context=ssl.create_default_context())
        self._address = address

    def connect(self) -> None:
        raw = socket.create_connection((self._address, self.port), self.timeout)
        self.sock = self._context.wrap_socket(raw, server_hostname=self.host)  # type: ignore[attr-defined]


class SafeDownloader:
    """Fetches one URL with every address and redirect checked and pinned; caps size, type, time."""

    def __init__(
        self,
        *,
        max_bytes: int = DEFAULT_MAX_BYTES,
        timeout_seconds: float = 30.0,
        resolver: Resolver = system_resolver,
        test_hosts: frozenset[tuple[str, int]] = frozenset(),
    ) -> None:
        self._max_bytes = max_bytes
        self._timeout = timeout_seconds
        self._resolve = resolver
        self._test_hosts = test_hosts

    def fetch(self, url: str) -> DownloadedMedia:
        deadline = time.monotonic() + self._timeout
        current = url
        for _hop in range(MAX_REDIRECTS + 1):
            scheme, host, port, target = self._checked_url(current)
            address = self._checked_address(host, port)
            response_status, location, data = self._request(scheme, host, port, address, target, deadline)
            if location is not None:
                current = urljoin(current, location)
                continue
            if response_status != http.client.OK:
                raise MediaDownloadError(
                    f"画像をダウンロードできませんでした（HTTP {response_status}）: {_shown(current)}",
                    status=response_status,
                )
            media_type = _sniff(data)
            if media_type is None:
                raise MediaDownloadError(
                    "ダウンロードしたファイルは取り込める画像（JPEG・PNG・GIF・WebP・AVIF・HEIC・BMP）"
                    f"またはPDFではありません: {_shown(current)}"
                )
            return DownloadedMedia(data, _file_name(current, media_type), media_type, current)
        raise MediaDownloadError(f"リダイレクトが多すぎます（{MAX_REDIRECTS}回まで）: {_shown(url)}")

    # -- checks -----------------------------------------------------------------------------------

    def _checked_url(self, url: str) -> tuple[str, str, int, str]:
        parts = urlsplit(url)
        if parts.scheme not in {"http", "https"} or not parts.hostname:
            raise MediaDownloadError(f"メディアは http(s) のURLからのみ取り込めます: {_shown(url)}")
        if not parts.hostname.isascii():
            raise MediaDownloadError("URLのホスト名は半角で指定してください（国際化ドメインは xn-- の形式）")
        if parts.username is not None or parts.password is not None:
            raise MediaDownloadError("認証情報を含むURLからは取り込めません")
        try:
            port = parts.port or (443 if parts.scheme == "https" else 80)
        except ValueError:
            raise MediaDownloadError(f"URLのポート番号が不正です: {_shown(url)}") from None
        target = parts.path or "/"
        if parts.query:
            target += "?" + parts.query
        return parts.scheme, parts.hostname, port, target

    def _checked_address(self, host: str, port: int) -> str:
        try:
            addresses = list(self._resolve(host, port))
        except (OSError, UnicodeError):
            raise MediaDownloadError(f"ホスト名を解決できませんでした: {host}") from None
        if not addresses:
            raise MediaDownloadError(f"ホスト名を解決できませんでした: {host}")
        checked = [ipaddress.ip_address(a.split("%", 1)[0]) for a in addresses]
        for address in checked:
            if (str(address), port) in self._test_hosts:
                continue
            if not is_public_address(address) or port not in _WEB_PORTS:
                raise MediaDownloadError(
                    f"内部ネットワーク・特殊なアドレスやポートからは取り込めません: {host}:{port}（{address}）",
                    host=host,
                    address=str(address),
                )
        return str(checked[0])

    # -- one request ------------------------------------------------------------------------------

    def _request(
        self, scheme: str, host: str, port: int, address: str, target: str, deadline: float
    ) -> tuple[int, str | None, bytes]:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise MediaDownloadError("画像のダウンロードが時間内に終わりませんでした")
        connection_type = _PinnedHttps if scheme == "https" else _PinnedHttp
        connection = connection_type(host, port, address, remaining)
        try:
            connection.request(
                "GET",
                target,
                headers={
                    "User-Agent": _USER_AGENT,
                    "Accept": "image/*, application/pdf",
                    "Accept-Encoding": "identity",
                },
            )
            response = connection.getresponse()
            if response.status in {301, 302, 303, 307, 308}:
                location = response.getheader("Location")
                if not location:
                    raise MediaDownloadError("リダイレクト先が示されていません")
                return response.status, location, b""
            length = response.getheader("Content-Length")
            if length and length.isdigit() and int(length) > self._max_bytes:
                raise self._too_large()
            data = response.read(self._max_bytes + 1)
            if len(data) > self._max_bytes:
                raise self._too_large()
            if time.monotonic() > deadline:
                raise MediaDownloadError("画像のダウンロードが時間内に終わりませんでした")
            return response.status, None, data
        except (OSError, http.client.HTTPException) as exc:
            raise MediaDownloadError(
                f"画像のダウンロードに失敗しました（{type(exc).__name__}）: {host}",
                error_type=type(exc).__name__,
            ) from None
        finally:
            connection.close()

    def _too_large(self) -> MediaDownloadError:
        return MediaDownloadError(f"ファイルが大きすぎます（最大 {self._max_bytes // (1024 * 1024)} MB）")


_UNSAFE_NAME = re.compile(r"[^A-Za-z0-9._\-]+")


def _file_name(url: str, media_type: MediaType) -> str:
    """A plain ASCII file name from the URL's last segment, with the detected type's extension."""
    stem = unquote(urlsplit(url).path.rsplit("/", 1)[-1]).rsplit(".", 1)[0]
    stem = _UNSAFE_NAME.sub("-", stem).strip(".-")[:80] or "media"
    return f"{stem}.{media_type.extension}"


def _shown(url: str) -> str:
    """The URL as people may see it: no credentials, query or fragment (they can carry tokens)."""
    parts = urlsplit(url)
    port = f":{parts.port}" if parts.port else ""
    return f"{parts.scheme}://{parts.hostname or ''}{port}{parts.path}"[:200]
