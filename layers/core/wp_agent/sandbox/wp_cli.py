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
import sys
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


def php_command(phar: Path, opcache_dir: Path) -> list[str]:
    """`php … wp-cli.phar` with PHP's opcache kept in files under `opcache_dir`.

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
        str(phar),
    ]
