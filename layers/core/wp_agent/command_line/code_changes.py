"""The commands that change which code a site runs: the executors guard them (executors/code_guard.py:
a health baseline, a backup, the change, a probe, back by itself when the site got worse), and an
approval of one says so (policy/approval_summary/). Only the words of the command decide it."""

from __future__ import annotations

# Translations load as PHP (`.l10n.php`) on every page: installing, updating or switching to one. The
# guard keeps the whole languages folder and the site's language for these.
LANGUAGE_CHANGES: frozenset[tuple[str, ...]] = frozenset(
    {
        ("language", kind, verb)
        for kind in ("core", "plugin", "theme")
        for verb in ("install", "update", "uninstall")
    }
    | {("language", "core", "activate"), ("site", "switch-language")}
)
CODE_CHANGES: frozenset[tuple[str, ...]] = frozenset(
    {
        ("plugin", verb)
        for verb in ("activate", "deactivate", "toggle", "install", "update", "delete", "uninstall")
    }
    | {("theme", verb) for verb in ("activate", "install", "update", "delete", "enable")}
    | {("core", "update")}
    | LANGUAGE_CHANGES
)
