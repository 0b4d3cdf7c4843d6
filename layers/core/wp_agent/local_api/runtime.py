"""The runtime of the local stack: the Lambda's wiring (service/runtime.py) against moto's tables,
state machine and bus, with two differences that belong to a laptop. The one local target (the
sandbox, or the site WP_CLI_MODE=local names) runs WP-CLI through the same executor the CLI uses
instead of SSH; an SSH site goes through the real SSH path with its key in (moto's) Secrets Manager.
Metrics are not written (EMF lines would flood the terminal); events are also reported to the
server's output, so a developer sees what the backend would receive."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from functools import cached_property
from typing import Any

from wp_agent.config import LambdaSettings
from wp_agent.diagnostics.checks import Check, passed, wordpress_checks
from wp_agent.executors.port import WpCli
from wp_agent.models.target import Target
from wp_agent.service.runtime import AwsRuntime
from wp_agent.telemetry import NoTelemetry, Telemetry

logger = logging.getLogger(__name__)

EventListener = Callable[[str, dict[str, Any]], None]


class _ReportedEvents:
    """The EventBridge publisher, telling a listener about each event too."""

    def __init__(self, publisher: Any, listener: EventListener | None) -> None:
        self._publisher = publisher
        self._listener = listener

    def publish(self, detail_type: str, detail: dict[str, Any]) -> None:
        self._publisher.publish(detail_type, detail)
        if self._listener is not None:  # the detail as sent (with its eventId)
            self._listener(detail_type, json.loads(self._publisher.entry(detail_type, detail)["Detail"]))


class LocalRuntime(AwsRuntime):
    def __init__(
        self,
        settings: LambdaSettings,
        *,
        local_target: str | None,
        local_executor: Callable[[], WpCli] | None,
        on_event: EventListener | None = None,
    ) -> None:
        super().__init__(settings)
        self._local_target = local_target
        self._local_executor = local_executor
        self._on_event = on_event

    @cached_property
    def telemetry(self) -> Telemetry:
        return NoTelemetry()

    @cached_property
    def events(self) -> Any:  # the publisher, reporting to the server's output
        from wp_agent.adapters.aws.events import EventPublisher

        return _ReportedEvents(EventPublisher(self.settings.wp_agent_event_bus or "wp-agent"), self._on_event)

    def _runs_locally(self, target: Target) -> bool:
        return self._local_executor is not None and target.target_id == self._local_target

    def wp_cli_for(self, target: Target) -> WpCli:
        if self._runs_locally(target) and self._local_executor is not None:
            return self._local_executor()
        return super().wp_cli_for(target)

    def check_target(self, target: Target) -> list[Check]:
        if not self._runs_locally(target):
            return super().check_target(target)
        where = "サンドボックス" if self.settings.wp_cli_mode.value == "sandbox" else "このマシンの WordPress"
        checks = [
            passed("local.target", "実行場所", f"{where}（WP_CLI_MODE={self.settings.wp_cli_mode.value}）")
        ]
        wp_cli = self.wp_cli_for(target)
        try:
            return checks + wordpress_checks(wp_cli)
        finally:
            wp_cli.close()
