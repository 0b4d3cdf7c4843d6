"""pytest fixtures around the real-sshd rig (tests/fakes/sshd.py); mark users `@pytest.mark.sshd`."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.fakes.sshd import SshdRig
from wp_agent.simulator import SiteStore


@pytest.fixture(scope="session")
def sshd_server() -> Iterator[SshdRig]:
    """One sshd for the test session (simulator as `wp`, no bootstrap delay); stopped afterwards."""
    rig = SshdRig(bootstrap_ms=0)
    rig.start()
    try:
        yield rig
    finally:
        rig.stop()


@pytest.fixture
def rig_site(sshd_server: SshdRig) -> Iterator[SiteStore]:
    """The rig's simulated WordPress, fresh for the test and reset afterwards."""
    store = SiteStore(sshd_server.site_file)
    store.reset()
    yield store
    store.reset()
