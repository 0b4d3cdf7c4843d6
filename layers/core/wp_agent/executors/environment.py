"""The environment a local WP-CLI process gets: what PHP and WP-CLI need, nothing of the agent's.

WordPress runs plugin code; whatever is in its environment is readable by any mu-plugin (a real
mu-plugin read ANTHROPIC_API_KEY from a local-mode run). So nothing is inherited by default.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence

DEFAULT_PATH = "/usr/local/bin:/usr/bin:/bin"
# Inherited when set: the search path, home (WP-CLI's cache and config), locale and time zone,
# PHP's own configuration, and WP-CLI settings an operator may rely on. WP_CLI_STRICT_ARGS_MODE
# is deliberately absent: it changes how WP-CLI reads arguments, and so what the policy judged.
INHERITED = (
    "PATH",
    "HOME",
    "LANG",
    "LANGUAGE",
    "LC_ALL",
    "LC_CTYPE",
    "LC_MESSAGES",
    "TZ",
    "TMPDIR",
    "PHPRC",
    "PHP_INI_SCAN_DIR",
    "WP_CLI_PHP",
    "WP_CLI_PHP_ARGS",
    "WP_CLI_CACHE_DIR",
    "WP_CLI_CONFIG_PATH",
)
# Never passed on, even when an operator lists them (credentials of the agent itself).
_NEVER = re.compile(
    r"^(ANTHROPIC_|AWS_|VAULT_|VPS_SSH_|GOOGLE_|AZURE_|WP_AGENT_|OPENAI_)|(KEY|SECRET|TOKEN|PASSPHRASE)$|"
    r"^WP_CLI_STRICT_ARGS_MODE$",
    re.IGNORECASE,
)
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def parse_passthrough(value: str) -> tuple[str, ...]:
    """`WP_AGENT_LOCAL_ENV_PASSTHROUGH`: comma-separated variable names wp-config.php reads."""
    names = tuple(n.strip() for n in value.split(",") if n.strip())
    bad = [n for n in names if not _NAME.match(n) or _NEVER.search(n)]
    if bad:
        raise ValueError(f"these variables cannot be passed to WP-CLI: {', '.join(bad)}")
    return names


def minimal_environment(
    extra: Mapping[str, str] | None = None,
    passthrough: Sequence[str] = (),
    source: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """INHERITED and `passthrough` names from `source` (os.environ), then `extra` on top."""
    source = os.environ if source is None else source
    env = {name: source[name] for name in (*INHERITED, *passthrough) if name in source}
    env.setdefault("PATH", DEFAULT_PATH)
    env.setdefault("LANG", "C.UTF-8")
    env.update(extra or {})
    return env
