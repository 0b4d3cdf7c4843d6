"""The site health probe as the doctor and the target checks show it: one check per thing probed.

The probe itself runs on the site's own server and is read in executors/site_health.py (the guarded code
changes use it too); here each finding becomes a ✓/✗ line with its fix.
"""

from __future__ import annotations

from wp_agent.diagnostics.checks import Check, failed, passed
from wp_agent.executors.site_health import HealthReport, HealthVerdict, Probed, compare, probe

__all__ = ["HealthReport", "HealthVerdict", "Probed", "compare", "health_checks", "probe"]


def health_checks(report: HealthReport) -> list[Check]:
    checks = [
        passed(f"health.{p.name}", p.label, p.detail)
        if p.ok
        else failed(f"health.{p.name}", p.label, p.detail, p.problem)
        for p in report.probed
    ]
    if report.leftovers:
        checks.append(
            Check(
                "health.leftover_backups",
                "途中で止まった変更のバックアップ",
                True,
                f"{len(report.leftovers)}件: " + " / ".join(report.leftovers),
                warning=(
                    "変更が途中で止まったときの、変更前のファイル（とデータベースの複製）です。サイトが正常なら"
                    "サーバー上のこのフォルダを削除してください（wp-agent は自分では削除しません）。"
                ),
            )
        )
    return checks
