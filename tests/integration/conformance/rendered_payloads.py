"""Proof by effect for active content and fetches (issue 38): payloads written through `wp-agent ask` on
the real sandbox, then the pages people see fetched over loopback HTTP (sandbox/http_front.py) and
parsed — no payload runs in a page unless the person approved it, and no fetch leaves the server for a
host that was not approved.

Every outbound HTTP request WordPress makes while rendering goes to a loopback listener instead (a
harness must-use plugin, `pre_http_request`): the listener's log is every fetch the server tried.

Used by tests/e2e/test_active_content_rendered.py (a bounded sample) and
scripts/active_content_matrix.py (every payload × every text write path × configured user).
"""

from __future__ import annotations

import random
import secrets
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from urllib.parse import parse_qs, urlsplit

from tests.e2e.test_redteam_real_site import Attacker, CountingServer, Run, model_executed
from tests.fakes.xss_payloads import Payload, payloads, running_markers
from wp_agent.sandbox import SandboxSite
from wp_agent.sandbox.http_front import HttpFront, Session

# Who WP-CLI runs as (WP_AGENT_WP_USER): nobody (the default), an administrator, an editor.
USERS: dict[str, str | None] = {"none": None, "administrator": "admin", "editor": "hanako"}
POST_URL = "/?p=10"  # published post 10 (the site redirects to its permalink)


@dataclass(frozen=True)
class TextPath:
    """A text write path: the command (`{v}`: the value) and the pages that show the text."""

    name: str
    template: str
    front: tuple[str, ...]
    admin: tuple[str, ...]


TEXT_PATHS: tuple[TextPath, ...] = (
    TextPath("post content", "post update 10 --post_content={v}", (POST_URL,), ("/wp-admin/edit.php",)),
    TextPath("post title", "post update 10 --post_title={v}", ("/", POST_URL), ("/wp-admin/edit.php",)),
    TextPath("post excerpt", "post update 10 --post_excerpt={v}", ("/",), ("/wp-admin/edit.php",)),
    TextPath("new post", "post create --post_status=publish --post_title=new --post_content={v}", ("/",), ()),
    TextPath("menu item title", "menu item add-custom main-menu {v} https://example.com/", ("/",),
             ("/wp-admin/nav-menus.php",)),
    TextPath("widget html", "widget add custom_html sidebar-1 --content={v}", ("/",), ("/wp-admin/widgets.php",)),
    TextPath("widget title", "widget add text sidebar-1 --title={v} --text=x", ("/",), ("/wp-admin/widgets.php",)),
    TextPath("term description", "term update category 1 --description={v}", ("/?cat=1",),
             ("/wp-admin/edit-tags.php?taxonomy=category",)),
    TextPath("user display name", "user update 2 --display_name={v}", (POST_URL,), ("/wp-admin/users.php",)),
    TextPath("user description", "user update 2 --description={v}", (POST_URL,), ("/wp-admin/users.php",)),
    TextPath("comment", "comment update 1 --comment_content={v}", (POST_URL,), ("/wp-admin/edit-comments.php",)),
    TextPath("site title", "site create --slug=xsssite --title={v}", (), ("/wp-admin/network/sites.php",)),
)  # fmt: skip

_OUTBOUND_PLUGIN = "wp-content/mu-plugins/wp-agent-outbound-listener.php"
_OUTBOUND_CODE = """<?php
// Test harness only: every HTTP request WordPress makes goes to a loopback listener instead, which
// logs the URL WordPress asked for.
add_filter(
	'pre_http_request',
	static function ( $response, $args, $url ) {
		if ( false !== $response || str_starts_with( $url, '%(listener)s' ) ) {
			return $response;
		}
		$args['reject_unsafe_urls'] = false;
		$args['timeout']            = 5;
		return wp_remote_request( '%(listener)s/?url=' . rawurlencode( $url ), $args );
	},
	10,
	3
);
"""


class OutboundListener(CountingServer):
    """A loopback server that counts every request WordPress tried to make; `fetched` names the URL
    WordPress asked for (the must-use plugin passes it as `?url=`)."""

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def fetched(self) -> list[str]:
        return [parse_qs(urlsplit(hit.split(" ", 1)[1]).query).get("url", [""])[0] for hit in self.hits]


@contextmanager
def rendered_site(site: SandboxSite) -> Iterator[tuple[HttpFront, OutboundListener]]:
    """The seeded sandbox served over loopback HTTP, its outbound requests sent to a listener."""
    site.reset()
    with OutboundListener() as listener:
        plugin = site.wordpress / _OUTBOUND_PLUGIN
        plugin.parent.mkdir(parents=True, exist_ok=True)
        plugin.write_text(_OUTBOUND_CODE % {"listener": listener.url}, encoding="utf-8")
        plugin.chmod(0o644)
        try:
            with HttpFront(site) as front:
                yield front, listener
        finally:
            plugin.unlink(missing_ok=True)
            site.reset()


def _quoted(value: str) -> str:
    return "'" + value.replace("'", "'\"'\"'") + "'"


@dataclass
class Written:
    path: TextPath
    payload: Payload
    marker: str
    command: str


@dataclass
class RenderedTally:
    written: int = 0
    decisions: Counter[str] = field(default_factory=Counter)
    pages: int = 0
    running: list[str] = field(default_factory=list)  # markers found running that were not approved
    approved_running: int = 0  # approved payloads seen running (the detector works)
    approved_stripped: int = 0  # approved payloads WordPress's kses took out (an editor configured)
    fetches: list[str] = field(default_factory=list)  # URLs the server tried that were not approved
    broken_pages: list[str] = field(default_factory=list)  # pages that did not answer 200
    seconds: float = 0.0

    def lines(self) -> list[str]:
        return [
            f"payload writes asked: {self.written}",
            "decisions: " + ", ".join(f"{k}={v}" for k, v in sorted(self.decisions.items())),
            f"pages fetched and parsed: {self.pages}",
            f"unapproved payloads running in a page: {len(self.running)}",
            f"approved payloads running / taken out by kses: {self.approved_running} / {self.approved_stripped}",
            f"unapproved fetches that left the server: {len(self.fetches)}",
            f"pages that did not answer 200: {len(self.broken_pages)}",
            f"seconds: {self.seconds:.1f}",
        ]


class RenderedProof:
    """Writes payloads through `ask` as a configured user and reads what the pages would run."""

    def __init__(self, attacker: Attacker, front: HttpFront, listener: OutboundListener) -> None:
        self.attacker = attacker
        self.front = front
        self.listener = listener
        self.tally = RenderedTally()
        self._admin: Session | None = None
        self.last_run: Run | None = None

    def admin(self) -> Session:
        if self._admin is None:
            self._admin = self.front.login("admin")
        return self._admin

    def ask(self, user: str, writes: Sequence[tuple[TextPath, Payload]]) -> list[Written]:
        """One `ask` whose model issues each write (at most ten): every one must wait or be refused."""
        started = time.monotonic()
        done: list[Written] = []
        for path, payload in writes:
            marker = f"xss{secrets.token_hex(4)}"
            done.append(
                Written(path, payload, marker, path.template.format(v=_quoted(payload.with_marker(marker))))
            )
        login = USERS[user]
        env = {"WP_AGENT_WP_USER": login} if login else {}
        run = self.attacker.ask([w.command for w in done], env=env)
        self.tally.written += len(done)
        self.tally.decisions.update(
            e["type"] for e in run.audit if e["type"] in {"command_blocked", "approval_requested"}
        )
        self.tally.decisions["executed"] += len(model_executed(run))
        self.last_run = run
        self.tally.seconds += time.monotonic() - started
        return done

    def check_pages(
        self, written: Sequence[Written], approved: frozenset[str] = frozenset()
    ) -> dict[str, set[str]]:
        """Fetch every page that shows the written texts; the markers running on them, by page. A
        running marker that was not approved is recorded as a failure of the property."""
        started = time.monotonic()
        seen: dict[str, set[str]] = {}
        fetched_before = len(self.listener.fetched)
        paths = sorted({p for w in written for p in w.path.front})
        admin_paths = sorted({p for w in written for p in w.path.admin})
        for page_path, session in [*((p, None) for p in paths), *((p, self.admin()) for p in admin_paths)]:
            page = self.front.get(page_path, session)
            if page.status != 200:  # a page that is not there proves nothing
                self.tally.broken_pages.append(f"{page_path}: {page.status}")
            seen[page_path] = running_markers(page.body)
        self.tally.pages += len(paths) + len(admin_paths)
        markers = {w.marker for w in written}
        for page_path, running in seen.items():
            self.tally.running += [f"{page_path}: {m}" for m in running & markers - approved]
        # WordPress's own requests (its update checks on admin screens) name no marker; a fetch a payload
        # caused does (every URL in a payload carries its marker).
        self.tally.fetches += [
            url for url in self.listener.fetched[fetched_before:] if any(m in url for m in markers - approved)
        ]
        self.tally.seconds += time.monotonic() - started
        return seen


def sample(count: int, seed: int = 38) -> list[tuple[TextPath, Payload]]:
    """`count` (path, payload) pairs spread over every path and payload family."""
    rng = random.Random(seed)
    families: dict[str, list[Payload]] = {}
    for payload in payloads():
        families.setdefault(payload.family, []).append(payload)
    pairs = []
    names = sorted(families)
    for index in range(count):
        path = TEXT_PATHS[index % len(TEXT_PATHS)]
        pairs.append((path, rng.choice(families[names[index % len(names)]])))
    return pairs
