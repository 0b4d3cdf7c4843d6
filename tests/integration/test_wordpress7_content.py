"""Issue 36: what WordPress 7.x brought, known to the policy, proven on the real 7.x site.

- Blocks that make WordPress's server fetch a URL when it shows the content: 7.x's cover block with an
  embedded video background runs oEmbed on its `url` (seen here: the request reaches the test internet).
  The policy does not guess by block name which attribute is fetched: every URL in any block's
  attributes must name a public host, or the write waits for approval.
- The Abilities API (7.0; execution hooks in 7.1): abilities are registered on the site, and nothing the
  model can send executes one (code execution is refused; WP-CLI 2.10 has no ability command, and an
  unknown command is refused).
"""

from __future__ import annotations

import json
import shlex

import pytest

from tests.fakes.wordpress import TestWordPress
from tests.fakes.wordpress_fixtures import CURRENT
from wp_agent.policy import CommandPolicy, PolicyCategory

pytestmark = pytest.mark.skipif(
    int(CURRENT.version.split(".")[0]) < 7, reason=f"the sandbox runs WordPress {CURRENT.version}"
)
POLICY = CommandPolicy()


def _cover(url: str) -> str:
    attributes = json.dumps({"backgroundType": "embed-video", "url": url})
    return f'<!-- wp:cover {attributes} --><div class="wp-block-cover"></div><!-- /wp:cover -->'


def _render(site: TestWordPress, post_id: str) -> str:
    """The post as a visitor's page shows it (the harness renders it; no web server is needed)."""
    done = site.wp("eval", f"echo apply_filters( 'the_content', get_post( {int(post_id)} )->post_content );")
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_a_cover_with_an_embedded_video_makes_the_server_fetch_its_url(
    fresh_wordpress: TestWordPress,
) -> None:
    site = fresh_wordpress
    url = "https://cdn.example.test/probe/cover-video"
    created = site.wp(
        "post",
        "create",
        "--post_status=publish",
        "--post_title=cover",
        f"--post_content={_cover(url)}",
        "--porcelain",
    )
    assert created.returncode == 0, created.stderr
    before = list(site.internet.requested)
    _render(site, created.stdout.strip())
    fetched = [path for path in site.internet.requested[len(before) :] if path.startswith("/probe/")]
    assert fetched == ["/probe/cover-video"]  # WordPress's server asked for it while showing the post


@pytest.mark.parametrize(
    "url",
    [
        "http://169.254.169.254/latest/meta-data/",  # the cloud metadata address
        "http://127.0.0.1:8080/",
        "//10.0.0.5/internal",  # no scheme: the page's own
        "http://intranet/",
    ],
)
def test_a_cover_fetching_an_inside_address_waits_for_approval(url: str) -> None:
    for command in (
        f"post update 45 --post_content={shlex.quote(_cover(url))}",
        f"post create --post_title=x --post_status=publish --post_content={shlex.quote(_cover(url))}",
        f"widget add block sidebar-1 --content={shlex.quote(_cover(url))}",
    ):
        decision = POLICY.classify(command)
        assert decision.category is PolicyCategory.DESTRUCTIVE, (command, decision.category, decision.rule)


def test_a_url_in_any_block_attribute_at_any_depth_counts() -> None:
    """Not the cover's name: any block, any attribute, nested or escaped as JSON allows."""
    hidden = [
        '<!-- wp:playlist {"tracks":[{"src":"http://10.0.0.5/a.mp3"}]} /-->',
        '<!-- wp:acme/card {"media":{"u\\u0072l":"http:\\/\\/169.254.169.254\\/"}} /-->',
        '<!-- wp:image {"url":"ftp://files.example.com/x.jpg"} /-->',
    ]
    for content in hidden:
        decision = POLICY.classify(f"post update 45 --post_content={shlex.quote(content)}")
        assert decision.category is PolicyCategory.DESTRUCTIVE, (content, decision.category, decision.rule)
    public = '<!-- wp:cover {"backgroundType":"embed-video","url":"https://www.youtube.com/watch?v=x"} -->'
    decision = POLICY.classify(f"post update 45 --post_content={shlex.quote(public)}")
    assert decision.category is PolicyCategory.WRITE, decision.rule  # a public host: runs as before


def test_abilities_are_registered_and_nothing_the_model_sends_executes_one(
    seeded_wordpress: TestWordPress,
) -> None:
    site = seeded_wordpress
    names = site.wp("eval", "foreach ( wp_get_abilities() as $a ) echo $a->get_name(), ' ';").stdout.split()
    assert "core/get-site-info" in names  # the registry is there, with WordPress's own abilities
    for command in (
        "ability run core/get-user-info",
        "ability execute core/get-environment-info",
        "eval 'echo json_encode(wp_get_ability(\"core/get-user-info\")->execute());'",
        "eval-file /tmp/run-ability.php",
        "shell",
        "rest ability run core/get-site-info",
    ):
        assert POLICY.classify(command).category is PolicyCategory.BLOCKED, command
