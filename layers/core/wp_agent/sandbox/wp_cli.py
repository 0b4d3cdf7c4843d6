"""The real WP-CLI phar the sandbox runs: found where setup put it, its SHA-512 checked against the pin.

`wp-agent sandbox install` (sandbox/install.py; `make setup` runs it) copies a verified phar to
`<venv>/share/wp-agent/wp-cli.phar`;
`WP_CLI_PHAR` points elsewhere. Either way the file must match `wp-cli.sha512` next to this module
(the same pin the install script checks), so a swapped or truncated phar never runs.
"""

from __future__ import annotations

import functools
import hashlib
import os
import shutil
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

from wp_agent.sandbox.errors import SandboxError

PIN_FILE = Path(__file__).with_name("wp-cli.sha512")
INSTALLED_PHAR = Path(sys.prefix) / "share" / "wp-agent" / "wp-cli.phar"
PHAR_ENV = "WP_CLI_PHAR"


def pinned_sha512() -> str:
    return PIN_FILE.read_text(encoding="ascii").split()[0]


def pinned_version() -> str:
    """`2.10.0` from the pinned file name `wp-cli-2.10.0.phar`."""
    return PIN_FILE.read_text(encoding="ascii").split()[1].removeprefix("wp-cli-").removesuffix(".phar")


def verified_phar() -> Path:
    """The WP-CLI phar to run (WP_CLI_PHAR, else the installed copy), after checking its SHA-512."""
    configured = os.environ.get(PHAR_ENV)
    phar = Path(configured).expanduser() if configured else INSTALLED_PHAR
    if not phar.is_file():
        where = f"{PHAR_ENV}（{phar}）" if configured else f"{phar}"
        raise SandboxError(
            "wp_cli_missing",
            f"WP-CLI が見つかりません: {where}。`wp-agent sandbox install` で WP-CLI {pinned_version()} を"
            "入れてください。",
        )
    stat = phar.stat()
    actual = _sha512(str(phar.resolve()), stat.st_size, stat.st_mtime_ns)
    if actual != pinned_sha512():
        raise SandboxError(
            "wp_cli_checksum",
            f"WP-CLI（{phar}）の SHA-512 が固定値と一致しないため使用しません（WP-CLI {pinned_version()}"
            f" の公式 phar を使ってください）。実際: {actual[:16]}…／期待: {pinned_sha512()[:16]}…",
        )
    return phar


@functools.lru_cache(maxsize=4)
def _sha512(path: str, size: int, mtime_ns: int) -> str:
    """Hash once per process and file version (size and mtime are part of the cache key)."""
    digest = hashlib.sha512()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def started_from_files(phar: Path) -> Path:
    """The script that starts the verified `phar`'s WP-CLI from its files, extracted once; else `phar`.

    From a phar PHP reads each of WP-CLI's ~200 files through the phar stream at every start; the same
    files on disk start ~15% faster (the opcache keeps both compiled). PHP's own Phar class extracts
    them into a directory named by the pinned SHA-512 (the phar was checked against it first) under
    the installed phar's directory, made aside and renamed into place, so concurrent starts agree;
    readable by the site's owner, writable only by us. Where that cannot be made, the phar runs.
    """
    home = INSTALLED_PHAR.parent / f"wp-cli-{pinned_version()}-{pinned_sha512()[:16]}"
    entry = home / "vendor" / "wp-cli" / "wp-cli" / "php" / "boot-fs.php"
    if _kept_by_us(home):
        return entry if entry.is_file() else phar
    try:
        home.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=".wp-cli-", dir=home.parent))
    except OSError:
        return phar
    try:
        if _extracted(phar, staging) and (staging / entry.relative_to(home)).is_file():
            os.rename(staging, home)
    except OSError:
        pass  # another start renamed its tree first
    shutil.rmtree(staging, ignore_errors=True)  # (gone when renamed)
    return entry if _kept_by_us(home) and entry.is_file() else phar


def _extracted(phar: Path, staging: Path) -> bool:
    """The phar's files in `staging` (0755/0644). The bytes extracted are the bytes checked: a copy,
    hashed again (the phar may have changed since it was verified)."""
    copy = staging / ".wp-cli.phar"
    try:
        shutil.copyfile(phar, copy)
        info = copy.stat()
        if _sha512(str(copy), info.st_size, info.st_mtime_ns) != pinned_sha512():
            return False
        subprocess.run(  # noqa: S603 - our own argv, no shell
            ["php", "-d", "phar.readonly=1", "-r", "(new Phar($argv[1]))->extractTo($argv[2]);",  # noqa: S607
             str(copy), str(staging)],
            capture_output=True, check=True, timeout=120,
        )  # fmt: skip
        copy.unlink()
        for directory, _dirs, files in os.walk(staging):
            os.chmod(directory, 0o755)  # noqa: S103 - code others run: readable, never writable
            for name in files:
                os.chmod(os.path.join(directory, name), 0o644)
    except (OSError, subprocess.SubprocessError):
        return False
    return True


def _kept_by_us(home: Path) -> bool:
    """The extracted tree is there as we made it: a directory (no link) of ours or root's that nobody
    else may write (the same trust as the environment it sits in)."""
    try:
        info = home.lstat()
    except OSError:
        return False
    return stat.S_ISDIR(info.st_mode) and info.st_uid in {os.geteuid(), 0} and not info.st_mode & 0o022


def php_command(phar: Path, opcache_dir: Path) -> list[str]:
    """`php … wp-cli.phar` with PHP's opcache kept in files under `opcache_dir` (WP-CLI started from
    the phar's extracted files where they can be kept, see started_from_files).

    Without it every command compiles the 7 MB phar and WordPress again (~0.5 s here); with the file
    cache a command takes ~0.12 s. One directory per user: PHP trusts what it finds there (so it must
    be private), and files another user wrote there are unreadable — every run would compile again.
    """
    return [
        "php",
        "-d",
        "opcache.enable_cli=1",
        "-d",
        f"opcache.file_cache={opcache_dir}",
        "-d",
        "opcache.file_cache_only=1",
        # The directory is private; the per-file checksum costs ~7% of every start (a truncated file
        # is still refused by its recorded size).
        "-d",
        "opcache.file_cache_consistency_checks=0",
        str(started_from_files(phar)),
    ]
