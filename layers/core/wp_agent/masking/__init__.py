"""Masking of secrets before anything reaches the model, a record (audit, session view, AgentOutput),
a log line or `wp-agent check`: by key (`--user_pass=…`, `option update mailserver_pass …`, secret
keys at any depth of JSON or serialized PHP, secret rows of tables) and by value shape."""

from __future__ import annotations

import shlex
from collections.abc import Sequence

from wp_agent.command_line.aliases import canonical_words
from wp_agent.command_line.parsed_command import ParsedCommand
from wp_agent.command_line.shell_syntax import split_words
from wp_agent.masking.secret_names import folded, is_secret_key
from wp_agent.masking.secret_values import MASK, mask_text
from wp_agent.masking.structured import mask_document, mask_value

__all__ = [
    "MASK",
    "command_label",
    "folded",
    "is_secret_name",
    "is_secret_option",
    "mask_argv",
    "mask_command",
    "mask_command_output",
    "mask_text",
]

# Commands whose value is a positional word after a name (canonical words): (path, name index,
# value index) counted in positional words; -1 is the last word.
_NAMED_VALUES: dict[tuple[str, ...], tuple[int, int]] = {
    ("option", "add"): (2, 3),
    ("option", "update"): (2, 3),
    ("site", "option", "add"): (3, 4),
    ("site", "option", "update"): (3, 4),
    ("theme", "mod", "set"): (3, 4),
    ("transient", "set"): (2, 3),
    ("config", "set"): (2, 3),
}
for _object in ("post", "term", "comment", "user", "site", "network"):
    _NAMED_VALUES[(_object, "meta", "add")] = (4, 5)
    _NAMED_VALUES[(_object, "meta", "update")] = (4, 5)
# Always secret positionals: `user check-password <user> <password>`, `user session destroy <user> <token>`.
_SECRET_POSITIONALS: dict[tuple[str, ...], int] = {
    ("user", "check-password"): 3,
    ("user", "session", "destroy"): 4,
}


def is_secret_name(name: str) -> bool:
    return is_secret_key(name)


def is_secret_option(name: str) -> bool:
    """Option names holding credentials, incl. WordPress's salts/keys (`logged_in_key`, `nonce_salt`)."""
    return is_secret_key(name)


def mask_command_output(text: str) -> str:
    """A WP-CLI output (stdout or stderr): structured masking by key, then by shape."""
    if not text:
        return text
    masked, structured = mask_document(text)
    return mask_text(masked, pairs=not structured)


def _patch_key_at(canonical: tuple[str, ...]) -> tuple[int, int] | None:
    """(action index, key index) of a `… patch` command: option / site option / <object> meta."""
    if canonical[:2] == ("option", "patch"):
        return 2, 3
    if canonical[:3] == ("site", "option", "patch"):
        return 3, 4
    if canonical[:2] == ("transient", "patch"):
        return 2, 3
    if canonical[1:3] == ("meta", "patch"):
        return 3, 5  # <object> meta patch <action> <id> <key> …
    return None


def _secret_positional(words: list[str]) -> int | None:
    """Index (in positional words) of a value that must be masked because of its name."""
    canonical, _ = canonical_words(words)
    shift = len(canonical) - len(words)  # aliases only ever change the head of the command
    for path, index in _SECRET_POSITIONALS.items():
        if canonical[: len(path)] == path and len(canonical) > index:
            return index - shift
    patch = _patch_key_at(canonical)
    if patch is not None:
        # patch insert|update <key> <key-path>… <value>: a secret name on the path hides the value
        action_at, key_at = patch
        names = canonical[key_at:-1]
        if canonical[action_at : action_at + 1] != ("delete",) and any(is_secret_key(n) for n in names):
            return len(words) - 1
        return None
    for path, (name_at, value_at) in _NAMED_VALUES.items():
        if canonical[: len(path)] == path:
            if len(canonical) > value_at and is_secret_key(canonical[name_at]):
                return value_at - shift
            return None
    return None


def mask_argv(argv: Sequence[str]) -> list[str]:
    """argv with secret flag values, secret positional values (`option update mailserver_pass …`)
    and secret keys inside JSON or serialized values masked."""
    words = [w for w in argv if not ParsedCommand.is_option(w)]
    secret_at = _secret_positional(words)
    out: list[str] = []
    positional = -1
    mask_next = False  # `--user_pass secret`: WP-CLI reads a flag plus a word, but the word is the secret
    for word in argv:
        if ParsedCommand.is_option(word):
            name, sep, value = word[2:].partition("=")
            if sep:
                shown = MASK if is_secret_key(name) else mask_text(mask_value(value))
                out.append(f"--{name}={shown}")
            else:
                out.append(word)
            mask_next = not sep and is_secret_key(name)
            continue
        positional += 1
        out.append(MASK if mask_next or positional == secret_at else mask_text(mask_value(word)))
        mask_next = False
    return out


def mask_command(command: str) -> str:
    """A command line as the model wrote it, masked like its argv (falls back to text masking
    when it does not parse)."""
    try:
        words = split_words(command)
    except ValueError:
        return mask_text(command)
    masked = mask_argv(words)
    if masked == words:
        return command
    # `***` needs no quotes to be read: `option update mailserver_pass ***`, `--user_pass=***`.
    return " ".join(
        w if w == MASK or (w.endswith("=" + MASK) and _bare(w)) else shlex.quote(w) for w in masked
    )


def _bare(word: str) -> bool:
    return shlex.quote(word[: -len(MASK)]) == word[: -len(MASK)]


def command_label(argv: Sequence[str]) -> str:
    """A short, secret-free name for log lines: the leading command words (e.g. `post list`)."""
    words: list[str] = []
    for word in argv:
        if word.startswith("-") or len(words) == 3:
            break
        words.append(word)
    return " ".join(words) or "(none)"
