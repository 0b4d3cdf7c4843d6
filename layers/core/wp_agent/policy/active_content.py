"""Active content: what in a text WordPress would not let an author without `unfiltered_html` store.

WP-CLI runs as no WordPress user, or as one the operator configured; with no user or an
administrator, WordPress skips its filter (kses) and stores script as written. The agent therefore
judges every text a visitor or an administrator sees by kses's own rules for post content
(`wp_kses_post`), whatever user is configured: a value kses would change waits for approval.

The value is read the way a browser reads it (html5lib, the WHATWG parsing algorithm), not by
pattern: every element, attribute, URL and style declaration the browser would see is checked
against the lists WordPress itself hands out (kses_rules.json, written by
scripts/refresh_kses_rules.py from the sandbox's WordPress). Where kses and a browser read markup
differently, the browser's reading is what runs, so that is the one judged.
tests/integration/test_active_content_judge.py compares the judge with the real `wp_kses_post()`.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

import html5lib

KSES_RULES_FILE = Path(__file__).with_name("kses_rules.json")

# What a finding is called for people, by element (the rest: "WordPressが許可しない要素").
_ELEMENT_KINDS_JA = {
    "script": "スクリプト",
    "iframe": "別のページの埋め込み",
    "frame": "別のページの埋め込み",
    "frameset": "別のページの埋め込み",
    "object": "プラグインや文書の埋め込み",
    "embed": "プラグインや文書の埋め込み",
    "applet": "プラグインの埋め込み",
    "form": "入力フォーム",
    "input": "入力欄",
    "style": "ページ全体のスタイル",
    "link": "外部ファイルの読み込み",
    "meta": "ページの設定や転送",
    "base": "ページのURLの基準",
    "svg": "スクリプトを含められる画像",
}
_FOREIGN = re.compile(r"\{([^}]*)\}(.*)")
_MATHML = "http://www.w3.org/1998/Math/MathML"
_DATA_ATTRIBUTE = re.compile(r"data-[a-z0-9_-]+", re.ASCII)
_CUSTOM_PROPERTY = re.compile(r"--[a-zA-Z0-9\-_]+", re.ASCII)
_NUL_LIKE = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f]|\\+0+")
_COLON = re.compile(r":|&#0*58;|&#x0*3a;|&colon;", re.IGNORECASE)
_CSS_URL = re.compile(r"url\([^)]+\)")
_CSS_URL_PIECES = re.compile(r"url\(\s*(['\"]?)(.*)(\1)\s*\)", re.DOTALL)
_GRADIENT = re.compile(r"(?:repeating-)?(?:linear|radial|conic)-gradient\((?:[^()]|\([^()]*\))*\)")
_CSS_FUNCTION = re.compile(
    r"\b(?:var|calc|min|max|minmax|clamp|repeat|matrix|matrix3d|perspective|rotate|rotate3d|rotateX|"
    r"rotateY|rotateZ|scale|scale3d|scaleX|scaleY|scaleZ|skew|skewX|skewY|translate|translate3d|"
    r"translateX|translateY|translateZ|circle|ellipse|inset|path|polygon|rect|shape|xywh)\(",
    re.ASCII,
)
_CSS_UNSAFE = re.compile(r"[\\(&=}]|/\*")
_PHP_TRIM = " \t\n\r\0\x0b"
# Where a value is read: inside a page, with the theme's markup after it (see active_parts).
_PAGE_END = "wp-agent-page-end"
_PAGE_BEFORE = "<!DOCTYPE html><html><head></head><body><div>"
_PAGE_AFTER = f'</div><section id="{_PAGE_END}"></section></body></html>'
_MALFORMED = frozenset({"expected-tag-name-but-got-question-mark"})


@dataclass(frozen=True)
class KsesRules:
    """What `wp_kses_post()` keeps, as WordPress lists it."""

    wordpress: str
    tags: dict[str, dict[str, Any]]
    protocols: frozenset[str]
    uri_attributes: frozenset[str]
    safe_css: frozenset[str]
    css_url_properties: frozenset[str]
    css_gradient_properties: frozenset[str]


@lru_cache(maxsize=1)
def kses_rules() -> KsesRules:
    data = json.loads(KSES_RULES_FILE.read_text(encoding="utf-8"))
    return KsesRules(
        wordpress=data["wordpress"],
        tags={tag: attrs if isinstance(attrs, dict) else {} for tag, attrs in data["tags"].items()},
        protocols=frozenset(data["protocols"]),
        uri_attributes=frozenset(data["uri_attributes"]),
        safe_css=frozenset(data["safe_css"]),
        css_url_properties=frozenset(data["css_url_properties"]),
        css_gradient_properties=frozenset(data["css_gradient_properties"]),
    )


def active_parts(html: str) -> list[str]:
    """What in `html` kses would remove or change, in people's words (empty: nothing)."""
    return list(_active_parts(html))


@lru_cache(maxsize=32)
def _active_parts(html: str) -> tuple[str, ...]:
    """active_parts, cached: a value is judged when the policy decides, again for the reason it waits
    and for the approval's text.

    The value is read where WordPress puts it: inside a page, between the theme's markup (a `<div>`
    before, more markup after). Read alone, a parser drops what a page keeps — content a `<table>`
    moves out in front of itself, a tag left open that runs on into the theme's `</div>`, a second
    `<body>` whose attributes go to the page's own."""
    if "<" not in html:
        return ()  # no element, comment or attribute without a tag
    parser = html5lib.HTMLParser(tree=html5lib.getTreeBuilder("etree"), namespaceHTMLElements=False)
    document = parser.parse(f"{_PAGE_BEFORE}{html}{_PAGE_AFTER}")
    found = _malformed(parser.errors, html)
    body = document.find("body")
    if (
        body is None
        or len(body) == 0
        or body[-1].get("id") != _PAGE_END
        or len(document.attrib) + len(body.attrib)
    ):
        found.append(
            "閉じていない要素やコメント、<body>・<html> タグ（ページの続きやページ全体の要素を変えます）"
        )
    for element in document.iter():
        if element is document or element is body or element.tag == "head":
            continue
        if element.tag is ElementTree.Comment:
            found += _comment(element.text or "")
            continue
        found += _element(element, html)
    return tuple(dict.fromkeys(found))


def _malformed(errors: list[tuple[Any, str, dict[str, Any]]], html: str) -> list[str]:
    """Comments kses takes apart (`<!-->`, `<!-- x --!>`), `<?…?>` and CDATA sections: a browser reads
    some of them as a comment that ends earlier than it seems (CDATA inside MathML text does not end
    where html5lib ends it), so none is judged as harmless."""
    found = [
        "正しい形でないコメントや宣言（<!…>、<?…?>）"
        for _, code, _ in errors
        if code in _MALFORMED or "comment" in code
    ]
    if "<![cdata[" in html.lower():
        found.append("CDATA 区間（<![CDATA[…]]>）")
    return list(dict.fromkeys(found))


def _comment(text: str) -> list[str]:
    # kses keeps a comment but filters what is inside it like content, cuts `--` runs, and drops an
    # empty one.
    inner = active_parts(text)
    return inner + (["コメント内の「--」"] if "--" in text else []) + ([] if text else ["空のコメント"])


def _local_name(tag: str) -> tuple[str | None, str]:
    match = _FOREIGN.fullmatch(tag)
    return (match.group(1), match.group(2)) if match else (None, tag)


def _element(element: ElementTree.Element, source: str) -> list[str]:
    namespace, name = _local_name(str(element.tag))
    name = name.lower()
    rules = kses_rules().tags.get(name)
    if (namespace is not None and namespace != _MATHML) or rules is None or name == "object":
        # `object` is kept only for a PDF of the site's own uploads (a check against the site's
        # address that the agent does not make): held like every other embed.
        kind = _ELEMENT_KINDS_JA.get(name, "WordPressが許可しない要素")
        return [f"<{name}> 要素（{kind}）"]
    found: list[str] = []
    for raw_name, value in element.attrib.items():
        problem = _attribute(name, rules, str(raw_name), str(value), source)
        if problem is not None:
            found.append(problem)
    return found


def _attribute(element: str, rules: dict[str, Any], raw_name: str, value: str, source: str) -> str | None:
    namespace, attribute = _local_name(raw_name)
    attribute = attribute.lower()
    if attribute.startswith("on"):
        return f"{attribute} 属性（イベントで動くスクリプト）"
    rule = rules.get(attribute)
    if namespace is not None or raw_name.lower() != attribute:
        rule = None  # xlink:href and other namespaced attributes
    if rule is None and not (rules.get("data-*") and _DATA_ATTRIBUTE.fullmatch(attribute)):
        return f"<{element}> の {attribute} 属性（WordPressが許可しない属性）"
    if ("<" in value or ">" in value) and value in source:  # written as such, not as &lt; &gt;
        # kses reads a tag up to the first `>`, quotes or not: it would cut the element apart
        return f"<{element}> の {attribute} 属性の値にある「<」「>」（WordPressが要素を別の形に読み替えます）"
    if attribute.startswith("data-wp-bind--") and _binds_restricted(attribute, rules):
        return f"<{element}> の {attribute} 属性（値を制限された属性への割り当て）"
    if attribute == "style" and not _css_kept(value):
        return f"<{element}> の style 属性「{value[:60]}」（WordPressが許可しないスタイル）"
    if attribute in kses_rules().uri_attributes and kses_bad_protocol(value) != value:
        scheme = value.split(":", 1)[0].strip()[:20]
        return f"<{element}> の {attribute} にある「{scheme}:」のURL（WordPressが許可しない形式）"
    if isinstance(rule, dict):
        if "valueless" in rule and value != "":
            return f"<{element}> の {attribute} 属性の値"
        allowed = rule.get("values")
        if allowed is not None and value.lower() not in allowed:
            return f"<{element}> の {attribute} 属性の値「{value[:40]}」"
    return None


def _binds_restricted(attribute: str, rules: dict[str, Any]) -> bool:
    """kses refuses an Interactivity API binding to an attribute whose values it restricts."""
    if not any(isinstance(rule, dict) for rule in rules.values()):
        return False
    bound = attribute.removeprefix("data-wp-bind--")
    for name in {bound, bound.split("---", 1)[0]}:
        rule = rules.get(name)
        if rule is None and _DATA_ATTRIBUTE.fullmatch(name) and "data-*" in rules:
            rule = rules["data-*"]
        if rule is None or not rule or isinstance(rule, dict):
            return True
    return False


# -- URLs and styles, as kses reads them (wp_kses_bad_protocol, safecss_filter_attr) --------------


def _no_null(text: str) -> str:
    return _NUL_LIKE.sub("", text)


def kses_bad_protocol(value: str) -> str:
    """The value with every protocol kses does not allow taken out (as wp_kses_bad_protocol)."""
    protocols = kses_rules().protocols
    value = _no_null(value)
    if (value.startswith("https://") and "https" in protocols) or (
        value.startswith("http://") and "http" in protocols
    ):
        return value
    for _ in range(6):
        before = value
        value = _strip_protocol_once(value, protocols)
        if value == before:
            return value
    return ""


def _strip_protocol_once(value: str, protocols: frozenset[str], count: int = 1) -> str:
    value = re.sub(r"(&#0*58(?![;0-9])|&#x0*3a(?![;a-f0-9]))", r"\1;", value, flags=re.IGNORECASE)
    parts = _COLON.split(value, maxsplit=1)
    if len(parts) < 2 or "/?" in parts[0]:
        return value
    rest = parts[1].strip(_PHP_TRIM)
    scheme = _no_null(re.sub(r"\s", "", _decode_numeric_entities(parts[0]))).lower()
    protocol = f"{scheme}:" if scheme in protocols else ""
    if protocol == "feed:":
        if count > 2:
            return ""
        rest = _strip_protocol_once(rest, protocols, count + 1)
        if not rest:
            return rest
    return protocol + rest


def _decode_numeric_entities(text: str) -> str:
    def decimal(match: re.Match[str]) -> str:
        return chr(int(match.group(1))) if int(match.group(1)) < 0x110000 else match.group(0)

    def hexadecimal(match: re.Match[str]) -> str:
        return chr(int(match.group(1), 16)) if int(match.group(1), 16) < 0x110000 else match.group(0)

    text = re.sub(r"&#0*([0-9]+);", decimal, text)
    return re.sub(r"&#[Xx]0*([0-9A-Fa-f]+);", hexadecimal, text)


def _css_kept(css: str) -> bool:
    """Whether safecss_filter_attr() keeps every declaration of a style attribute."""
    css = _no_null(css).replace("\n", "").replace("\r", "").replace("\t", "")
    items = [item.strip(_PHP_TRIM) for item in css.strip(_PHP_TRIM).split(";") if item != ""]
    return bool(items) and all(_css_item_kept(item) for item in items if item)


def _css_item_kept(item: str) -> bool:
    rules = kses_rules()
    test = item
    value = ""
    found = url_property = gradient_property = False
    if ":" not in item:
        found = True
    else:
        selector, value = item.split(":", 1)
        selector = selector.strip(_PHP_TRIM)
        custom = "--*" in rules.safe_css and _CUSTOM_PROPERTY.fullmatch(selector) is not None
        if selector in rules.safe_css or custom:
            found = True
            url_property = selector in rules.css_url_properties
            gradient_property = selector in rules.css_gradient_properties
        if custom:
            url_property = value.strip(_PHP_TRIM).startswith("url(")
            gradient_property = "-gradient(" in value.strip(_PHP_TRIM)
    if not found:
        return False
    if url_property:
        for match in _CSS_URL.findall(value):
            pieces = _CSS_URL_PIECES.fullmatch(match)
            url = pieces.group(2).strip(_PHP_TRIM) if pieces else ""
            if not url or kses_bad_protocol(url) != url:
                return False
            test = test.replace(match, "")
    if gradient_property:
        for match in _GRADIENT.findall(test):
            test = test.replace(match, "")
    return _CSS_UNSAFE.search(_without_css_functions(test)) is None


def _without_css_functions(text: str) -> str:
    """The text with each allowed function call and its balanced parentheses taken out, left to
    right (the recursive pattern kses uses); an unbalanced call is left as it is."""
    out: list[str] = []
    position = 0
    while (match := _CSS_FUNCTION.search(text, position)) is not None:
        depth, end = 0, None
        for index in range(match.end() - 1, len(text)):
            depth += {"(": 1, ")": -1}.get(text[index], 0)
            if depth == 0:
                end = index + 1
                break
        if end is None:
            out.append(text[position : match.end()])
            position = match.end()
            continue
        out.append(text[position : match.start()])
        position = end
    out.append(text[position:])
    return "".join(out)
