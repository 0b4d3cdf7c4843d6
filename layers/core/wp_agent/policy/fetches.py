"""What WordPress's server fetches because of a text the agent writes, and where to.

Tried on WordPress 6.1 and 7.1:
- when it shows content: an RSS block fetches its feed on every view and shows visitors what came
  back (or the error: the cloud metadata address answered); a legacy widget block runs any widget,
  the RSS one included; an embed, a URL alone on a line and a URL alone in a paragraph go through
  oEmbed discovery (WP_Embed::autoembed, then wp_safe_remote_get, which leaves link-local addresses
  open). Other blocks fetch too, and new releases add them (7.x: a cover whose background is an
  embedded video runs oEmbed on its `url`), so the attribute a block fetches is not guessed by its
  name: every URL in any block's attributes, at any depth, counts as fetched;
- when a post is published: every link in its content (wp_extract_urls) is asked for its headers
  (enclosures) and for a pingback address (pingbacks), from cron.

The patterns below are WordPress's own (autoembed, wp_extract_urls), so the URLs found are the ones
WordPress finds. Deciding whether a host is public takes a DNS answer; the policy asks its resolver
(policy/host_resolution.py) at decision time.
"""

from __future__ import annotations

import html
import json
import re
from urllib.parse import urlsplit

from wp_agent.policy.source_rules import is_public_host

# Block comments as WordPress's parser reads them: the name, then the attributes as JSON.
_BLOCK = re.compile(r"<!--\s+wp:([a-z][a-z0-9_-]*(?:/[a-z][a-z0-9_-]*)?)\s+(\{.*?\})?\s*/?-->", re.DOTALL)
_FEED_BLOCKS = ("rss", "legacy-widget")
_EMBEDDED = (
    # a shortcode's content runs to its closing tag (brackets inside, as in http://[::1]/, included)
    re.compile(r"\[embed[^\]]*\]\s*(.*?)\s*\[/embed\]", re.IGNORECASE | re.DOTALL),
    # WP_Embed::autoembed: a URL on its own line, and a URL alone in a paragraph
    re.compile(r"^\s*(https?://[^\s<>\"]+)\s*$", re.IGNORECASE | re.MULTILINE),
    re.compile(r"<p(?: [^>]*)?>\s*(https?://[^\s<>\"]+)\s*</p>", re.IGNORECASE),
)
# wp_extract_urls(), as WordPress writes it
_LINK = re.compile(
    r"""(["']?)((?:([\w-]+:)?//?)[^\s()<>]+[.](?:\([\w\d]+\)|(?:[^`!()\[\]{}:'".,<>«»“”‘’\s]|(?:[:]\d+)?/?)+))\1"""
)
_WORD_BREAK = re.compile(r"[\s<>]+")
_LONGEST_WORD = 4_096
# A value that names another host: a scheme (`https://`, `ftp://`) or a scheme-relative `//host`.
_URL_LIKE = re.compile(r"^\s*(?:[a-z][a-z0-9+.-]*:)?//", re.IGNORECASE)
_FETCHING_SCHEMES = frozenset({"http", "https", ""})


def embedded_urls(content: str) -> list[str] | None:
    """The URLs WordPress's server may fetch when it shows `content`; None when it fetches what no
    check now can vouch for (a feed, a legacy widget, attributes that are not a JSON object)."""
    urls = [m.group(1) for pattern in _EMBEDDED for m in pattern.finditer(content)]
    for match in _BLOCK.finditer(content):
        name = match.group(1).removeprefix("core/")
        if name in _FEED_BLOCKS:
            return None
        if match.group(2) is None:
            continue
        try:
            attributes = json.loads(match.group(2))
        except ValueError:
            return None
        if not isinstance(attributes, dict):
            return None
        urls += _urls_in(attributes)
    return list(dict.fromkeys(urls))


def linked_urls(content: str) -> list[str] | None:
    """Every URL wp_extract_urls() finds in `content` (the links a published post pings and asks for
    enclosures), decoded as WordPress decodes them; those it cannot fetch (no host) are left out.
    None for a run of text too long to read in time (the pattern backtracks on it)."""
    found: set[str] = set()
    # A match never spans white space, < or >: reading word by word finds the same links, and a
    # word too long to read in bounded time is refused rather than read for seconds.
    for word in _WORD_BREAK.split(content):
        if "." not in word or "/" not in word:
            continue
        if len(word) > _LONGEST_WORD:
            return None
        found |= {html.unescape(m.group(2)).replace(";", "") for m in _LINK.finditer(word)}
    return sorted(url for url in found if _fetch_host(url) is not None)


def _urls_in(value: object) -> list[str]:
    if isinstance(value, str):
        return [value] if _URL_LIKE.match(value) else []
    if isinstance(value, dict):
        return [url for item in value.values() for url in _urls_in(item)]
    if isinstance(value, list):
        return [url for item in value for url in _urls_in(item)]
    return []


def _fetch_host(url: str) -> str | None:
    """The host WordPress would connect to for `url`, or None when it fetches nothing from it."""
    try:
        parts = urlsplit(url.strip())
    except ValueError:
        return ""  # WordPress may still try it: counted, and never a public host
    if parts.scheme.lower() not in _FETCHING_SCHEMES or not parts.netloc:
        return None
    return parts.hostname or ""


def hosts_fetched(urls: list[str]) -> tuple[list[str], list[str]]:
    """(hosts that are not public whatever they resolve to, host names whose addresses decide)."""
    refused: list[str] = []
    names: list[str] = []
    for url in urls:
        host = _fetch_host(url)
        if host is None:
            if _URL_LIKE.match(url):  # another scheme in a block's attributes (ftp://, gopher://)
                refused.append(url.split("/")[0] or url)
            continue
        if not host or not host.isascii() or not is_public_host(host):
            refused.append(host or url)
        elif _is_name(host):
            names.append(host.lower().rstrip("."))
    return sorted(set(refused)), sorted(set(names))


def _is_name(host: str) -> bool:
    return any(c.isalpha() for c in host.replace("[", "").replace("]", "")) and ":" not in host
