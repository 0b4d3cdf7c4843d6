"""A faithful WP-CLI simulator on a seeded Japanese sample site (the sandbox and tests' WordPress).

`run_wp(argv)` runs one invocation in-process; `python -m wp_agent.simulator` / `wp-sim` is the
`wp` binary stand-in; `SiteStore` inspects and arranges the stored site (faults, extra posts).
"""

from wp_agent.simulator.invocation import SimResult, run_wp
from wp_agent.simulator.site import SITE_FILE_NAME, SiteStore

__all__ = ["SITE_FILE_NAME", "SimResult", "SiteStore", "run_wp"]
