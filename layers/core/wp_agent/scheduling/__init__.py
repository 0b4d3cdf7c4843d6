"""Scheduled runs (spec §11.2, Stream05: AgentInput + a schedule): expressions, proposals, the service."""
