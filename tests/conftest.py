"""Test-wide guards (no network beyond loopback, every file write in tmp_path, no inspector left
following the session's IPython shell) and the fixtures tests in several folders share: a
loopback OpenAI server, a real IPython shell with agentnb."""

from __future__ import annotations

import ipaddress
import socket
import sys
from collections.abc import Iterator
from typing import Any

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


def _cell_followers() -> list[Any]:
    """The inspectors following the cells of the session's IPython shell, if it was started."""
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None else None
    if shell is None:
        return []
    hooks = shell.events.callbacks["post_run_cell"]
    return [hook.__self__ for hook in hooks if getattr(hook, "__name__", "") == "_after_cell"]


@pytest.fixture(autouse=True)
def _no_inspector_left_following():
    """The test session has one IPython shell, and an inspector made while it exists follows its
    cells until closed: one a test left open would run after every cell of every later test,
    keeping its agent alive. Those a test opened are closed after it."""
    before = _cell_followers()
    yield
    for inspector in _cell_followers():
        if not any(inspector is kept for kept in before):
            inspector.close()


@pytest.fixture
def server():
    """A loopback OpenAI-compatible server (``tests/openai_server.py``) for one test: what the
    real ``openai`` client is tested against. A module with a server of another kind (a local
    model's) defines its own ``server``."""
    from openai_server import OpenAIServer

    with OpenAIServer() as s:
        yield s


@pytest.fixture
def shell(tmp_path, monkeypatch) -> Iterator[Any]:
    """The test session's one real IPython shell with agentnb loaded afresh (a new workspace:
    no agents, no ``%%tool`` tools), working in ``tmp_path`` (``%%agent`` records beside the
    notebook). After the test, the names it bound in the shell are removed and the notebook's
    evaluation slots emptied, so tests stay independent in any order. A module that needs more
    in the shell overrides ``shell`` with a fixture that takes this one and adds to it."""
    from IPython import get_ipython
    from IPython.testing.globalipapp import start_ipython

    import agentnb
    from agentnb import slots

    monkeypatch.chdir(tmp_path)
    start_ipython()  # it returns the shell on its first call only
    ip = get_ipython()
    before = set(ip.user_ns)
    ip.run_line_magic("load_ext", "agentnb")  # known to IPython's extension manager...
    agentnb.load_ipython_extension(ip)  # ...and loaded again: %load_ext loads once a session
    yield ip
    for name in set(ip.user_ns) - before:
        del ip.user_ns[name]
    slots.eval_display.clear()
    slots.case_inspector.clear()
