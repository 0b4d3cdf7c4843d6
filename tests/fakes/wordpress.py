"""The tests' WordPress: a real one (Debian's PHP, MariaDB and files, the real WP-CLI phar).

A `TestWordPress` is a sandbox site (wp_agent.sandbox) of its own in a temp directory — its own
MariaDB on its own socket, so parallel test runs and the developer's sandbox never meet — seeded
from the shared seed cache and restored from the dump whenever a test changed it. It is owned by the
unprivileged user the sshd rig logs in as (root runs it as that user), so commands over SSH and
the harness's own local commands write files as the same user.

It also plays the internet for WordPress: a must-use plugin (test harness only, never in the
sandbox) sends HTTP requests for the hosts in `INTERNET_HOSTS` to a local server through
WordPress's own HTTP API, so `media import https://cdn.example.test/…` really downloads — or gets
a real 404.
"""

from __future__ import annotations

import atexit
import base64
import contextlib
import functools
import hashlib
import http.server
import json
import os
import pwd
import shlex
import shutil
import subprocess
import tempfile
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from wp_agent.sandbox import SandboxSite
from wp_agent.sandbox.processes import wait_or_kill
from wp_agent.sandbox.release import WordPressRelease

RIG_USER = "wpagent-rig"
RIG_HOME = Path("/var/lib/wpagent-rig")
INTERNET_HOSTS = ("cdn.example.test", "images.example.test")
# On the test internet from the start: a real JPEG, and a path that answers 404.
SAMPLE_IMAGE_URL = "https://cdn.example.test/images/sample.jpg"
MISSING_IMAGE_URL = "https://cdn.example.test/images/missing.jpg"
INTERNET_MAP = "wp-agent-test-internet.json"
_MU_PLUGIN = "wp-content/mu-plugins/wp-agent-test-internet.php"
_MU_PLUGIN_CODE = """<?php
/**
 * Test harness only: the test network's "internet". Requests to the hosts in
 * ABSPATH/wp-agent-test-internet.json go to the local server named there, through WordPress's own
 * HTTP API (downloads, status codes and errors stay real).
 */
add_filter(
	'pre_http_request',
	static function ( $response, $args, $url ) {
		static $map = null;
		if ( null === $map ) {
			$file = ABSPATH . 'wp-agent-test-internet.json';
			$map  = is_readable( $file ) ? (array) json_decode( file_get_contents( $file ), true ) : array();
		}
		$parts = wp_parse_url( $url );
		if ( false !== $response || empty( $parts['host'] ) || ! isset( $map[ $parts['host'] ] ) ) {
			return $response;
		}
		$local = $map[ $parts['host'] ] . ( $parts['path'] ?? '/' ) . ( isset( $parts['query'] ) ? '?' . $parts['query'] : '' );
		$args['reject_unsafe_urls'] = false;
		return wp_remote_request( $local, $args );
	},
	10,
	3
);
"""


_READER_MARK = "@@wp-agent-read "
_READER_SCRIPT = """<?php
// Test harness only: a WordPress kept loaded that answers read commands, one JSON line each on STDIN
// ({"command": "...", "url": "..."}), one answer line each on STDOUT. Every answer starts from an empty
// object cache, on the site the URL names, with that site's roles: what a new process would read.
while ( false !== ( $line = fgets( STDIN ) ) ) {
	$request = json_decode( $line, true );
	wp_cache_flush();
	$blog = 0;
	if ( is_multisite() && ! empty( $request['url'] ) ) {
		$parts = wp_parse_url( $request['url'] );
		$blog  = (int) get_blog_id_from_url( $parts['host'], trailingslashit( $parts['path'] ?? '/' ) );
	}
	if ( $blog ) {
		switch_to_blog( $blog );
	}
	wp_roles()->for_site();
	$answer = WP_CLI::runcommand( $request['command'], array( 'launch' => false, 'exit_error' => false, 'return' => 'all' ) );
	if ( $blog ) {
		restore_current_blog();
	}
	echo "\\n" . '@@wp-agent-read ' . json_encode( array( $answer->return_code, $answer->stdout, $answer->stderr ) ) . "\\n";
}
"""
_BATCH_MARK = "@@wp-agent-batch "
_BATCH_SCRIPT = """<?php
// Test harness only: run each command of a batch in this process, one answer line per command.
foreach ( json_decode( base64_decode( $args[0] ), true ) as $index => $command ) {
	$answer = WP_CLI::runcommand( $command, array( 'launch' => false, 'exit_error' => false, 'return' => 'all' ) );
	echo "\\n" . '@@wp-agent-batch ' . json_encode( array( $index, $answer->return_code, $answer->stdout, $answer->stderr ) ) . "\\n";
}
"""


@dataclass(frozen=True)
class BatchAnswer:
    return_code: int
    stdout: str
    stderr: str


@functools.cache
def harness_php(name: str, code: str) -> Path:
    """A PHP file of the test harness for `wp eval-file`, readable by the rig's user (removed at exit)."""
    directory = Path(tempfile.mkdtemp(prefix=f"wp-agent-{name}-"))
    directory.chmod(0o755)
    script = directory / f"{name}.php"
    script.write_text(code, encoding="utf-8")
    script.chmod(0o644)
    atexit.register(shutil.rmtree, directory, True)
    return script


def _batch_script() -> Path:
    """The batch runner."""
    return harness_php("batch", _BATCH_SCRIPT)


class KeptReader:
    """Read commands answered by one WP-CLI process that keeps WordPress loaded (a test harness's
    shortcut: a command costs milliseconds instead of a PHP and WordPress start). Each answer starts
    from an empty object cache on the site its `--url` names. A command that ends the process (WP-CLI
    exits on some errors) is run again in a process of its own, and the next read starts a new one."""

    def __init__(self, site: TestWordPress) -> None:
        self._site = site
        self._process: subprocess.Popen[str] | None = None
        self._lock = threading.Lock()

    def __call__(self, argv: Sequence[str]) -> BatchAnswer:
        url = next((a.split("=", 1)[1] for a in argv if a.startswith("--url=")), "")
        command = shlex.join(a for a in argv if not a.startswith("--url="))
        with self._lock:
            answer = self._ask(command, url)
        if answer is None:
            alone = self._site.wp(*argv)
            return BatchAnswer(alone.returncode, alone.stdout, alone.stderr)
        return answer

    def _ask(self, command: str, url: str) -> BatchAnswer | None:
        process = self._process or self._start()
        assert process.stdin is not None
        assert process.stdout is not None
        try:
            process.stdin.write(json.dumps({"command": command, "url": url}) + "\n")
            process.stdin.flush()
            for line in process.stdout:
                if line.startswith(_READER_MARK):
                    code, stdout, stderr = json.loads(line[len(_READER_MARK) :])
                    return BatchAnswer(code, stdout, stderr)
        except (BrokenPipeError, OSError):
            pass
        self.close()  # the command ended the process
        return None

    def _start(self) -> subprocess.Popen[str]:
        site = self._site.site
        self._process = subprocess.Popen(
            site.as_owner([*site.wp_command(), f"--path={site.wordpress}", "eval-file",
                           str(harness_php("reader", _READER_SCRIPT))]),
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
            env=site.wp_environment(),
        )  # fmt: skip
        return self._process

    def close(self) -> None:
        if self._process is not None:
            with contextlib.suppress(OSError):
                if self._process.stdin is not None:
                    self._process.stdin.close()
            wait_or_kill(self._process)
            self._process = None


def rig_login_user() -> str:
    """Who the tests' WordPress and sshd sessions run as: as root, a dedicated unprivileged user with a
    plain /bin/sh (created once); otherwise ourselves."""
    if os.geteuid() != 0:
        return pwd.getpwuid(os.geteuid()).pw_name
    try:
        entry = pwd.getpwnam(RIG_USER)
    except KeyError:
        completed = subprocess.run(
            ["useradd", "--system", "--user-group", "--shell", "/bin/sh", "--home-dir", str(RIG_HOME),
             "--no-create-home", "--comment", "wp-agent test rig", RIG_USER],
            capture_output=True, text=True, check=False,
        )  # fmt: skip
        if completed.returncode not in (0, 9):  # 9: created meanwhile by another test run
            raise RuntimeError(f"useradd {RIG_USER} failed: {completed.stderr}") from None
        entry = pwd.getpwnam(RIG_USER)
    if entry.pw_shell != "/bin/sh":
        raise RuntimeError(f"{RIG_USER} exists with the shell {entry.pw_shell}, not /bin/sh")
    # useradd locks the password ("!"), and sshd without PAM refuses locked accounts even for keys;
    # "*" means "no password" without the lock. An empty home of its own (sshd complains on stderr
    # of every command when there is none; no rc files: /bin/sh reads none for commands).
    subprocess.run(["usermod", "-p", "*", "--home", str(RIG_HOME), RIG_USER], capture_output=True, check=True)
    RIG_HOME.mkdir(mode=0o750, exist_ok=True)
    os.chown(RIG_HOME, entry.pw_uid, entry.pw_gid)
    return RIG_USER


class LocalInternet:
    """A loopback HTTP server for files of `root` (the hosts of INTERNET_HOSTS point here)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        handler = functools.partial(_QuietHandler, directory=str(root))
        self._server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.requested: list[str] = []  # every path asked for, in order (what WordPress fetched)
        self._server.requested = self.requested  # type: ignore[attr-defined]
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def start(self) -> LocalInternet:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        return

    def send_head(self) -> Any:
        self.server.requested.append(self.path)  # type: ignore[attr-defined]
        return super().send_head()


class TestWordPress:
    """A seeded WordPress network for tests; `reset()` restores it when `dirty`."""

    __test__ = False  # not a test class, whatever pytest thinks of the name

    def __init__(self, home: Path, *, owner: str, release: WordPressRelease | None = None) -> None:
        self.home = home
        self.owner = owner
        self.internet = LocalInternet(self._internet_dir()).start()
        mapping = dict.fromkeys(INTERNET_HOSTS, self.internet.base_url)
        self.site = SandboxSite(
            home,
            owner=owner,
            extra_files={_MU_PLUGIN: _MU_PLUGIN_CODE, INTERNET_MAP: json.dumps(mapping)},
            release=release,
        )
        self.dirty = True

    @classmethod
    def create(cls, release: WordPressRelease | None = None) -> TestWordPress:
        """A seeded network on `release` (default: the sandbox's, see wp_agent/sandbox/release.py)."""
        owner = rig_login_user()
        # Outside pytest's temp root (0700, root's): the rig user must reach it.
        home = Path(tempfile.mkdtemp(prefix="wp-agent-wordpress-"))
        wordpress = cls(home, owner=owner, release=release)
        atexit.register(wordpress.stop)  # a MariaDB server must not outlive an interrupted run
        wordpress.serve("images/sample.jpg", sample_image())
        wordpress.site.start()
        wordpress.dirty = False
        return wordpress

    @property
    def path(self) -> Path:
        return self.site.wordpress

    @property
    def facts(self) -> dict[str, Any]:
        return self.site.facts()

    def reset(self) -> None:
        self.site.reset()
        self.dirty = False

    def stop(self) -> None:
        """Stop its MariaDB and HTTP server and remove its files (safe to call twice)."""
        if self.home.exists():
            self.site.stop()
            shutil.rmtree(self.home, ignore_errors=True)
        if self.internet.root.exists():
            self.internet.stop()
            shutil.rmtree(self.internet.root, ignore_errors=True)

    # --- looking at the site (real WP-CLI as the owner, or SQL) ------------------------------------

    def wp(self, *args: str, url: str | None = None) -> subprocess.CompletedProcess[str]:
        """Run WP-CLI locally (not through the agent or its policy); never raises on failure."""
        scope = [f"--url={url}"] if url else []
        return self.site.wp(*scope, *args, check=False)

    def wp_batch(self, forms: Sequence[Sequence[str]], *, url: str | None = None) -> list[BatchAnswer]:
        """Many WP-CLI commands in one WP-CLI process (WP_CLI::runcommand without a new process), for a
        test that checks many forms: one PHP and WordPress start instead of one per form. A command that
        ends the process itself (`help` exits; some errors exit before WP-CLI can catch them) runs again
        in a process of its own, and the batch goes on after it. Each answer, in order."""
        answers: list[BatchAnswer] = []
        pending = [list(form) for form in forms]
        while pending:
            payload = base64.b64encode(json.dumps([shlex.join(form) for form in pending]).encode()).decode()
            done = self.wp("eval-file", str(_batch_script()), payload, url=url)
            found: dict[int, BatchAnswer] = {}
            for line in done.stdout.splitlines():
                if line.startswith(_BATCH_MARK):
                    index, code, stdout, stderr = json.loads(line[len(_BATCH_MARK) :])
                    found[index] = BatchAnswer(code, stdout, stderr)
            finished = next((i for i in range(len(pending)) if i not in found), len(pending))
            answers += [found[i] for i in range(finished)]
            if finished == len(pending):
                break
            alone = self.wp(*pending[finished], url=url)
            answers.append(BatchAnswer(alone.returncode, alone.stdout, alone.stderr))
            pending = pending[finished + 1 :]
        return answers

    @contextlib.contextmanager
    def kept_reader(self) -> Iterator[KeptReader]:
        """Reads answered by one WP-CLI process kept running (see KeptReader); stopped afterwards."""
        reader = KeptReader(self)
        try:
            yield reader
        finally:
            reader.close()

    def wp_json(self, *args: str, url: str | None = None) -> Any:
        done = self.wp(*args, "--format=json", url=url)
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)

    def post(self, post_id: int, *, url: str | None = None) -> dict[str, Any] | None:
        """The post's fields as `post get --format=json` shows them; None when it does not exist."""
        done = self.wp("post", "get", str(post_id), "--format=json", url=url)
        return json.loads(done.stdout) if done.returncode == 0 else None

    def posts(self, *, blog: int = 1, post_type: str | None = "post") -> dict[int, dict[str, str]]:
        """Every row of the site's posts table in any status (trash, revisions, attachments…)
        with its type, status, title, parent and date; only `post_type` unless that is None."""
        table = "wp_posts" if blog == 1 else f"wp_{blog}_posts"
        where = f" WHERE post_type = '{post_type}'" if post_type else ""
        rows = self.sql(
            f"SELECT ID, post_type, post_status, post_title, post_parent, post_date FROM {table}{where}"
        )
        fields = ("post_type", "post_status", "post_title", "post_parent", "post_date")
        return {int(row[0]): dict(zip(fields, row[1:], strict=True)) for row in rows}

    def status_of(self, post_id: int, *, blog: int = 1) -> str | None:
        row = self.posts(blog=blog, post_type=None).get(post_id)
        return row["post_status"] if row else None

    def ids(self, status: str, *, blog: int = 1, post_type: str = "post") -> list[int]:
        return sorted(
            i for i, row in self.posts(blog=blog, post_type=post_type).items() if row["post_status"] == status
        )

    def sql(self, query: str) -> list[list[str]]:
        return self.site.sql(query)

    def table_checksums(self) -> dict[str, str]:
        """CHECKSUM TABLE of every table of every site (and the network's)."""
        tables = [row[0] for row in self.sql("SHOW TABLES")]
        if not tables:
            return {}
        rows = self.sql("CHECKSUM TABLE " + ", ".join(f"`{t}`" for t in tables))
        return {row[0].split(".", 1)[1]: row[1] for row in rows}

    def uploads_listing(self) -> dict[str, str]:
        """Every file under wp-content/uploads with a hash of its content."""
        uploads = self.path / "wp-content" / "uploads"
        return {
            str(path.relative_to(uploads)): hashlib.sha256(path.read_bytes()).hexdigest()[:16]
            for path in sorted(uploads.rglob("*"))
            if path.is_file()
        }

    def serve(self, name: str, data: bytes) -> str:
        """Publish `data` on the test internet; returns its https://cdn.example.test/… URL."""
        (self.internet.root / name).parent.mkdir(parents=True, exist_ok=True)
        (self.internet.root / name).write_bytes(data)
        return f"https://{INTERNET_HOSTS[0]}/{name}"

    @staticmethod
    def _internet_dir() -> Path:
        return Path(tempfile.mkdtemp(prefix="wp-agent-internet-"))


@functools.lru_cache(maxsize=4)
def sample_image(width: int = 64, height: int = 48, kind: str = "jpeg") -> bytes:
    """A real image (made with PHP's GD, like the seed's media) for `media import`."""
    with tempfile.TemporaryDirectory() as scratch:
        target = Path(scratch) / f"image.{kind}"
        code = (
            f"$i = imagecreatetruecolor({width}, {height});"
            "imagefill($i, 0, 0, imagecolorallocate($i, 200, 80, 40));"
            f"image{kind}($i, $argv[1]);"
        )
        subprocess.run(["php", "-r", code, str(target)], check=True, capture_output=True)
        return target.read_bytes()


@contextlib.contextmanager
def running_wordpress(release: WordPressRelease | None = None) -> Iterator[TestWordPress]:
    wordpress = TestWordPress.create(release)
    try:
        yield wordpress
    finally:
        wordpress.stop()
