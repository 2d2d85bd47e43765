"""What the inspector is sent about a team turn's tree of runs: nodes, ledgers, swim lanes, a
run of the tree on request (re-scoping the tabs), the prompt sections labelled by cause."""

from __future__ import annotations

import pytest

pytest.importorskip("anywidget")

from collections.abc import Callable, Iterator  # noqa: E402
from typing import Any  # noqa: E402

from test_inspector import Clock, Wire, decode  # noqa: E402

from agentnb import Agent, ScriptedModel, Team, tool_call  # noqa: E402
from agentnb.ipython import compact_events, outbox, run_tree, wire  # noqa: E402
from agentnb.ipython.inspector import Inspector  # noqa: E402
from agentnb.models.tokens import counter_for  # noqa: E402

TICK = outbox.FLUSH_SECONDS


def add_note(note: str, session_state) -> str:
    """Add a note."""
    session_state["notes"].append(note)
    return note


def audit(function_name, function_call, arguments, session_state):
    session_state["audit"].append(function_name)
    return function_call(**arguments)


def nested_team() -> Team:
    analyst = Agent(
        "analyst",
        model=ScriptedModel([tool_call("add_note", note="lunar"), "noted"]),
        tools=[add_note],
        tool_hooks=[audit],
        instructions="Notes: {notes}",
    )
    desk = Team(
        "desk",
        members=[analyst],
        model=ScriptedModel(
            [tool_call("delegate_task_to_member", member_id="analyst", task="note <b>it</b>"), "desk done"]
        ),
        share_member_interactions=True,
    )
    researcher = Agent("researcher", model=ScriptedModel(["moon"]))
    return Team(
        "team",
        members=[researcher, desk],
        model=ScriptedModel(
            [
                [
                    tool_call("delegate_task_to_member", member_id="researcher", task="why?"),
                    tool_call("delegate_task_to_member", member_id="desk", task="file it"),
                ],
                "done",
            ]
        ),
        session_state={"notes": [], "audit": []},
    )


def test_snapshot_carries_the_tree_with_ledgers_and_lanes(monkeypatch):
    team = nested_team()
    inspector = Inspector.for_agent(team)
    Wire(inspector, monkeypatch)
    team.run("go")
    snapshot = decode(inspector.snapshot())
    tree = snapshot[run_tree.RUN_TREE]
    assert tree["path"] == ["team"] and [c["path"] for c in tree["children"]] == [
        ["team", "researcher"],
        ["team", "desk"],
    ]
    desk = tree["children"][1]
    (analyst,) = desk["children"]
    assert analyst["path"] == ["team", "desk", "analyst"]
    delegation = dict(analyst["delegation"])
    call_ms = delegation.pop("call_ms")
    assert delegation == {
        "tool": "delegate_task_to_member",
        "tool_call_id": desk["tool_calls"][0]["id"],
        "task": "note <b>it</b>",
        "answer": "noted",
    }
    # the call that ran the analyst wraps its run (timed in this run, both)
    assert call_ms >= analyst["duration_ms"] > 0
    assert analyst["tool_calls"][0]["hooks"] == [{"name": "audit", "outcome": "passed"}]
    assert tree["tokens_total"] == tree["tokens_own"] + sum(c["tokens_total"] for c in tree["children"])
    # the ledger of the desk's delegation, seen from the team
    ledger = desk["ledger"]
    assert {row["key"] for row in ledger["down"]} == {"notes", "audit"}
    assert [row["chain"] for row in ledger["up"]] == [
        "team ▸ desk ▸ analyst ▸ tool:add_note",
        "team ▸ desk ▸ analyst ▸ hook:audit",
    ]
    assert ledger["refused"] is None
    # the two delegations of one response, as swim lanes in merge (call) order
    (batch,) = tree["lanes"]
    assert [(lane["agent"], lane["merge_order"], lane["conflict"]) for lane in batch["lanes"]] == [
        ("researcher", 1, False),
        ("desk", 2, False),
    ]
    assert [bar["kind"] for bar in batch["lanes"][1]["bars"]] == ["model", "tool", "model"]
    assert all(bar["end_ms"] >= bar["start_ms"] >= 0 for lane in batch["lanes"] for bar in lane["bars"])


def test_need_run_rescopes_to_a_grandchild_with_breadcrumb_and_labelled_sections(monkeypatch):
    team = nested_team()
    inspector = Inspector.for_agent(team)
    sent = Wire(inspector, monkeypatch)
    team.run("go")
    grandchild = team.history[-1].children[1].children[0]
    reply = sent.ask(**{wire.KIND: run_tree.NEED_RUN, wire.TURN_INDEX: 0, run_tree.RUN_ID: grandchild.run_id})
    assert reply[wire.KIND] == run_tree.RUN and reply["breadcrumb"] == "team ▸ desk ▸ analyst (its turn 1)"
    assert [e["kind"] for e in reply[wire.EVENTS]][:2] == ["run_started", "prompt_rendered"]
    assert reply[wire.STATE] == {"notes": ["lunar"], "audit": ["add_note"]}
    sections = [(s["message"], s["source"]) for s in reply["sections"]]
    assert sections == [("system", "instructions"), ("user", "task (delegate_task_to_member)")]
    assert (
        reply["sections"][1]["text"] == "note <b>it</b>"
    )  # text, never markup: the browser sets textContent
    # each part with its tokens, by the counter the member's model has (here the estimate)
    counter = counter_for(team.member("desk").member("analyst").model)
    assert [s["tokens"] for s in reply["sections"]] == [
        counter.count(s["text"]) for s in reply["sections"]
    ] and reply["sections"][1]["tokens"] > 0
    prompt = next(e for e in reply[wire.EVENTS] if e["kind"] == "prompt_rendered")
    assert prompt["tokens"]["user_sections"] == [reply["sections"][1]["tokens"]]
    missing = sent.ask(**{wire.KIND: run_tree.NEED_RUN, wire.TURN_INDEX: 0, run_tree.RUN_ID: "nope"})
    assert missing[wire.KIND] == wire.ERROR and "turn 1 has no run 'nope'" in missing[wire.TEXT]


def test_a_refused_merge_is_in_the_ledger_and_marks_its_lane(monkeypatch):
    a = Agent("a", model=ScriptedModel([tool_call("add_note", note="a"), "a"]), tools=[add_note])
    b = Agent("b", model=ScriptedModel([tool_call("add_note", note="b"), "b"]), tools=[add_note])
    pair = Team(
        "pair",
        members=[a, b],
        model=ScriptedModel(
            [
                [
                    tool_call("delegate_task_to_member", member_id="a", task="x"),
                    tool_call("delegate_task_to_member", member_id="b", task="y"),
                ],
                "ok",
            ]
        ),
        session_state={"notes": []},
    )
    inspector = Inspector.for_agent(pair)
    sent = Wire(inspector, monkeypatch)
    pair.run("go")
    tree = sent.ask(**{wire.KIND: wire.NEED_TURN, wire.TURN_INDEX: 0})[run_tree.RUN_TREE]
    assert "Give 'notes' a merge handler" in tree["children"][1]["ledger"]["refused"]
    assert (
        tree["children"][1]["ledger"]["up"] == []
        and tree["children"][0]["ledger"]["up"][0]["path"] == "/notes/0"
    )
    assert [lane["conflict"] for lane in tree["lanes"][0]["lanes"]] == [False, True]


def test_header_says_which_agent_is_in_charge_after_a_handoff(monkeypatch):
    billing = Agent("billing", model=ScriptedModel(["5 EUR"]))
    triage = Agent("triage", model=ScriptedModel([tool_call("transfer_to_billing")]), handoffs=[billing])
    inspector = Inspector.for_agent(triage)
    Wire(inspector, monkeypatch)
    assert inspector.in_charge == "" and run_tree.IN_CHARGE in inspector.keys  # a synced trait
    triage.run("owe?")
    # set at the run's end: a view that took every event live (its snapshot no newer) hears of it
    assert inspector.in_charge == "billing"
    triage.reset()
    inspector._after_cell()
    assert inspector.in_charge == ""


def test_a_turn_routed_to_the_agent_in_charge_says_so_with_that_runs_tokens(monkeypatch):
    from agentnb.ipython.history_row import turn_summary
    from agentnb.ipython.record import static_text

    billing = Agent("billing", model=ScriptedModel(["Your invoice is 12 EUR.", "Thanks, it is paid."]))
    triage = Agent("triage", model=ScriptedModel([tool_call("transfer_to_billing")]), handoffs=[billing])
    inspector = Inspector.for_agent(triage)
    Wire(inspector, monkeypatch)
    triage.run("How much do I owe?")
    triage.run("I paid it.")
    first, second = triage.history
    # The handoff itself was the model's call: not routed.
    assert "routed" not in turn_summary(first)
    routed = turn_summary(second)["routed"]
    billing_run = second.children[0]
    assert routed["agent"] == "billing" and routed["run_id"] == billing_run.run_id
    assert second.usage.total_tokens == 0 and routed["usage"]["input"] + routed["usage"]["output"] > 0
    assert routed["usage"]["input"] == billing_run.usage_total.input_tokens
    snapshot = decode(inspector.snapshot())
    assert snapshot[run_tree.RUN_TREE]["routed_to"] == billing_run.run_id
    assert snapshot[wire.SUMMARIES][1]["routed"]["agent"] == "billing"
    assert "routed_to" not in run_tree.run_tree(first)
    # The static view: who is in charge, where the turn went, and no handoff call the model never made.
    lines = static_text(triage).split("\n")
    assert lines[1] == "in charge: billing (a handoff left it answering)"
    assert lines[2:] == ["turn 2 · ok · routed to billing", "user: I paid it.", "answer: Thanks, it is paid."]


def test_a_member_runs_node_says_what_its_times_measure(monkeypatch):
    team = nested_team()
    inspector = Inspector.for_agent(team)
    Wire(inspector, monkeypatch)
    team.run("go")
    tree = decode(inspector.snapshot())[run_tree.RUN_TREE]
    for child in tree["children"]:
        call = next(c for c in tree["tool_calls"] if c["id"] == child["delegation"]["tool_call_id"])
        assert call["child_run_id"] == child["run_id"]
        # the call that ran it wraps its run: timed in this run, a child never exceeds it
        assert child["delegation"]["call_ms"] >= child["duration_ms"]
    assert "delegation" not in tree and "routed_to" not in tree


def test_every_place_showing_a_runs_time_is_sent_the_same_value(monkeypatch):
    """The header shows a run's time from its end event, the Runs tab from its node, a lane's
    bar from the tree, Tool calls from the call's event: one value each, never rounded apart (a
    node once said 1.1 ms where the header said 1.2 ms for the same run)."""
    team = nested_team()
    inspector = Inspector.for_agent(team)
    Wire(inspector, monkeypatch)
    team.run("go")
    record = team.history[-1]
    tree = decode(inspector.snapshot())[run_tree.RUN_TREE]
    runs = {run.run_id: run for run in record.walk()}

    def nodes(node: dict[str, Any], parent: Any = None) -> Iterator[tuple[dict[str, Any], Any]]:
        yield node, parent
        for child in node["children"]:
            yield from nodes(child, runs[node["run_id"]])

    checked = 0
    for node, parent in nodes(tree):
        run = runs[node["run_id"]]
        end = next(compact_events.compact_event(e) for e in run.events if type(e).__name__ == "RunFinished")
        assert node["duration_ms"] == end["duration_ms"] == run.duration_ms  # exactly, not rounded
        if parent is not None:
            call = next(c for c in parent.tool_calls if c.tool_call_id == node["delegation"]["tool_call_id"])
            assert node["delegation"]["call_ms"] == compact_events.compact_event(call)["duration_ms"]
        checked += 1
    assert checked == 4
    bars = [bar for batch in tree["lanes"] for lane in batch["lanes"] for bar in lane["bars"]]
    timed = {e.duration_ms for run in runs.values() for e in run.events if hasattr(e, "duration_ms")}
    assert bars and {bar["duration_ms"] for bar in bars} <= timed  # each bar's own call's time


def test_a_turn_without_delegations_carries_no_tree(monkeypatch):
    agent = Agent("solo", model=ScriptedModel(["hi"]))
    inspector = Inspector.for_agent(agent)
    Wire(inspector, monkeypatch)
    agent.run("hello")
    assert run_tree.RUN_TREE not in decode(inspector.snapshot())


def test_the_front_end_spells_the_tree_wire_names_the_same():
    import json
    import re
    from pathlib import Path

    source = (Path(__file__).resolve().parents[2] / "js" / "runs.js").read_text(encoding="utf-8")
    block = re.search(r"export const TREE_WIRE = (\{.*?\});", source, re.S)
    assert block is not None and json.loads(block.group(1)) == run_tree.TREE_WIRE


def test_the_run_end_in_a_batch_carries_the_tree(monkeypatch):
    team = nested_team()
    inspector = Inspector.for_agent(team)
    sent = Wire(inspector, monkeypatch)
    team.run("go")
    ends = [e[wire.EVENT_BODY] for e in sent.events() if e[wire.EVENT_BODY]["kind"] == "run_finished"]
    assert [end[run_tree.RUN_TREE]["path"] for end in ends] == [["team"]]
    assert [c["agent"] for c in ends[0][run_tree.RUN_TREE]["children"]] == ["researcher", "desk"]


def test_member_runs_show_as_they_start_and_end(monkeypatch):
    team = nested_team()
    inspector = Inspector.for_agent(team)
    sent = Wire(inspector, monkeypatch)
    team.run("go")
    progress = [m for m in sent.messages if m[wire.KIND] == run_tree.RUN_PROGRESS]
    # the two delegations run side by side: each run's start comes before its end, a
    # grandchild's within its parent's
    order = [(m[run_tree.RUN_ID], m["status"]) for m in progress]
    started = {m[run_tree.RUN_ID]: "/".join(m[wire.PATH]) for m in progress if m["status"] == "running"}
    assert sorted(started.values()) == ["team/desk", "team/desk/analyst", "team/researcher"]
    ids = {path: run_id for run_id, path in started.items()}
    for run_id in started:
        assert order.index((run_id, "running")) < order.index((run_id, "ok"))
    desk, analyst = ids["team/desk"], ids["team/desk/analyst"]
    assert (
        order.index((desk, "running"))
        < order.index((analyst, "running"))
        < order.index((analyst, "ok"))
        < order.index((desk, "ok"))
    )
    assert {m[wire.TURN_INDEX] for m in progress} == {0}


class Streaming(ScriptedModel):
    """A scripted model that calls ``between(i)`` after each piece of text it streams."""

    def __init__(self, steps: list[Any], between: Callable[[int], None]) -> None:
        super().__init__(steps)
        self.between = between

    def stream(self, request: Any) -> Iterator[Any]:
        pieces = 0
        for item in super().stream(request):
            yield item
            if isinstance(item, str):
                self.between(pieces)
                pieces += 1


def run_texts(sent: Wire) -> list[tuple[int, dict[str, Any]]]:
    """(message number, item) of every ``run_text`` item sent, in order."""
    return [
        (n, item)
        for n, m in enumerate(sent.messages)
        if m[wire.KIND] == wire.BATCH
        for item in m[wire.ITEMS]
        if item[wire.EVENT_BODY]["kind"] == run_tree.RUN_TEXT
    ]


def test_a_members_text_streams_into_its_node_throttled_like_the_turns(monkeypatch):
    clock = Clock()  # time passes only when the member's model says so
    # The flush thread's deadline passes after the member's second piece of text.
    researcher = Agent(
        "researcher",
        model=Streaming(
            ["Tides follow <b>the</b> moon and the sun."], lambda i: clock.advance(TICK) if i == 1 else None
        ),
    )
    team = Team(
        "team",
        members=[researcher],
        model=ScriptedModel(
            [tool_call("delegate_task_to_member", member_id="researcher", task="why?"), "The moon."]
        ),
    )
    inspector = Inspector.for_agent(team)
    sent = Wire(inspector, monkeypatch, clock)
    team.run("tides?")
    clock.advance(TICK)  # the team's answer, held back after the last batch, goes at its deadline
    child = team.history[-1].children[0]
    kinds = [m[wire.KIND] for m in sent.messages]
    progress = [n for n, m in enumerate(sent.messages) if m[wire.KIND] == run_tree.RUN_PROGRESS]
    start, end = progress
    texts = run_texts(sent)
    # two items for seven pieces: what came within one flush window is one item
    assert [item[wire.EVENT_BODY]["text"] for _, item in texts] == [
        "Tides follow ",
        "<b>the</b> moon and the sun.",
    ]
    for n, item in texts:
        assert start < n < end  # after the member's start, before its end: live
        assert item[wire.TURN_INDEX] == 0
        assert item[wire.EVENT_BODY] == {
            "kind": "run_text",
            run_tree.RUN_ID: child.run_id,
            wire.PATH: ["team", "researcher"],
            "call": 0,
            "text": item[wire.EVENT_BODY]["text"],
        }
    # the first went out on the flush thread's call at the deadline, while the member still streamed
    assert kinds[texts[0][0]] == wire.BATCH and texts[1][0] > texts[0][0]
    assert sent.messages[start]["call"] == 0 and sent.messages[start]["parent"] == team.history[-1].run_id
    # the member's text never reaches the team's own answer line
    team_text = "".join(
        e[wire.EVENT_BODY]["text"] for e in sent.events() if e[wire.EVENT_BODY]["kind"] == "text_delta"
    )
    assert team_text == "The moon."
    assert "".join(item[wire.EVENT_BODY]["text"] for _, item in texts) == child.content


def test_members_streaming_side_by_side_cost_one_item_each_per_batch(monkeypatch):
    clock = Clock()
    a = Agent("a", model=ScriptedModel(["alpha beta gamma delta"]))
    b = Agent("b", model=ScriptedModel(["one two three four five"]))
    team = Team(
        "pair",
        members=[a, b],
        model=ScriptedModel(
            [
                [
                    tool_call("delegate_task_to_member", member_id="a", task="x"),
                    tool_call("delegate_task_to_member", member_id="b", task="y"),
                ],
                "ok",
            ]
        ),
    )
    inspector = Inspector.for_agent(team)
    sent = Wire(inspector, monkeypatch, clock)
    team.run("go")
    clock.advance(TICK)
    children = {c.agent: c for c in team.history[-1].children}
    texts = run_texts(sent)
    by_batch: dict[int, list[str]] = {}
    for n, item in texts:
        by_batch.setdefault(n, []).append(item[wire.EVENT_BODY][run_tree.RUN_ID])
    assert all(
        len(ids) == len(set(ids)) for ids in by_batch.values()
    )  # joined per run, however they interleaved
    for child in children.values():
        assert (
            "".join(
                i[wire.EVENT_BODY]["text"]
                for _, i in texts
                if i[wire.EVENT_BODY][run_tree.RUN_ID] == child.run_id
            )
            == child.content
        )
    starts = [m for m in sent.messages if m[wire.KIND] == run_tree.RUN_PROGRESS and m["status"] == "running"]
    assert {(m["parent"], m["call"]) for m in starts} == {
        (team.history[-1].run_id, 0)
    }  # one response's: lanes
    # each names its place in the response, whichever started first (the lanes' order)
    assert sorted((m["order"], "/".join(m[wire.PATH])) for m in starts) == [(0, "pair/a"), (1, "pair/b")]


def test_a_snapshot_while_a_member_streams_holds_its_text_so_far(monkeypatch):
    taken: list[dict[str, Any]] = []
    inspector: Inspector | None = None

    def look(i: int) -> None:
        if i == 2:
            assert inspector is not None
            taken.append(decode(inspector.snapshot()))

    researcher = Agent("researcher", model=Streaming(["Tides follow the moon."], look))
    team = Team(
        "team",
        members=[researcher],
        model=ScriptedModel(
            [tool_call("delegate_task_to_member", member_id="researcher", task="why?"), "ok"]
        ),
    )
    inspector = Inspector.for_agent(team)
    Wire(inspector, monkeypatch)
    team.run("tides?")
    (snap,) = taken
    (live,) = snap[run_tree.LIVE_RUNS]
    assert (live[wire.PATH], live["status"], live["text"], live["call"]) == (
        ["team", "researcher"],
        "running",
        "Tides follow the ",
        0,
    )
    assert run_tree.LIVE_RUNS not in decode(inspector.snapshot())  # the turn ended: its tree says it all


def test_a_picked_member_runs_large_state_goes_lazily_and_expands_on_demand(monkeypatch):
    import json

    from agentnb.ipython import lazy

    own = {f"k{i}": f"value {i}" for i in range(10_000)}
    researcher = Agent("researcher", model=ScriptedModel(["done"]), session_state={"own": own})
    team = Team(
        "team",
        members=[researcher],
        model=ScriptedModel(
            [tool_call("delegate_task_to_member", member_id="researcher", task="look"), "ok"]
        ),
        session_state={"notes": []},
    )
    inspector = Inspector.for_agent(team)
    sent = Wire(inspector, monkeypatch)
    team.run("go")
    child = team.history[-1].children[0]
    reply = sent.ask(**{wire.KIND: run_tree.NEED_RUN, wire.TURN_INDEX: 0, run_tree.RUN_ID: child.run_id})
    # what goes on selection stays within the lazy form's budget, with the rest listed as stubs
    assert len(json.dumps(reply[wire.STATE])) <= lazy.STATE_BYTES * 1.1
    assert sent.bodies[-1] < 2 * lazy.STATE_BYTES  # the whole reply: not 10,000 keys' worth
    held = reply[wire.STATE]["own"]
    assert 0 < len(held) < 10_000 and reply[wire.STUBS]["/own"] == 10_000
    assert list(held) == [f"k{i}" for i in range(len(held))]
    # expanding the node fetches it from that run's state, by turn and run
    page = sent.ask(
        **{
            wire.KIND: wire.NEED_SUBTREE,
            wire.TURN_INDEX: 0,
            run_tree.RUN_ID: child.run_id,
            wire.PATH: "/own",
            wire.FROM: len(held),
        }
    )
    assert (
        page[wire.KIND] == wire.SUBTREE
        and page[run_tree.RUN_ID] == child.run_id
        and page[wire.SIZE] == 10_000
    )
    first = len(held)
    assert (
        list(page[wire.VALUE])[:3] == [f"k{first}", f"k{first + 1}", f"k{first + 2}"]
        and page[wire.VALUE][f"k{first}"] == f"value {first}"
    )
    assert len(json.dumps(page[wire.VALUE])) <= lazy.STATE_BYTES * 1.1
    whole = sent.ask(
        **{
            wire.KIND: wire.NEED_SUBTREE,
            wire.TURN_INDEX: 0,
            run_tree.RUN_ID: child.run_id,
            wire.PATH: "/own/k9999",
            wire.WHOLE: True,
        }
    )
    assert whole[wire.VALUE] == "value 9999"
    # the member's own keys are its run's, not the team's: asked by turn alone, there is no such node
    team_only = sent.ask(
        **{wire.KIND: wire.NEED_SUBTREE, wire.TURN_INDEX: 0, wire.PATH: "/own", wire.FROM: 0}
    )
    assert team_only[wire.KIND] == wire.ERROR
