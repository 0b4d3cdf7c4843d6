"""Telemetry as CloudWatch Embedded Metric Format lines (Powertools Metrics), one per data point."""

from __future__ import annotations

import logging

from wp_agent.telemetry import NAMESPACE, SERVICE

logger = logging.getLogger(__name__)


class EmfTelemetry:
    def __init__(self, namespace: str = NAMESPACE, service: str = SERVICE) -> None:
        self._namespace = namespace
        self._service = service

    def _put(self, name: str, unit: str, value: float, dimensions: dict[str, str] | None) -> None:
        from aws_lambda_powertools.metrics import MetricUnit, single_metric

        try:
            with single_metric(
                name=name,
                unit=MetricUnit(unit),
                value=value,
                namespace=self._namespace,
                default_dimensions={"service": self._service, **(dimensions or {})},
            ):
                pass
        except Exception:  # metrics must never break a run
            logger.exception("could not emit metric", extra={"metric": name})

    def count(self, name: str, value: float = 1.0, *, dimensions: dict[str, str] | None = None) -> None:
        self._put(name, "Count", value, dimensions)

    def seconds(self, name: str, value: float, *, dimensions: dict[str, str] | None = None) -> None:
        self._put(name, "Seconds", value, dimensions)

    def percent(self, name: str, value: float, *, dimensions: dict[str, str] | None = None) -> None:
        self._put(name, "Percent", value, dimensions)
