"""The sandbox's WordPress served over loopback HTTP: the pages visitors and administrators see.

PHP's built-in server runs the sandbox's own files as the site's owner, on 127.0.0.1 and a free port,
answering as the site's address (https://example.test) so WordPress neither redirects nor builds
links elsewhere (front_router.php). Admin screens are fetched with a logged-in session: a
WordPress session token created for the user (WP_Session_Tokens, as a login creates one) and its two
cookies, kept in memory only, valid ten minutes, and destroyed on `close()`.

Used by the tests and scripts that judge what a change did to the rendered site (the active-content
proof; the safe-changes probe reuses it).
"""

from __future__ import annotations

import http.client
import json
import os
import socket
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from urllib.parse import urlsplit

from wp_agent.sandbox import seed
from wp_agent.sandbox.errors import SandboxError
from wp_agent.sandbox.processes import end_group
from wp_agent.sandbox.site import SandboxSite

ROUTER = Path(__file__).with_name("front_router.php")
SITE_HOST = urlsplit(seed.HOME).hostname or "example.test"
_START_SECONDS = 15.0
_REQUEST_SECONDS = 60.0
_MAX_REDIRECTS = 5
_SESSION_SECONDS = 600
# Creates a session for one user (as wp_signon would) and prints its cookies; the login comes as
# JSON so nothing of it is read as PHP.
_SESSION_CODE = """
$user = get_user_by( 'login', json_decode( '%s' ) );
if ( ! $user ) { WP_CLI::error( 'no such user' ); }
$expires = time() + %d;
$token   = WP_Session_Tokens::get_instance( $user->ID )->create( $expires );
echo wp_json_encode( array(
	'user'   => $user->ID,
	'token'  => $token,
	'cookies' => array(
		SECURE_AUTH_COOKIE => wp_generate_auth_cookie( $user->ID, $expires, 'secure_auth', $token ),
		LOGGED_IN_COOKIE   => wp_generate_auth_cookie( $user->ID, $expires, 'logged_in', $token ),
	),
) );
"""
_END_SESSION_CODE = "WP_Session_Tokens::get_instance( %d )->destroy( json_decode( '%s' ) );"


@dataclass(frozen=True)
class Page:
    """One answer of the front: after same-site redirects, the last status, URL path and body."""

    status: int
    path: str
    body: str
    headers: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Session:
    """A logged-in WordPress session of the front (its cookies never leave this process)."""

    user_id: int
    token: str
    cookies: dict[str, str]

    def header(self) -> str:
        return "; ".join(f"{name}={value}" for name, value in self.cookies.items())

    def __repr__(self) -> str:  # never print the cookies
        return f"Session(user_id={self.user_id})"


class HttpFront:
    """`with HttpFront(site) as front: front.get("/?p=45")` — the site's pages over loopback HTTP."""

    def __init__(self, site: SandboxSite, *, workers: int = 4) -> None:
        self.site = site
        self.workers = workers
        self.port = 0
        self._process: subprocess.Popen[bytes] | None = None
        self._sessions: list[Session] = []

    # -- running --------------------------------------------------------------------------------

    def __enter__(self) -> HttpFront:
        self.start()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.close()

    def start(self) -> None:
        self.site.start()
        self.port = _free_port()
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "PHP_CLI_SERVER_WORKERS": str(self.workers),
            "WP_AGENT_FRONT_HOST": SITE_HOST,
        }
        command = [
            "php", "-d", "display_errors=stderr", "-S", f"127.0.0.1:{self.port}",
            "-t", str(self.site.wordpress), str(ROUTER),
        ]  # fmt: skip
        self._process = subprocess.Popen(  # noqa: S603 - our own argv, no shell
            self.site.as_owner(command),
            cwd=self.site.wordpress,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,  # the request log names paths only, but nothing is kept
            start_new_session=True,  # its workers are ended with it (see close)
        )
        deadline = time.monotonic() + _START_SECONDS
        while time.monotonic() < deadline:
            if self._process.poll() is not None:
                raise SandboxError(
                    "front_failed", "サンドボックスのHTTPサーバーが起動しませんでした（php -S）"
                )
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return
            except OSError:
                time.sleep(0.05)
        self.close()
        raise SandboxError("front_failed", "サンドボックスのHTTPサーバーが時間内に応答しませんでした")

    def close(self) -> None:
        for session in self._sessions:
            code = _END_SESSION_CODE % (session.user_id, json.dumps(session.token))
            self.site.wp("eval", code, check=False)
        self._sessions.clear()
        if self._process is not None:
            # `php -S` with workers forks them; ended alone, the server leaves them serving. The
            # group is the server and its workers only (a session of its own).
            end_group(self._process)
            self._process = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    # -- pages ----------------------------------------------------------------------------------

    def login(self, user: str = "admin") -> Session:
        """A logged-in session of `user` (ten minutes, destroyed on close)."""
        done = self.site.wp("eval", _SESSION_CODE % (json.dumps(user), _SESSION_SECONDS))
        data = json.loads(done.stdout)
        session = Session(
            int(data["user"]), str(data["token"]), {str(k): str(v) for k, v in data["cookies"].items()}
        )
        self._sessions.append(session)
        return session

    def get(self, path: str, session: Session | None = None) -> Page:
        """GET a path of the site (`/`, `/?p=45`, `/en/wp-admin/edit.php`), following the site's own
        redirects; a redirect elsewhere is answered as it is."""
        for _ in range(_MAX_REDIRECTS + 1):
            status, headers, body = self._request(path, session)
            location = headers.get("location", "")
            target = urlsplit(location)
            if status in {301, 302, 303, 307, 308} and location and target.hostname in {None, SITE_HOST}:
                path = (target.path or "/") + (f"?{target.query}" if target.query else "")
                continue
            return Page(status, path, body, headers)
        raise SandboxError("front_redirects", f"リダイレクトが続きました: {path}")

    def _request(self, path: str, session: Session | None) -> tuple[int, dict[str, str], str]:
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=_REQUEST_SECONDS)
        try:
            headers = {"Host": SITE_HOST, "User-Agent": "wp-agent-sandbox-front"}
            if session is not None:
                headers["Cookie"] = session.header()
            connection.request("GET", path, headers=headers)
            response = connection.getresponse()
            body = response.read().decode("utf-8", "replace")
            return response.status, {k.lower(): v for k, v in response.getheaders()}, body
        finally:
            connection.close()


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])
