"""When a cell's end refreshes the inspector's snapshot trait (``pacing.py``): at once, or in
back-to-back cells at most every ``SNAPSHOT_SECONDS`` on the kernel's event loop, and once after
the last cell. ``Pace`` is driven by a test clock and a recorded ``call_later``; the inspector by a
real asyncio loop whose time is the test's clock (nothing waits for time to pass); then a real
kernel and a real ``jupyter nbconvert --execute``."""

from __future__ import annotations

import asyncio
import base64
import shutil
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

pytest.importorskip("anywidget")

from test_inspector import Clock, Wire, decode  # noqa: E402
from test_inspector_static import nbconvert_execute  # noqa: E402
from test_inspector_throttle import normalized, replay, shop  # noqa: E402

from agentnb import Agent  # noqa: E402
from agentnb.ipython import wire  # noqa: E402
from agentnb.ipython.inspector import SNAPSHOT_TURNS, Inspector  # noqa: E402
from agentnb.ipython.pacing import SNAPSHOT_SECONDS, Pace, running_loop_later  # noqa: E402

# -- Pace on its own ------------------------------------------------------------------------


class Now:
    """A clock that moves only when the test sets it."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


class Timer:
    """What the fake loop's ``call_later`` returns."""

    def __init__(self, at: float, callback: Callable[[], None]) -> None:
        self.at = at
        self.callback = callback
        self.cancelled = False

    def cancel(self) -> None:
        self.cancelled = True


class FakeLoop:
    """Records each ``call_later``; runs the callbacks due only in ``run_due``."""

    def __init__(self, clock: Now) -> None:
        self.clock = clock
        self.calls: list[tuple[float, Timer]] = []

    def call_later(self, delay: float, callback: Callable[[], None]) -> Timer:
        timer = Timer(self.clock.now + delay, callback)
        self.calls.append((delay, timer))
        return timer

    def run_due(self) -> None:
        for _, timer in self.calls:
            if not timer.cancelled and timer.at <= self.clock.now:
                timer.cancelled = True  # a TimerHandle runs once
                timer.callback()


def paced(loop_running: bool = True) -> tuple[Pace, Now, FakeLoop, list[float]]:
    """A ``Pace`` whose refresh records the time and reports itself done, as the inspector's does."""
    clock = Now()
    loop = FakeLoop(clock)
    refreshed: list[float] = []

    def refresh() -> None:
        refreshed.append(clock.now)
        pace.done()

    pace = Pace(refresh, clock, lambda: loop.call_later if loop_running else None)
    return pace, clock, loop, refreshed


def test_the_first_cell_and_a_cell_after_the_window_refresh_at_once() -> None:
    pace, clock, loop, refreshed = paced()
    pace.cell_ended()
    assert refreshed == [0.0] and loop.calls == [] and not pace.pending
    clock.now = SNAPSHOT_SECONDS  # exactly the window after the last refresh
    pace.cell_ended()
    clock.now = 1.0
    pace.cell_ended()
    assert refreshed == [0.0, SNAPSHOT_SECONDS, 1.0] and loop.calls == []


def test_a_cell_within_the_window_schedules_one_refresh_for_the_windows_end() -> None:
    pace, clock, loop, refreshed = paced()
    pace.cell_ended()
    clock.now = 0.1
    pace.cell_ended()
    assert refreshed == [0.0] and pace.pending
    assert len(loop.calls) == 1 and loop.calls[0][0] == pytest.approx(SNAPSHOT_SECONDS - 0.1)
    for now in (0.15, 0.2, 0.24):  # more cells while it is due: nothing more scheduled
        clock.now = now
        pace.cell_ended()
    assert len(loop.calls) == 1 and refreshed == [0.0]
    loop.run_due()
    assert refreshed == [0.0]  # not yet due
    clock.now = SNAPSHOT_SECONDS
    loop.run_due()
    assert refreshed == [0.0, SNAPSHOT_SECONDS] and not pace.pending
    clock.now = 0.3  # the next window counts from the refresh the loop made
    pace.cell_ended()
    assert (
        len(loop.calls) == 2
        and loop.calls[1][0] == pytest.approx(0.2)
        and refreshed == [0.0, SNAPSHOT_SECONDS]
    )


def test_a_refresh_made_another_way_cancels_the_one_due_and_starts_the_window_again() -> None:
    pace, clock, loop, refreshed = paced()
    pace.cell_ended()
    clock.now = 0.1
    pace.cell_ended()
    timer = loop.calls[0][1]
    clock.now = 0.2
    pace.done()  # a display refreshed the trait
    assert timer.cancelled and not pace.pending
    clock.now = 1.0
    loop.run_due()
    assert refreshed == [0.0]
    clock.now = 1.1
    pace.done()
    clock.now = 1.2
    pace.cell_ended()  # 0.1 s after the display
    assert len(loop.calls) == 2 and loop.calls[1][0] == pytest.approx(0.15) and refreshed == [0.0]


def test_cancel_drops_the_refresh_due() -> None:
    pace, clock, loop, refreshed = paced()
    pace.cell_ended()
    clock.now = 0.1
    pace.cell_ended()
    pace.cancel()
    assert loop.calls[0][1].cancelled and not pace.pending
    pace.cancel()  # twice: nothing to drop
    clock.now = 1.0
    loop.run_due()
    assert refreshed == [0.0]


def test_without_a_running_loop_every_cell_refreshes_at_once() -> None:
    pace, clock, loop, refreshed = paced(loop_running=False)
    for now in (0.0, 0.01, 0.02):
        clock.now = now
        pace.cell_ended()
    assert refreshed == [0.0, 0.01, 0.02] and loop.calls == [] and not pace.pending


def test_the_loops_call_later_is_found_only_where_a_loop_runs() -> None:
    assert running_loop_later() is None

    async def inside() -> Any:
        return running_loop_later(), asyncio.get_running_loop()

    later, loop = asyncio.run(inside())
    assert later == loop.call_later


def test_a_refresh_the_blocked_loop_owes_is_made_from_a_thread_once_no_turn_runs(monkeypatch) -> None:
    """A long cell blocks the loop: the refresh due is made from a timer thread instead, tried
    again while it cannot be made (a turn runs), and never once the loop has run it."""
    import threading

    from agentnb.ipython import pacing

    monkeypatch.setattr(pacing, "SNAPSHOT_SECONDS", 0.01)
    clock = Now()
    loop = FakeLoop(clock)  # never runs its callbacks: blocked
    refreshed: list[str] = []
    answers = [False, False, True]  # a turn runs for the first two tries
    made = threading.Event()

    def aside() -> bool:
        ok = answers.pop(0)
        if ok:
            refreshed.append("aside")
            made.set()
        return ok

    pace = Pace(lambda: refreshed.append("loop"), clock, lambda: loop.call_later, aside=aside)
    pace.done()
    pace.cell_ended()  # within the window: left to the loop
    assert pace.pending and refreshed == []
    assert made.wait(timeout=30)  # a hang guard, not a timing
    assert refreshed == ["aside"] and answers == []
    # The loop runs it later (the long cell ended): the inspector's refresh finds nothing stale.
    clock.now = 1.0
    loop.run_due()
    assert not pace.pending

    # Once the loop has run the refresh, the thread does nothing.
    calls: list[str] = []
    pace2 = Pace(lambda: None, clock, lambda: loop.call_later, aside=lambda: calls.append("aside") or True)
    pace2.done()
    pace2.cell_ended()
    clock.now = 2.0
    loop.run_due()
    finished = threading.Event()
    threading.Timer(0.1, finished.set).start()
    assert finished.wait(timeout=30)
    assert calls == []


def test_an_inspector_refreshes_from_the_thread_only_while_no_turn_runs(monkeypatch) -> None:
    agent = shop(2)
    inspector = Inspector.for_agent(agent)
    try:
        agent.run("add item 0")
        assert inspector._stale
        agent._lock.acquire()  # a turn running on another thread
        try:
            assert inspector._refresh_aside() is False and inspector._stale
        finally:
            agent._lock.release()
        assert inspector._refresh_aside() is True and not inspector._stale
        snapshot = decode(inspector.view_snapshot)
        assert snapshot[wire.TURN_INDEX] == 0 and snapshot[wire.SEQ] == inspector.seq
    finally:
        inspector.close()


# -- an inspector on a real event loop ------------------------------------------------------


class ClockLoop(asyncio.SelectorEventLoop):
    """A real asyncio loop whose time is the test's clock: a ``call_later`` comes due when the
    test advances the clock, and runs when the loop runs next (between cells)."""

    def __init__(self, clock: Clock) -> None:
        super().__init__()
        self.test_clock = clock

    def time(self) -> float:
        return self.test_clock.now


@pytest.fixture
def loop() -> Iterator[ClockLoop]:
    loop = ClockLoop(Clock())
    try:
        yield loop
    finally:
        loop.close()


CELL_SECONDS = 0.03
"""Test time between the starts of two cells of a Run All."""


async def cell(agent: Agent, inspector: Inspector, message: str) -> None:
    """A cell as ipykernel runs it: the loop runs what came due before it, then the cell's code,
    then IPython's post_run_cell (the inspector's hook), on the loop."""
    await asyncio.sleep(0)
    agent.run(message)
    inspector._after_cell()


def run_all(loop: ClockLoop, agent: Agent, inspector: Inspector, cells: int) -> None:
    for n in range(cells):
        loop.run_until_complete(cell(agent, inspector, f"add item {n}"))
        loop.test_clock.advance(CELL_SECONDS)


def idle(loop: ClockLoop, seconds: float = SNAPSHOT_SECONDS) -> None:
    """The kernel idle for ``seconds``: its loop runs what comes due."""

    async def wait() -> None:
        loop.test_clock.advance(seconds)
        for _ in range(3):
            await asyncio.sleep(0)

    loop.run_until_complete(wait())


def traits(inspector: Inspector, clock: Clock) -> list[tuple[float, dict[str, Any]]]:
    """Each value the trait is set to from now on, with the test time it was set."""
    seen: list[tuple[float, dict[str, Any]]] = []
    inspector.observe(lambda change: seen.append((clock.now, decode(change["new"]))), names="view_snapshot")
    return seen


def watched(
    turns: int, monkeypatch: pytest.MonkeyPatch, loop: ClockLoop
) -> tuple[Agent, Inspector, list[tuple[float, dict[str, Any]]]]:
    """A shop agent of ``turns`` turns, its inspector sending on the test clock, and the trait
    values it sets (``traits``)."""
    agent = shop(turns)
    inspector = Inspector.for_agent(agent)
    Wire(inspector, monkeypatch, loop.test_clock)
    # The refresh a blocked loop owes is made from a timer thread on real time (tested above):
    # this loop is never blocked, and only the test's clock decides when a refresh is due, so
    # a slow machine does not have that thread refresh between two cells.
    monkeypatch.setattr(inspector._pace, "aside", None)
    return agent, inspector, traits(inspector, loop.test_clock)


def test_a_run_all_sets_the_trait_at_most_every_window_and_once_after_its_last_cell(
    monkeypatch, loop
) -> None:
    cells = 40
    agent, inspector, seen = watched(cells, monkeypatch, loop)
    run_all(loop, agent, inspector, cells)
    # Cell 0 at once; then each time the loop ran a refresh due (before cells 9, 18, 27, 36: the
    # first start 0.25 s after the last refresh), covering the turns of the cells before it.
    assert [s[wire.TURN_INDEX] for _, s in seen] == [0, 8, 17, 26, 35]
    times = [t for t, _ in seen]
    assert all(b - a >= SNAPSHOT_SECONDS for a, b in zip(times, times[1:]))
    assert inspector._pace.pending  # cell 36's end: due after the window
    idle(loop)
    assert len(seen) == 6 and not inspector._pace.pending
    last = seen[-1][1]
    assert last == decode(inspector.snapshot())  # the agent as it is now
    assert last[wire.TURN_INDEX] == cells - 1 and last[wire.SEQ] == inspector.seq
    assert last[wire.SUMMARIES][-1]["content"] == f"Added item {cells - 1}."
    assert last[wire.STATE]["items"][-1] == f"item {cells - 1}"
    idle(loop, 1.0)
    assert len(seen) == 6  # nothing more to refresh


def test_a_cell_run_by_hand_after_a_run_all_refreshes_at_once(monkeypatch, loop) -> None:
    agent, inspector, seen = watched(4, monkeypatch, loop)
    run_all(loop, agent, inspector, 3)
    idle(loop)
    assert [s[wire.TURN_INDEX] for _, s in seen] == [0, 2]
    loop.test_clock.advance(5.0)  # the user reads, then runs one more cell
    loop.run_until_complete(cell(agent, inspector, "add item 3"))
    assert [s[wire.TURN_INDEX] for _, s in seen] == [0, 2, 3] and not inspector._pace.pending


@pytest.mark.skipif(shutil.which("node") is None, reason="needs Node.js (the front end's store)")
def test_a_view_open_through_a_paced_run_all_ends_as_one_fed_every_batch(monkeypatch, loop) -> None:
    """The refreshes the loop makes stand for the batches held back then (their runs have ended):
    a view open throughout takes them, and ends with the same turns as a view fed every batch."""
    cells = 24
    reference = shop(cells)
    inspector_now = Inspector.for_agent(reference)
    sent_now = Wire(inspector_now, monkeypatch, Clock(step=1.0))  # every run's end at once
    start_now = inspector_now.snapshot()
    for n in range(cells):
        reference.run(f"add item {n}")

    agent = shop(cells)
    inspector = Inspector.for_agent(agent)
    sent = Wire(inspector, monkeypatch, loop.test_clock)
    start = inspector.snapshot()
    inspector.observe(
        lambda change: sent.messages.append({wire.KIND: "trait", "trait": decode(change["new"])}),
        names="view_snapshot",
    )
    run_all(loop, agent, inspector, cells)
    idle(loop)

    trait_seqs = [m["trait"][wire.SEQ] for m in sent.messages if m[wire.KIND] == "trait"]
    assert 1 < len(trait_seqs) < cells // 3
    assert trait_seqs[-1] == inspector.seq
    # The refreshes that stood for a held-back batch: numbered past every batch sent before them.
    standing = []
    for i, message in enumerate(sent.messages):
        if message[wire.KIND] == "trait":
            before = [b[wire.LAST] for b in sent.messages[:i] if b[wire.KIND] == wire.BATCH]
            if message["trait"][wire.SEQ] > max(before, default=0):
                standing.append(message["trait"][wire.SEQ])
    assert standing  # the open view needs them: those batches were never sent
    # The view adopts the snapshot it opened with and each of those; no gap in the numbers.
    batched = replay(start_now, sent_now, inspector_now, cells)
    paced_view = replay(start, sent, inspector, cells)
    assert paced_view["applied"]["snapshots"] == 1 + len(standing) and paced_view["applied"]["gaps"] == 0
    assert paced_view["seq"] == inspector.seq
    assert normalized(paced_view["turns"]) == normalized(batched["turns"])
    assert [t["state"]["items"][-1] for t in paced_view["turns"]] == [f"item {n}" for n in range(cells)]


def test_a_closed_inspectors_refresh_due_never_runs(monkeypatch, loop) -> None:
    agent, inspector, seen = watched(3, monkeypatch, loop)
    run_all(loop, agent, inspector, 2)
    assert len(seen) == 1 and inspector._pace.pending
    timers = list(loop._scheduled)  # the loop's own timer for the refresh
    inspector.close()
    assert not inspector._pace.pending and all(t.cancelled() for t in timers)
    idle(loop, 1.0)
    assert len(seen) == 1


def test_a_display_between_cells_refreshes_and_drops_the_refresh_due(monkeypatch, loop) -> None:
    agent, inspector, seen = watched(3, monkeypatch, loop)
    run_all(loop, agent, inspector, 2)
    assert inspector._pace.pending
    inspector._repr_mimebundle_()  # the inspector displayed again (%agentnb show)
    assert [s[wire.TURN_INDEX] for _, s in seen] == [0, 1] and not inspector._pace.pending
    idle(loop, 1.0)
    assert len(seen) == 2


def kernel_shell(cell_id: bool) -> SimpleNamespace:
    """A kernel's shell as the inspector's outputs see it, the request sent with or without the
    cell's id (JupyterLab and Notebook 7 send it; nbclient does not)."""
    metadata = {"cellId": "a-cell"} if cell_id else {}
    return SimpleNamespace(kernel=object(), parent_header={"metadata": metadata})


def test_a_kernel_no_notebook_front_end_drives_refreshes_after_every_cell(monkeypatch, loop) -> None:
    """nbconvert, papermill and nbclient keep only the messages of the cell running (the widget
    state they save among them): there each cell's end refreshes the trait at once."""
    agent, inspector, seen = watched(6, monkeypatch, loop)
    inspector._outputs.shell = kernel_shell(cell_id=False)
    run_all(loop, agent, inspector, 3)
    assert [s[wire.TURN_INDEX] for _, s in seen] == [0, 1, 2] and not inspector._pace.pending
    inspector._on_msg(inspector, {wire.KIND: wire.VIEWING}, [])  # a view rendered: a front end
    run_all(loop, agent, inspector, 2)
    assert [s[wire.TURN_INDEX] for _, s in seen] == [0, 1, 2] and inspector._pace.pending
    idle(loop)
    assert [s[wire.TURN_INDEX] for _, s in seen] == [0, 1, 2, 4]


def test_a_kernel_a_notebook_front_end_drives_paces_the_refreshes(monkeypatch, loop) -> None:
    agent, inspector, seen = watched(3, monkeypatch, loop)
    inspector._outputs.shell = kernel_shell(cell_id=True)
    run_all(loop, agent, inspector, 3)
    assert [s[wire.TURN_INDEX] for _, s in seen] == [0] and inspector._pace.pending
    idle(loop)
    assert [s[wire.TURN_INDEX] for _, s in seen] == [0, 2]


# -- a real kernel ----------------------------------------------------------------------------

CELLS = 30
KERNEL_WINDOW = 1.0
"""The kernel's ``SNAPSHOT_SECONDS`` in the Run All below: a window thirty quick cells fit in many
times over, so that fewer refreshes than cells is what pacing gives on a busy machine too."""


def _request(client: Any, code: str) -> str:
    """Send ``code`` as JupyterLab does (with the cell's id); the request's id."""
    metadata = {"cellId": str(uuid.uuid4())}
    content = {
        "code": code,
        "silent": False,
        "store_history": True,
        "user_expressions": {},
        "allow_stdin": False,
        "stop_on_error": True,
    }
    msg = client.session.msg("execute_request", content, metadata=metadata)
    client.shell_channel.send(msg)
    return str(msg["header"]["msg_id"])


def _until_idle(client: Any, msg_id: str) -> list[dict[str, Any]]:
    """Every IOPub message (whatever request it names) until request ``msg_id`` is done."""
    seen = []
    while True:
        msg = client.get_iopub_msg(timeout=60)  # a hang guard
        seen.append(msg)
        if (
            msg["parent_header"].get("msg_id") == msg_id
            and msg["msg_type"] == "status"
            and msg["content"]["execution_state"] == "idle"
        ):
            return seen


def _snapshots(messages: list[dict[str, Any]]) -> list[tuple[float, dict[str, Any]]]:
    """The trait updates among ``messages``: when the kernel sent each (its header's date, in
    seconds) and the snapshot it carries (ipywidgets sends bytes as a buffer)."""
    out = []
    for msg in messages:
        data = msg["content"].get("data", {}) if msg["msg_type"] == "comm_msg" else {}
        if data.get("method") == "update" and [wire.TRAIT_SNAPSHOT] in data.get("buffer_paths", []):
            body = msg["buffers"][data["buffer_paths"].index([wire.TRAIT_SNAPSHOT])]
            out.append((msg["header"]["date"].timestamp(), decode(bytes(body))))
    return out


def _batches_last(messages: list[dict[str, Any]]) -> int:
    """The number of the last event item the batches among ``messages`` sent."""
    lasts = [0]
    for msg in messages:
        data = msg["content"].get("data", {}) if msg["msg_type"] == "comm_msg" else {}
        if data.get("method") == "custom" and data["content"].get(wire.KIND) == wire.BATCH:
            lasts.append(data["content"][wire.LAST])
    return max(lasts)


def test_a_run_all_in_a_kernel_updates_the_trait_a_few_times_and_leaves_it_at_the_last_turn() -> None:
    from jupyter_client.manager import start_new_kernel

    manager, client = start_new_kernel(kernel_name="python3")
    try:
        _request(client, "%load_ext agentnb")
        _request(
            client,
            f"from agentnb import ScriptedModel\nmodel = ScriptedModel([f'answer {{n}}' for n in range({CELLS})])\n"
            f"from agentnb.ipython import pacing\npacing.SNAPSHOT_SECONDS = {KERNEL_WINDOW}",
        )
        shown = _snapshots(
            _until_idle(client, _request(client, "%%agent bot --model model --no-session\nBe brief."))
        )
        assert [s.get(wire.TURN_INDEX) for _, s in shown] == [None]  # displayed: no turn yet
        queued = [
            _request(client, f"%%chat bot\nhello {n}") for n in range(CELLS)
        ]  # Run All: every cell sent at once
        during = _until_idle(client, queued[-1])
        assert len([m for m in during if m["msg_type"] == "execute_input"]) == CELLS
        # The kernel goes idle: its loop makes the refresh still due (the last turn's), before
        # any other cell runs.
        while not any(s.get(wire.TURN_INDEX) == CELLS - 1 for _, s in _snapshots(during)):
            during.append(client.get_iopub_msg(timeout=60))  # a hang guard
        after = _until_idle(client, _request(client, "1 + 1"))
        assert _snapshots(after) == []  # nothing changed in that cell: the last update came at idle
        updates = _snapshots(during)
        assert len(updates) < CELLS // 3  # not one per cell
        # At most one refresh per window (the display's included), as the kernel timed them; the
        # slack is for the time between a refresh and its message's date.
        times = [t for t, _ in shown + updates]
        assert min(b - a for a, b in zip(times, times[1:])) >= KERNEL_WINDOW - 0.05
        last = updates[-1][1]
        assert last[wire.TURN_INDEX] == CELLS - 1
        assert last[wire.SUMMARIES][-1]["message"] == f"hello {CELLS - 1}"
        assert last[wire.SUMMARIES][-1]["content"] == f"answer {CELLS - 1}"
        assert last[wire.SEQ] >= _batches_last(during)  # a view taking it has every event sent
        assert [row["turn"] for row in last[wire.SUMMARIES]] == list(range(CELLS - SNAPSHOT_TURNS, CELLS))
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)


def test_nbconvert_execute_saves_the_last_turn_in_the_widget_state(tmp_path: Path) -> None:
    """Back-to-back cells with no front end: the trait nbclient saves is the agent at the end."""
    cells = [
        "%load_ext agentnb",
        "from agentnb import ScriptedModel\nmodel = ScriptedModel(['First answer.', 'Second answer.', 'Third answer.'])",
        "%%agent bot --model model --no-session\nBe brief.",
        "%%chat bot\nhello",
        "%%chat bot\nagain",
        "%%chat bot\nonce more",
    ]
    saved = nbconvert_execute(tmp_path, cells)
    state = saved["metadata"]["widgets"]["application/vnd.jupyter.widget-state+json"]["state"]
    (widget,) = [w for w in state.values() if w["state"].get("agent_name") == "bot"]
    (buffer,) = [b for b in widget["buffers"] if b["path"] == [wire.TRAIT_SNAPSHOT]]
    snapshot = decode(base64.b64decode(buffer["data"]))
    assert snapshot[wire.TURN_INDEX] == 2
    assert [row["content"] for row in snapshot[wire.SUMMARIES]] == [
        "First answer.",
        "Second answer.",
        "Third answer.",
    ]
