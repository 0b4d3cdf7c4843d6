"""The command policy: the security boundary between the model and WP-CLI."""

from wp_agent.policy.command_policy import CommandPolicy, PolicyCategory, PolicyDecision

__all__ = ["CommandPolicy", "PolicyCategory", "PolicyDecision"]
