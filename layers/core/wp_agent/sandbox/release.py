"""Which WordPress the sandbox runs, and fetching the current one from Debian's archive.

The sites people run are on WordPress 7.x; Debian's `unstable` suite carries it (bookworm's own
package is 6.1). `wp-agent sandbox install` fetches it with apt's own signature checks into a prefix
of its own, never touching the system's packages:

    <prefix>/apt/                      a private sources list, package lists and download cache
    <prefix>/releases/<version>/root/  the packages unpacked with `dpkg -x` (usr/share/wordpress, …)
    <prefix>/releases/<version>/release.json   what it holds: every package and its version
    <prefix>/current                   the name of the release the sandbox runs

The package's links into PHPMailer, getID3, the `libjs-*` packages and the CA bundle resolve inside
that root (the sandbox copies what they point at, see files.sync_tree). Unstable moves on, so no
version is pinned: the newest 7.x the archive offers is taken and its version recorded.

`WP_AGENT_WORDPRESS` chooses: unset or `current` → the fetched release (else the system's), `system`
→ the system's /usr/share/wordpress (bookworm: 6.1), or a path to a release directory.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from wp_agent.sandbox.errors import SandboxError
from wp_agent.sandbox.files import DEBIAN_WORDPRESS

RELEASE_ENV = "WP_AGENT_WORDPRESS"
# A Debian mirror of one's own (what it serves is still checked against Debian's signing keys).
MIRROR_ENV = "WP_AGENT_DEBIAN_MIRROR"
PREFIX = Path(sys.prefix) / "share" / "wp-agent" / "wordpress"
DEFAULT_ARCHIVE = "http://deb.debian.org/debian"
SUITE = "unstable"
KEYRING = Path("/usr/share/keyrings/debian-archive-keyring.gpg")
# WordPress, its language files, the block themes the archive carries, and what the package links into.
PACKAGES = (
    "wordpress", "wordpress-l10n",
    "wordpress-theme-twentytwentyfive", "wordpress-theme-twentytwentyfour", "wordpress-theme-twentytwentythree",
    "libphp-phpmailer", "php-getid3",
    "libjs-cropper", "libjs-jquery", "libjs-jquery-ui", "libjs-lodash", "libjs-underscore",
    "ca-certificates",
)  # fmt: skip
# The archive no longer carries the classic themes; the sample site's main site runs one (menus with
# locations), so bookworm's copies are added when the system has them, and the release says so.
CLASSIC_THEMES = ("twentytwentyone", "twentytwentytwo")
MAJOR = 7
_APT_TIMEOUT_SECONDS = 600
_VERSION = re.compile(r"^\$wp_version\s*=\s*'([^']+)'", re.MULTILINE)

Say = Callable[[str], None]


@dataclass(frozen=True)
class WordPressRelease:
    """A WordPress tree the sandbox copies, and the root its links resolve against."""

    tree: Path  # the WordPress directory (wp-includes/version.php, wp-content/…)
    root: Path  # absolute links of the tree resolve under it ("/" for the system's package)
    origin: str  # where it came from, in Japanese (shown by `sandbox status` and the doctor)
    packages: dict[str, str] = field(default_factory=dict)

    @property
    def version(self) -> str:
        return wordpress_version(self.tree)

    def describe_ja(self) -> str:
        return f"WordPress {self.version}（{self.origin}）"


def wordpress_version(tree: Path) -> str:
    found = _VERSION.search((tree / "wp-includes" / "version.php").read_text(encoding="utf-8"))
    return found.group(1) if found else "?"


def system_release() -> WordPressRelease:
    return WordPressRelease(DEBIAN_WORDPRESS, Path("/"), "システムの Debian パッケージ")


def _load(directory: Path) -> WordPressRelease:
    record = json.loads((directory / "release.json").read_text(encoding="utf-8"))
    root = directory / "root"
    return WordPressRelease(
        root / "usr" / "share" / "wordpress", root, record["origin"], dict(record["packages"])
    )


def fetched_release(prefix: Path | None = None) -> WordPressRelease | None:
    """The release `sandbox install` fetched last (None: none yet)."""
    prefix = prefix or PREFIX
    try:
        name = (prefix / "current").read_text(encoding="utf-8").strip()
        return _load(prefix / "releases" / name)
    except (OSError, ValueError, KeyError):
        return None


def chosen_release(prefix: Path | None = None) -> WordPressRelease:
    """The release the sandbox runs: WP_AGENT_WORDPRESS, else the fetched one, else the system's."""
    choice = os.environ.get(RELEASE_ENV, "").strip()
    if choice == "system":
        return system_release()
    if choice and choice != "current":
        directory = Path(choice).expanduser()
        if not (directory / "release.json").is_file():
            raise SandboxError(
                "wordpress_release",
                f"{RELEASE_ENV}={choice} は WordPress のリリース（release.json のあるディレクトリ）ではありません。"
                "`system`、`current`、または `wp-agent sandbox install` が取得したリリースを指定してください。",
            )
        return _load(directory)
    return fetched_release(prefix) or system_release()


# --- fetching from the archive ------------------------------------------------------------------


class _Apt:
    """apt-get and apt-cache with a private configuration: Debian's archive, its signing keys, our
    own lists, cache and (empty) package status. The system's apt state is never read or written."""

    def __init__(self, home: Path, archive: str) -> None:
        self.home = home
        self.archive = archive
        etc = home / "etc"
        for directory in (etc / "sources.list.d", etc / "preferences.d", etc / "apt.conf.d",
                          home / "lists" / "partial", home / "cache" / "archives" / "partial"):  # fmt: skip
            directory.mkdir(parents=True, exist_ok=True)
        (etc / "sources.list").write_text("", encoding="ascii")
        (etc / "sources.list.d" / "wp-agent.sources").write_text(
            f"Types: deb\nURIs: {archive}\nSuites: {SUITE}\nComponents: main\nSigned-By: {KEYRING}\n",
            encoding="ascii",
        )
        self.options = [
            f"-oDir::Etc={etc}", f"-oDir::Etc::sourcelist={etc / 'sources.list'}",
            f"-oDir::Etc::sourceparts={etc / 'sources.list.d'}", f"-oDir::Etc::parts={etc / 'apt.conf.d'}",
            f"-oDir::Etc::preferencesparts={etc / 'preferences.d'}",
            f"-oDir::State::Lists={home / 'lists'}", f"-oDir::Cache={home / 'cache'}",
            "-oDir::State::status=/dev/null", "-oAPT::Architecture=amd64", "-oAPT::Architectures=amd64",
            "-oAPT::Sandbox::User=root" if os.geteuid() == 0 else "-oDebug::NoLocking=1",
            "-oAcquire::Retries=2", "-oAcquire::http::Timeout=30",
        ]  # fmt: skip

    def run(self, tool: str, *args: str, cwd: Path | None = None) -> str:
        try:
            done = subprocess.run(  # noqa: S603 - our own argv, no shell
                [tool, *self.options, *args],
                capture_output=True, text=True, cwd=cwd, check=False, timeout=_APT_TIMEOUT_SECONDS,
                env={**os.environ, "LC_ALL": "C.UTF-8", "DEBIAN_FRONTEND": "noninteractive"},
            )  # fmt: skip
        except subprocess.TimeoutExpired:
            raise SandboxError(
                "archive_unreachable",
                f"Debian のアーカイブ（{self.archive} {SUITE}）が{_APT_TIMEOUT_SECONDS}秒以内に応答しませんでした（{tool} {args[0]}）。",
            ) from None
        if done.returncode != 0:
            raise SandboxError(
                "archive_unreachable" if "update" in args else "archive_failed",
                f"Debian のアーカイブ（{self.archive} {SUITE}）から取得できませんでした（{tool} {args[0]}、"
                f"終了コード {done.returncode}）。",
                log=(done.stdout + done.stderr)[-4000:],
            )
        return done.stdout

    def candidates(self, packages: tuple[str, ...]) -> dict[str, str]:
        """The version apt would fetch of each package (signature-checked lists)."""
        versions: dict[str, str] = {}
        current = ""
        for line in self.run("apt-cache", "policy", *packages).splitlines():
            if line and not line.startswith(" ") and line.endswith(":"):
                current = line[:-1]
            elif line.strip().startswith("Candidate:") and current:
                versions[current] = line.split(":", 1)[1].strip()
        missing = [p for p in packages if versions.get(p, "(none)") == "(none)"]
        if missing:
            raise SandboxError(
                "archive_failed", f"Debian {SUITE} に必要なパッケージがありません: {', '.join(missing)}。"
            )
        return versions


def fetch_release(say: Say, prefix: Path | None = None) -> WordPressRelease:
    """The newest WordPress 7.x of Debian's archive in `prefix`, made current (kept when it is already
    there). Raises SandboxError (cause `archive_unreachable`, …) when it cannot be fetched."""
    prefix = prefix or PREFIX
    prefix.mkdir(parents=True, exist_ok=True)
    with (prefix / ".lock").open("a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # two installs at once fetch once
        return _fetch(say, prefix)


def _fetch(say: Say, prefix: Path) -> WordPressRelease:
    if shutil.which("apt-get") is None or shutil.which("dpkg-deb") is None:
        raise SandboxError(
            "archive_unreachable", "apt-get と dpkg-deb がないため Debian のアーカイブから取得できません。"
        )
    if not KEYRING.is_file():
        raise SandboxError(
            "archive_unreachable", f"Debian の署名鍵（{KEYRING}）がないため、取得したものを検証できません。"
        )
    apt = _Apt(prefix / "apt", os.environ.get(MIRROR_ENV) or DEFAULT_ARCHIVE)
    say(f"Debian {SUITE} のパッケージ一覧を取得しています（署名を検証）…")
    # Without --error-on=any, apt-get update ends 0 when it could not reach the archive at all.
    apt.run("apt-get", "update", "-q", "--error-on=any")
    versions = apt.candidates(PACKAGES)
    upstream = _upstream(versions["wordpress"])
    major = upstream.split(".", 1)[0]
    if not major.isdigit() or int(major) < MAJOR:
        raise SandboxError(
            "archive_failed", f"Debian {SUITE} の WordPress が {upstream} です（{MAJOR}.x を想定）。"
        )
    name = versions["wordpress"].replace(":", "_")
    directory = prefix / "releases" / name
    if (directory / "release.json").is_file():
        release = _load(directory)
        if release.packages == versions:
            _make_current(prefix, name)
            say(f"{release.describe_ja()}は取得済みです。")
            return release
    say(f"WordPress {upstream} と依存パッケージを取得しています（{len(PACKAGES)} 個）…")
    downloads = Path(tempfile.mkdtemp(prefix=".download-", dir=prefix))
    staging = Path(tempfile.mkdtemp(prefix=f".{name}-", dir=prefix))
    try:
        apt.run("apt-get", "download", *(f"{p}={v}" for p, v in versions.items()), cwd=downloads)
        _unpack(downloads, staging, versions)
        staging.chmod(0o755)
        shutil.rmtree(directory, ignore_errors=True)
        directory.parent.mkdir(parents=True, exist_ok=True)
        staging.rename(directory)
    finally:
        shutil.rmtree(downloads, ignore_errors=True)
        shutil.rmtree(staging, ignore_errors=True)
    _make_current(prefix, name)
    for older in (prefix / "releases").iterdir():  # a sandbox holds its own copy: older ones go
        if older != directory:
            shutil.rmtree(older, ignore_errors=True)
    release = _load(directory)
    say(f"{release.describe_ja()}を取得しました: {directory}")
    l10n = _upstream(versions["wordpress-l10n"])
    if l10n != upstream:
        say(
            f"日本語の言語ファイルは {l10n} 版です（Debian {SUITE} の wordpress-l10n が {upstream} に追いついていません）。"
        )
    return release


def _unpack(downloads: Path, staging: Path, versions: dict[str, str]) -> None:
    """The downloaded packages under `staging/root` (dpkg-deb -x), the CA bundle, bookworm's classic
    themes where the system has them, and `release.json` saying what it holds."""
    root = staging / "root"
    root.mkdir()
    for deb in sorted(downloads.glob("*.deb")):
        command = ["dpkg-deb", "-x", str(deb), str(root)]
        unpacked = subprocess.run(command, capture_output=True, text=True, check=False)  # noqa: S603
        if unpacked.returncode != 0:
            raise SandboxError(
                "archive_failed",
                f"{deb.name} を展開できませんでした（dpkg-deb）。",
                log=unpacked.stderr[-4000:],
            )
    _write_ca_bundle(root)
    added = _add_classic_themes(root / "usr" / "share" / "wordpress")
    origin = f"Debian {SUITE}"
    if added:
        origin += f"、クラシックテーマ {', '.join(added)} はシステムの bookworm パッケージから"
    record = {"origin": origin, "packages": versions, "classicThemesFromSystem": added}
    (staging / "release.json").write_text(json.dumps(record, ensure_ascii=False, indent=1), encoding="utf-8")


def _upstream(version: str) -> str:
    """`7.1.4` from Debian's `7.1.4+dfsg1-1` (an epoch `1:` and the repack suffix dropped)."""
    return version.rsplit(":", 1)[-1].split("+", 1)[0].rsplit("-", 1)[0]


def _make_current(prefix: Path, name: str) -> None:
    partial = prefix / ".current.tmp"
    partial.write_text(name + "\n", encoding="utf-8")
    partial.replace(prefix / "current")


def _write_ca_bundle(root: Path) -> None:
    """The bundle `update-ca-certificates` would write (every certificate the package ships, as its
    default configuration enables them), where WordPress's link to it points."""
    certificates = sorted((root / "usr" / "share" / "ca-certificates").rglob("*.crt"))
    bundle = root / "etc" / "ssl" / "certs" / "ca-certificates.crt"
    bundle.parent.mkdir(parents=True, exist_ok=True)
    bundle.write_bytes(b"".join(c.read_bytes().rstrip(b"\n") + b"\n" for c in certificates))


def _add_classic_themes(tree: Path) -> list[str]:
    added = []
    for theme in CLASSIC_THEMES:
        source = DEBIAN_WORDPRESS / "wp-content" / "themes" / theme
        target = tree / "wp-content" / "themes" / theme
        if source.is_dir() and not target.exists():
            shutil.copytree(source, target, symlinks=True)
            added.append(theme)
    return added
