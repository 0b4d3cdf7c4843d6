"""The environment a local WP-CLI process gets: what PHP and WP-CLI need, nothing of the agent's.

WordPress runs plugin code; whatever is in its environment is readable by any mu-plugin (a real
mu-plugin read ANTHROPIC_API_KEY from a local-mode run). So nothing is inherited by default.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence

from wp_agent.config import parse_passthrough

__all__ = ["DEFAULT_PATH", "INHERITED", "minimal_environment", "parse_passthrough"]

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
