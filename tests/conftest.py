"""Shared fixtures: the test doubles live in tests/fakes and are registered here."""

import errno
import ipaddress
import logging
import os
import socket
from collections.abc import Iterator
from typing import Any

import pytest

from wp_agent.policy import host_resolution

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


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The long tests first (a stable sort on pytest-randomly's order): the workers then end together,
    instead of one running a long test alone at the end."""
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)


@pytest.fixture(autouse=True)
def _our_logs_reach_caplog(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """A test that reads our log records sees them whatever ran before it: importing a Lambda
    handler module (a container's cold start) gives the package logger Powertools' handler and stops
    it propagating to the root, where caplog listens."""
    if "caplog" in request.fixturenames:
        monkeypatch.setattr(logging.getLogger("wp_agent"), "propagate", True)


@pytest.fixture(autouse=True)
def _our_loggers_stay_enabled() -> Iterator[None]:
    """logging.config.dictConfig (as some libraries' CLIs call it) disables every logger that exists;
    ours would then be silent for the rest of the worker's tests. Fail the test that did it."""
    yield
    disabled = sorted(
        name
        for name, logger in logging.root.manager.loggerDict.items()
        if name.split(".")[0] == "wp_agent" and isinstance(logger, logging.Logger) and logger.disabled
    )
    assert not disabled, f"this test disabled our loggers: {disabled}"


def _is_loopback(host: object) -> bool:
    if not isinstance(host, str):
        return False
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.split("%")[0]).is_loopback
    except ValueError:
        return False


# The documentation names tests write into content and media URLs, with public addresses (nothing
# connects to them: the rule below refuses every address but loopback). Every other name the policy
# asks about does not resolve, as on a machine without DNS.
DOCUMENTATION_ZONE = {
    "example.com": ["93.184.215.14"],
    "www.example.com": ["93.184.215.14"],
    "images.example.com": ["93.184.215.14"],
    "example.jp": ["203.178.141.194"],
    "www.youtube.com": ["142.250.196.110", "2404:6800:4004:80a::200e"],
    # the test WordPress's "internet" (tests/fakes/wordpress.py sends them to a local server)
    "cdn.example.test": ["93.184.215.14"],
    "images.example.test": ["93.184.215.14"],
}


@pytest.fixture(autouse=True)
def _the_policy_resolves_the_documentation_zone(monkeypatch: pytest.MonkeyPatch) -> None:
    """The policy asks where the hosts the server would fetch from point (policy/host_resolution.py);
    in tests it is answered from DOCUMENTATION_ZONE, never from this machine's DNS."""
    monkeypatch.setattr(
        host_resolution, "system_resolver", host_resolution.static_resolver(DOCUMENTATION_ZONE)
    )


@pytest.fixture(autouse=True, scope="session")
def _tests_reach_only_loopback() -> Iterator[None]:
    """Tests open connections to 127.0.0.1 / ::1 only, and resolve no name but localhost. A test that
    reaches for a documentation address (203.0.113.5) or a generated host name fails at once, the same
    on every network, instead of hanging where a proxy accepts and never answers."""
    patch = pytest.MonkeyPatch()
    real_connect, real_connect_ex = socket.socket.connect, socket.socket.connect_ex
    real_getaddrinfo = socket.getaddrinfo

    def refuse_outside(sock: socket.socket, address: Any) -> None:
        if sock.family in (socket.AF_INET, socket.AF_INET6) and not _is_loopback(address[0]):
            raise OSError(errno.ENETUNREACH, f"tests reach only loopback, not {address[0]}")

    def connect(sock: socket.socket, address: Any) -> None:
        refuse_outside(sock, address)
        real_connect(sock, address)

    def connect_ex(sock: socket.socket, address: Any) -> int:
        refuse_outside(sock, address)
        return real_connect_ex(sock, address)

    def getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
        if host is not None and not _is_loopback(host if isinstance(host, str) else host.decode()):
            try:
                ipaddress.ip_address(host if isinstance(host, str) else host.decode())
            except ValueError:
                raise socket.gaierror(
                    socket.EAI_NONAME, f"tests resolve no name but localhost: {host}"
                ) from None
        return real_getaddrinfo(host, *args, **kwargs)

    patch.setattr(socket.socket, "connect", connect)
    patch.setattr(socket.socket, "connect_ex", connect_ex)
    patch.setattr(socket, "getaddrinfo", getaddrinfo)
    yield
    patch.undo()
