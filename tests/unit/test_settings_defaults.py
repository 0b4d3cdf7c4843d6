"""Settings take their defaults from the process that reads them: a default that names this user's home
(or anything else of the environment) is computed when the settings are read, never at import. A
process whose HOME differs from the importer's (a forked child, a wrapper that sets HOME, a Lambda's
sandbox user) would otherwise write its audit and runs into someone else's home."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic_core import PydanticUndefined
from pydantic_settings import BaseSettings

from wp_agent import config


def _settings_classes() -> list[type[BaseSettings]]:
    return [
        value
        for value in vars(config).values()
        if isinstance(value, type) and issubclass(value, BaseSettings) and value is not BaseSettings
    ]


def test_no_default_holds_the_importing_users_home() -> None:
    home = str(Path.home())
    fixed = {
        f"{cls.__name__}.{name}": field.default
        for cls in _settings_classes()
        for name, field in cls.model_fields.items()
        if field.default is not PydanticUndefined and field.default is not None
    }
    assert fixed  # the scan sees the fields
    assert [name for name, default in fixed.items() if home in str(default)] == []


def test_the_audit_file_is_under_the_home_of_the_process_that_reads_the_settings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("WP_AGENT_AUDIT_FILE", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    assert config.CliSettings().wp_agent_audit_file == tmp_path / ".wp-agent" / "audit.jsonl"
