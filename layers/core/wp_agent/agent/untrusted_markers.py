"""Neutralise anything in untrusted text that a model could read as our `<tool_output>` markers.

Site data (a post body, a comment, an option) may try to close the wrapper and speak as the
system: `</TOOL_OUTPUT>`, `&lt;/tool_output&gt;`, `＜／ｔｏｏｌ＿ｏｕｔｐｕｔ＞`, `</tool\u200b_output>`,
`\\u003c/tool_output\\u003e`, `%3C/tool_output%3E`, `</tооl_output>` with Cyrillic o, … Each
character (or escape sequence) is folded to what it reads as; wherever the folded text holds
`<tool_output` or `</tool_output`, the original span is replaced by an inert note.
"""

from __future__ import annotations

import html
import re
import unicodedata

# Escape sequences that read as one character: HTML entities, JSON/JS/C escapes, URL encoding —
# also encoded twice (`&amp;lt;`, `%253C`, `\\\\u003c`).
_ESCAPE = re.compile(
    r"&(?:amp;)*#[xX](?P<hexent>[0-9a-fA-F]{1,6});?"
    r"|&(?:amp;)*#(?P<decent>[0-9]{1,7});?"
    r"|&(?:amp;)*(?P<named>[A-Za-z]{2,8});"
    r"|\\+[uU]\{?(?P<u>[0-9a-fA-F]{4})\}?"
    r"|(?P<x>(?:\\+[xX][0-9a-fA-F]{2})+)"
    r"|(?P<pct>(?:%(?:25)*[0-9a-fA-F]{2})+)"
    r"|\\+(?P<escaped>[/<>_])"
)
# Look-alikes NFKC leaves alone: angle brackets, slashes and the letters of "tool_output".
_CONFUSABLES = str.maketrans(
    {
        "\u2039": "<",  # ‹
        "\u3008": "<",  # 〈 (NFKC also maps U+2329 here)
        "\u27e8": "<",  # ⟨
        "\u02c2": "<",  # ˂
        "\u1438": "<",  # ᐸ
        "\u203a": ">",
        "\u3009": ">",
        "\u27e9": ">",
        "\u02c3": ">",
        "\u1433": ">",
        "\u2215": "/",  # ∕ division slash
        "\u2044": "/",  # ⁄ fraction slash
        "\u29f8": "/",  # ⧸
        "\u043e": "o",  # Cyrillic о
        "\u03bf": "o",  # Greek ο
        "\u0585": "o",  # Armenian օ
        "\u0442": "t",  # Cyrillic т
        "\u03c4": "t",  # Greek τ
        "\u04cf": "l",  # Cyrillic ӏ
        "\u03b9": "l",  # Greek ι
        "\u03c5": "u",  # Greek υ
        "\u057d": "u",  # Armenian ս
        "\u0440": "p",  # Cyrillic р
        "\u03c1": "p",  # Greek ρ
    }
)
_MARKER = re.compile(r"<\s*/?\s*tool[^a-z0-9<>]{0,3}output")
NOTE = "[tool_output-tag removed]"
_MAX_DECODING_PASSES = 3


def _fold_char(char: str) -> str:
    """What one character reads as: NFKC, look-alikes mapped, case folded; invisible ones vanish."""
    if unicodedata.category(char) in {"Cf", "Mn", "Me", "Cc"} and char not in "\n\t":
        return ""
    return unicodedata.normalize("NFKC", char).translate(_CONFUSABLES).casefold()


def _decoded(match: re.Match[str]) -> str:
    groups = match.groupdict()
    if groups["named"]:
        return html.unescape(f"&{groups['named']};")
    if groups["escaped"]:
        return groups["escaped"]
    if groups["x"] or groups["pct"]:  # a run of bytes: UTF-8 (`%EF%BC%9C` is `＜`)
        data = bytes(int(h, 16) for h in re.findall(r"(?:%(?:25)*|\\+[xX])([0-9a-fA-F]{2})", match.group(0)))
        return data.decode("utf-8", "replace")
    for name, base in (("hexent", 16), ("decent", 10), ("u", 16)):
        if groups[name]:
            code = int(groups[name], base)
            return chr(code) if code < 0x110000 else ""
    return match.group(0)  # pragma: no cover - every alternative has a group


def _fold(text: str) -> tuple[str, list[int], list[int]]:
    """The folded text and, for each folded character, the [start, end) of its source in `text`."""
    folded: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    i = 0
    while i < len(text):
        match = _ESCAPE.match(text, i) if text[i] in "&\\%" else None
        source_end = match.end() if match else i + 1
        for char in _decoded(match) if match else text[i]:
            for piece in _fold_char(char):
                folded.append(piece)
                starts.append(i)
                ends.append(source_end)
        i = source_end
    return "".join(folded), starts, ends


def find_markers(text: str) -> list[tuple[int, int]]:
    """(start, end) spans of `text` that read as an opening or closing tool_output marker."""
    folded, starts, ends = _fold(text)
    for _ in range(_MAX_DECODING_PASSES - 1):  # `&#38;lt;` is `&lt;` is `<`
        again, inner_starts, inner_ends = _fold(folded)
        if again == folded:
            break
        folded = again
        starts, ends = [starts[k] for k in inner_starts], [ends[k - 1] for k in inner_ends]
    spans: list[tuple[int, int]] = []
    for match in _MARKER.finditer(folded):
        start, end = starts[match.start()], ends[match.end() - 1]
        if spans and start < spans[-1][1]:
            start = spans[-1][1]  # two markers decoded from one escape run
        if start < end:
            spans.append((start, end))
    return spans


def neutralise_markers(text: str) -> str:
    """`text` with every marker-like span replaced by an inert note."""
    spans = find_markers(text)
    if not spans:
        return text
    out: list[str] = []
    previous = 0
    for start, end in spans:
        out.append(text[previous:start])
        out.append(NOTE)
        previous = end
    out.append(text[previous:])
    return "".join(out)
