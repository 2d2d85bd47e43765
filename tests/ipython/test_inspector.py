"""The inspector's kernel side: what it sends after each event, and what it answers."""

from __future__ import annotations

import json
import re
import threading
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("anywidget")

from agentnb import Agent, ScriptedModel, tool_call  # noqa: E402
from agentnb.errors import ScriptedModelExhaustedError  # noqa: E402
from agentnb.events import ModelRequested  # noqa: E402
from agentnb.ipython import compact_state, outbox, wire  # noqa: E402
from agentnb.ipython import inspector as inspector_module  # noqa: E402
from agentnb.ipython.inspector import Inspector  # noqa: E402
from agentnb.ipython.live import Run  # noqa: E402

STATIC = Path(inspector_module.__file__).parent / "static"
JS = Path(__file__).resolve().parents[2] / "js"
HOSTILE = "<img src=x onerror=alert(1)> <script>alert(2)</script>"


def add_item(item: str, session_state) -> str:
    """Add an item to the list."""
    session_state["items"].append(item)
    return f"added {item}"


def banner() -> str:
    """Return hostile HTML."""
    return HOSTILE


def audit(function_name, arguments, function_call):
    return function_call(**arguments)


def guard(function_name, arguments, function_call):
    if function_name == "banner":
        return "no banners"
    return function_call(**arguments)


def make_agent(steps: list[Any], **options: Any) -> Agent:
    options.setdefault("session_state", {"items": ["milk"]})
    options.setdefault("tools", [add_item, banner])
    return Agent(
        "shop",
        ScriptedModel(steps),
        instructions="List: {items} {missing}",
        tool_hooks=[audit, guard],
        **options,
    )


def decode(data: bytes) -> Any:
    """JSON as the browser's parser reads it: no NaN or Infinity."""

    def refuse(name: str) -> Any:
        raise ValueError(f"{name} is not JSON")

    return json.loads(bytes(data), parse_constant=refuse)


class Clock:
    """An outbox's clock and flush thread in a test: time passes only as the test says, each
    reading ``step`` seconds after the one before (1 s: every run ends long after the last
    batch, so it goes out at once), and a timer fires only in ``advance``."""

    def __init__(self, step: float = 0.0) -> None:
        self.now = 0.0
        self.step = step
        self.timers: list[tuple[float, outbox.Outbox]] = []

    def __call__(self) -> float:
        self.now += self.step
        return self.now

    def schedule(self, box: outbox.Outbox, at: float) -> None:
        self.timers.append((at, box))

    def advance(self, seconds: float) -> None:
        """Let ``seconds`` pass, calling the timers that come due as the flush thread would."""
        self.now += seconds
        due = [t for t in self.timers if t[0] <= self.now]
        self.timers = [t for t in self.timers if t[0] > self.now]
        for _, box in due:
            again = box.timer()
            if again is not None:
                self.schedule(box, again)


class Wire:
    """Captures what an inspector sends, decoded as the browser would see it. Its outbox runs on
    ``clock`` (by default turns a second apart), with no flush thread; ``threads=True`` keeps
    the real clock and flush thread."""

    def __init__(
        self,
        inspector: Inspector,
        monkeypatch: pytest.MonkeyPatch,
        clock: Clock | None = None,
        *,
        threads: bool = False,
    ) -> None:
        self.messages: list[dict[str, Any]] = []
        self.bodies: list[int] = []
        self.inspector = inspector
        self.arrived = threading.Condition()
        monkeypatch.setattr(inspector, "send", self.receive)
        if not threads:
            self.clock = clock or Clock(step=1.0)
            monkeypatch.setattr(inspector._outbox, "_clock", self.clock)
            monkeypatch.setattr(inspector._outbox, "_schedule", self.clock.schedule)

    def receive(self, content: dict[str, Any], buffers: list[bytes] | None = None) -> None:
        (body,) = buffers or [b"{}"]  # every message carries its body as one buffer
        with self.arrived:
            self.bodies.append(len(body))
            self.messages.append({**decode(body), **json.loads(json.dumps(content, allow_nan=False))})
            self.arrived.notify_all()

    def ended(self) -> bool:
        """Whether the end of the last run sent has arrived (with the real flush thread it comes
        at most ``FLUSH_SECONDS`` after the run)."""
        with self.arrived:
            # A hang guard, not a timing: the flush thread sends it within 50 ms.
            return self.arrived.wait_for(
                lambda: [e[wire.EVENT_BODY]["kind"] for e in self.events()][-1:] == ["run_finished"],
                timeout=30,
            )

    def ask(self, **content: Any) -> dict[str, Any]:
        self.inspector._on_msg(self.inspector, content, [])
        return self.messages[-1]

    def batches(self) -> list[dict[str, Any]]:
        return [m for m in self.messages if m[wire.KIND] == wire.BATCH]

    def events(self) -> list[dict[str, Any]]:
        """Every event item sent, with its number, as the browser applies them."""
        return [
            {
                wire.SEQ: batch[wire.SEQ] + i,
                wire.TURN_INDEX: item[wire.TURN_INDEX],
                wire.EVENT_BODY: item[wire.EVENT_BODY],
            }
            for batch in self.batches()
            for i, item in enumerate(batch[wire.ITEMS])
        ]


@pytest.fixture
def shop(monkeypatch: pytest.MonkeyPatch) -> tuple[Agent, Inspector, Wire]:
    agent = make_agent(
        [[tool_call("add_item", item="eggs"), tool_call("banner")], "Added eggs.", "Hello again."]
    )
    inspector = Inspector.for_agent(agent)
    return agent, inspector, Wire(inspector, monkeypatch)


def test_for_agent_returns_one_inspector_per_agent_with_a_deterministic_repr() -> None:
    agent = make_agent(["hi"])
    other = make_agent(["hi"])
    inspector = Inspector.for_agent(agent)
    assert Inspector.for_agent(agent) is inspector
    assert Inspector.for_agent(other) is not inspector
    assert repr(inspector) == "Inspector(agent='shop', turns=0)"
    agent.run("hello")
    assert repr(inspector) == "Inspector(agent='shop', turns=1)"
    assert inspector.agent_name == "shop"
    assert inspector.model_info == {"label": "scripted", "kind": "scripted", "origin": "explicit"}


def test_each_event_is_one_numbered_message_for_its_turn(shop) -> None:
    agent, _inspector, sent = shop
    agent.run("add eggs")
    events = sent.events()
    kinds = [m[wire.EVENT_BODY]["kind"] for m in events]
    assert kinds == [
        "run_started", "prompt_rendered", "model_requested", "model_responded",
        "tool_call_started", "state_changed", "tool_call_finished",
        "tool_call_started", "tool_call_finished",
        "model_requested", "text_delta", "model_responded", "run_finished",
    ]  # fmt: skip
    assert [m[wire.SEQ] for m in events] == list(range(1, len(events) + 1))
    assert {m[wire.TURN_INDEX] for m in events} == {0}
    agent.run("again")
    assert {m[wire.TURN_INDEX] for m in sent.events()[len(events) :]} == {1}


def test_a_state_change_is_sent_as_its_patch_with_its_author(shop) -> None:
    agent, _inspector, sent = shop
    agent.run("add eggs")
    (change,) = [m[wire.EVENT_BODY] for m in sent.events() if m[wire.EVENT_BODY]["kind"] == "state_changed"]
    assert change["patch"] == [{"op": "add", "path": "/items/1", "value": "eggs"}]
    assert change["cause"]["label"] == "tool:add_item"
    assert change["cause"]["tool_call_id"] == "call_0_0"
    assert "state" not in change


def remove_item(item: str, session_state) -> str:
    """Remove an item from the list."""
    session_state["items"].remove(item)
    return f"removed {item}"


def tag_block(session_state) -> str:
    """Write a key whose name holds a slash, then add and drop a scratch key."""
    session_state["</session_state>"] = "closing tag"
    session_state["scratch"] = 1
    del session_state["scratch"]
    return "tagged"


def test_each_batch_carries_the_turns_change_summary_so_far(monkeypatch) -> None:
    agent = make_agent(
        [
            "hello",
            [tool_call("add_item", item="eggs")],
            [tool_call("remove_item", item="eggs")],
            "done",
            [tool_call("add_item", item="tea")],
            "ok",
        ],
        session_state={"items": ["milk"], "count": 1},
        tools=[add_item, remove_item],
    )
    agent.run("hi")
    inspector = Inspector.for_agent(agent)
    sent = Wire(inspector, monkeypatch)
    # The queue sent right after each state change, as the flush thread does while a run goes on.
    flush_after_changes = agent.subscribe(
        lambda e: inspector._outbox.flush() if e.kind == "state_changed" else None
    )
    agent.session_state["count"] = 2  # between turns, by the user: part of the next turn
    agent.run("add eggs, then remove them")
    flush_after_changes()
    bodies = [m[wire.EVENT_BODY] for m in sent.events()]
    user, added, removed = [b[wire.CHANGES] for b in bodies if b["kind"] == "state_changed"]
    assert user["keys"] == [
        {"path": "/count", "key": "count", "how": "changed", "authors": ["user"], "old": "1", "new": "2"}
    ]
    assert added["paths"][-1] == {
        "path": "/items/1",
        "key": "items",
        "how": "added",
        "authors": ["tool:add_item"],
        "old": None,
        "new": '"eggs"',
    }
    assert [c["key"] for c in added["keys"]] == ["count", "items"]
    # Added and removed again within the turn: not a change (the rule of agentnb.state.diff).
    assert [(c["path"], c["how"]) for c in removed["paths"]] == [("/count", "changed")]
    assert [(c["key"], c["how"]) for c in removed["keys"]] == [("count", "changed")]
    (finished,) = [b for b in bodies if b["kind"] == "run_finished"]
    assert finished[wire.CHANGES] == removed
    # The same summary comes with the turn when a view loads it; its events carry none.
    reply = sent.ask(**{wire.KIND: wire.NEED_TURN, wire.TURN_INDEX: 1})
    assert reply[wire.CHANGES] == finished[wire.CHANGES]
    assert all(wire.CHANGES not in e for e in reply[wire.EVENTS])
    # A turn sent as one batch: its end carries the summary, its state changes none.
    agent.session_state["count"] = 3
    agent.run("again")
    last = [m[wire.EVENT_BODY] for m in sent.batches()[-1][wire.ITEMS]]
    assert [wire.CHANGES in b for b in last if b["kind"] == "state_changed"] == [False, False]
    assert [(c["key"], c["authors"]) for c in last[-1][wire.CHANGES]["keys"]] == [
        ("count", ["user"]),
        ("items", ["tool:add_item"]),
    ]


def test_a_batch_is_built_and_encoded_once_with_one_change_summary(monkeypatch) -> None:
    from agentnb.ipython import live

    agent = make_agent(
        ["hi", [tool_call("add_item", item="eggs"), tool_call("add_item", item="tea")], "ok"],
        session_state={"items": [], "n": 0},
    )
    agent.run("hi")
    inspector = Inspector.for_agent(agent)
    sent = Wire(inspector, monkeypatch)
    encoded: list[Any] = []
    summaries: list[Any] = []
    monkeypatch.setattr(live, "encode", lambda value: encoded.append(value) or outbox.encode(value))
    monkeypatch.setattr(
        live, "summarize_changes", lambda *a: summaries.append(a) or compact_state.summarize_changes(*a)
    )
    agent.session_state["n"] = 1
    agent.run("add eggs and tea")
    (batch,) = sent.batches()
    changes = [i for i in batch[wire.ITEMS] if i[wire.EVENT_BODY]["kind"] == "state_changed"]
    assert len(changes) == 3 and len(encoded) == 1 and len(summaries) == 1
    assert [c["key"] for c in batch[wire.ITEMS][-1][wire.EVENT_BODY][wire.CHANGES]["keys"]] == ["n", "items"]


def test_a_removed_item_keeps_its_old_value_and_key_names_stay_as_they_are(monkeypatch) -> None:
    agent = make_agent(
        [[tool_call("remove_item", item="eggs"), tool_call("tag_block")], "done"],
        session_state={"items": ["milk", "eggs"]},
        tools=[remove_item, tag_block],
    )
    sent = Wire(Inspector.for_agent(agent), monkeypatch)
    agent.run("tidy up")
    changes = sent.ask(**{wire.KIND: wire.SYNC})[wire.CHANGES]
    by_path = {c["path"]: c for c in changes["paths"]}
    assert by_path["/items/1"] == {
        "path": "/items/1",
        "key": "items",
        "how": "removed",
        "authors": ["tool:remove_item"],
        "old": '"eggs"',
        "new": None,
    }
    assert by_path["/<~1session_state>"]["key"] == "</session_state>"
    assert by_path["/<~1session_state>"]["new"] == '"closing tag"'
    assert "/scratch" not in by_path and [c["key"] for c in changes["keys"]] == ["items", "</session_state>"]
    assert changes["more"] == 0


def test_change_values_are_short_previews_and_long_summaries_are_counted(monkeypatch) -> None:
    def fill(session_state) -> str:
        """Add many keys with long values."""
        for i in range(compact_state.MAX_CHANGED_PATHS + 5):
            session_state["bulk"][f"k{i}"] = "x" * 1000
        return "filled"

    agent = make_agent([tool_call("fill"), "ok"], session_state={"bulk": {}}, tools=[fill])
    sent = Wire(Inspector.for_agent(agent), monkeypatch)
    agent.run("fill")
    summary = sent.events()[-1][wire.EVENT_BODY][wire.CHANGES]
    assert len(summary["paths"]) == compact_state.MAX_CHANGED_PATHS and summary["more"] == 5
    assert all(len(c["new"]) <= compact_state.CHANGE_TEXT for c in summary["paths"])
    assert summary["paths"][0]["new"].endswith("…")
    assert len(summary["keys"][0]["new"]) <= compact_state.CHANGE_TEXT


def test_change_previews_read_as_value_text_without_encoding_the_whole_value() -> None:
    from agentnb.history.render import value_text

    class Odd:
        pass

    values = [
        1,
        None,
        "x" * 500,
        {"a": [1, {"b": None}]},
        [1.5, True],
        "é",
        {"tags": {"a"}},
        Odd(),
        float("nan"),
    ]
    for value in values:
        assert compact_state.preview_text(value) == value_text(value, compact_state.CHANGE_TEXT)

    class Counting(dict):
        items_seen = 0

        def items(self):
            for item in super().items():
                Counting.items_seen += 1
                yield item

    big = Counting({f"k{i}": i for i in range(100_000)})
    assert compact_state.preview_text(big).endswith("…") and Counting.items_seen < 50


def test_a_turn_answered_from_the_recording_says_so(tmp_path, monkeypatch) -> None:
    from openai_server import OpenAIServer, Reply

    from agentnb.models import OpenAIChat
    from agentnb.sessions.recording import REPLAY_ENV

    monkeypatch.delenv(REPLAY_ENV, raising=False)

    def agent(url: str) -> Agent:
        return Agent(
            "shop",
            OpenAIChat("tiny", base_url=url, stream=False),
            instructions="Keep the list.",
            session_state={"items": []},
        )

    with OpenAIServer() as server:
        server.add(Reply(text="Hello."))
        first = agent(server.url)
        first.attach_recording(tmp_path)
        live = Wire(Inspector.for_agent(first), monkeypatch)
        first.run("hi")
        again = agent(server.url)
        again.attach_recording(tmp_path)
        replay = Wire(Inspector.for_agent(again), monkeypatch)
        again.run("hi")
        assert len(server.requests) == 1
    assert live.events()[-1][wire.EVENT_BODY]["replayed"] is False
    assert replay.events()[-1][wire.EVENT_BODY]["replayed"] is True
    assert [s["replayed"] for s in replay.ask(**{wire.KIND: wire.SYNC})[wire.SUMMARIES]] == [True]


def trait(inspector: Inspector) -> dict[str, Any]:
    """The snapshot in the synced trait, decoded."""
    return decode(inspector.view_snapshot)


def test_the_snapshot_trait_is_fresh_when_displayed_and_after_each_cell(monkeypatch) -> None:
    from IPython import get_ipython
    from IPython.testing.globalipapp import start_ipython

    start_ipython()  # the test session's one real shell: the inspector follows its cells
    shell = get_ipython()
    agent = make_agent(
        [[tool_call("add_item", item="eggs"), tool_call("banner")], "Added eggs.", "Hello again."]
    )
    inspector = Inspector(agent)
    sent = Wire(inspector, monkeypatch)
    try:
        assert inspector.view_snapshot == b""  # nothing sent before a view could exist
        data, _metadata = inspector._repr_mimebundle_()
        assert "application/vnd.jupyter.widget-view+json" in data
        assert trait(inspector)[wire.SUMMARIES] == [] and trait(inspector)[wire.STATE] == {"items": ["milk"]}
        shell.user_ns["shop"] = agent
        shell.run_cell('shop.run("add eggs")', store_history=False)
        snap = trait(inspector)
        # Current to the last event: a view made from it applies the items numbered after it.
        assert snap[wire.SEQ] == inspector.seq == sent.events()[-1][wire.SEQ]
        assert [s["status"] for s in snap[wire.SUMMARIES]] == ["ok"]
        assert snap[wire.STATE] == {"items": ["milk", "eggs"]}
        assert [c["key"] for c in snap[wire.CHANGES]["keys"]] == ["items"]
        # The sync message still answers (a view that found a gap), with the same snapshot.
        assert sent.ask(**{wire.KIND: wire.SYNC}) == snap
        # A cell that changed nothing leaves the trait alone; one that ran a turn refreshes it.
        before = inspector.view_snapshot
        shell.run_cell("1 + 1", store_history=False)
        assert inspector.view_snapshot is before
        shell.run_cell('shop.run("again")', store_history=False)
        assert trait(inspector)[wire.SEQ] == inspector.seq > snap[wire.SEQ]
        assert len(trait(inspector)[wire.SUMMARIES]) == 2
    finally:
        shell.user_ns.pop("shop", None)
        inspector.close()
    assert inspector._after_cell not in shell.events.callbacks["post_run_cell"]


def test_a_turn_goes_out_as_one_message_and_replies_come_after_what_was_queued(shop) -> None:
    agent, inspector, sent = shop
    agent.run("add eggs")
    assert [m[wire.KIND] for m in sent.messages] == [wire.BATCH]
    (batch,) = sent.batches()
    assert (batch[wire.SEQ], batch[wire.LAST]) == (1, len(batch[wire.ITEMS])) == (1, inspector.seq)
    assert (
        inspector.messages_sent == 1
        and inspector.bytes_sent == sent.bodies[0] == inspector.last_message_bytes
    )
    agent.run("hello")
    assert sent.batches()[1][wire.SEQ] == batch[wire.LAST] + 1  # numbered on from the last batch
    # An event queued when a request comes in goes out first: the reply is current to it.
    inspector._runs["r"] = Run(1, "r", None)
    inspector._outbox.add(ModelRequested(run_id="r", call=9, request={}))
    reply = sent.ask(**{wire.KIND: wire.NEED_TURN, wire.TURN_INDEX: 0})
    assert [m[wire.KIND] for m in sent.messages[-2:]] == [wire.BATCH, wire.TURN]
    assert reply[wire.TURN_INDEX] == 0 and sent.messages[-2][wire.LAST] == inspector.seq


def test_a_slow_step_is_shown_while_it_runs(monkeypatch) -> None:
    seen = threading.Event()

    def slow(session_state) -> str:
        """Wait until the view has seen this call start."""
        seen.wait(30)
        return "done" if seen.is_set() else "the call's start was never sent"

    agent = make_agent([tool_call("slow"), "ok"], tools=[slow])
    inspector = Inspector.for_agent(agent)
    sent = Wire(inspector, monkeypatch, threads=True)

    def receive(content: dict[str, Any], buffers: list[bytes] | None = None) -> None:
        Wire.receive(sent, content, buffers)
        if any(e[wire.EVENT_BODY]["kind"] == "tool_call_started" for e in sent.events()):
            seen.set()  # sent by the flush thread while the tool still runs

    monkeypatch.setattr(inspector, "send", receive)
    agent.run("go")
    assert agent.history[-1].tool_calls[0].result == "done"
    assert sent.ended()  # at once, or from the flush thread if a batch went out just before
    assert len(sent.batches()) >= 2  # the start while the tool ran, the rest at the end
    assert [e[wire.SEQ] for e in sent.events()] == list(range(1, inspector.seq + 1))


def test_the_change_summary_so_far_is_shown_while_a_slow_step_runs(monkeypatch) -> None:
    seen = threading.Event()

    def slow(session_state) -> str:
        """Wait until the view has the change summary of the step before."""
        seen.wait(30)
        session_state["items"].append("tea")  # after the summary went out: not in it
        return "done" if seen.is_set() else "the summary was never sent"

    agent = make_agent(
        [[tool_call("add_item", item="eggs"), tool_call("slow")], "ok"], tools=[add_item, slow]
    )
    agent.tool_hooks = []
    inspector = Inspector.for_agent(agent)
    sent = Wire(inspector, monkeypatch, threads=True)
    summaries: list[dict[str, Any]] = []

    def receive(content: dict[str, Any], buffers: list[bytes] | None = None) -> None:
        Wire.receive(sent, content, buffers)
        if not seen.is_set():
            summaries.extend(
                e[wire.EVENT_BODY][wire.CHANGES] for e in sent.events() if wire.CHANGES in e[wire.EVENT_BODY]
            )
            if summaries:
                seen.set()  # built and sent by the flush thread while the slow tool waits

    monkeypatch.setattr(inspector, "send", receive)
    agent.run("add eggs, then wait")
    assert agent.history[-1].tool_calls[1].result == "done"
    (so_far,) = summaries
    assert [(c["path"], c["how"], c["new"]) for c in so_far["paths"]] == [("/items/1", "added", '"eggs"')]
    assert sent.ended()
    final = sent.events()[-1][wire.EVENT_BODY]
    assert final["kind"] == "run_finished"
    assert [(c["path"], c["new"]) for c in final[wire.CHANGES]["paths"]] == [
        ("/items/1", '"eggs"'),
        ("/items/2", '"tea"'),
    ]


def test_tool_calls_carry_the_hook_chain_and_who_answered(shop) -> None:
    agent, _inspector, sent = shop
    agent.run("add eggs")
    add, blocked = [
        m[wire.EVENT_BODY] for m in sent.events() if m[wire.EVENT_BODY]["kind"] == "tool_call_finished"
    ]
    assert [(h["name"], h["outcome"]) for h in add["hooks"]] == [("audit", "passed"), ("guard", "passed")]
    assert add["answered_by"] == "tool" and add["changed_keys"] == ["items"]
    assert [(h["name"], h["outcome"]) for h in blocked["hooks"]] == [
        ("audit", "passed"),
        ("guard", "answered"),
    ]
    assert blocked["answered_by"] == "guard" and blocked["result"] == "no banners"


def test_one_key_change_in_a_large_state_sends_only_the_patch(monkeypatch) -> None:
    big = {"items": ["milk"], "catalog": [{"sku": i, "name": f"item {i}"} for i in range(5000)]}
    agent = make_agent([tool_call("add_item", item="eggs"), "ok"], session_state=big)
    inspector = Inspector.for_agent(agent)
    sent = Wire(inspector, monkeypatch)
    agent.run("add eggs")
    sizes = {m[wire.EVENT_BODY]["kind"]: len(json.dumps(m)) for m in sent.events()}
    assert sizes["state_changed"] < 800  # the patch and the turn's change summary so far
    assert max(sizes.values()) < 2000, sizes
    assert not any("item 4999" in json.dumps(m) for m in sent.events())
    # Where a view asks for the state, or where the widget is displayed, it comes lazily: the
    # first page of the catalog, and its size.
    snapshot = sent.ask(**{wire.KIND: wire.SYNC})
    assert snapshot[wire.STATE]["items"] == ["milk", "eggs"]
    assert snapshot[wire.STATE]["catalog"][:2] == [{"sku": 0, "name": "item 0"}, {"sku": 1, "name": "item 1"}]
    assert len(snapshot[wire.STATE]["catalog"]) == 100 and snapshot[wire.STUBS] == {"/catalog": 5000}
    assert sent.bodies[-1] < 10_000
    inspector._repr_mimebundle_()
    assert trait(inspector)[wire.STATE] == snapshot[wire.STATE]


def test_model_request_payloads_are_sent_only_on_request(shop) -> None:
    agent, _inspector, sent = shop
    agent.run("add eggs")
    requested = [m[wire.EVENT_BODY] for m in sent.events() if m[wire.EVENT_BODY]["kind"] == "model_requested"]
    assert requested[1] == {
        "kind": "model_requested",
        "call": 1,
        "at": requested[1]["at"],
        "messages": 5,
        "tools": 2,
    }
    reply = sent.ask(**{wire.KIND: wire.NEED_REQUEST, wire.TURN_INDEX: 0, wire.CALL: 1})
    assert reply[wire.KIND] == wire.REQUEST
    assert reply[wire.REQUEST] == agent.history[0].model_calls[1].request
    assert [m["role"] for m in reply[wire.REQUEST]["messages"]] == [
        "system",
        "user",
        "assistant",
        "tool",
        "tool",
    ]


def test_snapshot_and_turn_replies_let_a_view_travel_back(shop) -> None:
    agent, inspector, sent = shop
    snapshot = sent.ask(**{wire.KIND: wire.SYNC})
    assert snapshot[wire.SUMMARIES] == [] and snapshot[wire.STATE] == {"items": ["milk"]}
    agent.run("add eggs")
    agent.session_state["items"].append("tea")  # a change between turns, made by the user
    agent.run("hello")
    snapshot = sent.ask(**{wire.KIND: wire.SYNC})
    assert snapshot[wire.SEQ] == inspector.seq
    assert [s["message"] for s in snapshot[wire.SUMMARIES]] == ["add eggs", "hello"]
    assert snapshot[wire.SUMMARIES][0]["tool_calls"] == 2
    assert snapshot[wire.TURN_INDEX] == 1
    assert snapshot[wire.STATE] == {"items": ["milk", "eggs", "tea"]}
    user_change = [e for e in snapshot[wire.EVENTS] if e["kind"] == "state_changed"][0]
    assert user_change["cause"]["kind"] == "user"
    first = sent.ask(**{wire.KIND: wire.NEED_TURN, wire.TURN_INDEX: 0})
    assert first[wire.KIND] == wire.TURN and first[wire.STATE] == {"items": ["milk", "eggs"]}
    assert [e["kind"] for e in first[wire.EVENTS]][0] == "run_started"
    prompt = [e for e in first[wire.EVENTS] if e["kind"] == "prompt_rendered"][0]
    assert prompt["sections"][0]["source"] == "instructions"
    assert [(p["name"], p["resolved"]) for p in prompt["sections"][0]["placeholders"]] == [
        ("items", True),
        ("missing", False),
    ]


def test_bad_requests_get_an_error_reply(shop) -> None:
    agent, _inspector, sent = shop
    reply = sent.ask(**{wire.KIND: wire.NEED_TURN, wire.TURN_INDEX: 3})
    assert reply == {
        wire.KIND: wire.ERROR,
        wire.TEXT: "need_turn: LookupError: there is no turn 3; the agent has 0 turn(s)",
    }
    agent.run("add eggs")
    reply = sent.ask(**{wire.KIND: wire.NEED_REQUEST, wire.TURN_INDEX: 0, wire.CALL: 9})
    assert reply[wire.TEXT] == "need_request: LookupError: turn 0 has no model call 9"
    assert (
        sent.ask(**{wire.KIND: "nonsense"})[wire.TEXT]
        == "nonsense: ValueError: unknown message kind 'nonsense'"
    )


def test_preview_observes_without_calling_the_model(shop) -> None:
    agent, _inspector, sent = shop
    reply = sent.ask(**{wire.KIND: wire.PREVIEW, wire.MESSAGE: "what is on {items}?"})
    assert reply[wire.KIND] == wire.PREVIEW
    assert reply["user_prompt"] == "what is on ['milk']?"
    assert reply[wire.REQUEST]["messages"][-1] == {"role": "user", "content": "what is on ['milk']?"}
    assert reply["sections"][0]["text"].startswith("List: ['milk']")
    assert agent.model.requests == [] and len(agent.history) == 0


def test_streamed_text_is_joined_into_one_item_before_the_next_event(monkeypatch) -> None:
    agent = make_agent(["one two three four five six"])
    inspector = Inspector.for_agent(agent)
    sent = Wire(inspector, monkeypatch)
    monkeypatch.setattr(outbox, "FLUSH_SECONDS", 3600.0)  # no flush before the run ends
    agent.run("count")
    kinds = [m[wire.EVENT_BODY]["kind"] for m in sent.events()]
    assert kinds == [
        "run_started",
        "prompt_rendered",
        "model_requested",
        "text_delta",
        "model_responded",
        "run_finished",
    ]
    (delta,) = [m[wire.EVENT_BODY] for m in sent.events() if m[wire.EVENT_BODY]["kind"] == "text_delta"]
    assert delta == {"kind": "text_delta", "call": 0, "text": "one two three four five six"}


def test_failed_runs_and_odd_state_values_travel_as_json(monkeypatch) -> None:
    agent = make_agent([], session_state={"items": [], "tags": {"a"}, "score": float("nan")})
    inspector = Inspector.for_agent(agent)
    sent = Wire(inspector, monkeypatch)  # json.dumps(allow_nan=False) inside: NaN would raise
    with pytest.raises(ScriptedModelExhaustedError):
        agent.run("hi")
    failed = sent.events()[-1][wire.EVENT_BODY]
    assert failed["kind"] == "run_failed" and failed["error_type"] == "ScriptedModelExhaustedError"
    assert "\n" not in failed["error"]
    snapshot = sent.ask(**{wire.KIND: wire.SYNC})
    assert snapshot[wire.STATE] == {"items": [], "tags": ["a"], "score": "NaN"}
    assert snapshot[wire.SUMMARIES][0]["status"] == "failed"


def test_hostile_tool_output_travels_as_plain_text(monkeypatch) -> None:
    agent = make_agent([tool_call("banner"), "done"])
    agent.tool_hooks = []
    sent = Wire(Inspector.for_agent(agent), monkeypatch)
    agent.run("banner")
    (finished,) = [
        m[wire.EVENT_BODY] for m in sent.events() if m[wire.EVENT_BODY]["kind"] == "tool_call_finished"
    ]
    assert finished["result"] == HOSTILE


def test_close_stops_following_the_agent(shop) -> None:
    agent, inspector, sent = shop
    inspector.close()
    agent.run("add eggs")
    assert sent.events() == []
    assert Inspector.for_agent(agent) is not inspector


def test_model_info_follows_a_model_swap(shop) -> None:
    agent, inspector, _sent = shop

    class Local(ScriptedModel):
        kind = "local"
        origin = "offline fallback"

        @property
        def label(self) -> str:
            return "local:smollm2"

    agent.model = Local(["hi"])
    agent.run("hello")
    assert inspector.model_info == {"label": "local:smollm2", "kind": "local", "origin": "offline fallback"}


# -- the front end's files ----------------------------------------------------------------


def test_browser_wire_names_match_wire_py() -> None:
    source = (JS / "wire.js").read_text()
    match = re.search(r"const WIRE = (\{.*?\});", source, re.S)
    assert match, "js/wire.js must declare `export const WIRE = {...};`"
    assert json.loads(match.group(1)) == wire.WIRE


def front_end_sources() -> dict[str, str]:
    files = sorted(p for p in JS.rglob("*.js") if "test" not in p.relative_to(JS).parts)
    return {str(p.relative_to(JS)): p.read_text() for p in files}


def test_front_end_never_parses_content_as_html() -> None:
    sources = front_end_sources()
    assert {"dom.js", "store.js", "patch.js", "view.js", "tabs/index.js"} <= set(sources)
    sources["the bundle"] = (STATIC / "inspector.js").read_text()
    for name, source in sources.items():
        for sink in (
            "innerHTML",
            "outerHTML",
            "insertAdjacentHTML",
            "document.write",
            "DOMParser",
            "createContextualFragment",
            "eval(",
            "new Function",
            "srcdoc",
        ):
            assert sink not in source, f"{name} uses {sink}; insert content with textContent only"
    # Nodes are made in one helper (js/dom.js); it turns strings into text nodes.
    del sources["the bundle"]
    assert [name for name, source in sources.items() if "document.createElement(" in source] == ["dom.js"]
    assert sources["dom.js"].count("document.createElement(") == 1
    assert "document.createTextNode(String(child))" in sources["dom.js"]


def test_styles_use_only_theme_variables() -> None:
    css = (STATIC / "inspector.css").read_text()
    # Key names and values are shown exactly as they are: no case transforms.
    assert "text-transform" not in css
    assert not re.search(r"#[0-9a-fA-F]{3,8}\b|\brgba?\(|\bhsla?\(|\b(white|black)\b(?!-)", css)
    for prop, value in re.findall(
        r"(?<![-\w])(color|background(?:-color)?|border(?:-(?:top|right|bottom|left))?(?:-color)?|outline)\s*:\s*([^;]+);",
        css,
    ):
        colours = [w for w in re.findall(r"[a-z]+", re.sub(r"var\([^)]*\)|color-mix\(", "", value))]
        allowed = {
            "solid",
            "dotted",
            "dashed",
            "none",
            "transparent",
            "inherit",
            "in",
            "srgb",
            "px",
            "em",
            "width",
            "var",
            "jp",
        }
        assert set(colours) <= allowed, f"{prop}: {value} uses a colour that is not a --jp-* variable"


# -- context retrieval ----------------------------------------------------------------------


def context_agent(steps: list[Any]) -> Agent:
    from agentnb import DocumentContext

    aisles = DocumentContext(
        ["Milk is in aisle 3.", "Eggs are in aisle 5.", HOSTILE + " milk"], label="AISLES", top_k=2
    )
    faq = DocumentContext(
        {"returns": "Returns are accepted within 30 days."}, label="FAQ", passive=False, active=True
    )
    return make_agent(steps, context_providers=[aisles, faq])


def test_context_retrievals_are_sent_as_their_own_events(monkeypatch) -> None:
    agent = context_agent([tool_call("retrieve_context", source="FAQ", query="returns policy"), "Aisle 3."])
    sent = Wire(Inspector.for_agent(agent), monkeypatch)
    agent.run("where is the milk?")
    kinds = [m[wire.EVENT_BODY]["kind"] for m in sent.events()]
    # The passive lookup comes before the prompt; the tool's lookup sits inside its call.
    assert kinds[:3] == ["run_started", "context_retrieved", "prompt_rendered"]
    started = kinds.index("tool_call_started")
    assert kinds[started : started + 3] == ["tool_call_started", "context_retrieved", "tool_call_finished"]
    passive, asked = [
        m[wire.EVENT_BODY] for m in sent.events() if m[wire.EVENT_BODY]["kind"] == "context_retrieved"
    ]
    assert (
        passive["label"] == "AISLES"
        and passive["via"] == "passive"
        and passive["provider"] == "DocumentContext"
    )
    assert passive["query"] == "where is the milk?" and passive["top_k"] == 2
    assert [b["text"] for b in passive["blocks"]] == [
        "Milk is in aisle 3.",
        HOSTILE + " milk",
    ]  # as plain text
    assert [b["source"] for b in passive["blocks"]] == ["doc 0", "doc 2"]
    assert all(isinstance(b["score"], float) for b in passive["blocks"])
    assert "rendered" not in passive  # the blocks' text once, not twice
    assert asked["label"] == "FAQ" and asked["via"] == "tool" and asked["query"] == "returns policy"
    assert asked["blocks"] == [
        {
            "text": "Returns are accepted within 30 days.",
            "score": asked["blocks"][0]["score"],
            "source": "returns",
            "metadata": {},
        }
    ]
    assert set(asked) == {"kind", "label", "provider", "query", "top_k", "via", "blocks", "duration_ms"}


def test_turn_summaries_count_context_so_the_tab_can_be_greyed(monkeypatch) -> None:
    agent = context_agent(
        ["plain answer", tool_call("retrieve_context", source="FAQ", query="returns"), "ok"]
    )
    sent = Wire(Inspector.for_agent(agent), monkeypatch)
    agent.run("hello")  # no word in common with the aisles: one lookup, no block
    agent.run("milk and eggs")
    snapshot = sent.ask(**{wire.KIND: wire.SYNC})
    assert [(s["context"], s["context_blocks"]) for s in snapshot[wire.SUMMARIES]] == [(1, 0), (2, 3)]
    assert [e["label"] for e in snapshot[wire.EVENTS] if e["kind"] == "context_retrieved"] == [
        "AISLES",
        "FAQ",
    ]
    first = sent.ask(**{wire.KIND: wire.NEED_TURN, wire.TURN_INDEX: 0})
    (lookup,) = [e for e in first[wire.EVENTS] if e["kind"] == "context_retrieved"]
    assert lookup["label"] == "AISLES" and lookup["blocks"] == []
    plain = make_agent(["hi"])
    plain_sent = Wire(Inspector.for_agent(plain), monkeypatch)
    plain.run("hello")
    assert [
        (s["context"], s["context_blocks"]) for s in plain_sent.ask(**{wire.KIND: wire.SYNC})[wire.SUMMARIES]
    ] == [(0, 0)]
    assert not any(m[wire.EVENT_BODY]["kind"] == "context_retrieved" for m in plain_sent.events())


def test_front_end_has_a_context_tab_fed_by_context_events() -> None:
    sources = front_end_sources()
    tabs = re.search(r"export const TABS = \[(.*?)\];", sources["tabs/index.js"], re.S)
    assert tabs and "context" in tabs.group(1).split(", ")
    assert 'id: "context"' in sources["tabs/context.js"] and 'label: "Context"' in sources["tabs/context.js"]
    assert (
        "  context_retrieved(turn, e) {" in sources["turn.js"]
    )  # applied to the turn like every other event
    assert "s.context_blocks" in sources["turn.js"]  # unloaded turns are labelled from their summary


def test_the_display_carries_a_static_view_for_where_the_widget_cannot_render() -> None:
    agent = make_agent(["<script>alert(1)</script> Done $5 and $6."])
    inspector = Inspector.for_agent(agent)
    empty, _ = inspector._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in empty
    assert "<div>shop · inspector · model scripted · 0 turn(s) · a static view" in empty["text/html"]
    agent.run("hi")
    html_text = inspector._repr_mimebundle_()[0]["text/html"]
    assert (
        "1 turn(s)" in html_text and "user: hi" in html_text and "answer: &lt;script&gt;" in html_text
    )  # the last turn
    assert "<script" not in html_text and "&lt;script&gt;" in html_text
    assert "tex2jax_ignore" in html_text  # dollars stay dollars
    assert inspector._repr_mimebundle_()[0]["text/html"] == html_text  # deterministic
