"""When the inspector's snapshot trait is refreshed after a cell.

A snapshot is for views created later (another view of the same inspector, a notebook reopened
with its widget state saved): views already open follow the batches. After a cell that changed
something it is refreshed at once if the last refresh is at least ``SNAPSHOT_SECONDS`` old;
otherwise once, ``SNAPSHOT_SECONDS`` after the last, on the kernel's event loop. That loop runs
between the cells of a Run All and when the kernel goes idle (ipykernel), always on the main
thread, so the refresh never runs beside a cell's code (only at a cell's ``await``, if it has
one). A cell run by hand refreshes at once; a Run All of quick cells refreshes a few times a
second and once after its last cell, instead of after every cell. Where no event loop runs (a
terminal IPython, a script) the refresh is done at once; so it is in a kernel whose cells no
notebook front end runs: a refresh made on the loop goes out under the parent header of the cell
that left it (ipykernel keeps the parent in a context variable, which ``call_later`` copies), and
``jupyter nbconvert --execute``, papermill and nbclient keep only the messages of the cell
running, so the inspector does not pace there (``Inspector._after_cell``). JupyterLab and
Notebook 7 route a widget's messages by its comm, whatever their parent.

A cell that runs long (a wait, a long computation) blocks that loop: a refresh still due
``SNAPSHOT_SECONDS`` after its time is then made from a timer thread, once no turn of the agent
is running, so a view opened meanwhile starts from the turns the cells before it ran.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from typing import Protocol

SNAPSHOT_SECONDS = 0.25
"""The least time between two snapshot refreshes made by cells' ends."""


class Handle(Protocol):
    """What ``call_later`` returns (``asyncio.TimerHandle``)."""

    def cancel(self) -> None: ...


Later = Callable[[float, Callable[[], None]], Handle]
"""``call_later(delay, callback)``: runs ``callback`` on the kernel's loop after ``delay`` seconds."""


def running_loop_later() -> Later | None:
    """The running event loop's ``call_later`` in this thread, or None where no loop runs."""
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        return None
    return loop.call_later


class Pace:
    """Calls ``refresh`` at once, or once later when the last call was less than
    ``SNAPSHOT_SECONDS`` ago (see the module's text)."""

    def __init__(
        self,
        refresh: Callable[[], None],
        clock: Callable[[], float],
        later: Callable[[], Later | None] = running_loop_later,
        aside: Callable[[], bool] | None = None,
    ) -> None:
        self._refresh = refresh
        self._clock = clock
        self.later = later
        """Finds the loop's ``call_later`` (replaceable: a benchmark or a test drives time)."""
        self.aside = aside
        """The refresh made from a timer thread when the loop has not run it ``SNAPSHOT_SECONDS``
        after it was due (a long cell blocks the loop); returns False when it cannot be made now
        (a turn is running), and is tried again as long. None: no such fallback."""
        self._last = -float("inf")
        self._pending: Handle | None = None

    @property
    def pending(self) -> bool:
        """A refresh is due on the loop."""
        return self._pending is not None

    def done(self, on_loop: bool = True) -> None:
        """A refresh was made (by this pace or another way, such as a display). Off the loop's
        thread (``on_loop=False``) a refresh still due is left to run: it finds nothing to do."""
        self._last = self._clock()
        if on_loop and self._pending is not None:
            self._pending.cancel()
            self._pending = None

    def cell_ended(self) -> None:
        """A cell that changed something ended: refresh now, or make sure one is due."""
        if self._pending is not None:
            return
        wait = self._last + SNAPSHOT_SECONDS - self._clock()
        later = self.later() if wait > 0 else None
        if later is None:
            self._refresh()
            return
        handle = self._pending = later(wait, self._fire)
        if self.aside is not None:
            self._watch(handle, wait + SNAPSHOT_SECONDS)

    def _watch(self, handle: Handle, delay: float) -> None:
        """Make the refresh ``handle`` stands for from a timer thread if the loop has not run it
        after ``delay`` seconds."""
        timer = threading.Timer(delay, self._late, (handle,))
        timer.daemon = True
        timer.start()

    def _late(self, handle: Handle) -> None:
        if self._pending is not handle or self.aside is None:
            return  # the loop ran it, or it was cancelled
        if not self.aside():
            self._watch(handle, SNAPSHOT_SECONDS)

    def _fire(self) -> None:
        self._pending = None
        self._refresh()

    def cancel(self) -> None:
        """Drop a refresh that is due (the widget closed)."""
        if self._pending is not None:
            self._pending.cancel()
            self._pending = None


__all__ = ["SNAPSHOT_SECONDS", "Pace", "running_loop_later"]
