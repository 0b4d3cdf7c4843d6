"""Scope and identity: the model can neither pick another site (--blog) nor another user (--user).

Tried on WordPress 6.1 / WP-CLI 2.10: `--blog` is WP-CLI's deprecated name of --url and wins over
it; `post create --user=admin --post_content='<script>…'` kept the script (admin has
unfiltered_html), while the same command without --user stored it filtered.
"""

from __future__ import annotations

import pytest

from wp_agent.agent.lifecycle import new_session
from wp_agent.config import LambdaSettings
from wp_agent.executors.code_guard import unguarded
from wp_agent.executors.ssh import SshWpCli
from wp_agent.models.agent_io import AgentInput
from wp_agent.models.target import Target
from wp_agent.policy import CommandPolicy
from wp_agent.policy.site_scope import apply_site_scope
from wp_agent.service.runtime import AwsRuntime

POLICY = CommandPolicy()


@pytest.mark.parametrize(
    "command",
    [
        "post create --post_title=x --blog=http://ms.test/shop/",
        "--blog=http://ms.test/shop/ post create --post_title=x",
        "post create --post_title=x --blog http://ms.test/shop/",
        "post create --post_title=x --BLOG=http://ms.test/shop/",
        "post create --user=admin --post_content='<script>alert(1)</script>'",
        "post create --post_content=x --user admin",
        "--user=1 post list",
        "post list --USER=admin",
        "user list --user=admin",
    ],
)
def test_blog_and_user_flags_are_refused(command: str) -> None:
    decision = POLICY.classify(command)
    assert decision.blocked
    assert decision.rule in {"blocked.global_option.blog", "blocked.global_option.user"}


def test_a_pinned_session_cannot_escape_by_blog() -> None:
    state = new_session(
        AgentInput.model_validate({"message": "x", "multisite": {"siteUrl": "http://ms.test/en/"}}),
        session_id="s",
        user_id="u",
        target_id="t",
        site_url="http://ms.test/en/",
    )
    decision = apply_site_scope(
        POLICY.classify("post create --post_title=x --blog=http://ms.test/shop/"), state.site_scope()
    )
    assert decision.blocked


def test_the_target_names_the_wordpress_user_the_executor_uses() -> None:
    target = Target.model_validate(
        {
            "targetId": "blog-prod",
            "host": "wp.example.com",
            "secretArn": "arn:aws:secretsmanager:ap-northeast-1:123456789012:secret:wp-agent/targets/x",
            "owners": ["u1"],
            "wpUser": "editor1",
        }
    )
    wp_cli = unguarded(AwsRuntime(LambdaSettings()).wp_cli_for(target))
    assert isinstance(wp_cli, SshWpCli)
    assert "--user=editor1" in wp_cli.remote_command(["post", "list"])
    with pytest.raises(ValueError, match="wpUser"):
        Target.model_validate({**target.model_dump(by_alias=True), "wpUser": "--exec=x"})
