"""What the sandbox needs on this machine and `wp-agent sandbox install`, which puts it there: Debian's
PHP, MariaDB and WordPress packages (apt-get, as root or with sudo) and the WP-CLI phar whose SHA-512
must equal the pin (from `--phar`/WP_CLI_PHAR, else the official download), copied to
`<prefix>/share/wp-agent/wp-cli.phar`. Nothing is installed unless a person runs that command (or
`make setup`); a sandbox run without these parts stops and names the command."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
import urllib.request
from collections.abc import Callable
from pathlib import Path

from wp_agent.sandbox.errors import SandboxError
from wp_agent.sandbox.files import DEBIAN_WORDPRESS
from wp_agent.sandbox.wp_cli import INSTALLED_PHAR, PHAR_ENV, PIN_FILE, pinned_sha512, pinned_version

PACKAGES = (
    "php-cli", "php-mysql", "php-gd", "php-curl", "php-mbstring", "php-xml", "php-zip", "php-intl",
    "mariadb-server", "mariadb-client",
    "wordpress", "wordpress-l10n",
    "wordpress-theme-twentytwentyone", "wordpress-theme-twentytwentytwo", "wordpress-theme-twentytwentythree",
)  # fmt: skip
DOWNLOAD_ENV = "WP_CLI_DOWNLOAD_URL"
_APT_TIMEOUT_SECONDS = 1800
_DOWNLOAD_TIMEOUT_SECONDS = 120

Say = Callable[[str], None]


def _mariadb_found() -> bool:
    return any(shutil.which(name) or Path("/usr/sbin", name).exists() for name in ("mariadbd", "mysqld"))


def missing_parts() -> list[str]:
    """The parts of the sandbox this machine lacks, in Japanese (empty: ready)."""
    parts = []
    if shutil.which("php") is None:
        parts.append("PHP")
    if not _mariadb_found():
        parts.append("MariaDB")
    if not DEBIAN_WORDPRESS.is_dir():
        parts.append(f"WordPress のファイル（{DEBIAN_WORDPRESS}）")
    configured = os.environ.get(PHAR_ENV)
    if not (Path(configured).expanduser() if configured else INSTALLED_PHAR).is_file():
        parts.append(f"WP-CLI {pinned_version()}")
    return parts


def missing_packages() -> list[str]:
    """Debian packages of PACKAGES not installed (all of them where dpkg is not there)."""
    if shutil.which("dpkg-query") is None:
        return list(PACKAGES)
    missing = []
    for package in PACKAGES:
        status = subprocess.run(  # noqa: S603 - our own argv, no shell
            ["dpkg-query", "-W", "-f=${Status}", package],  # noqa: S607 - dpkg-query from PATH
            capture_output=True, text=True, check=False,
        )  # fmt: skip
        if "install ok installed" not in status.stdout:
            missing.append(package)
    return missing


def install_packages(packages: list[str], say: Say) -> None:
    """apt-get install, as root or through sudo (which may ask for the person's password)."""
    apt = shutil.which("apt-get")
    if apt is None:
        raise SandboxError(
            "apt_missing",
            f"apt-get がないため自動では入れられません（Debian / Ubuntu 用です）。{', '.join(packages)} に"
            "相当する PHP・MariaDB・WordPress を手動で入れてください。",
        )
    prefix: list[str] = []
    if os.geteuid() != 0:
        sudo = shutil.which("sudo")
        if sudo is None:
            raise SandboxError(
                "not_root",
                f"パッケージを入れるには root 権限が必要です。root で実行するか、sudo apt-get install {' '.join(packages)} を"
                "実行してください。",
            )
        prefix = [sudo]
    environment = ["env", "DEBIAN_FRONTEND=noninteractive"]
    for step in (["update", "-qq"], ["install", "-y", "-qq", "--no-install-recommends", *packages]):
        say(f"{' '.join([*prefix, 'apt-get', *step[:1]])} …")
        done = subprocess.run(  # noqa: S603 - our own argv, no shell
            [*prefix, *environment, apt, *step],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, check=False,
            timeout=_APT_TIMEOUT_SECONDS,
        )  # fmt: skip
        if done.returncode != 0:
            raise SandboxError(
                "apt_failed",
                f"apt-get {step[0]} が失敗しました（終了コード {done.returncode}）。",
                log=done.stdout[-4000:],
            )


def _sha512(path: Path) -> str:
    digest = hashlib.sha512()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def download_url() -> str:
    name = PIN_FILE.read_text(encoding="ascii").split()[1]
    default = f"https://github.com/wp-cli/wp-cli/releases/download/v{pinned_version()}/{name}"
    return os.environ.get(DOWNLOAD_ENV) or default


def install_phar(source: Path | None, say: Say, destination: Path = INSTALLED_PHAR) -> Path:
    """The pinned WP-CLI phar at `destination` (kept when it is already there), from `source` or the
    download; refused on a checksum mismatch (both checksums in the message)."""
    if destination.is_file() and _sha512(destination) == pinned_sha512():
        return destination  # already the pinned phar: any source would give the same file (or be refused)
    with tempfile.TemporaryDirectory(prefix="wp-agent-phar-") as scratch:
        if source is None:
            url = download_url()
            say(f"WP-CLI {pinned_version()} をダウンロードしています: {url}")
            source = Path(scratch) / "wp-cli.phar"
            try:
                with urllib.request.urlopen(url, timeout=_DOWNLOAD_TIMEOUT_SECONDS) as response:  # noqa: S310 - https URL from the pin or the operator
                    source.write_bytes(response.read())
            except OSError as exc:
                raise SandboxError(
                    "wp_cli_download",
                    f"WP-CLI をダウンロードできませんでした（{type(exc).__name__}）。ネットワークを確認するか、"
                    f"WP-CLI {pinned_version()} の phar を --phar で指定してください。",
                ) from None
        if not source.is_file():
            raise SandboxError("wp_cli_missing", f"WP-CLI の phar（{source}）がありません。")
        actual = _sha512(source)
        if actual != pinned_sha512():
            raise SandboxError(
                "wp_cli_checksum",
                f"{source} の SHA-512 が固定値と一致しないため使いません（WP-CLI {pinned_version()} の公式 phar を"
                f"使ってください）。実際: {actual} ／ 固定値: {pinned_sha512()}",
            )
        try:
            destination.parent.mkdir(parents=True, exist_ok=True)
            partial = destination.with_name(destination.name + ".tmp")
            shutil.copyfile(source, partial)
            partial.chmod(0o644)
            partial.replace(destination)
        except OSError as exc:
            raise SandboxError(
                "wp_cli_install",
                f"WP-CLI を {destination} に置けませんでした（{exc.strerror or type(exc).__name__}）。",
            ) from None
    say(f"WP-CLI {pinned_version()}（SHA-512 確認済み）: {destination}")
    return destination
