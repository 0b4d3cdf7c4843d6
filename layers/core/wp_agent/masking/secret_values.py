"""Secrets recognised by their shape in any text: keys, tokens, hashes, PEM blocks, credentials in
URLs, `--name=value` assignments and passwords written in prose."""

from __future__ import annotations

import re
from typing import NamedTuple

from wp_agent.masking.secret_names import is_secret_key

MASK = "***"

# A name worth asking is_secret_key() about contains one of these (keeps big outputs fast).
_HINT = r"[A-Za-z0-9_\-.]{0,60}(?:pass|pwd|secret|token|key|salt|licen|credential|auth|otp|2fa|mfa|factor)[A-Za-z0-9_\-.]{0,60}"
_ASSIGNMENT = re.compile(r"(--([A-Za-z0-9_\-]+)=)(\"(?:[^\"\\]|\\.)*\"|'[^']*'|\S+)")
# `"smtp_password": "…"` in text that is not valid JSON (cut off, or inside a log line).
_JSON_PAIR = re.compile(r"(?i)(\"(" + _HINT + r")\"\s*:\s*)\"(?:[^\"\\]|\\.)*\"")
# `'api_key' => 'sk_…'` in PHP var_export() output (`wp option get <name>` of an array).
_VAR_EXPORT_PAIR = re.compile(r"(?i)('(" + _HINT + r")'\s*=>\s*)'(?:[^'\\]|\\.)*'")
# `key: value` / `key = value` lines (YAML, ini, .env).
_KEY_VALUE_LINE = re.compile(
    r"(?im)^(\s*(?:-[ \t]+)?((?=[A-Za-z_])" + _HINT + r")[ \t]*[:=][ \t]*)(\S[^\n]*)$"
)

# What the structured pass already wrote (YAML quotes it: a bare `***` reads as an alias).
_ALREADY_MASKED = frozenset({MASK, f"'{MASK}'", f'"{MASK}"'})

_PROSE_HINTS = ("password", "passwd", "passphrase", "パスワード", "暗証番号")
# Any PEM block: private keys, certificates, … (an unterminated one is masked to the end).
_PEM_BLOCK = re.compile(r"-----BEGIN ([A-Z0-9 ]{1,40})-----.*?(?:-----END [A-Z0-9 ]{1,40}-----|\Z)", re.S)
_PEM_MASKED = r"-----BEGIN \1-----" + MASK + r"-----END \1-----"


class _Shape(NamedTuple):
    hints: tuple[str, ...]  # the pattern runs only when one of these is in the text (big outputs)
    pattern: re.Pattern[str]
    replacement: str
    fold: bool = False  # hints are lower case and looked up in the lower-cased text


_SHAPES: tuple[_Shape, ...] = (
    _Shape(("-----BEGIN ",), _PEM_BLOCK, _PEM_MASKED),
    # Payment and SaaS keys: Stripe sk_/pk_/rk_ live|test, webhook secrets, Anthropic, OpenAI,
    # Google, GitHub, Slack, SendGrid, Mailgun, Vault, AWS access key ids.
    _Shape(
        ("_live_", "_test_"), re.compile(r"\b((?:sk|pk|rk)_(?:live|test))_[A-Za-z0-9]{6,}"), r"\1_" + MASK
    ),
    _Shape(("whsec_",), re.compile(r"\bwhsec_[A-Za-z0-9]{14,}"), "whsec_" + MASK),
    _Shape(("sk-ant-",), re.compile(r"\bsk-ant-[A-Za-z0-9_\-]{8,}"), "sk-ant-" + MASK),
    _Shape(("sk-",), re.compile(r"\bsk-proj-[A-Za-z0-9_\-]{20,}|\bsk-[A-Za-z0-9]{32,}"), "sk-" + MASK),
    _Shape(("AIza",), re.compile(r"\bAIza[0-9A-Za-z_\-]{30,}"), "AIza" + MASK),
    _Shape(
        ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
        re.compile(r"\b(gh[pousr]_|github_pat_)[A-Za-z0-9_]{20,}"),
        r"\1" + MASK,
    ),
    _Shape(("xox",), re.compile(r"(?i)\b(xox[abprs])-[A-Za-z0-9\-]{10,}"), r"\1-" + MASK, fold=True),
    _Shape(("SG.",), re.compile(r"\bSG\.[A-Za-z0-9_\-]{16,}\.[A-Za-z0-9_\-]{16,}"), "SG." + MASK),
    _Shape(("key-",), re.compile(r"\bkey-[0-9a-f]{32}\b"), "key-" + MASK),
    _Shape(("hvs.", "hvb."), re.compile(r"\b(hvs|hvb)\.[A-Za-z0-9_\-]{20,}"), r"\1." + MASK),
    _Shape(("AKIA", "ASIA"), re.compile(r"\b(AKIA|ASIA)[A-Z0-9]{16}\b"), r"\1" + MASK),
    # JSON web tokens and bearer credentials.
    _Shape(
        ("eyJ",), re.compile(r"\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]+"), "eyJ" + MASK
    ),
    _Shape(
        ("bearer", "basic"),
        re.compile(r"(?i)\b(bearer|basic)\s+(?=\S*[0-9._~+/=])[A-Za-z0-9._~+/\-]{8,}=*"),
        r"\1 " + MASK,
        fold=True,
    ),
    # Password hashes (phpass, bcrypt, WordPress 6.8 bcrypt, argon2).
    _Shape(
        ("$P$", "$H$", "$2", "$wp$", "$argon2"),
        re.compile(r"\$(P|H|2[abxy]|wp\$2y|argon2i?d?)\$[./A-Za-z0-9$=,+]{20,}"),
        r"$\1$" + MASK,
    ),
    # Credentials inside a URL: https://user:password@host
    _Shape(("://",), re.compile(r"(://[^\s:/@]+:)[^\s@/]+@"), r"\1" + MASK + "@"),
    # A password written in prose: 「パスワードは Secr3t!」, "password: hunter2", "password Secr3t!"
    _Shape(
        _PROSE_HINTS,
        re.compile(
            r"(?i)(パスワード|暗証番号|password|passwd|passphrase)(\s*(?:は|を|:|：|=)\s*)([^\s、。,\"']+)"
        ),
        r"\1\2" + MASK,
        fold=True,
    ),
    _Shape(
        _PROSE_HINTS,
        re.compile(
            r"(?i)(パスワード|暗証番号|password|passwd|passphrase)(\s+)(?=[^\s、。,\"']*[0-9!#$%&*+?@^~])([^\s、。,\"']+)"
        ),
        r"\1\2" + MASK,
        fold=True,
    ),
)


def mask_pem_blocks(text: str) -> str:
    """PEM blocks span lines: masked on the whole text before any line-by-line masking."""
    return _PEM_BLOCK.sub(_PEM_MASKED, text) if "-----BEGIN " in text else text


def _masked_pair(match: re.Match[str], quote: str) -> str:
    return f"{match.group(1)}{quote}{MASK}{quote}" if is_secret_key(match.group(2)) else match.group(0)


def mask_text(text: str, *, pairs: bool = True) -> str:
    """Mask secrets recognisable in free text: shapes above, `--secret=…`, and (unless the text was
    already masked structurally) secret `"key": "value"`, `'key' => 'value'` and `key: value` pairs."""
    if not text:
        return text
    masked = _ASSIGNMENT.sub(lambda m: m.group(1) + MASK if is_secret_key(m.group(2)) else m.group(0), text)
    if pairs:
        masked = _JSON_PAIR.sub(lambda m: _masked_pair(m, '"'), masked)
        masked = _VAR_EXPORT_PAIR.sub(lambda m: _masked_pair(m, "'"), masked)
        masked = _KEY_VALUE_LINE.sub(
            lambda m: (
                m.group(1) + MASK
                if is_secret_key(m.group(2)) and m.group(3) not in _ALREADY_MASKED
                else m.group(0)
            ),
            masked,
        )
    lowered = masked.lower()
    for shape in _SHAPES:
        if any(hint in (lowered if shape.fold else masked) for hint in shape.hints):
            masked = shape.pattern.sub(shape.replacement, masked)
            lowered = masked.lower() if shape.fold else lowered
    return masked
