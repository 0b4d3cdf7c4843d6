"""wp-agent core: Japanese instructions to policy-checked WP-CLI commands (no AWS imports here)."""

__version__ = "0.1.0"
