"""Delegations: an agent as a tool, state modes copy / live / none, lineage, usage, parallel
siblings on one snapshot merged in call order, conflicts refused with a clear result."""

from __future__ import annotations

import itertools
import random
import re
import threading
import time
from collections.abc import Callable
from typing import Any

import pytest

from agentnb import Agent, ScriptedModel, tool_call
from agentnb.errors import ConfigurationError
from agentnb.events import RunStarted, StateChanged, ToolCallFinished
from agentnb.history.render import turn_text


def add_note(note: str, session_state) -> str:
    """Add a note."""
    session_state["notes"].append(note)
    return f"noted {note}"


def remember(fact: str, session_state) -> str:
    """Remember a fact privately."""
    session_state.setdefault("facts", []).append(fact)
    return "ok"


def set_topic(topic: str, session_state) -> str:
    """Set the topic."""
    session_state["prefs"]["topic"] = topic
    return "ok"


def member(name: str, steps, **kwargs) -> Agent:
    return Agent(name, model=ScriptedModel(steps), **kwargs)


def test_as_tool_none_maps_inputs_and_outputs_and_keeps_private_keys():
    researcher = member(
        "researcher",
        [tool_call("remember", fact="sky is blue"), "The sky is blue."],
        tools=[remember],
        instructions="Research {subject}.",
        session_state={"facts": []},
    )
    lead = member(
        "lead",
        [tool_call("researcher", task="why is the sky blue?"), "It is blue."],
        tools=[
            researcher.as_tool(
                inputs_from_state={"topic": "subject"},
                outputs_to_state={"notes": {"source": "answer"}, "found": {"source": "facts"}},
            )
        ],
        session_state={"topic": "optics", "notes": [], "secret": "x"},
    )
    result = lead.run("question")
    assert result.content == "It is blue."
    # only the mapped outputs came up (notes is a list: the answer replaced it, no schema handler)
    assert lead.session_state == {
        "topic": "optics",
        "notes": "The sky is blue.",
        "secret": "x",
        "found": ["sky is blue"],
    }
    # the member saw only the mapped key, under its own name, and kept its private key
    child = lead.history[-1].children[0]
    assert child.system_prompt == "Research optics."
    assert child.state_before == {"facts": [], "subject": "optics"}
    assert researcher.session_state == {"facts": ["sky is blue"]}  # what the parent gave is not kept
    assert "secret" not in child.state_before


def test_lineage_usage_and_child_run_id():
    researcher = member("researcher", ["Found it."])
    lead = member(
        "lead",
        [tool_call("ask", task="find"), "Done."],
        tools=[researcher.as_tool("ask", "Ask the researcher")],
    )
    lead.run("go")
    turn = lead.history[-1]
    (child,) = turn.children
    started = child.events[0]
    assert isinstance(started, RunStarted)
    assert (started.parent_run_id, started.path, started.depth) == (turn.run_id, ("lead", "researcher"), 1)
    finished = [e for e in turn.events if isinstance(e, ToolCallFinished)][0]
    assert finished.child_run_id == child.run_id == researcher.history[-1].run_id
    assert started.parent_tool_call_id == finished.tool_call_id
    end = turn.events[-1]
    assert end.usage == turn.usage  # own: the lead's two model calls only
    assert end.usage_total == turn.usage + child.usage
    assert end.usage_total.total_tokens > end.usage.total_tokens
    assert (
        turn.path == ("lead",) and child.path == ("lead", "researcher") and child.parent_run_id == turn.run_id
    )


def test_copy_is_deep_and_merges_only_changed_paths_with_authors():
    seen_during: list = []

    def check_parent(session_state, agent) -> str:
        """Look at the parent's state while the member runs."""
        seen_during.append(list(lead.session_state["notes"]))
        return "looked"

    writer = member(
        "writer",
        [[tool_call("add_note", note="n1"), tool_call("check_parent")], "Wrote."],
        tools=[add_note, check_parent],
        session_state={"notes": ["writer default"], "style": "terse"},
    )
    lead = member(
        "lead",
        [tool_call("writer", task="write"), "ok"],
        tools=[writer.as_tool(state="copy")],
        session_state={"notes": [], "other": 1},
    )
    lead.run("go")
    assert seen_during == [[]]  # a deep copy: the member's append did not touch the parent's list
    assert lead.session_state == {"notes": ["n1"], "other": 1}  # no member default leaked up
    assert writer.session_state == {"notes": ["writer default"], "style": "terse"}  # its own keys kept
    merges = [e for e in lead.history[-1].events if isinstance(e, StateChanged)]
    assert [m.cause.kind for m in merges] == ["merge"]
    assert merges[0].cause.chain() == "lead ▸ writer ▸ tool:add_note"
    assert merges[0].patch == ({"op": "add", "path": "/notes/0", "value": "n1"},)


def test_live_shares_the_parent_state_object():
    writer = member("writer", [tool_call("add_note", note="live"), "ok"], tools=[add_note])
    lead = member(
        "lead",
        [tool_call("writer", task="w"), "done"],
        tools=[writer.as_tool(state="live")],
        session_state={"notes": []},
    )
    lead.run("go")
    assert lead.session_state == {"notes": ["live"]}
    child = lead.history[-1].children[0]
    (change,) = child.state_changes
    assert change.cause.chain() == "lead ▸ writer ▸ tool:add_note"
    (merge,) = lead.history[-1].state_changes
    assert merge.cause.kind == "merge" and merge.patch == (
        {"op": "add", "path": "/notes/0", "value": "live"},
    )
    assert writer.state is not lead.state and "messages" not in lead.session_state


def test_member_hook_writes_propagate_agno_9328():
    """A member's tool hook changes the state around a tool that takes no context: kept."""

    def audit(function_name, function_call, arguments, session_state):
        session_state["audit"].append(function_name)
        return function_call(**arguments)

    def ping() -> str:
        """Ping."""
        return "pong"

    worker = member("worker", [tool_call("ping"), "pinged"], tools=[ping], tool_hooks=[audit])
    lead = member(
        "lead",
        [tool_call("worker", task="ping"), "ok"],
        tools=[worker.as_tool(state="copy")],
        session_state={"audit": []},
    )
    lead.run("go")
    assert lead.session_state == {"audit": ["ping"]}
    (merge,) = lead.history[-1].state_changes
    assert merge.cause.chain() == "lead ▸ worker ▸ hook:audit"


def slow_note(note: str, session_state) -> str:
    """Add a note after a random pause (completion order varies)."""
    time.sleep(random.uniform(0, 0.02))
    session_state["notes"].append(note)
    return note


def parallel_lead(handler=None, keys=("notes", "notes")):
    a = member("a", [tool_call("slow_note", note="from a"), "a done"], tools=[slow_note])
    b = member("b", [tool_call("slow_note", note="from b"), "b done"], tools=[slow_note])
    schema = {"notes": {"type": list, "handler": handler}} if handler else None
    lead = member(
        "lead",
        [[tool_call("a", task="x"), tool_call("b", task="y")], "combined"],
        tools=[a.as_tool(state="copy"), b.as_tool(state="copy")],
        session_state={"notes": []},
        state_schema=schema,
    )
    return lead


def test_parallel_siblings_run_concurrently_on_one_snapshot():
    inside = threading.Barrier(2, timeout=30)  # a hang guard on a busy machine, not a timing

    def meet(session_state) -> str:
        """Wait for the sibling (both must run at once)."""
        inside.wait()
        return str(session_state["n"])

    a = member("a", [tool_call("meet"), "a"], tools=[meet])
    b = member("b", [tool_call("meet"), "b"], tools=[meet])
    lead = member(
        "lead",
        [[tool_call("a", task="1"), tool_call("b", task="2")], "ok"],
        tools=[a.as_tool(state="copy"), b.as_tool(state="copy")],
        session_state={"n": 7},
    )
    lead.run("go")  # would raise BrokenBarrierError (a tool error) if they ran one after another
    results = [c.tool_calls[0].result for c in lead.history[-1].children]
    assert results == ["7", "7"]


def test_parallel_conflict_without_handler_is_refused_naming_both_and_the_fix():
    lead = parallel_lead()
    lead.run("go")
    turn = lead.history[-1]
    first, second = turn.tool_calls
    assert first.error is None and lead.session_state == {"notes": ["from a"]}
    assert second.error_kind == "merge_conflict"
    assert (
        "'b' and 'a' both changed /notes/0" in second.error and "Give 'notes' a merge handler" in second.error
    )
    # nothing lost: the refused change is in b's own run
    b_run = turn.children[1]
    assert b_run.state_after["notes"] == ["from b"] and f"its turn {b_run.number}" in second.error


def test_parallel_conflict_with_handler_merges_in_call_order():
    def union(current, new):
        return list(current) + [x for x in new if x not in current]

    for _ in range(3):
        lead = parallel_lead(handler=union)
        lead.run("go")
        assert lead.session_state == {"notes": ["from a", "from b"]}
        merges = [e.cause for e in lead.history[-1].state_changes]
        assert [(c.name, c.handler) for c in merges] == [("a", None), ("b", "union")]


def test_as_tool_errors():
    worker = member("worker", ["x"])
    with pytest.raises(ConfigurationError, match="state must be one of"):
        worker.as_tool(state="shared")
    with pytest.raises(ConfigurationError, match="only with state='none'"):
        worker.as_tool(state="copy", inputs_from_state={"a": "b"})
    with pytest.raises(ConfigurationError, match="memory must be"):
        worker.as_tool(memory="forever")


def test_failed_member_is_an_error_result_and_its_run_is_kept():
    broken = member("broken", [])  # no reply: the member's run fails
    lead = member("lead", [tool_call("broken", task="x"), "recovered"], tools=[broken.as_tool()])
    assert lead.run("go").content == "recovered"
    (finished,) = lead.history[-1].tool_calls
    assert finished.error_kind == "tool_error" and "member 'broken' failed" in finished.error
    assert finished.child_run_id == lead.history[-1].children[0].run_id
    assert lead.history[-1].children[0].status == "failed"


def test_self_delegation_is_an_error_result():
    echo = member("echo", [tool_call("echo", task="again"), "stop"])
    echo.tools = [echo.as_tool()]
    echo.run("go")
    (finished,) = echo.history[0].tool_calls
    assert "already running in this turn" in finished.error


def test_memory_member_keeps_history_per_call_does_not():
    def replies(request):
        return f"seen {sum(1 for m in request.messages if m['role'] == 'user')} user message(s)"

    for memory, expected in (("per-call", "seen 1 user message(s)"), ("member", "seen 2 user message(s)")):
        helper = Agent("helper", model=ScriptedModel(replies))
        lead = member(
            "lead",
            [tool_call("helper", task="one"), "a", tool_call("helper", task="two"), "b"],
            tools=[helper.as_tool(memory=memory)],
        )
        lead.run("1")
        lead.run("2")
        assert lead.history[-1].tool_calls[0].result == expected


def test_two_tools_of_one_member_in_one_response_run_one_after_another():
    sub = member("sub", ["first", "second"], instructions="You research {topic}.")
    lead = member(
        "lead",
        [[tool_call("mapped", task="a"), tool_call("asked", task="b", topic="tides")], "ok"],
        tools=[sub.as_tool("mapped", inputs_from_state={"subject": "topic"}), sub.as_tool("asked")],
        session_state={"subject": "optics"},
    )
    lead.run("go")
    assert [c.result for c in lead.history[-1].tool_calls] == ["first", "second"]
    assert [c.system_prompt for c in lead.history[-1].children] == [
        "You research optics.",
        "You research tides.",
    ]


def test_parallel_results_and_their_merges_come_in_call_order():
    def union(current, new):
        return list(current) + [x for x in new if x not in current]

    lead = parallel_lead(handler=union)
    lead.run("go")
    kinds = [
        (e.kind, getattr(e, "cause", None) and e.cause.name, getattr(e, "name", None))
        for e in lead.history[-1].events
        if e.kind in ("tool_call_started", "state_changed", "tool_call_finished")
    ]
    assert kinds == [
        ("tool_call_started", None, "a"),
        ("tool_call_started", None, "b"),
        ("state_changed", "a", None),
        ("tool_call_finished", None, "a"),
        ("state_changed", "b", None),
        ("tool_call_finished", None, "b"),
    ]


# -- a response mixing delegations with ordinary tool calls --------------------------------------


def log_entry(entry: str, session_state) -> str:
    """Log an entry (an ordinary tool of the lead)."""
    time.sleep(random.uniform(0, 0.01))
    session_state["log"].append(entry)
    return f"logged {entry}"


def read_notes(session_state) -> str:
    """Read the notes (an ordinary tool of the lead)."""
    return ", ".join(session_state["notes"]) or "(none)"


def union(current, new):
    return list(current) + [x for x in new if x not in current]


class FinishOrder:
    """Makes members that run side by side finish in a given order, whatever the machine's load:
    each one's tool waits until the member before it in ``order`` has finished its run."""

    def __init__(self, order: tuple[str, ...]) -> None:
        self.order = order
        self.done = {name: threading.Event() for name in order}
        self.finished: list[str] = []
        """The order they finished in, as their run_finished events said."""

    def wait_turn(self, name: str) -> None:
        place = self.order.index(name)
        if place:
            assert self.done[self.order[place - 1]].wait(timeout=30)  # a hang guard, not a timing

    def watch(self, agent: Agent) -> None:
        def on_event(event: Any) -> None:
            if event.kind == "run_finished":
                self.finished.append(agent.name)
                self.done[agent.name].set()

        agent.subscribe(on_event)


def ordered_note(name: str, order: FinishOrder):
    def slow_note(note: str, session_state) -> str:
        """Add a note once the member before this one finished."""
        order.wait_turn(name)
        session_state["notes"].append(note)
        return note

    return slow_note


ORDERS = list(itertools.permutations(("a", "b", "c")))


def mixed_lead(order: tuple[str, ...] = ("a", "b", "c")) -> tuple[Agent, list[str]]:
    """A lead whose one response mixes three copy delegations with two ordinary calls; the members
    finish in ``order``. Returns the lead and the order they finished in."""
    finish = FinishOrder(order)
    members = []
    for name in ("a", "b", "c"):
        m = member(
            name,
            [tool_call("slow_note", note=f"from {name}"), f"{name} done"],
            tools=[ordered_note(name, finish)],
            session_state={f"own_{name}": 0},
        )
        finish.watch(m)
        members.append(m)
    finished = finish.finished
    lead = member(
        "lead",
        [
            [
                tool_call("a", task="x"),
                tool_call("log_entry", entry="one"),
                tool_call("b", task="y"),
                tool_call("log_entry", entry="two"),
                tool_call("c", task="z"),
                tool_call("read_notes"),
            ],
            "combined",
        ],
        tools=[m.as_tool(state="copy") for m in members] + [log_entry, read_notes],
        session_state={"notes": [], "log": []},
        state_schema={"notes": {"type": list, "handler": union}, "log": {"type": list}},
    )
    return lead, finished


def masked(lead: Agent) -> str:
    turn = lead.history[-1]
    text = (
        turn_text(turn)
        + "\n"
        + repr(lead.session_state)
        + "\n"
        + repr(
            [
                (e.kind, getattr(e, "name", None), getattr(e, "patch", None))
                for e in turn.events
                if e.kind != "model_requested"
            ]
        )
    )
    for i, run in enumerate(turn.walk()):
        text = text.replace(run.run_id, f"run{i}")
    return re.sub(r"\d+\.\d+ ?ms|'duration_ms': [\d.e-]+|'at': [\d.]+", "<t>", text)


def records_over_20_runs(
    make: Callable[[tuple[str, ...]], tuple[Agent, list[str]]], order_of: Callable[[int], tuple[str, ...]]
) -> tuple[set[str], set[tuple[str, ...]]]:
    """Twenty runs of a fresh lead from ``make(order)``, its members finishing in ``order_of(run)``:
    the distinct masked records and the orders the members finished in."""
    records, orders = set(), set()
    for run in range(20):
        order = order_of(run)
        lead, finished = make(order)
        lead.run("go")
        assert tuple(finished) == order
        orders.add(tuple(finished))
        records.add(masked(lead))
    return records, orders


def test_a_response_mixing_delegations_and_tool_calls_is_byte_identical_over_20_runs():
    # Every order, then random ones.
    records, orders = records_over_20_runs(
        mixed_lead, lambda run: random.choice(ORDERS) if run >= len(ORDERS) else ORDERS[run]
    )
    assert len(records) == 1, "the same record whatever order the members finished in"
    assert len(orders) == 6
    lead, _ = mixed_lead()
    lead.run("go")
    turn = lead.history[-1]
    # the ordinary calls ran in order; the merges came in call order; the last call saw them all
    assert lead.session_state["log"] == ["one", "two"]
    assert lead.session_state["notes"] == ["from a", "from b", "from c"]
    assert [c.name for c in turn.tool_calls] == ["a", "log_entry", "b", "log_entry", "c", "read_notes"]
    assert turn.tool_calls[-1].result == "from a, from b, from c"
    # each member's own key stays in its own state
    assert not any(key.startswith("own_") for key in lead.session_state)


def test_the_delegations_of_a_mixed_response_run_beside_its_ordinary_calls():
    inside = threading.Barrier(2, timeout=30)  # a hang guard on a busy machine, not a timing

    def meet() -> str:
        """Wait for the other side (both must run at once)."""
        inside.wait()
        return "met"

    helper = member("helper", [tool_call("meet"), "helped"], tools=[meet])
    # The delegation starts with the response; the ordinary call before it runs meanwhile.
    lead = member(
        "lead",
        [[tool_call("meet"), tool_call("helper", task="meet me")], "ok"],
        tools=[helper.as_tool(state="copy"), meet],
    )
    lead.run(
        "go"
    )  # one after another, the first meet would wait in vain (BrokenBarrierError: an error result)
    turn = lead.history[-1]
    assert [c.result for c in turn.tool_calls] == ["met", "helped"]
    assert turn.children[0].tool_calls[0].result == "met"


def test_a_delegation_that_changed_a_path_an_earlier_call_changed_meanwhile_is_refused():
    writer = member("writer", [tool_call("add_note", note="member note"), "wrote"], tools=[add_note])
    lead = member(
        "lead",
        [[tool_call("add_note", note="lead note"), tool_call("writer", task="w")], "ok"],
        tools=[add_note, writer.as_tool(state="copy")],
        session_state={"notes": []},
    )
    lead.run("go")
    ordinary, delegated = lead.history[-1].tool_calls
    assert ordinary.error is None and lead.session_state["notes"] == ["lead note"]
    assert delegated.error_kind == "merge_conflict"
    assert (
        "'writer' and the 'add_note' call before it both changed /notes/0 in one response" in delegated.error
    )
    assert "Give 'notes' a merge handler" in delegated.error
    assert lead.history[-1].children[0].state_after["notes"] == ["member note"]  # kept in its own run
    # with a merge handler the two are combined, in call order
    writer = member("writer", [tool_call("add_note", note="member note"), "wrote"], tools=[add_note])
    lead = member(
        "lead",
        [[tool_call("add_note", note="lead note"), tool_call("writer", task="w")], "ok"],
        tools=[add_note, writer.as_tool(state="copy")],
        session_state={"notes": []},
        state_schema={"notes": {"type": list, "handler": union}},
    )
    lead.run("go")
    assert lead.session_state["notes"] == ["lead note", "member note"]


def test_a_live_delegation_in_a_mixed_response_runs_in_order_on_the_callers_thread():
    seen: list[tuple[str, str]] = []

    def where(session_state) -> str:
        """Note which thread runs this."""
        seen.append((session_state.get("who", "?"), threading.current_thread().name))
        return "here"

    live = member("live", [tool_call("where"), "live done"], tools=[where])
    copied = member("copied", [tool_call("where"), "copied done"], tools=[where])
    lead = member(
        "lead",
        [[tool_call("copied", task="c"), tool_call("live", task="l")], "ok"],
        tools=[copied.as_tool(state="copy"), live.as_tool("live", state="live")],
        session_state={"who": "lead"},
    )
    caller = threading.current_thread().name
    lead.run("go")
    assert [c.result for c in lead.history[-1].tool_calls] == ["copied done", "live done"]
    assert caller in [thread for _, thread in seen]  # the live one: on the caller's thread
    assert any(thread != caller for _, thread in seen)  # the copy one: a thread of its own


# -- the caller's tool hooks around delegations that run side by side ----------------------------


def hooked_lead(
    meet: threading.Barrier | None = None, veto: str | None = None, order: tuple[str, ...] = ("a", "b")
) -> tuple[Agent, list[str]]:
    """A lead with a hook that writes its state before and after each call, delegating to two
    members at once (and one ordinary call before them); the members finish in ``order``."""
    finish = FinishOrder(order)
    finished = finish.finished

    def worker(name: str):
        def work(session_state) -> str:
            """Work (with ``meet``, wait for the sibling; else finish in turn)."""
            if meet is not None:
                meet.wait()
            else:
                finish.wait_turn(name)
            session_state["notes"].append("worked")
            return "worked"

        return work

    def trail(function_name, arguments, function_call, session_state):
        who = arguments.get("task", function_name)
        session_state["trail"].append(f"before {who}")
        if who == veto:
            return "vetoed"
        result = function_call(**arguments)
        session_state["trail"].append(f"after {who}")
        return result

    members = []
    for name in ("a", "b"):
        m = member(name, [tool_call("work"), f"{name} done"], tools=[worker(name)])
        finish.watch(m)
        members.append(m)
    lead = member(
        "lead",
        [
            [
                tool_call("log_entry", entry="first"),
                tool_call("a", task="task a"),
                tool_call("b", task="task b"),
            ],
            "ok",
        ],
        tools=[m.as_tool(state="copy") for m in members] + [log_entry],
        tool_hooks=[trail],
        session_state={"notes": [], "log": [], "trail": []},
        state_schema={
            "notes": {"type": list, "handler": union},
            "log": {"type": list},
            "trail": {"type": list},
        },
    )
    return lead, finished


def test_the_callers_hooks_run_around_each_delegation_on_its_thread_one_at_a_time():
    meet = threading.Barrier(2, timeout=30)  # both members inside at once: a hang guard, not a timing
    lead, _ = hooked_lead(meet)
    lead.run("go")  # one after another, the first member would wait in vain (an error result)
    turn = lead.history[-1]
    assert [c.result for c in turn.tool_calls] == ["logged first", "a done", "b done"]
    # the hooks' code before each member, in call order; then each call's end, in call order
    assert lead.session_state["trail"] == [
        "before task a",
        "before task b",
        "before log_entry",
        "after log_entry",
        "after task a",
        "after task b",
    ]
    assert lead.session_state["notes"] == ["worked"] and lead.session_state["log"] == ["first"]
    assert [c.hooks[0].outcome for c in turn.tool_calls] == ["passed", "passed", "passed"]


def test_hooked_delegations_side_by_side_are_byte_identical_over_20_runs():
    records, orders = records_over_20_runs(
        lambda order: hooked_lead(order=order), lambda run: ("a", "b") if run % 2 else ("b", "a")
    )
    assert len(records) == 1, "the same record whatever order the members finished in"
    assert len(orders) == 2


def test_a_hook_that_answers_for_one_delegation_lets_the_others_go_on():
    lead, _ = hooked_lead(veto="task a", order=("b", "a"))  # b waits for no one
    lead.run("go")
    turn = lead.history[-1]
    assert [c.result for c in turn.tool_calls] == ["logged first", "vetoed", "b done"]
    assert turn.tool_calls[1].answered_by == "trail" and turn.tool_calls[1].child_run_id is None
    assert [c.agent for c in turn.children] == ["b"]
    assert lead.session_state["trail"] == [
        "before task a",
        "before task b",
        "before log_entry",
        "after log_entry",
        "after task b",
    ]


def test_subscribers_get_own_events_children_too_or_children_only_until_unsubscribed() -> None:
    researcher = member("researcher", ["found it"])
    lead = member(
        "lead",
        [tool_call("ask", task="find"), "Done."],
        tools=[researcher.as_tool("ask", "Ask the researcher")],
    )
    seen: dict[str, list[tuple[str, str]]] = {"own": [], "all": [], "below": [], "twice": []}
    for key, children in (("own", False), ("all", True), ("below", "only")):
        lead.subscribe(
            lambda e, key=key: seen[key].append((e.kind, e.path[-1] if isinstance(e, RunStarted) else "")),
            children=children,
        )

    def twice(event: Any) -> None:
        seen["twice"].append((event.kind, event.path[-1] if isinstance(event, RunStarted) else ""))

    first, second = lead.subscribe(twice), lead.subscribe(twice)
    lead.run("go")
    starts = {
        key: [who for kind, who in events if kind == "run_started"]
        for key, events in seen.items()
        if key != "twice"
    }
    assert starts == {"own": ["lead"], "all": ["lead", "researcher"], "below": ["researcher"]}
    assert seen["twice"] == [event for event in seen["own"] for _ in range(2)]
    assert len(seen["all"]) == len(seen["own"]) + len(seen["below"])
    first()  # subscribed twice: called twice until unsubscribed twice
    lead.model.add(tool_call("ask", task="again"), "Done again.")
    researcher.model.add("found more")
    lead.run("again")
    assert [k for k, _ in seen["twice"]].count("run_started") == 3
    second()
    second()  # a second call changes nothing
    with pytest.raises(ConfigurationError, match="takes True, False or 'only'"):
        lead.subscribe(twice, children="yes")  # type: ignore[arg-type]


def test_a_delegate_tool_gets_its_site_from_the_executor_and_refuses_a_direct_call() -> None:
    """The site is the call's injected value, not found through ambient state: called directly
    (outside a run) a delegate tool says what to do instead; a model that sends the injected
    parameter's name as an argument does not replace the site."""
    from agentnb.errors import DelegationError

    helper = Agent("helper", ScriptedModel(["done by helper"]))
    as_tool = helper.as_tool()
    assert as_tool.delegation is not None and as_tool.member is helper
    with pytest.raises(DelegationError, match="runs only as a tool call of an agent's run"):
        as_tool.function(task="x")
    boss = Agent(
        "boss",
        ScriptedModel([tool_call("helper", task="help", _site="forged"), "ok"]),
        tools=[as_tool],
    )
    result = boss.run("go")
    (call,) = result.turn.tool_calls
    assert call.error is None and call.result == "done by helper"
    assert [c.agent for c in result.turn.children] == ["helper"]
