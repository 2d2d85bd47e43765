"""The event loop MCP client sessions live on: one daemon thread per Python process.

The SDK is async. Sync code (``agent.run``) and a Jupyter kernel (whose own loop is already
running) both reach the sessions the same way: by handing a coroutine to this loop and waiting
for its result.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import os
import threading
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

T = TypeVar("T")

_lock = threading.Lock()
_loop: asyncio.AbstractEventLoop | None = None
_thread: threading.Thread | None = None


def loop() -> asyncio.AbstractEventLoop:
    """The background loop, started on first use."""
    global _loop, _thread
    with _lock:
        if _loop is None or _thread is None or not _thread.is_alive():
            _loop = asyncio.new_event_loop()
            _thread = threading.Thread(target=_loop.run_forever, name="agentnb-mcp", daemon=True)
            _thread.start()
        return _loop


def in_loop_thread() -> bool:
    """Whether the caller runs on the background loop (where waiting for it would deadlock)."""
    return _thread is not None and threading.current_thread() is _thread


def submit(coro: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
    """Schedule ``coro`` on the background loop; the returned future is safe to wait on."""
    if in_loop_thread():
        coro.close()
        raise RuntimeError(
            "an MCP request was made from the MCP event loop itself; call it from another thread"
        )
    return asyncio.run_coroutine_threadsafe(coro, loop())


def run(coro: Coroutine[Any, Any, T], timeout: float | None = None) -> T:
    """Run ``coro`` on the background loop and wait for its result.

    ``timeout`` is a safety net over the coroutine's own deadlines: past it the coroutine is
    cancelled and ``TimeoutError`` raised.
    """
    future = submit(coro)
    try:
        return future.result(timeout)
    except concurrent.futures.TimeoutError:
        future.cancel()
        raise TimeoutError(f"no answer within {timeout:g} s") from None


def call_soon(callback: Callable[[], Any]) -> None:
    """Run ``callback`` on the loop (thread-safe)."""
    loop().call_soon_threadsafe(callback)


def stop() -> None:
    """Stop the loop and its thread (the next use starts a new one)."""
    global _loop, _thread
    with _lock:
        running, thread = _loop, _thread
        _loop = _thread = None
    if running is not None and thread is not None and thread.is_alive():
        running.call_soon_threadsafe(running.stop)
        thread.join(timeout=5)
        if not thread.is_alive():
            running.close()


def _forget_after_fork() -> None:
    # A forked child has the parent's loop object but not its thread (and maybe a held lock).
    global _loop, _thread, _lock
    _lock = threading.Lock()
    _loop = _thread = None


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_after_fork)
