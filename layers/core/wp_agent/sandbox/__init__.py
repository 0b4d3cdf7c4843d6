"""The sandbox: a real local WordPress (Debian's PHP, MariaDB and files; the real WP-CLI) seeded with
Japanese sample content, restored from a dump in about a second. Local only: no Lambda imports it."""

from wp_agent.sandbox.errors import SandboxError
from wp_agent.sandbox.site import SandboxSite, SandboxStatus

__all__ = ["SandboxError", "SandboxSite", "SandboxStatus"]
