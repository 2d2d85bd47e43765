"""Test-wide guards: no network beyond loopback, every file write in tmp_path."""

from __future__ import annotations

import ipaddress
import socket

import pytest

_real_connect = socket.socket.connect
_real_connect_ex = socket.socket.connect_ex


def _is_loopback(address: object) -> bool:
    if isinstance(address, (str, bytes)):
        return True  # AF_UNIX paths
    if not isinstance(address, (tuple, list)) or not address:
        return False
    host = address[0]
    if host in ("localhost", "localhost.localdomain"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _guarded(real):
    def connect(self, address):
        if self.family in (socket.AF_INET, socket.AF_INET6) and not _is_loopback(address):
            raise ConnectionRefusedError(
                f"agentnb tests allow loopback connections only; blocked a connection to {address!r}"
            )
        return real(self, address)

    return connect


@pytest.fixture(autouse=True)
def _loopback_only(monkeypatch):
    """Any connection to a non-loopback address fails the test that made it."""
    monkeypatch.setattr(socket.socket, "connect", _guarded(_real_connect))
    monkeypatch.setattr(socket.socket, "connect_ex", _guarded(_real_connect_ex))
    yield


@pytest.fixture(autouse=True)
def _no_real_keys(monkeypatch):
    """Tests never see a real key or endpoint from the environment."""
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_ORG_ID", "OPENAI_PROJECT_ID"):
        monkeypatch.delenv(name, raising=False)
    yield


@pytest.fixture
def server():
    """A loopback OpenAI-compatible server (``tests/openai_server.py``) for one test: what the
    real ``openai`` client is tested against. A module with a server of another kind (a local
    model's) defines its own ``server``."""
    from openai_server import OpenAIServer

    with OpenAIServer() as s:
        yield s
