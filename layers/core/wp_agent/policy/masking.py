"""Masking of secrets in commands and free text before they reach logs, audit records or the model."""

from __future__ import annotations

import re
from collections.abc import Sequence

from wp_agent.policy.secret_names import folded, is_secret_key

__all__ = ["MASK", "command_label", "folded", "is_secret_name", "is_secret_option", "mask_argv", "mask_text"]

MASK = "***"

_OPTION_ASSIGNMENT = re.compile(r"(--([A-Za-z0-9_\-]+)=)(\"(?:[^\"\\]|\\.)*\"|'[^']*'|\S+)")
_FREE_TEXT_SECRETS: tuple[tuple[re.Pattern[str], str], ...] = (
    (
        re.compile(r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----.*?(-----END [A-Z0-9 ]*PRIVATE KEY-----|\Z)", re.S),
        "-----BEGIN PRIVATE KEY-----***-----END PRIVATE KEY-----",
    ),
    (re.compile(r"\bsk-ant-[A-Za-z0-9_\-]{8,}"), "sk-ant-" + MASK),
    (re.compile(r"\b(AKIA|ASIA)[A-Z0-9]{16}\b"), "AKIA" + MASK),
    (re.compile(r"(?i)\b(bearer)\s+[A-Za-z0-9._~+/\-]{8,}=*"), r"\1 " + MASK),
    (re.compile(r"\$(P|2y|2b|wp)\$[./A-Za-z0-9$]{20,}"), "$P$" + MASK),
    (
        re.compile(
            r"(?i)(\"(?:[a-z_]*?)(?:pass(?:word)?|secret|token|api_?key|private_?key|activation_key)\"\s*:\s*)"
            r"\"(?:[^\"\\]|\\.)*\""
        ),
        r'\1"' + MASK + '"',
    ),
    (re.compile(r"(?i)\b(hvs|ghp|gho|xox[bpas])[._\-][A-Za-z0-9_\-]{10,}"), r"\1-" + MASK),
    # a password written in prose: 「パスワードは Secr3t!」, "password: hunter2"
    (
        re.compile(
            r"(?i)(パスワード|暗証番号|password|passwd|passphrase)(\s*(?:は|を|:|：|=)\s*|\s+)([^\s、。,]+)"
        ),
        r"\1\2" + MASK,
    ),
)
# `option update <name> <value>`: the value is positional, so the option name decides.
_POSITIONAL_SECRET_COMMANDS = {
    ("option", "update"),
    ("option", "add"),
    ("site", "option", "update"),
    ("user", "meta", "update"),
    ("user", "meta", "add"),
    ("post", "meta", "update"),
    ("post", "meta", "add"),
    ("term", "meta", "update"),
    ("term", "meta", "add"),
}


def is_secret_name(name: str) -> bool:
    return is_secret_key(name)


def is_secret_option(name: str) -> bool:
    """Option names holding credentials, incl. WordPress's salts/keys (`logged_in_key`, `nonce_salt`)."""
    return is_secret_key(name)


_OPTION_ROW_JSON = re.compile(
    r'("option_name"\s*:\s*"([^"\\]*)"\s*,\s*"option_value"\s*:\s*)("(?:[^"\\]|\\.)*"|[^,}\]]+)'
)
_OPTION_ROW_TEXT = re.compile(r"^([A-Za-z0-9_\-]+)([\t,])(.*)$", re.MULTILINE)


def mask_command_output(text: str) -> str:
    """mask_text plus the values of secret options in `option list/get` output (JSON, table, CSV)."""
    masked = mask_text(text)
    masked = _OPTION_ROW_JSON.sub(
        lambda m: m.group(1) + f'"{MASK}"' if is_secret_option(m.group(2)) else m.group(0), masked
    )
    return _OPTION_ROW_TEXT.sub(
        lambda m: m.group(1) + m.group(2) + MASK if is_secret_option(m.group(1)) else m.group(0), masked
    )


def mask_text(text: str) -> str:
    """Mask secret-looking values in free text: `--user_pass=…`, keys, tokens, password hashes."""
    masked = _OPTION_ASSIGNMENT.sub(
        lambda m: m.group(1) + MASK if is_secret_name(m.group(2)) else m.group(0), text
    )
    for pattern, replacement in _FREE_TEXT_SECRETS:
        masked = pattern.sub(replacement, masked)
    return masked


def mask_argv(argv: Sequence[str]) -> list[str]:
    """Mask secret option values and positional secret values (`option update mailserver_pass …`)."""
    words = [w for w in argv if not w.startswith("--")]
    secret_positional_index: int | None = None
    for path in _POSITIONAL_SECRET_COMMANDS:
        if tuple(words[: len(path)]) == path:
            # name is the last positional before the value (after object ids for meta commands)
            name_at = len(path) + (1 if path[-2] == "meta" else 0)
            if len(words) > name_at + 1 and is_secret_name(words[name_at]):
                secret_positional_index = name_at + 1
            break
    out: list[str] = []
    positional = -1
    mask_next = False  # `--user_pass secret`: WP-CLI reads a flag plus a word, but the word is the secret
    for word in argv:
        if word.startswith("--"):
            name, sep, _value = word[2:].partition("=")
            out.append(f"--{name}={MASK}" if sep and is_secret_name(name) else mask_text(word))
            mask_next = not sep and is_secret_name(name)
            continue
        positional += 1
        out.append(MASK if mask_next or positional == secret_positional_index else mask_text(word))
        mask_next = False
    return out


def command_label(argv: Sequence[str]) -> str:
    """A short, secret-free name for log lines: the leading command words (e.g. `post list`)."""
    words: list[str] = []
    for word in argv:
        if word.startswith("-") or len(words) == 3:
            break
        words.append(word)
    return " ".join(words) or "(none)"
