"""A loop of quick turns: a run's end goes out at once only if no batch went out just before, and
whole turns inside a batch travel as their History rows (``outbox.Outbox.ended``, ``live.py``).
The clock is the test's (``Clock``): nothing here waits for time to pass."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("anywidget")

from test_inspector import Clock, Wire, add_item, decode, make_agent  # noqa: E402

from agentnb import Agent, tool_call  # noqa: E402
from agentnb.ipython import live, outbox, wire  # noqa: E402
from agentnb.ipython.history_row import turn_summary  # noqa: E402
from agentnb.ipython.inspector import Inspector  # noqa: E402

REPLAY = Path(__file__).resolve().parents[2] / "js" / "test" / "replay.js"
TICK = outbox.FLUSH_SECONDS


def shop(turns: int) -> Agent:
    """An agent that adds one item a turn, then answers."""
    steps: list[Any] = []
    for n in range(turns):
        steps += [tool_call("add_item", item=f"item {n}"), f"Added item {n}."]
    agent = make_agent(steps, tools=[add_item])
    agent.tool_hooks = []
    return agent


def followed(agent: Agent, monkeypatch: pytest.MonkeyPatch, clock: Clock) -> tuple[Inspector, Wire]:
    inspector = Inspector.for_agent(agent)
    return inspector, Wire(inspector, monkeypatch, clock)


def items(batch: dict[str, Any]) -> list[dict[str, Any]]:
    return batch[wire.ITEMS]


def kinds(batch: dict[str, Any]) -> list[str]:
    return [item[wire.EVENT_BODY]["kind"] if wire.EVENT_BODY in item else "row" for item in items(batch)]


def as_sent(value: Any) -> Any:
    """``value`` as the browser parses it."""
    return json.loads(json.dumps(value))


def test_a_run_ends_at_once_unless_a_batch_went_out_just_before(monkeypatch) -> None:
    clock = Clock()
    agent = shop(4)
    inspector, sent = followed(agent, monkeypatch, clock)
    agent.run("first")
    assert (
        len(sent.batches()) == 1 and kinds(sent.batches()[0])[-1] == "run_finished"
    )  # nothing went out before it
    clock.advance(0.01)
    agent.run("second")
    assert len(sent.batches()) == 1  # 10 ms after a batch: held back
    clock.advance(TICK - 0.001)
    assert len(sent.batches()) == 1  # its first event was queued 49 ms ago
    clock.advance(0.001)
    second = sent.batches()[1]  # the flush thread's call at the deadline
    assert kinds(second)[0] == "run_started" and kinds(second)[-1] == "run_finished"
    assert items(second)[0][wire.TURN_INDEX] == 1
    assert (second[wire.SEQ], second[wire.LAST]) == (sent.batches()[0][wire.LAST] + 1, inspector.seq)
    clock.advance(TICK)
    agent.run("third")
    assert len(sent.batches()) == 3  # 50 ms after the last batch: at once
    assert [t for t in clock.timers if t[0] <= clock.now] == []


def test_the_next_message_sends_a_held_back_batch_before_it(monkeypatch) -> None:
    clock = Clock()
    agent = shop(3)
    inspector, sent = followed(agent, monkeypatch, clock)
    agent.run("first")
    agent.run("second")
    assert [m[wire.KIND] for m in sent.messages] == [wire.BATCH]
    reply = sent.ask(**{wire.KIND: wire.NEED_TURN, wire.TURN_INDEX: 1})
    assert [m[wire.KIND] for m in sent.messages] == [wire.BATCH, wire.BATCH, wire.TURN]
    assert reply[wire.TURN_INDEX] == 1 and sent.batches()[1][wire.LAST] == inspector.seq
    agent.run("third")
    inspector._after_cell()  # the cell ends (IPython's post_run_cell): the trait covers the held-back batch
    assert len(sent.batches()) == 2  # not sent as a batch of its own
    snapshot = decode(inspector.view_snapshot)
    assert snapshot[wire.SEQ] == inspector.seq == sent.batches()[1][wire.LAST] + 1  # past every open view's
    assert snapshot[wire.TURN_INDEX] == 2 and [e["kind"] for e in snapshot[wire.EVENTS]][-1] == "run_finished"
    assert inspector._runs == {}  # the turn is no longer followed
    assert clock.timers  # the flush thread's call, when it comes, finds nothing left
    clock.advance(TICK)
    assert len(sent.batches()) == 2


def test_a_cell_that_ends_while_a_run_goes_on_sends_its_batch_before_the_trait(monkeypatch) -> None:
    clock = Clock()
    agent = shop(2)
    inspector, sent = followed(agent, monkeypatch, clock)
    agent.run("first")
    clock.advance(0.01)
    events = iter(agent.iter_run("second"))  # a run another thread drives, still going at the cell's end
    for _ in range(3):
        next(events)
    inspector._after_cell()
    assert len(sent.batches()) == 2 and kinds(sent.batches()[1])[0] == "run_started"
    assert decode(inspector.view_snapshot)[wire.SEQ] == inspector.seq == sent.batches()[1][wire.LAST]
    for _ in events:
        pass
    clock.advance(TICK)
    assert (
        kinds(sent.batches()[-1])[-1] == "run_finished"
        and sent.batches()[-1][wire.SEQ] == inspector.seq - len(items(sent.batches()[-1])) + 1
    )


def test_whole_turns_inside_a_batch_go_out_as_their_rows_and_the_latest_in_full(monkeypatch) -> None:
    clock = Clock()
    agent = shop(4)
    inspector, sent = followed(agent, monkeypatch, clock)
    agent.run("add item 0")
    summaries: list[Any] = []
    summarize = live.summarize_changes
    monkeypatch.setattr(live, "summarize_changes", lambda *a: summaries.append(a) or summarize(*a))
    for n in (1, 2, 3):
        agent.run(f"add item {n}")
    clock.advance(TICK)
    assert len(sent.batches()) == 2
    batch = sent.batches()[1]
    assert kinds(batch) == [
        "row",
        "row",
        "run_started",
        "prompt_rendered",
        "model_requested",
        "model_responded",
        "tool_call_started",
        "state_changed",
        "tool_call_finished",
        "model_requested",
        "text_delta",
        "model_responded",
        "run_finished",
    ]
    assert batch[wire.LAST] - batch[wire.SEQ] + 1 == len(items(batch))  # numbered as the browser holds them
    history = agent.history
    for item, record in zip(items(batch)[:2], (history[1], history[2])):
        assert item[wire.TURN_INDEX] == record.index
        assert item[wire.ROW] == as_sent(turn_summary(record))
    start = items(batch)[2]
    assert (
        start[wire.STATE]
        == {"items": ["milk", "item 0", "item 1", "item 2"]}
        == as_sent(history[3].state_start)
    )
    assert wire.STUBS not in start  # a small state goes whole
    end = items(batch)[-1][wire.EVENT_BODY]
    assert [(c["path"], c["new"]) for c in end[wire.CHANGES]["paths"]] == [("/items/4", '"item 3"')]
    assert len(summaries) == 1  # the latest turn's; none for the rows
    # A row's turn, when shown, is fetched with its events and changes.
    turn = sent.ask(**{wire.KIND: wire.NEED_TURN, wire.TURN_INDEX: 1})
    assert [e["kind"] for e in turn[wire.EVENTS]][-1] == "run_finished"
    assert [(c["path"], c["new"]) for c in turn[wire.CHANGES]["paths"]] == [("/items/2", '"item 1"')]


def test_a_turn_begun_in_an_earlier_batch_is_not_made_a_row(monkeypatch) -> None:
    clock = Clock()
    agent = shop(3)
    inspector, sent = followed(agent, monkeypatch, clock)
    agent.run("add item 0")
    flush_at_tool = agent.subscribe(
        lambda e: inspector._outbox.flush() if e.kind == "tool_call_started" else None
    )
    agent.run("add item 1")  # its head goes out mid-run (as the flush thread would send it)
    flush_at_tool()
    agent.run("add item 2")
    clock.advance(TICK)
    tail = sent.batches()[-1]
    assert kinds(tail)[:3] == ["state_changed", "tool_call_finished", "model_requested"]
    assert "row" not in kinds(tail)  # the browser follows turn 2 from its head: it gets the rest
    assert wire.STATE not in items(tail)[kinds(tail).index("run_started")]


def normalized(value: Any) -> Any:
    """``value`` without clocks (the two agents' runs take different times)."""
    if isinstance(value, dict):
        return {k: normalized(v) for k, v in value.items() if k not in ("at", "duration_ms")}
    if isinstance(value, list):
        return [normalized(v) for v in value]
    return value


def loop(agent: Agent, turns: int) -> None:
    """Quick turns, the user changing the state after each (before a held-back batch goes out)."""
    for n in range(turns):
        agent.run(f"add item {n}")
        agent.session_state["items"][0] = f"milk {n}"


def test_a_held_back_batch_is_what_an_immediate_one_would_have_been(monkeypatch) -> None:
    at_once, held = shop(3), shop(3)
    _, now = followed(at_once, monkeypatch, Clock(step=1.0))
    clock = Clock()
    inspector, later = followed(held, monkeypatch, clock)
    loop(at_once, 3)
    loop(held, 3)
    clock.advance(TICK)
    assert [len(sent.batches()) for sent in (now, later)] == [3, 2]
    row, *last = items(later.batches()[-1])
    assert wire.STATE in last[0]
    del last[0][wire.STATE]  # the start state the row's turn would have left in the browser
    # The latest turn's items, its change summary read after the state changed again.
    assert normalized(last) == normalized(items(now.batches()[-1]))
    assert normalized(row[wire.ROW]) == normalized(as_sent(turn_summary(at_once.history[1])))
    fetched = later.ask(**{wire.KIND: wire.NEED_TURN, wire.TURN_INDEX: 1})
    assert fetched[wire.CHANGES] == items(now.batches()[1])[-1][wire.EVENT_BODY][wire.CHANGES]
    assert inspector.seq == later.batches()[-1][wire.LAST]


def replay(snapshot: bytes, sent: Wire, inspector: Inspector, turns: int) -> dict[str, Any]:
    """What a view's store ends with after ``sent``'s messages (rows fetched as when shown)."""
    replies = {str(i): inspector_reply(inspector, i) for i in range(turns)}
    data = json.dumps({"snapshot": decode(snapshot), "messages": sent.messages, "turns": replies})
    done = subprocess.run(["node", str(REPLAY)], input=data, capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


def inspector_reply(inspector: Inspector, index: int) -> dict[str, Any]:
    return as_sent(inspector._answer(wire.NEED_TURN, {wire.TURN_INDEX: index}))


@pytest.mark.skipif(shutil.which("node") is None, reason="needs Node.js (the front end's store)")
def test_a_view_ends_with_the_same_turns_whether_turns_were_held_back_or_not(monkeypatch) -> None:
    turns = 12
    agents = shop(turns), shop(turns)
    clocks = Clock(step=1.0), Clock()
    views = []
    for agent, clock in zip(agents, clocks):
        inspector, sent = followed(agent, monkeypatch, clock)
        start = inspector.snapshot()
        for n in range(turns):
            agent.run(f"add item {n}")
            agent.session_state["items"][0] = f"milk {n}"
            clock.advance(0.01 if n % 5 else TICK)  # a batch every five turns
        clock.advance(TICK)
        views.append((replay(start, sent, inspector, turns), sent))
    (immediate, sent_now), (throttled, sent_later) = views
    assert immediate["fetched"] == [] and immediate["asked"] == []
    assert len(sent_later.batches()) < len(sent_now.batches()) == turns
    assert throttled["applied"]["folded"] > 0
    assert throttled["fetched"] == [a[wire.TURN_INDEX] for a in throttled["asked"]]  # only the rows
    assert turns - 1 not in throttled["fetched"]
    assert normalized(throttled["turns"]) == normalized(immediate["turns"])
    assert [t["state"]["items"][-1] for t in throttled["turns"]] == [f"item {n}" for n in range(turns)]


@pytest.mark.skipif(shutil.which("node") is None, reason="needs Node.js (the front end's store)")
def test_an_open_view_ends_with_the_same_turns_when_cell_ends_send_the_trait_for_the_batch(
    monkeypatch,
) -> None:
    """A Run All of one-turn cells: each cell's held-back batch is covered by the trait set at its
    end; a view open throughout takes those snapshots and ends as one fed every batch."""
    turns = 6
    agents = shop(turns), shop(turns)
    views = []
    for agent, clock, cells in ((agents[0], Clock(step=1.0), False), (agents[1], Clock(), True)):
        inspector, sent = followed(agent, monkeypatch, clock)
        if cells:
            inspector.observe(
                lambda change, sent=sent: sent.messages.append(
                    {wire.KIND: "trait", "trait": decode(change["new"])}
                ),
                names="view_snapshot",
            )
        start = inspector.snapshot()
        for n in range(turns):
            agent.run(f"add item {n}")
            if cells:
                inspector._after_cell()
            clock.advance(0.01)
        clock.advance(TICK)
        views.append((replay(start, sent, inspector, turns), sent))
    (batched, sent_batches), (celled, sent_cells) = views
    assert len(sent_batches.batches()) == turns
    assert len(sent_cells.batches()) == 1 and len([m for m in sent_cells.messages if "trait" in m]) == turns
    assert celled["applied"]["snapshots"] == turns and celled["applied"]["gaps"] == 0
    assert celled["seq"] == sent_cells.messages[-1]["trait"][wire.SEQ]
    assert normalized(celled["turns"]) == normalized(batched["turns"])


def test_a_cell_end_sends_a_held_back_batch_with_turns_older_than_the_snapshots_rows(monkeypatch) -> None:
    """A loop of more turns than a snapshot carries rows for, all held back: an open view merges the
    snapshot into its rows, so the turns before the snapshot's rows must reach it as the batch."""
    clock = Clock()
    turns = 25
    agent = shop(turns + 1)
    inspector, sent = followed(agent, monkeypatch, clock)
    agent.run("first")
    clock.advance(0.001)
    for n in range(turns):
        agent.run(f"add item {n}")  # held back: a batch went out 1 ms before
    assert len(sent.batches()) == 1
    inspector._after_cell()
    assert len(sent.batches()) == 2
    rows = [item[wire.TURN_INDEX] for item in items(sent.batches()[1]) if wire.ROW in item]
    assert rows == list(range(1, turns))  # every turn but the latest as its row, turn 1 among them
    snapshot = decode(inspector.view_snapshot)
    assert snapshot[wire.TURNS_FROM] == turns + 1 - 20 > 1
    assert snapshot[wire.SEQ] == inspector.seq == sent.batches()[1][wire.LAST]


def test_each_cells_snapshot_carries_the_last_rows_as_the_history_has_them_across_a_reset(
    monkeypatch,
) -> None:
    """The snapshot's earlier rows are kept from one cell to the next (one row added, one dropped):
    they must stay the history's own, also after the agent is reset and its turns start again."""
    clock = Clock()
    agent = shop(40)
    inspector, _ = followed(agent, monkeypatch, clock)

    def check() -> None:
        snapshot = decode(inspector.view_snapshot)
        history = agent.history
        first = max(0, len(history) - 20)
        assert snapshot[wire.TURNS_FROM] == first
        assert snapshot[wire.SUMMARIES] == [
            as_sent(turn_summary(history[i])) for i in range(first, len(history))
        ]

    for n in range(26):
        agent.run(f"add item {n}")
        clock.advance(0.001)
        inspector._after_cell()
        check()
    agent.reset()
    for n in range(3):
        agent.run(f"again {n}")
        clock.advance(0.001)
        inspector._after_cell()
        check()
    assert [row["message"] for row in decode(inspector.view_snapshot)[wire.SUMMARIES]] == [
        "again 0",
        "again 1",
        "again 2",
    ]
