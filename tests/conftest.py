"""Shared fixtures: the test doubles live in tests/fakes and are registered here."""

import logging
import os

import pytest

# jsii (aws-cdk-lib) prints a banner per node process when Node 20 is past its end of life; synth
# works on Node 20 (the infra tests prove it), so the banner is only noise here. Set before any
# test imports aws_cdk; an explicit value in the environment wins.
os.environ.setdefault("JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION", "20")

pytest_plugins = [
    "tests.fakes.anthropic_fixtures",
    "tests.fakes.wordpress_fixtures",
    "tests.fakes.aws",
    "tests.fakes.media_server",
]


@pytest.fixture(autouse=True)
def _our_logs_reach_caplog(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """A test that reads our log records sees them whatever ran before it: importing a Lambda
    handler module (a container's cold start) gives the package logger Powertools' handler and stops
    it propagating to the root, where caplog listens."""
    if "caplog" in request.fixturenames:
        monkeypatch.setattr(logging.getLogger("wp_agent"), "propagate", True)
