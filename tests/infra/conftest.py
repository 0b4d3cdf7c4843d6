"""Synthesise the stack once per test session; every infra test reads that one template.

The synth uses the real core layer (a cheap copy) and an empty stand-in for the dependency layer,
so template, cdk-nag and cfn-lint tests run offline in seconds. The dependency layer itself is
built and inspected by the `layer_build` tests in test_layers.py.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from aws_cdk.assertions import Template

from infra.packaging import BUILD_DIR_ENV
from tests.fakes.cdk_synth import ADMIN_PRINCIPALS, BACKEND_PRINCIPALS, Synthesized, synthesize, template_once

__all__ = ["ADMIN_PRINCIPALS", "BACKEND_PRINCIPALS", "Synthesized"]  # (what the infra tests import from here)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "layer_build: builds a Lambda dependency layer with pip (first run downloads wheels from PyPI)",
    )


@pytest.fixture(scope="session")
def synthesized(tmp_path_factory: pytest.TempPathFactory) -> Synthesized:
    """The live app (cdk-nag's report, the app's own objects): test_policy_checks.py, one worker."""
    return synthesize(tmp_path_factory.mktemp("synth-live"))


@pytest.fixture(scope="session")
def template(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The synthesised template: one synthesis for the whole run, shared with the serverless tests."""
    return template_once(tmp_path_factory)


@pytest.fixture(scope="session")
def assertions(template: dict[str, Any]) -> Template:
    return Template.from_json(template)


@pytest.fixture
def isolated_build_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private layer build root, via the same environment variable operators use."""
    monkeypatch.setenv(BUILD_DIR_ENV, str(tmp_path / "build"))
    return tmp_path / "build"
