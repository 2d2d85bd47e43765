"""agentnb.state.tracking / tracked / frozen: a checkpoint compares only what was written, yet every
patch is the one the whole states give, and every snapshot is the state it was taken of."""

from __future__ import annotations

import copy
import dataclasses
import heapq
import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from agentnb import Agent, ScriptedModel, tool_call
from agentnb.events import StateCause
from agentnb.state.diff import _dump_any, apply_patch, json_equal, make_patch
from agentnb.state.frozen import freeze, thaw
from agentnb.state.state import State
from agentnb.state.tracked import TrackedDict
from agentnb.state.tracking import StateTracker, _grown_or_cut

keys = st.sampled_from(["a", "b", "c", "x/y", "t~1", "", "ü"])
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 3),
    st.floats(-2, 2, allow_nan=False),
    st.sampled_from(["", "s", "milk"]),
)
values = st.recursive(
    scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(keys, inner, max_size=4)),
    max_leaves=10,
)
states = st.dictionaries(keys, values, max_size=5)
texts = st.sampled_from(["", "s", "milk"])
USER = StateCause(kind="user")


@dataclasses.dataclass
class Box:
    """A custom object in the state: it cannot be tracked, so its key is compared."""

    v: Any = 0


def plain(value: Any) -> Any:
    """The state as plain data, as JSON would hold it: tracked containers copied into dicts and
    lists, and one container in two places copied twice (a patch applies to JSON)."""
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [plain(v) for v in value]
    return copy.deepcopy(value)


def same(a: Any, b: Any) -> bool:
    """Equal as JSON, key order included."""
    return json.dumps(a, default=lambda o: {"box": o.v}) == json.dumps(
        b, default=lambda o: {"box": o.v}
    ) and json_equal(a, b)


def containers(value: Any, out: list[Any] | None = None) -> list[Any]:
    """Every dict and list in ``value``, depth first (each once, however often it appears)."""
    out = [] if out is None else out
    if isinstance(value, (dict, list)) and not any(c is value for c in out):
        out.append(value)
        for item in value.values() if isinstance(value, dict) else value:
            containers(item, out)
    return out


def inside(container: Any, target: Any) -> bool:
    return any(c is target for c in containers(container))


class Mutator:
    """Random in-place mutations of a live state, as tools make them: through the state's own
    containers, through references kept to what they stored, on custom objects."""

    def __init__(self, data: st.DataObject) -> None:
        self.data = data
        self.kept: list[Any] = []  # plain containers a tool stored and still holds
        self.boxes: list[Box] = []

    def value(self) -> Any:
        kind = self.data.draw(st.sampled_from(["json", "json", "json", "kept", "box"]))
        if kind == "box":
            box = Box(self.data.draw(texts))  # Box(0) == Box(False): equal objects are not a change
            self.boxes.append(box)
            return box
        value = self.data.draw(values)
        if kind == "kept" and isinstance(value, (dict, list)):
            self.kept.append(value)
        return value

    def step(self, root: dict[str, Any]) -> None:
        draw = self.data.draw
        outside = self.kept + self.boxes
        if outside and draw(st.integers(0, 4)) == 0:
            target = draw(st.sampled_from(outside))
            if isinstance(target, Box):
                target.v = draw(texts)
            elif isinstance(target, dict):
                target[draw(keys)] = draw(scalars)
            else:
                target.append(draw(scalars))
            return
        everything = containers(root)
        target = draw(st.sampled_from(everything))
        if draw(st.integers(0, 5)) == 0:
            # Store a container of the state somewhere else too (aliasing), never inside itself.
            source = draw(st.sampled_from(everything))
            if source is not root and not inside(source, target):
                self.put(target, source)
                return
        if isinstance(target, dict):
            self.dict_op(target)
        else:
            self.list_op(target)

    def put(self, target: Any, value: Any) -> None:
        if isinstance(target, dict):
            target[self.data.draw(keys)] = value
        else:
            target.append(value)

    def dict_op(self, d: dict[str, Any]) -> None:
        draw = self.data.draw
        op = draw(
            st.sampled_from(["set", "set", "del", "pop", "popitem", "setdefault", "update", "ior", "clear"])
        )
        key = draw(keys)
        if op == "set":
            d[key] = self.value()
        elif op == "del" and key in d:
            del d[key]
        elif op == "pop":
            d.pop(key, None)
        elif op == "popitem" and d:
            d.popitem()
        elif op == "setdefault":
            d.setdefault(key, self.value())
        elif op == "update":
            d.update({draw(keys): self.value()}, **{"kw": draw(scalars)})
        elif op == "ior":
            d |= {key: self.value()}
        elif op == "clear" and draw(st.booleans()):
            d.clear()

    def list_op(self, lst: list[Any]) -> None:
        draw = self.data.draw
        op = draw(
            st.sampled_from(
                [
                    "append",
                    "append",
                    "extend",
                    "insert",
                    "pop",
                    "remove",
                    "setitem",
                    "slice",
                    "delslice",
                    "sort",
                    "reverse",
                    "iadd",
                    "imul",
                ]
            )
        )
        if op == "append":
            lst.append(self.value())
        elif op == "extend":
            lst.extend([self.value(), draw(scalars)])
        elif op == "insert":
            lst.insert(draw(st.integers(-2, 3)), self.value())
        elif op == "pop" and lst:
            lst.pop(draw(st.integers(-len(lst), len(lst) - 1)))
        elif op == "remove" and lst:
            lst.remove(lst[draw(st.integers(0, len(lst) - 1))])
        elif op == "setitem" and lst:
            lst[draw(st.integers(0, len(lst) - 1))] = self.value()
        elif op == "slice":
            lst[0 : draw(st.integers(0, 2))] = [self.value()]
        elif op == "delslice":
            del lst[draw(st.integers(0, 2)) :]
        elif op == "sort":
            lst.sort(key=_dump_any)
        elif op == "reverse":
            lst.reverse()
        elif op == "iadd":
            lst += [draw(scalars)]
        elif op == "imul" and len(lst) < 4:
            lst *= draw(st.integers(0, 2))


@settings(max_examples=200, deadline=None)
@given(states, st.data())
def test_every_patch_is_the_whole_states_patch_and_replays_the_state(initial, data):
    state = State(data=initial)
    tracker = StateTracker(state, "run", None)
    mutate = Mutator(data)
    reference = plain(state.data)  # the state at the last checkpoint, kept apart from agentnb
    replayed = plain(state.data)
    older = [(tracker.snapshot, reference)]
    for _ in range(data.draw(st.integers(1, 6))):
        turn = data.draw(st.sampled_from(["same", "same", "next", "restore", "replace", "merge"]))
        if turn == "next":  # a new turn starts where the last one ended
            tracker = StateTracker(state, "run", tracker.snapshot)
        elif turn == "restore":  # a turn of an older history, the state put back as it was
            tracker.drain()
            start, reference = data.draw(st.sampled_from(older))
            state.replace_data(thaw(start))
            mutate.kept.clear()
            mutate.boxes.clear()
            tracker = StateTracker(state, "run", start)
            replayed = plain(reference)
        elif turn == "replace":
            state.replace_data(copy.deepcopy(data.draw(states)))
        elif turn == "merge":
            state.merge_data(data.draw(st.dictionaries(keys, values, max_size=2)))
        for _ in range(data.draw(st.integers(0, 4))):
            mutate.step(state.data)
        tracker.checkpoint(USER)
        now = plain(state.data)
        patches = [change.patch for change in tracker.drain()]
        patch = [dict(op) for p in patches for op in p]
        # What comparing the whole states gives (make_patch is property-tested against jsonpatch).
        assert patch == make_patch(reference, now)
        replayed = plain(apply_patch(replayed, patch))
        assert json_equal(replayed, now)
        # The snapshot is the state, key order included; it never aliases the live state.
        assert same(thaw(tracker.snapshot), now)
        assert tracker.snapshot is state.journal.image
        assert same(thaw(state.frozen()), now)
        reference = now
        older.append((tracker.snapshot, now))


@settings(max_examples=150, deadline=None)
@given(states, st.data())
def test_rollback_puts_back_the_state_of_the_snapshot(initial, data):
    state = State(data=initial)
    tracker = StateTracker(state, "run", None)
    mutate = Mutator(data)
    for _ in range(data.draw(st.integers(0, 3))):
        mutate.step(state.data)
    tracker.checkpoint(USER)
    start, kept = tracker.snapshot, plain(state.data)
    for _ in range(data.draw(st.integers(1, 4))):
        for _ in range(data.draw(st.integers(0, 3))):
            mutate.step(state.data)
        if data.draw(st.booleans()):
            tracker.checkpoint(USER)
    tracker.rollback(start)
    assert same(plain(state.data), kept)
    assert tracker.drain() == []
    # Tracking goes on from there: the next change is seen exactly.
    mutate.kept.clear()
    mutate.boxes.clear()
    mutate.step(state.data)
    tracker.checkpoint(USER)
    patch = [dict(op) for change in tracker.drain() for op in change.patch]
    assert patch == make_patch(kept, plain(state.data))


def test_live_containers_stay_plain_to_their_users():
    state = State(data={"items": [], "cfg": {"n": 1}})
    assert isinstance(state.data, dict) and isinstance(state.data["items"], list)
    assert json.dumps(state.data) == '{"items": [], "cfg": {"n": 1}}'
    assert str(state.data) == "{'items': [], 'cfg': {'n': 1}}"
    copied = copy.deepcopy(state.data)
    assert type(copied) is dict and type(copied["items"]) is list
    assert type(state.get("cfg")) is dict
    assert type(copy.copy(state.data["items"])) is list


def test_a_container_a_tool_keeps_is_compared_until_it_is_the_states_alone():
    state = State(data={})
    tracker = StateTracker(state, "run", None)
    mine = {"n": 1}
    state.data["cfg"] = mine  # the tool still holds ``mine``
    tracker.checkpoint(USER)
    assert type(state.data["cfg"]) is dict  # loose: the very object the tool stored
    mine["n"] = 2  # through the tool's own reference
    tracker.checkpoint(USER)
    (change,) = tracker.drain()[1:]
    assert change.patch == ({"op": "replace", "path": "/cfg/n", "value": 2},)
    del mine
    tracker.checkpoint(USER)  # nothing changed; now only the state holds it
    assert type(state.data["cfg"]) is TrackedDict and state.data["cfg"] == {"n": 2}


def test_custom_objects_and_sets_are_compared_at_every_checkpoint():
    box, tags = Box(1), {"a"}
    state = State(data={})
    tracker = StateTracker(state, "run", None)
    state.data.update(box=box, tags=tags)
    tracker.checkpoint(USER)
    box.v = 5
    state.data["tags"].add("b")
    tracker.checkpoint(USER)
    ops = [op for change in tracker.drain()[1:] for op in change.patch]
    assert [op["path"] for op in ops] == ["/box", "/tags"]
    assert thaw(tracker.snapshot)["box"] == Box(5) and thaw(tracker.snapshot)["box"] is not box


def test_one_container_in_two_places_changes_both():
    state = State(data={"a": {"n": 1}})
    tracker = StateTracker(state, "run", None)
    state.data["b"] = state.data["a"]
    tracker.checkpoint(USER)
    state.data["a"]["n"] = 2
    tracker.checkpoint(USER)
    ops = [op for change in tracker.drain()[1:] for op in change.patch]
    assert ops == [
        {"op": "replace", "path": "/a/n", "value": 2},
        {"op": "replace", "path": "/b/n", "value": 2},
    ]


def test_a_container_taken_out_and_changed_later_does_not_change_the_state():
    state = State(data={"a": {"n": 1}, "b": [{"m": 1}]})
    tracker = StateTracker(state, "run", None)
    taken, item = state.data.pop("a"), state.data["b"].pop()
    tracker.checkpoint(USER)
    tracker.drain()
    taken["n"], item["m"] = 2, 2
    tracker.checkpoint(USER)
    assert tracker.drain() == [] and thaw(tracker.snapshot) == {"b": []}


def test_two_states_sharing_a_container_each_see_its_changes():
    one, two = State(data={"shared": {"n": 1}}), State(data={})
    t1, t2 = StateTracker(one, "r1", None), StateTracker(two, "r2", None)
    two.data["shared"] = one.data["shared"]
    t2.checkpoint(USER)
    one.data["shared"]["n"] = 2
    t1.checkpoint(USER)
    t2.checkpoint(USER)
    assert [c.patch for c in t2.drain()][-1] == ({"op": "replace", "path": "/shared/n", "value": 2},)


def test_a_list_changed_by_c_code_is_seen_once_it_is_set_again():
    # heapq's functions write into a list (subclasses too) without calling its methods; setting
    # the key again says it was written (README, State).
    state = State(data={"heap": [3, 5]})
    tracker = StateTracker(state, "run", None)
    heapq.heappush(state.data["heap"], 1)
    state.data["heap"] = state.data["heap"]
    tracker.checkpoint(USER)
    assert [op for change in tracker.drain() for op in change.patch] == make_patch(
        {"heap": [3, 5]}, {"heap": [1, 5, 3]}
    )
    assert thaw(tracker.snapshot) == {"heap": [1, 5, 3]}


def test_a_turn_reports_nested_in_place_changes_by_their_paths():
    def set_node(session_state, key: str, value: int) -> str:
        session_state["nodes"][key]["value"] = value
        session_state["nodes"][key]["tags"].append("seen")
        return "ok"

    nodes = {f"n{i}": {"value": i, "tags": []} for i in range(100)}
    agent = Agent(
        "a",
        ScriptedModel([tool_call("set_node", key="n7", value=-1), "done"]),
        tools=[set_node],
        session_state={"nodes": nodes},
    )
    agent.run("go")
    (change,) = agent.history[0].state_changes
    assert change.patch == (
        {"op": "replace", "path": "/nodes/n7/value", "value": -1},
        {"op": "add", "path": "/nodes/n7/tags/0", "value": "seen"},
    )
    record = agent.history[0]
    assert record.frozen_after["nodes"]["n8"] is record.frozen_start["nodes"]["n8"]
    assert record.state_after["nodes"]["n7"] == {"value": -1, "tags": ["seen"]}
    assert record.state_start["nodes"]["n7"] == {"value": 7, "tags": []}


_leaves = st.one_of(
    st.text(max_size=3),
    st.integers(-2, 2),
    st.booleans(),
    st.none(),
    st.floats(allow_nan=False),
    st.just(-0.0),
    st.lists(st.integers(0, 1), max_size=2),
)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(_leaves, max_size=5),
    st.lists(_leaves, max_size=3),
    st.sampled_from(["items", "a/b", "t~x", ""]),
    st.booleans(),
)
def test_a_top_level_list_grown_or_cut_at_its_end_gets_the_patch_comparing_makes(start, extra, key, grow):
    # The checkpoint's shortcut for one top-level list (an append, a reset to []) gives what
    # comparing the two states gives, or leaves it to that comparison.
    before, after = (start, start + extra) if grow else (start + extra, start)
    fast = _grown_or_cut(key, freeze(before), list(after))
    if fast is None:
        assert not extra or any(type(v) not in (str, int, bool, type(None)) for v in start + extra)
        return
    assert fast == make_patch({key: before}, {key: after})
    assert apply_patch({key: copy.deepcopy(before)}, fast) == {key: after}
