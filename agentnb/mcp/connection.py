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
import tempfile
import threading
from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass
from typing import Any, Literal, TypeVar

import anyio
import mcp_types as types
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from ..errors import MCPDisconnectedError, MCPServerError, MCPStartError, MCPTimeoutError, MCPToolError
from . import runtime
from .content import describe_error, flat, leaf_error
from .spec import ServerSpec

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


@dataclass(eq=False)
class _Run:
    """One start of a server: its session, and why it ended. The loop thread writes here, so a
    late write from an old run never touches the next one."""

    stderr_path: str | None = None
    done: concurrent.futures.Future[None] | None = None
    stop: anyio.Event | None = None
    session: ClientSession | None = None
    lost: str | None = None
    """Why a running session ended (the server exited, the connection dropped)."""
    closing: bool = False
    """Set by close(): the end is wanted, not a failure."""


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
        self._run: _Run | None = None
        self._lock = threading.RLock()
        self._stderr_tail = ""

    # -- state ------------------------------------------------------------------------------

    def _lost(self) -> str | None:
        run = self._run
        return run.lost if run is not None and self._state == "running" else None

    @property
    def state(self) -> State:
        """stopped, starting, running or failed (a running server that died counts as failed)."""
        return "failed" if self._lost() else self._state

    @property
    def error(self) -> str | None:
        """Why it failed, on one line."""
        return self._lost() or self._error

    def status(self) -> ServerStatus:
        """A snapshot for ``servers()`` (never starts the server)."""
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
        run = self._run
        if run is not None and run.stderr_path:
            self._stderr_tail = _read_tail(run.stderr_path, self._stderr_tail)
        return self._stderr_tail

    def _with_stderr(self, message: str) -> str:
        tail = self.stderr_tail()
        return f"{message}; stderr: {flat(tail)}" if tail else message

    # -- start / stop -----------------------------------------------------------------------

    def ensure(self, connect_timeout: float = DEFAULT_CONNECT_TIMEOUT) -> ClientSession:
        """The live session, (re)starting the server first if it is not running."""
        with self._lock:
            run = self._run
            if self._state == "running" and run is not None and run.session is not None and not run.lost:
                return run.session
            self._shutdown()
            self._state, self._error, self._stderr_tail = "starting", None, ""
            self.starts += 1
            _register_atexit()
            run = self._run = _Run(stderr_path=_new_stderr_file() if self.spec.transport == "stdio" else None)
            ready: concurrent.futures.Future[None] = concurrent.futures.Future()
            run.done = runtime.submit(self._serve(run, ready, connect_timeout))
            try:
                ready.result(connect_timeout + _GRACE)
            except concurrent.futures.TimeoutError:
                self._error = (
                    f"MCP server {self.name!r} ({self.spec.target}) "
                    f"did not start within {connect_timeout:g} s"
                )
            except MCPStartError as exc:
                self._error = str(exc)
            if self._error is not None or run.session is None:
                self._error = self._error or f"MCP server {self.name!r} stopped while starting"
                self._shutdown()
                self._state = "failed"
                raise MCPStartError(self._error)
            self._state = "running"
            return run.session

    def close(self) -> None:
        """Stop the server (a stdio server's process ends); the next use starts it again."""
        with self._lock:
            self._shutdown()
            self._state, self._error = "stopped", None

    def _shutdown(self) -> None:
        """Wind down the current run, if any: its session, its process, its stderr file."""
        run, self._run = self._run, None
        if run is None:
            return
        if run.stop is not None and run.done is not None and not run.done.done():
            run.closing = True
            with contextlib.suppress(RuntimeError):
                runtime.call_soon(run.stop.set)
            with contextlib.suppress(Exception):
                run.done.result(10)
        if run.stderr_path:
            self._stderr_tail = _read_tail(run.stderr_path, self._stderr_tail)
            with contextlib.suppress(OSError):
                os.remove(run.stderr_path)

    async def _serve(self, run: _Run, ready: concurrent.futures.Future[None], connect_timeout: float) -> None:
        """Open the transport and session, list the tools, then hold them open until stopped."""
        stop = run.stop = anyio.Event()
        deadline = anyio.CancelScope(deadline=anyio.current_time() + connect_timeout)
        error: BaseException | None = None
        try:
            with deadline:
                async with contextlib.AsyncExitStack() as stack:
                    read, write = await stack.enter_async_context(self._transport(run, stack))
                    # The session reads through a relay, so that the end of the server's output
                    # (its process exited) is noticed even when no request is waiting.
                    relay_in, relay_out = anyio.create_memory_object_stream[Any](0)
                    relay = anyio.CancelScope()
                    group = await stack.enter_async_context(anyio.create_task_group())
                    stack.callback(relay.cancel)
                    group.start_soon(_relay, run, read, relay_in, relay)
                    session = await stack.enter_async_context(ClientSession(relay_out, write))
                    init = await session.initialize()
                    tools = await _list_all(session.list_tools, "tools")
                    deadline.deadline = math.inf
                    self.server_info, self.instructions, self.tools = (
                        init.server_info,
                        init.instructions,
                        tools,
                    )
                    run.session = session
                    ready.set_result(None)
                    await stop.wait()
        except BaseException as exc:  # the loop thread must survive whatever a transport raises
            error = exc
        if not ready.done():
            if deadline.cancelled_caught:
                why = f"did not answer the handshake within {connect_timeout:g} s"
            else:
                why = _start_failure(leaf_error(error) if error else None, self.spec.transport)
            ready.set_exception(
                MCPStartError(self._with_stderr(f"MCP server {self.name!r} ({self.spec.target}) {why}"))
            )
        elif error is not None and not run.closing and run.lost is None:
            run.lost = describe_error(leaf_error(error))

    def _transport(self, run: _Run, stack: contextlib.AsyncExitStack) -> Any:
        if self.spec.url:
            return streamable_http_client(self.spec.url)
        assert run.stderr_path is not None
        # The exit stack closes it when the server stops (ruff does not see enter_context).
        errlog = stack.enter_context(open(run.stderr_path, "a", encoding="utf-8", errors="replace"))  # noqa: SIM115
        params = StdioServerParameters(
            command=self.spec.argv[0],
            args=list(self.spec.argv[1:]),
            env=dict(self.spec.env) or None,
            cwd=self.spec.cwd,
        )
        return stdio_client(params, errlog=errlog)

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
        self.calls += 1
        run = None

        async def bounded(session: ClientSession) -> T:
            if run is not None and run.lost:
                raise _Stale  # it died after ensure() looked: start it again, then send
            with anyio.fail_after(timeout):
                return await make(session)

        try:
            session = self.ensure(connect_timeout)
            run = self._run
            try:
                return runtime.run(bounded(session), timeout + _GRACE)
            except _Stale:
                session = self.ensure(connect_timeout)
                run = self._run
                return runtime.run(bounded(session), timeout + _GRACE)
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
            if exc.code != types.CONNECTION_CLOSED and not (run and run.lost):
                raise MCPToolError(f"MCP server {self.name!r} refused {what}: {flat(exc.message)}") from None
            raise self._disconnected(run, what, flat(exc.message)) from None
        except MCPServerError:
            raise
        except Exception as exc:
            detail = describe_error(leaf_error(exc))
            if run is not None and run.lost:
                raise self._disconnected(run, what, detail) from None
            raise MCPServerError(f"MCP server {self.name!r}: {what} failed: {detail}") from None

    def _disconnected(self, run: _Run | None, what: str, detail: str) -> MCPDisconnectedError:
        """The error for a request the server's end interrupted; the run is wound down."""
        reason = detail
        if run is not None:
            reason = run.lost = run.lost or detail
            if run.stop is not None:
                with contextlib.suppress(RuntimeError):
                    runtime.call_soon(run.stop.set)
        again = "reconnected" if self.spec.url else "restarted"
        return MCPDisconnectedError(
            self._with_stderr(
                f"MCP server {self.name!r} stopped during {what}: {reason}; it is {again} on next use"
            )
        )


async def _relay(run: _Run, source: Any, sink: Any, scope: anyio.CancelScope) -> None:
    """Pass the server's messages on to the session; note when they end."""
    with scope:
        try:
            async for item in source:
                await sink.send(item)
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, anyio.EndOfStream):
            pass
        finally:
            sink.close()
        if not run.closing and run.lost is None:
            run.lost = "the server closed the connection (its process exited?)"
        if run.stop is not None:
            run.stop.set()


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


def _read_tail(path: str, fallback: str) -> str:
    """The last lines of a stderr file (``fallback`` if it cannot be read)."""
    try:
        with open(path, "rb") as f:
            f.seek(max(0, os.path.getsize(path) - 4096))
            lines = [ln for ln in f.read().decode("utf-8", "replace").splitlines() if ln.strip()]
    except OSError:
        return fallback
    return "\n".join(lines[-_STDERR_LINES:])


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
    """Every resource the server lists (all pages)."""
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
    "ServerStatus",
    "close_all",
    "connection_for",
    "list_all_resources",
    "servers",
]
