"""A long history reaches the browser in pages: a snapshot carries the last turns' summary rows
and the count, older rows come when the History tab asks for them (``need_rows``)."""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("anywidget")

from test_inspector import Wire, decode, make_agent  # noqa: E402

from agentnb import Agent  # noqa: E402
from agentnb.history.history import History  # noqa: E402
from agentnb.ipython import inspector as inspector_module  # noqa: E402
from agentnb.ipython import wire  # noqa: E402
from agentnb.ipython.inspector import Inspector  # noqa: E402

SHOWN = 5
PAGE = 4


@pytest.fixture(autouse=True)
def small_pages(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(inspector_module, "SNAPSHOT_TURNS", SHOWN)
    monkeypatch.setattr(inspector_module, "ROWS_PAGE", PAGE)


def chatty(turns: int) -> Agent:
    """An agent that has answered ``turns`` messages of the same length."""
    agent = make_agent(lambda request: "ok", tools=[])
    for n in range(turns):
        agent.run(f"message {n:03d}")
    return agent


class Watched(History):
    """A history that records which turns were read and refuses to be walked whole."""

    def __init__(self, turns: History) -> None:
        super().__init__(list(turns))
        self.read: set[int] = set()

    def __getitem__(self, index: Any) -> Any:
        self.read.update(range(len(self))[index] if isinstance(index, slice) else [index % len(self)])
        return super().__getitem__(index)

    def __iter__(self) -> Any:
        raise AssertionError("the whole history was walked")


def test_the_snapshot_carries_the_last_rows_and_the_count_and_stays_the_same_size(monkeypatch) -> None:
    agent = chatty(SHOWN + 2)
    inspector = Inspector.for_agent(agent)
    sent = Wire(inspector, monkeypatch)
    early = inspector.snapshot()
    for n in range(SHOWN + 2, 60):
        agent.run(f"message {n:03d}")
    late = inspector.snapshot()
    snap = decode(late)
    assert snap[wire.TURNS_FROM] == 60 - SHOWN
    assert [s["turn"] for s in snap[wire.SUMMARIES]] == list(range(60 - SHOWN, 60))
    assert [s["message"] for s in snap[wire.SUMMARIES]][-1] == "message 059"
    assert snap[wire.TURN_INDEX] == 59
    # 53 turns later the snapshot has the same rows' worth of bytes (only numbers grew a digit).
    assert abs(len(late) - len(early)) <= 2 * SHOWN + 8
    # The sync reply is the same snapshot; building it reads the last turns only.
    agent.history = watched = Watched(agent.history)
    assert sent.ask(**{wire.KIND: wire.SYNC}) == snap
    assert watched.read and min(watched.read) >= 60 - SHOWN


def test_older_rows_arrive_on_request_a_page_at_a_time(monkeypatch) -> None:
    agent = chatty(11)
    inspector = Inspector.for_agent(agent)
    sent = Wire(inspector, monkeypatch)
    first = sent.ask(**{wire.KIND: wire.SYNC})[wire.TURNS_FROM]
    assert first == 11 - SHOWN
    agent.history = watched = Watched(agent.history)
    rows = sent.ask(**{wire.KIND: wire.NEED_ROWS, wire.BEFORE: first})
    assert rows[wire.KIND] == wire.ROWS
    assert rows[wire.TURNS_FROM] == first - PAGE
    assert [(s["turn"], s["message"], s["status"]) for s in rows[wire.SUMMARIES]] == [
        (n, f"message {n:03d}", "ok") for n in range(first - PAGE, first)
    ]
    assert watched.read == set(range(first - PAGE, first)), "only the page asked for is read"
    rest = sent.ask(**{wire.KIND: wire.NEED_ROWS, wire.BEFORE: first - PAGE})
    assert rest[wire.TURNS_FROM] == 0 and [s["turn"] for s in rest[wire.SUMMARIES]] == [0, 1]
    for bad in (0, 12, "3", None):
        reply = sent.ask(**{wire.KIND: wire.NEED_ROWS, wire.BEFORE: bad})
        assert reply[wire.KIND] == wire.ERROR and "need_rows takes before" in reply[wire.TEXT]


def test_the_trait_after_each_cell_stays_the_same_size(monkeypatch) -> None:
    agent = chatty(1)
    inspector = Inspector.for_agent(agent)
    Wire(inspector, monkeypatch)
    sizes = []
    for n in range(40):
        agent.run(f"message {n:03d}")
        inspector._after_cell()  # what IPython's post_run_cell does after each cell
        sizes.append(len(inspector.view_snapshot))
    assert decode(inspector.view_snapshot)[wire.TURNS_FROM] == 41 - SHOWN
    assert max(sizes[SHOWN:]) - min(sizes[SHOWN:]) <= 2 * SHOWN + 8
