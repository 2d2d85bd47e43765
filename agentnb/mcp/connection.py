"""One connection per MCP server per Python process, shared by every agent that uses it.

A ``Connection`` owns one client session of the official ``mcp`` SDK, kept open by a task on the
background loop (``runtime``). It starts on first use, is restarted on the next use after the
server died, and is stopped by ``close()`` or at interpreter exit. Each request is bounded by a
timeout, and every failure is raised as one line that names the server.
"""

from __future__ import annotations

import atexit
import concurrent.futures
import contextlib
import logging
import math
import os
import re
import shlex
import sys
import tempfile
import threading
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Literal, TypeVar
from urllib.parse import urlsplit

import anyio
import mcp_types as types
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from ..errors import ConfigurationError
from . import runtime
from .errors import MCPDisconnectedError, MCPServerError, MCPStartError, MCPTimeoutError, MCPToolError
from .results import describe_error, flat, leaf_error

# What the SDK logs about a connection's end (e.g. a failed goodbye to a crashed server) is
# already in the one-line errors raised here; without this it would print to the notebook.
logging.getLogger("mcp").addHandler(logging.NullHandler())

T = TypeVar("T")
State = Literal["stopped", "starting", "running", "failed"]

DEFAULT_TIMEOUT = 30.0
"""Seconds a tool call or resource read may take."""
DEFAULT_CONNECT_TIMEOUT = 30.0
"""Seconds a server may take to start and answer the handshake."""
_GRACE = 15.0  # beyond the coroutine's own deadline: process start-up and shutdown
_STDERR_LINES = 5
_INTERPRETERS = re.compile(r"(python[\d.]*|node|npx|bunx|uvx|uv|deno|pipx)(\.exe)?", re.IGNORECASE)


@dataclass(frozen=True)
class ServerSpec:
    """How to reach one MCP server: a command (stdio) or a URL (streamable HTTP)."""

    argv: tuple[str, ...] = ()
    """The command and its arguments (stdio servers)."""
    url: str | None = None
    """The endpoint (streamable HTTP servers)."""
    env: tuple[tuple[str, str], ...] = ()
    """Extra environment variables for the command."""
    cwd: str | None = None
    """Working directory for the command."""

    @classmethod
    def build(
        cls,
        command: str | Sequence[str] | None = None,
        url: str | None = None,
        env: Mapping[str, str] | None = None,
        cwd: str | os.PathLike[str] | None = None,
    ) -> ServerSpec:
        """Check and normalise what the user gave; ``python`` means this Python."""
        if (command is None) == (url is None):
            raise ConfigurationError(
                "give an MCP server either command= (e.g. 'python -m mcp_server_time') or url= "
                "(e.g. 'http://127.0.0.1:8000/mcp'), not both and not neither"
            )
        if url is not None:
            if not isinstance(url, str) or urlsplit(url).scheme not in ("http", "https") or not urlsplit(url).netloc:
                raise ConfigurationError(f"url must be an http:// or https:// address, got {url!r}")
            if env or cwd:
                raise ConfigurationError("env= and cwd= apply to a command (stdio server), not to a url")
            return cls(url=url)
        argv = _argv(command)
        if env is not None and not (
            isinstance(env, Mapping) and all(isinstance(k, str) and isinstance(v, str) for k, v in env.items())
        ):
            raise ConfigurationError(f"env must map names to strings, got {env!r}")
        return cls(argv=argv, env=tuple(sorted((env or {}).items())), cwd=None if cwd is None else str(cwd))

    @property
    def transport(self) -> Literal["stdio", "http"]:
        return "http" if self.url else "stdio"

    @property
    def target(self) -> str:
        """The URL, or the command line as a shell would show it."""
        return self.url or shlex.join(self.argv)

    def default_name(self) -> str:
        """A short name for labels: ``python -m mcp_server_time`` -> ``time``; a URL's host:port."""
        if self.url:
            return urlsplit(self.url).netloc
        argv = self.argv
        if "-m" in argv[:-1]:
            base = argv[argv.index("-m") + 1]
        else:
            base = argv[0]
            if _INTERPRETERS.fullmatch(Path(argv[0]).name) or argv[0] == sys.executable:
                rest = [a for a in argv[1:] if not a.startswith("-") and a not in ("run", "x", "tool")]
                base = rest[0] if rest else base
        base = re.sub(r"(?<=.)@[^/@]*$", "", base.rstrip("/")).rsplit("/", 1)[-1]
        base = re.sub(r"\.(py|js|mjs|ts)$", "", base)
        slug = re.sub(r"^(mcp[-_]?server[-_]|server[-_]|mcp[-_])", "", base, flags=re.IGNORECASE)
        slug = re.sub(r"([-_]mcp[-_]?server|[-_]mcp|[-_]server)$", "", slug, flags=re.IGNORECASE)
        return slug or base


def _argv(command: str | Sequence[str]) -> tuple[str, ...]:
    if isinstance(command, str):
        try:
            argv = shlex.split(command)
        except ValueError as exc:
            raise ConfigurationError(f"cannot split the command {command!r}: {exc}") from None
    elif isinstance(command, Sequence) and all(isinstance(a, str) for a in command):
        argv = list(command)
    else:
        raise ConfigurationError(f"command must be a string or a list of strings, got {command!r}")
    if not argv or not argv[0]:
        raise ConfigurationError("the MCP server command is empty; e.g. command='python -m mcp_server_time'")
    if argv[0] in ("python", "python3"):
        # The kernel's own interpreter, where the server package was installed; the PATH of a
        # kernel started from a virtualenv often leads to another Python.
        argv[0] = sys.executable
    return tuple(argv)


@dataclass(frozen=True)
class ServerStatus:
    """What ``servers()`` reports about one MCP server."""

    name: str
    """The name its tools are labelled with (``mcp:<name>``)."""
    transport: Literal["stdio", "http"]
    target: str
    """The command line or URL."""
    state: State
    """stopped (not started yet, or closed), starting, running, or failed."""
    error: str | None
    """Why it failed, on one line."""
    tools: tuple[str, ...]
    """The server's tool names (from its last listing)."""
    server: str | None
    """Name and version the server reports."""
    starts: int
    """How many times it was started (more than 1: restarted after a failure)."""
    calls: int
    """Requests made to it."""
    stderr: str
    """The last lines the server wrote to stderr (stdio servers)."""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class Connection:
    """One shared client session with one MCP server; thread-safe."""

    def __init__(self, spec: ServerSpec, name: str) -> None:
        self.spec = spec
        self.name = name
        self.tools: list[types.Tool] = []
        """The server's tools, listed when it (re)started."""
        self.server_info: types.Implementation | None = None
        self.instructions: str | None = None
        """What the server says about how to use it (from its handshake)."""
        self.starts = 0
        self.calls = 0
        self._state: State = "stopped"
        self._error: str | None = None
        self._lost: str | None = None  # why a live connection ended (set on the loop thread)
        self._closing = False
        self._lock = threading.RLock()
        self._session: ClientSession | None = None
        self._stop: anyio.Event | None = None
        self._done: concurrent.futures.Future[None] | None = None
        self._stderr_path: str | None = None
        self._stderr_tail = ""

    # -- state ------------------------------------------------------------------------------

    @property
    def state(self) -> State:
        return "failed" if self._state == "running" and self._lost else self._state

    @property
    def error(self) -> str | None:
        return self._lost if self._state == "running" and self._lost else self._error

    def status(self) -> ServerStatus:
        info = self.server_info
        return ServerStatus(
            name=self.name,
            transport=self.spec.transport,
            target=self.spec.target,
            state=self.state,
            error=self.error,
            tools=tuple(t.name for t in self.tools),
            server=f"{info.name} {info.version}".strip() if info else None,
            starts=self.starts,
            calls=self.calls,
            stderr=self.stderr_tail(),
        )

    def stderr_tail(self) -> str:
        """The last lines of the server's stderr (live while it runs, kept after it stopped)."""
        path = self._stderr_path
        if path:
            with contextlib.suppress(OSError), open(path, "rb") as f:
                f.seek(max(0, os.path.getsize(path) - 4096))
                lines = [ln for ln in f.read().decode("utf-8", "replace").splitlines() if ln.strip()]
                self._stderr_tail = "\n".join(lines[-_STDERR_LINES:])
        return self._stderr_tail

    def _with_stderr(self, message: str) -> str:
        tail = self.stderr_tail()
        return f"{message}; stderr: {flat(tail)}" if tail else message

    # -- start / stop -----------------------------------------------------------------------

    def ensure(self, connect_timeout: float = DEFAULT_CONNECT_TIMEOUT) -> ClientSession:
        """The live session, (re)starting the server first if it is not running."""
        with self._lock:
            if self._state == "running" and not self._lost and self._session is not None:
                return self._session
            self._shutdown()
            self._state = "starting"
            self._error = None
            self.starts += 1
            _register_atexit()
            ready: concurrent.futures.Future[None] = concurrent.futures.Future()
            self._stderr_path = _new_stderr_file() if self.spec.transport == "stdio" else None
            self._stderr_tail = ""
            self._done = runtime.submit(self._serve(ready, connect_timeout))
            try:
                ready.result(connect_timeout + _GRACE)
            except concurrent.futures.TimeoutError:
                self._error = f"MCP server {self.name!r} ({self.spec.target}) did not start within {connect_timeout:g} s"
            except MCPStartError as exc:
                self._error = str(exc)
            if self._error is not None or self._session is None:
                self._state = "failed"
                self._error = self._error or f"MCP server {self.name!r} stopped while starting"
                self._shutdown(keep_error=True)
                raise MCPStartError(self._error)
            self._state = "running"
            return self._session

    def close(self) -> None:
        """Stop the server (a stdio server's process ends); the next use starts it again."""
        with self._lock:
            self._shutdown()
            self._state = "stopped"
            self._error = None

    def _shutdown(self, keep_error: bool = False) -> None:
        """Wind down the owner task, if any, and forget the session."""
        stop, done = self._stop, self._done
        if self._lost and not keep_error and self._state == "running":
            self._error = self._lost
        if stop is not None and done is not None and not done.done():
            self._closing = True
            with contextlib.suppress(RuntimeError):
                runtime.call_soon(stop.set)
            with contextlib.suppress(Exception):
                done.result(10)
        self._closing = False
        self._stop = self._done = self._session = None
        self._lost = None
        self.stderr_tail()
        if self._stderr_path:
            with contextlib.suppress(OSError):
                os.remove(self._stderr_path)
            self._stderr_path = None

    async def _serve(self, ready: concurrent.futures.Future[None], connect_timeout: float) -> None:
        """Open the transport and session, list the tools, then hold them open until stopped."""
        stop = self._stop = anyio.Event()
        deadline = anyio.CancelScope(deadline=anyio.current_time() + connect_timeout)
        error: BaseException | None = None
        try:
            with deadline:
                async with contextlib.AsyncExitStack() as stack:
                    read, write = await stack.enter_async_context(self._transport(stack))
                    # The session reads through a relay, so that the end of the server's output
                    # (its process exited) is noticed even when no request is waiting.
                    relay_in, relay_out = anyio.create_memory_object_stream[Any](0)
                    relay = anyio.CancelScope()
                    group = await stack.enter_async_context(anyio.create_task_group())
                    stack.callback(relay.cancel)
                    group.start_soon(self._relay, read, relay_in, relay, stop)
                    session = await stack.enter_async_context(ClientSession(relay_out, write))
                    init = await session.initialize()
                    tools = await _list_all(session.list_tools, "tools")
                    deadline.deadline = math.inf
                    self.server_info, self.instructions = init.server_info, init.instructions
                    self.tools, self._session = tools, session
                    ready.set_result(None)
                    await stop.wait()
        except BaseException as exc:  # the loop thread must survive whatever a transport raises
            error = exc
        if not ready.done():
            if deadline.cancelled_caught:
                why = f"did not answer the handshake within {connect_timeout:g} s"
            else:
                why = _start_failure(leaf_error(error) if error else None, self.spec.transport)
            ready.set_exception(MCPStartError(self._with_stderr(f"MCP server {self.name!r} ({self.spec.target}) {why}")))
        elif error is not None and not self._closing and self._lost is None:
            self._lost = describe_error(leaf_error(error))

    def _transport(self, stack: contextlib.AsyncExitStack) -> Any:
        if self.spec.url:
            return streamable_http_client(self.spec.url)
        assert self._stderr_path is not None
        errlog = stack.enter_context(open(self._stderr_path, "a", encoding="utf-8", errors="replace"))
        params = StdioServerParameters(
            command=self.spec.argv[0],
            args=list(self.spec.argv[1:]),
            env=dict(self.spec.env) or None,
            cwd=self.spec.cwd,
        )
        return stdio_client(params, errlog=errlog)

    async def _relay(self, source: Any, sink: Any, scope: anyio.CancelScope, stop: anyio.Event) -> None:
        with scope:
            try:
                async for item in source:
                    await sink.send(item)
            except (anyio.ClosedResourceError, anyio.BrokenResourceError, anyio.EndOfStream):
                pass
            finally:
                sink.close()
            if not self._closing and self._lost is None:
                self._lost = "the server closed the connection (its process exited?)"
            stop.set()

    # -- requests ---------------------------------------------------------------------------

    def request(
        self,
        what: str,
        make: Callable[[ClientSession], Awaitable[T]],
        *,
        timeout: float = DEFAULT_TIMEOUT,
        connect_timeout: float = DEFAULT_CONNECT_TIMEOUT,
    ) -> T:
        """Send one request (``make(session)``), (re)starting the server first if needed.

        ``what`` says what the request is ("the call to tool 'x'"), for the error messages."""

        async def bounded(session: ClientSession) -> T:
            if self._lost:
                raise _Stale  # it died after ensure() looked: start it again and send then
            with anyio.fail_after(timeout):
                return await make(session)

        try:
            try:
                self.calls += 1
                return runtime.run(bounded(self.ensure(connect_timeout)), timeout + _GRACE)
            except _Stale:
                return runtime.run(bounded(self.ensure(connect_timeout)), timeout + _GRACE)
        except TimeoutError:
            raise MCPTimeoutError(
                f"MCP server {self.name!r}: {what} did not answer within {timeout:g} s and was cancelled "
                f"(give a longer timeout= if it needs more time)"
            ) from None
        except MCPError as exc:
            if exc.code == types.REQUEST_TIMEOUT:
                raise MCPTimeoutError(
                    f"MCP server {self.name!r}: {what} did not answer within {timeout:g} s ({flat(exc.message)})"
                ) from None
            if exc.code != types.CONNECTION_CLOSED and not self._lost:
                raise MCPToolError(f"MCP server {self.name!r} refused {what}: {flat(exc.message)}") from None
            raise self._disconnected(what, flat(exc.message)) from None
        except MCPServerError:
            raise
        except Exception as exc:
            if self._lost:
                raise self._disconnected(what, describe_error(leaf_error(exc))) from None
            raise MCPServerError(f"MCP server {self.name!r}: {what} failed: {describe_error(leaf_error(exc))}") from None

    def _disconnected(self, what: str, detail: str) -> MCPDisconnectedError:
        reason = self._lost = self._lost or detail
        if self._stop is not None:
            with contextlib.suppress(RuntimeError):
                runtime.call_soon(self._stop.set)
        again = "reconnected" if self.spec.url else "restarted"
        return MCPDisconnectedError(
            self._with_stderr(f"MCP server {self.name!r} stopped during {what}: {reason}; it is {again} on next use")
        )


class _Stale(Exception):
    """The session ended between the liveness check and the request; nothing was sent."""


def _start_failure(exc: BaseException | None, transport: str) -> str:
    failed = "could not be reached" if transport == "http" else "did not start"
    if isinstance(exc, FileNotFoundError):
        return f"{failed}: command not found ({exc.filename or exc})"
    if isinstance(exc, MCPError) and exc.code == types.CONNECTION_CLOSED:
        return f"{failed}: it closed the connection before answering the handshake"
    return f"{failed}: {describe_error(exc)}" if exc is not None else failed


async def _list_all(method: Callable[..., Awaitable[Any]], field: str) -> list[Any]:
    """Every page of a paginated listing (tools, resources)."""
    items: list[Any] = []
    cursor: str | None = None
    while True:
        page = await method(params=types.PaginatedRequestParams(cursor=cursor) if cursor else None)
        items.extend(getattr(page, field))
        cursor = page.next_cursor
        if not cursor:
            return items


def _new_stderr_file() -> str:
    fd, path = tempfile.mkstemp(prefix="agentnb-mcp-", suffix=".stderr")
    os.close(fd)
    return path


# -- the registry: one connection per server spec per process --------------------------------

_registry: dict[ServerSpec, Connection] = {}
_registry_lock = threading.Lock()
_atexit_registered = False


def connection_for(spec: ServerSpec, name: str | None = None) -> Connection:
    """The process's connection to ``spec`` (made on first request; its name is the first given)."""
    with _registry_lock:
        conn = _registry.get(spec)
        if conn is None:
            conn = _registry[spec] = Connection(spec, name or spec.default_name())
        return conn


def list_all_resources(session: ClientSession) -> Awaitable[list[types.Resource]]:
    return _list_all(session.list_resources, "resources")


def servers() -> list[ServerStatus]:
    """Every MCP server this process has used: state (running / stopped / failed and why) and tools."""
    with _registry_lock:
        conns = list(_registry.values())
    return [c.status() for c in conns]


def close_all() -> None:
    """Stop every MCP server this process started (also done at interpreter exit)."""
    with _registry_lock:
        conns = list(_registry.values())
    for conn in conns:
        conn.close()
    runtime.stop()


def _register_atexit() -> None:
    global _atexit_registered
    if not _atexit_registered:
        atexit.register(close_all)
        _atexit_registered = True


def _forget_after_fork() -> None:
    # The child does not own the parent's server processes or sessions.
    global _registry_lock
    _registry_lock = threading.Lock()
    _registry.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_after_fork)

__all__ = [
    "DEFAULT_CONNECT_TIMEOUT",
    "DEFAULT_TIMEOUT",
    "Connection",
    "ServerSpec",
    "ServerStatus",
    "close_all",
    "connection_for",
    "list_all_resources",
    "servers",
]
