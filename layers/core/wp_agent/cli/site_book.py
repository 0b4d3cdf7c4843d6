"""Named sites: the owner's WordPress sites, kept in `$XDG_CONFIG_HOME/wp-agent/sites.json` (0600 in a
0700 directory; `~/.config` without XDG_CONFIG_HOME). A site holds where WP-CLI runs (SSH host, port,
user, WordPress path, the pinned host key; or a local directory) and how to log in — a key file's
*path* or an ssh-agent key's public fingerprint, never key contents.

A chosen site becomes the setting values the environment would otherwise give (`environment`), applied
before the settings are built; the rest of the code sees one configuration whichever way it came."""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, Literal, TypeVar

from pydantic import Field, ValidationError, model_validator
from pydantic_settings import BaseSettings

from wp_agent.cli.local_files import write_private
from wp_agent.config import CliSettings, LocalAgentSettings, WpCliMode
from wp_agent.errors import ConfigurationError
from wp_agent.models.base import CamelModel
from wp_agent.models.target import MAX_TAGS, Tag, UpdateAllowance
from wp_agent.program import command_name
from wp_agent.whole_values import whole

S = TypeVar("S", bound=BaseSettings)

SITE_NAME = whole(r"[a-z0-9][a-z0-9_.-]{0,62}", "shop", "my.blog_2")
SITE_NAME_RULE = "英小文字・数字で始まり、英小文字・数字・. _ - の63文字まで"

# Everything that says where WP-CLI runs and how to log in there. A named site sets or clears each of
# them, so nothing of another configuration in the environment mixes into the site's.
CONNECTION_VARIABLES = (
    "WP_CLI_MODE",
    "VPS_HOST",
    "VPS_PORT",
    "VPS_SSH_USER",
    "WP_PATH",
    "VPS_SSH_KEY_PATH",
    "VPS_SSH_KEY_SECRET_ARN",
    "VPS_SSH_KEY_SECRET_ID",
    "VPS_SSH_KEY_VAULT_PATH",
    "VPS_SSH_PRIVATE_KEY",
    "VPS_SSH_AGENT_KEY",
    "VPS_SSH_HOST_KEY",
    "VPS_SSH_KNOWN_HOSTS",
    "WP_LOCAL_PATH",
    "WP_CLI_BIN",
    "WP_AGENT_WP_USER",
)


# The `sites add` option that sets each variable, for fixes written in the environment's terms.
_SITE_OPTIONS = {
    "VPS_HOST": "--ssh",
    "VPS_PORT": "--ssh",
    "VPS_SSH_USER": "--ssh",
    "WP_PATH": "--wp-path",
    "VPS_SSH_KEY_PATH": "--key",
    "VPS_SSH_AGENT_KEY": "ssh-agent の鍵（--key なし）",
    "VPS_SSH_HOST_KEY": "--host-key",
    "WP_LOCAL_PATH": "--local",
    "WP_CLI_BIN": "--wp-bin",
    "WP_AGENT_WP_USER": "--wp-user",
}
_SITE_VARIABLE_NAMES = re.compile(r"\b(" + "|".join(sorted(_SITE_OPTIONS, key=len, reverse=True)) + r")\b")


class NamedSite(CamelModel):
    name: str = Field(pattern=f"^{SITE_NAME.pattern.pattern}$")  # pydantic (Rust regex): $ is the end
    kind: Literal["ssh", "local"]
    wp_path: str  # ssh: WordPress's directory on the server; local: on this machine
    host: str | None = None
    port: int = Field(default=22, ge=1, le=65_535)
    user: str | None = None
    key_path: str | None = None  # a private key file (its path only)
    agent_key: str | None = None  # `SHA256:…` of a key in the person's ssh-agent
    host_key: str | None = None  # the pinned `ssh-ed25519 AAAA…`
    wp_user: str | None = None
    wp_cli_bin: str | None = None
    added_at: str
    # Updates the owner allows to run without asking each time, always guarded (`sites updates`); as a
    # served target's `updateAllowance`. None: every update waits for approval.
    update_allowance: UpdateAllowance | None = None
    # Labels `wp-agent fleet ask --tag` chooses sites by (`sites tags`); as a served target's `tags`.
    tags: list[Tag] = Field(default_factory=list, max_length=MAX_TAGS)

    @model_validator(mode="after")
    def _complete(self) -> NamedSite:
        if self.kind == "ssh":
            if not (self.host and self.user and self.host_key):
                raise ValueError("an ssh site needs host, user and hostKey")
            if (self.key_path is None) == (self.agent_key is None):
                raise ValueError("an ssh site logs in with exactly one of keyPath and agentKey")
        return self

    def environment(self) -> dict[str, str | None]:
        """The site as setting values; None clears a variable the environment may have set."""
        values: dict[str, str | None] = dict.fromkeys(CONNECTION_VARIABLES)
        if self.kind == "ssh":
            values |= {
                "WP_CLI_MODE": WpCliMode.SSH.value,
                "VPS_HOST": self.host,
                "VPS_PORT": str(self.port),
                "VPS_SSH_USER": self.user,
                "WP_PATH": self.wp_path,
                "VPS_SSH_KEY_PATH": self.key_path,
                "VPS_SSH_AGENT_KEY": self.agent_key,
                "VPS_SSH_HOST_KEY": self.host_key,
            }
        else:
            values |= {"WP_CLI_MODE": WpCliMode.LOCAL.value, "WP_LOCAL_PATH": self.wp_path}
        values |= {"WP_CLI_BIN": self.wp_cli_bin, "WP_AGENT_WP_USER": self.wp_user}
        return values

    def in_site_terms(self, fix_ja: str) -> str:
        """A fix that names the environment's variables, said for this site: the `sites add` options
        that set them and how to register the site again (the person never set those variables)."""
        found = {match.group(1) for match in _SITE_VARIABLE_NAMES.finditer(fix_ja)}
        if not found:
            return fix_ja
        reworded = _SITE_VARIABLE_NAMES.sub(lambda match: _SITE_OPTIONS[match.group(1)], fix_ja)
        if found == {"VPS_SSH_HOST_KEY"}:  # the pinned host key alone: confirmed and pinned again in place
            how = f"サーバーで指紋を確かめてから {command_name()} sites trust {self.name} で新しい鍵を固定してください"
        else:
            how = f"直すときは {command_name()} sites add {self.name} --replace … で登録し直してください"
        return f"{reworded}（サイト「{self.name}」の設定です。{how}）"

    def describe(self) -> str:
        """`ssh wpagent@host:22 /var/www/wordpress` or `local /srv/wordpress`."""
        if self.kind == "ssh":
            return f"ssh {self.user}@{self.host}:{self.port} {self.wp_path}"
        return f"local {self.wp_path}"


class SiteBook(CamelModel):
    version: Literal[1] = 1
    default: str | None = None
    sites: dict[str, NamedSite] = Field(default_factory=dict)

    def names(self) -> str:
        return "、".join(sorted(self.sites)) or "（なし）"


def config_dir() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base).expanduser() / "wp-agent"


def book_path() -> Path:
    return config_dir() / "sites.json"


def load() -> SiteBook:
    """The sites (none when the file does not exist); a file others could change is refused: it
    decides where commands run and which host key is trusted."""
    path = book_path()
    try:
        status = path.stat()
    except FileNotFoundError:
        return SiteBook()
    if status.st_uid != os.geteuid() or status.st_mode & 0o022:
        raise ConfigurationError(
            f"サイト設定ファイル（{path}）を本人以外も変更できるため使いません。`chmod 600 {path}` で"
            "本人だけが書き込めるようにしてください。",
            setting="sites",
        )
    try:
        return SiteBook.model_validate_json(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValidationError):
        raise ConfigurationError(
            f"サイト設定ファイル（{path}）を読めません。壊れている場合はファイルを移動してから "
            "wp-agent sites add で登録し直してください。",
            setting="sites",
        ) from None


def save(book: SiteBook) -> None:
    write_private(book_path(), book.model_dump_json(by_alias=True, exclude_none=True, indent=1) + "\n")


@contextlib.contextmanager
def changing() -> Iterator[SiteBook]:
    """Read, change and write the sites under a lock, so two `sites` commands at once lose nothing."""
    directory = config_dir()
    directory.mkdir(mode=0o700, parents=True, exist_ok=True)
    with (directory / ".sites.lock").open("a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        book = load()
        yield book
        save(book)


def target_of(settings: LocalAgentSettings) -> str:
    """Where the settings' WP-CLI runs, as one string (a held run and a finished run remember it)."""
    if settings.wp_cli_mode is WpCliMode.SSH:
        return f"ssh:{settings.vps_ssh_user}@{settings.vps_host}:{settings.vps_port}{settings.wp_path}"
    if settings.wp_cli_mode is WpCliMode.LOCAL:
        return f"local:{settings.wp_local_path}"
    return f"sandbox:{settings.wp_agent_sandbox_site or '~/.wp-agent/sandbox'}"


def settings_with(settings_class: type[S], overlay: Mapping[str, str | None]) -> S:
    """Settings built from the environment with `overlay` (variable name → value, None = unset) on top."""
    fields = settings_class.model_fields
    values: dict[str, Any] = {}
    for variable, value in overlay.items():
        name = variable.lower()
        if name in fields:
            values[name] = value if value is not None else fields[name].get_default(call_default_factory=True)
    return settings_class(**values)


def site_for_target(book: SiteBook, target: str) -> NamedSite | None:
    """The named site whose place is `target` (a run remembers where it ran, not under which name)."""
    for name in sorted(book.sites):
        site = book.sites[name]
        if target_of(settings_with(CliSettings, site.environment())) == target:
            return site
    return None
