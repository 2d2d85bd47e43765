"""A child process that runs functions for this one: the background fold's CPU work.

A thread alone does not take a fold off the turn's path: parsing and encoding a large snapshot
holds the interpreter, and every turn saved meanwhile waits for it. ``Worker.call`` runs a
picklable function in a child process instead (started on the first call, about 0.4 s, off
the turn's path; it exits after ``IDLE_SECONDS`` without work, and when this process ends) and
returns its result, re-raising its exception and re-issuing its warnings here. Only the
arguments and the result cross the pipe, as bytes: this process spends a few milliseconds of
copying on a fold, not its parsing.

The child is a plain ``python -c`` that imports this module from the same agentnb, never a
``multiprocessing`` start (which would import the user's script again in the child), in its
own process group so that interrupting the kernel does not reach it. When it cannot start or
dies, ``call`` raises ``WorkerUnavailable`` and the caller does the work itself.
"""

from __future__ import annotations

import atexit
import os
import pickle
import select
import signal
import subprocess
import sys
import threading
import warnings
from collections.abc import Callable
from contextlib import suppress
from pathlib import Path
from typing import IO, Any, TypeVar

T = TypeVar("T")

IDLE_SECONDS = 60.0
"""A child with no work for this long exits (another starts when work comes)."""

START_SECONDS = 60.0
"""A child that has not said it is ready this long after it started is given up on."""

_HEADER = 8
_HELLO = b"agentnb\n"


class WorkerUnavailable(RuntimeError):
    """The call cannot go to the child process (it does not pickle), the child could not be
    started, or it died before it answered: the caller does the work itself."""


class Worker:
    """One child process, started when first needed; calls are run one at a time."""

    def __init__(self, idle_seconds: float = IDLE_SECONDS) -> None:
        self.idle_seconds = idle_seconds
        self.started = 0
        """Child processes started so far."""
        self.broken: str | None = None
        """Why no child can be used in this process (then every call raises at once)."""
        self._lock = threading.Lock()
        self._proc: subprocess.Popen[bytes] | None = None
        self._pid = os.getpid()

    def call(self, fn: Callable[..., T], *args: Any) -> T:
        """``fn(*args)`` run in the child (both picklable); its exception is raised here."""
        try:
            payload = pickle.dumps((fn, args), protocol=pickle.HIGHEST_PROTOCOL)
        except Exception as exc:  # e.g. a closure: it cannot go to another process
            raise WorkerUnavailable(f"cannot send {fn!r} to another process ({exc})") from None
        with self._lock:
            reply = self._exchange(payload)
        try:
            ok, value, caught = pickle.loads(reply)
        except Exception as exc:  # e.g. an exception class that does not unpickle
            raise WorkerUnavailable(f"the child process's answer did not unpickle ({exc})") from None
        for message, category in caught:
            warnings.warn(message, category, stacklevel=2)
        if not ok:
            raise value
        return value

    def pid(self) -> int | None:
        """The running child's process id, or None."""
        proc = self._proc
        return proc.pid if proc is not None and proc.poll() is None and self._pid == os.getpid() else None

    def close(self) -> None:
        """Let the child go (it exits when its input closes)."""
        with self._lock:
            self._drop(wait=True)

    def _exchange(self, payload: bytes) -> bytes:
        # A child that exited meanwhile (idle, killed) is replaced once: the work is pure, so
        # sending it again is safe.
        for attempt in range(2):
            proc = self._running()
            assert proc.stdin is not None and proc.stdout is not None  # started with both as pipes
            try:
                _write_frame(proc.stdin, payload)
                return _read_frame(proc.stdout)
            except (OSError, EOFError) as exc:
                self._drop(wait=False)
                if attempt:
                    raise WorkerUnavailable(
                        f"the child process stopped before it answered ({exc or 'no answer'})"
                    ) from None
        raise AssertionError("unreachable")

    def _running(self) -> subprocess.Popen[bytes]:
        if self._pid != os.getpid():  # a forked copy of this process: the child is the parent's
            self._proc, self._pid = None, os.getpid()
        if self._proc is not None and self._proc.poll() is None:
            return self._proc
        self._drop(wait=False)
        if self.broken is not None:
            raise WorkerUnavailable(self.broken)
        proc = self._start()
        # A child that does not say it is ready (an interpreter that is not Python, an agentnb
        # that does not import there) is not tried again: the caller does the work itself.
        assert proc.stdout is not None  # started with stdout=PIPE
        try:
            ready = (
                _wait_readable(proc.stdout, START_SECONDS) and _read_exact(proc.stdout, len(_HELLO)) == _HELLO
            )
        except (OSError, EOFError):
            ready = False
        if not ready:
            self._proc = proc
            self._drop(wait=False)
            self.broken = (
                f"{sys.executable!r} -c did not start agentnb's worker (exit status {proc.returncode})"
            )
            raise WorkerUnavailable(self.broken)
        self._proc = proc
        self.started += 1
        return proc

    def _start(self) -> subprocess.Popen[bytes]:
        root = str(Path(__file__).resolve().parents[2])  # the folder that holds this agentnb
        code = f"import sys; sys.path[0] = {root!r}; from agentnb.sessions.worker import serve; serve()"
        try:
            return subprocess.Popen(
                [sys.executable, "-c", code, repr(self.idle_seconds)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                bufsize=0,
                start_new_session=os.name == "posix",
            )
        except (OSError, ValueError) as exc:
            self.broken = f"could not start {sys.executable!r} ({exc})"
            raise WorkerUnavailable(self.broken) from None

    def _drop(self, wait: bool) -> None:
        proc, self._proc = self._proc, None
        if proc is None:
            return
        for pipe in (proc.stdin, proc.stdout):
            if pipe is not None:
                with suppress(OSError):
                    pipe.close()
        try:
            proc.wait(timeout=2 if wait else 0)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _wait_readable(source: IO[bytes], seconds: float) -> bool:
    """Whether ``source`` has something to read (or its end) within ``seconds`` (always true
    where pipes cannot be waited on)."""
    return os.name != "posix" or bool(select.select([source], [], [], seconds)[0])


def _write_frame(out: IO[bytes], data: bytes) -> None:
    view = memoryview(len(data).to_bytes(_HEADER, "big") + data)
    while view:
        written = out.write(view)
        if not written:
            raise EOFError("the pipe is closed")
        view = view[written:]


def _read_frame(source: IO[bytes]) -> bytes:
    size = int.from_bytes(_read_exact(source, _HEADER), "big")
    return _read_exact(source, size)


def _read_exact(source: IO[bytes], size: int) -> bytes:
    chunks, left = [], size
    while left:
        chunk = source.read(min(left, 1 << 20))
        if not chunk:
            raise EOFError()
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def serve() -> None:
    """The child's loop: read a call, run it, write its result; exit when idle or orphaned."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent decides; an interrupt is its own
    idle = float(sys.argv[1]) if len(sys.argv) > 1 else IDLE_SECONDS
    source = os.fdopen(sys.stdin.fileno(), "rb", buffering=0, closefd=False)
    out = os.fdopen(sys.stdout.fileno(), "wb", buffering=0, closefd=False)
    sys.stdout = sys.stderr  # anything printed goes to stderr, never into the answers
    out.write(_HELLO)
    while True:
        if not _wait_readable(source, idle):
            return
        try:
            fn, args = pickle.loads(_read_frame(source))
        except EOFError:
            return
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                result: tuple[bool, Any] = (True, fn(*args))
            except Exception as exc:
                result = (False, exc)
        notes = [(str(w.message), w.category) for w in caught]
        try:
            data = pickle.dumps((*result, notes), protocol=pickle.HIGHEST_PROTOCOL)
        except Exception as exc:  # an exception (or result) that does not pickle: its text does
            data = pickle.dumps((False, RuntimeError(f"{result[1]!r} ({exc})"), notes))
        try:
            _write_frame(out, data)
        except (OSError, EOFError):  # the parent is gone
            return


_WORKER = Worker()
atexit.register(_WORKER.close)


def worker() -> Worker:
    """This process's worker."""
    return _WORKER
