"""Shared fixtures: the test doubles live in tests/fakes and are registered here."""

pytest_plugins = [
    "tests.fakes.anthropic_fixtures",
    "tests.fakes.wordpress_fixtures",
    "tests.fakes.aws",
    "tests.fakes.media_server",
]
