"""The History rows a snapshot carries (the last turns'), encoded once each.

A snapshot goes out at the end of every cell that changed something; its rows are the last
``inspector.SNAPSHOT_TURNS`` turns' summary rows. A finished turn's row does not change, so each
is encoded once and kept for as long as it is among them: from one cell to the next the first
row is dropped and the new ones added, unless the history changed under them (a reset).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from .history_row import turn_summary
from .outbox import encode

if TYPE_CHECKING:
    from ..history.history import TurnRecord


class SummaryRows:
    """The encoded rows of the turns from ``start`` on, as the last snapshot carried them."""

    def __init__(self) -> None:
        self.rows: list[bytes] = []
        """Encoded rows of finished turns, in order."""
        self.ids: list[str] = []
        """The run id of each (a reset gives a turn number to another run)."""
        self.start = 0
        """The turn of the first row."""
        self.last: tuple[str, bytes] = ("", b"")
        """The last turn's row as the last snapshot carried it, with its run id, once it ended
        (the next snapshot's rows take it from here); not while it runs or waits for a person."""

    def snapshot_rows(self, history: Sequence[TurnRecord], first: int) -> bytes:
        """The rows of turns ``first`` to the last, joined: the last turn's encoded afresh (it
        may be running), the others kept from before."""
        count = len(history)
        if not count:
            return b""
        # The rows before the last first: the turn that was last at the snapshot before is among
        # them, its row taken from ``self.last``.
        earlier = self._finished(history, first, count - 1) if count > first + 1 else b""
        last = self._row(history[-1])
        # A paused turn has not ended: it goes on (or a new turn leaves it behind) under the same run id.
        if history[-1].status not in ("running", "paused"):
            self.last = (history[-1].run_id, last)
        return earlier + b"," + last if earlier else last

    def _finished(self, history: Sequence[TurnRecord], first: int, end: int) -> bytes:
        """The rows of turns ``first`` to ``end - 1`` (finished: only a history's last turn runs)."""
        rows, ids, start = self.rows, self.ids, self.start
        if rows and (
            first < start or start + len(rows) > end or history[start + len(rows) - 1].run_id != ids[-1]
        ):
            rows.clear()  # the history was cut (a reset), or rows must be added in front
            ids.clear()
        if not rows:
            start = first
        if first > start:
            del rows[: first - start], ids[: first - start]
            start = first
        for index in range(start + len(rows), end):
            record = history[index]
            rows.append(self._row(record))
            ids.append(record.run_id)
        self.start = start
        return b",".join(rows)

    def _row(self, record: TurnRecord) -> bytes:
        kept = self.last
        return kept[1] if kept[0] == record.run_id else encode(turn_summary(record))


__all__ = ["SummaryRows"]
