"""Checks of a WordPress target without the model: reachable, pinned host key, login, `wp` and
WordPress answering, the multisite sites. Shared by `wp-agent doctor` and the API's
POST /v1/targets/{targetId}/checks."""

from wp_agent.diagnostics.checks import Check, failed, passed, wordpress_checks

__all__ = ["Check", "failed", "passed", "wordpress_checks"]
