"""Pytest fixtures for the scripted Anthropic server.

Use them from a test module or a conftest with ``pytest_plugins = ["tests.fakes.anthropic_fixtures"]``.

``scripted_anthropic``
    A started ``ScriptedAnthropicServer`` with an empty script (``strict=True``); enqueue steps with
    ``scripted_anthropic.enqueue(reply_text("…"), …)``. Stopped after the test.
``scripted_anthropic_env``
    The same server, with ``ANTHROPIC_BASE_URL`` pointing at it and ``ANTHROPIC_API_KEY=test-key``
    (and ``ANTHROPIC_AUTH_TOKEN`` removed), for code that builds its own client from the environment.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.fakes.anthropic_server import ScriptedAnthropicServer

TEST_API_KEY = "test-key"


@pytest.fixture
def scripted_anthropic() -> Iterator[ScriptedAnthropicServer]:
    with ScriptedAnthropicServer() as server:
        yield server


@pytest.fixture
def scripted_anthropic_env(
    scripted_anthropic: ScriptedAnthropicServer, monkeypatch: pytest.MonkeyPatch
) -> ScriptedAnthropicServer:
    monkeypatch.setenv("ANTHROPIC_BASE_URL", scripted_anthropic.base_url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", TEST_API_KEY)
    monkeypatch.delenv("ANTHROPIC_AUTH_TOKEN", raising=False)
    return scripted_anthropic
