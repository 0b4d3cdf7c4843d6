"""Fixtures for the integration tests that need more than the shared doubles."""

from tests.fakes.serverless import serverless, synthesized_template  # noqa: F401 - fixtures (imports the CDK app)
