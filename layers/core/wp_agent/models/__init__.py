"""Pydantic v2 models for every boundary: spec interfaces, sessions, approvals, targets."""
