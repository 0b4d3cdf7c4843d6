"""Write layers/core/wp_agent/policy/kses_rules.json from the sandbox's WordPress: the tags, attributes,
URL protocols and CSS properties `wp_kses_post()` keeps (scripts/kses_rules.php asks WordPress).

Run after the sandbox's WordPress changes release:
    .venv/bin/python scripts/refresh_kses_rules.py
tests/integration/test_active_content_judge.py compares the judge with the real wp_kses_post().
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "layers" / "core"))

from wp_agent.cli.terminal import out  # noqa: E402
from wp_agent.executors.sandbox import DEFAULT_SANDBOX_DIR  # noqa: E402
from wp_agent.policy.active_content import KSES_RULES_FILE  # noqa: E402
from wp_agent.sandbox import SandboxSite  # noqa: E402


def main() -> None:
    site = SandboxSite(DEFAULT_SANDBOX_DIR)
    site.start()
    rules = json.loads(site.wp("eval-file", str(ROOT / "scripts" / "kses_rules.php")).stdout)
    KSES_RULES_FILE.write_text(json.dumps(rules, ensure_ascii=False, indent=1, sort_keys=True) + "\n")
    out.line(f"kses rules of WordPress {rules['wordpress']} written to {KSES_RULES_FILE}")


if __name__ == "__main__":
    main()
