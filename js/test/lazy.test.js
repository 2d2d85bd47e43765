import assert from "node:assert/strict";
import test from "node:test";

import { Cut, graft, heldCount, isPartial, isWhole, markStubs, sizeOf } from "../lazy.js";
import { PatchError, applyPatch, copyJSON } from "../patch.js";
import { createStore } from "../store.js";
import { WIRE } from "../wire.js";
import { Model, batch, event, finished, snapshot, started, summary } from "./model.js";

/** What the kernel sends for {"items": [...], "nodes": {n0..n9999}, "note": 5000 chars}: the
 * first 3 nodes (a small page for the tests), the note's head. */
function lazyState() {
  const nodes = {};
  for (let i = 0; i < 3; i++) nodes["n" + i] = { value: i, tags: [] };
  const state = { items: ["milk"], nodes, note: "x".repeat(10) };
  return markStubs(state, { "/nodes": 10000, "/note": 5000, "/nodes/n2/tags": 4 });
}

test("placeholders mark what is held in part: containers keep their full size, long strings become cut", () => {
  const state = lazyState();
  assert.equal(isPartial(state.nodes), true);
  assert.equal(sizeOf(state.nodes), 10000);
  assert.equal(heldCount(state.nodes), 3);
  assert.ok(state.note instanceof Cut);
  assert.deepEqual([state.note.head.length, state.note.size], [10, 5000]);
  assert.equal(sizeOf(state.nodes.n2.tags), 4);
  assert.equal(sizeOf(state.items), 1);
  assert.equal(isWhole(state.items), true);
  assert.equal(isWhole(state.nodes.n0), true);
  assert.equal(isWhole(state.nodes), false);
  assert.equal(isWhole(state), false);
  assert.equal(JSON.parse('{"head": "x", "size": 3}') instanceof Cut, false, "no JSON value is mistaken for a cut");
});

test("a patch inside the part held applies; one inside a part not held changes only the sizes it moves", () => {
  const state = lazyState();
  applyPatch(state, [
    { op: "replace", path: "/nodes/n1/value", value: -1 },
    { op: "replace", path: "/nodes/n7919/value", value: -7919 }, // not held: nothing to do
    { op: "add", path: "/nodes/n7919/tags/-", value: "t" },
    { op: "add", path: "/nodes/n10000", value: { value: 10000, tags: [] } }, // a new key goes last
    { op: "remove", path: "/nodes/n5" },
    { op: "remove", path: "/nodes/n0" },
    { op: "add", path: "/items/-", value: "eggs" },
    { op: "add", path: "/nodes/n2/tags/-", value: "late" }, // appended past the 0 held of 4
  ]);
  assert.deepEqual(Object.keys(state.nodes), ["n1", "n2"]);
  assert.equal(state.nodes.n1.value, -1);
  assert.equal(sizeOf(state.nodes), 10000 + 1 - 2);
  assert.deepEqual(state.items, ["milk", "eggs"]);
  assert.deepEqual(state.nodes.n2.tags, []);
  assert.equal(sizeOf(state.nodes.n2.tags), 5);
  // Replacing a node held in part gives a whole value; a cut string replaced is a string again.
  applyPatch(state, [{ op: "replace", path: "/nodes/n2/tags", value: ["a"] }, { op: "replace", path: "/note", value: "short" }]);
  assert.equal(isPartial(state.nodes.n2.tags), false);
  assert.equal(state.note, "short");
});

test("a partial array takes inserts and removals in the part held and counts the rest", () => {
  const rows = markStubs({ rows: [0, 1, 2] }, { "/rows": 6 });
  applyPatch(rows, [{ op: "add", path: "/rows/1", value: "in" }, { op: "remove", path: "/rows/5" }, { op: "add", path: "/rows/-", value: "end" }]);
  assert.deepEqual(rows.rows, [0, "in", 1, 2]);
  assert.equal(sizeOf(rows.rows), 7);
  applyPatch(rows, [{ op: "remove", path: "/rows/0" }, { op: "replace", path: "/rows/5", value: "past" }]);
  assert.deepEqual(rows.rows, ["in", 1, 2]);
  assert.equal(sizeOf(rows.rows), 6);
  assert.throws(() => applyPatch(rows, [{ op: "replace", path: "/rows/6", value: 0 }]), PatchError, "past the end of the whole array");
});

test("a move or copy from a part not held cannot be followed: the state is fetched again", () => {
  assert.throws(() => applyPatch(lazyState(), [{ op: "move", from: "/nodes/n7", path: "/items/0" }]), /moved from a part not held/);
  assert.throws(() => applyPatch(lazyState(), [{ op: "copy", from: "/nodes/n7", path: "/x" }]), /copied from a part not held/);
  const state = lazyState();
  applyPatch(state, [{ op: "move", from: "/nodes", path: "/graph" }, { op: "test", path: "/graph/n9", value: 1 }]);
  assert.equal(sizeOf(state.graph), 10000, "a moved container keeps its mark");
});

test("a copy keeps what is held in part marked", () => {
  const copy = copyJSON(lazyState());
  assert.equal(sizeOf(copy.nodes), 10000);
  assert.ok(copy.note instanceof Cut);
  assert.equal(sizeOf(copy.nodes.n2.tags), 4);
});

test("a page of children is grafted after the ones held; one that does not fit changes nothing", () => {
  const state = lazyState();
  const page = { from: 3, size: 10000, value: { n3: { value: 3, tags: ["a", "b", "c"] }, n4: { value: 4, tags: [] } }, stubs: { "/nodes/n3/tags": 9 } };
  assert.equal(graft(state, "/nodes", { ...page, from: 2 }), false);
  assert.equal(heldCount(state.nodes), 3);
  assert.equal(graft(state, "/nodes", page), true);
  assert.deepEqual(Object.keys(state.nodes), ["n0", "n1", "n2", "n3", "n4"]);
  assert.equal(sizeOf(state.nodes), 10000);
  assert.equal(sizeOf(state.nodes.n3.tags), 9);
  assert.equal(graft(state, "/nodes", page), false, "the same page twice");
  // The last page: the container is whole.
  const tags = markStubs({ t: ["a"] }, { "/t": 2 });
  assert.equal(graft(tags, "/t", { from: 1, size: 2, value: ["b"], stubs: {} }), true);
  assert.equal(isPartial(tags.t), false);
  assert.deepEqual(tags.t, ["a", "b"]);
  // A whole value replaces what was held of it.
  assert.equal(graft(state, "/note", { whole: true, from: 0, size: 5000, value: "y".repeat(5000) }), true);
  assert.equal(state.note.length, 5000);
  assert.equal(graft(state, "/gone", { whole: true, from: 0, size: 1, value: 1 }), false);
});

function bigSnapshot(seq = 3) {
  const nodes = { n0: { value: 0 }, n1: { value: 1 } };
  const snap = snapshot({ seq, turns: [summary(0)], turn: 0, events: [started("m0"), finished("a0")], state: { nodes } });
  snap[WIRE.STUBS] = { "/nodes": 5 };
  return snap;
}

test("the store asks once for a part not held and puts the reply into the state it came from", () => {
  const model = new Model({ [WIRE.TRAIT_SNAPSHOT]: bigSnapshot() });
  const store = createStore(model);
  const turn = store.turns[0];
  assert.equal(sizeOf(turn.state.nodes), 5);
  store.needSubtree({ turn: 0 }, "/nodes", { from: 2 });
  store.needSubtree({ turn: 0 }, "/nodes", { from: 2 });
  store.needSubtree({ live: true }, "/nodes", { whole: true });
  assert.deepEqual(model.sent, [
    { [WIRE.KIND]: WIRE.NEED_SUBTREE, [WIRE.PATH]: "/nodes", [WIRE.FROM]: 2, [WIRE.TURN_INDEX]: 0 },
    { [WIRE.KIND]: WIRE.NEED_SUBTREE, [WIRE.PATH]: "/nodes", [WIRE.FROM]: 0, [WIRE.WHOLE]: true, [WIRE.LIVE]: true },
  ]);
  const before = { state: turn.v.state, subtrees: store.version.subtrees };
  model.receive({ [WIRE.KIND]: WIRE.SUBTREE, [WIRE.PATH]: "/nodes", [WIRE.TURN_INDEX]: 0, [WIRE.LIVE]: false, [WIRE.FROM]: 2, [WIRE.WHOLE]: false, [WIRE.SIZE]: 5, [WIRE.VALUE]: { n2: { value: 2 }, n3: { value: 3 } }, [WIRE.STUBS]: {} });
  assert.deepEqual(Object.keys(turn.state.nodes), ["n0", "n1", "n2", "n3"]);
  assert.equal(sizeOf(turn.state.nodes), 5);
  assert.equal(turn.v.state, before.state + 1);
  assert.equal(store.version.subtrees, before.subtrees + 1);
  assert.equal(store.applied.subtrees, 1);
  store.needSubtree({ turn: 0 }, "/nodes", { from: 2 });
  assert.equal(model.sent.length, 3, "answered: it may be asked again");
});

test("a batch applies its items in order, skips those a snapshot covered, and a gap asks for a snapshot", () => {
  const model = new Model({ [WIRE.TRAIT_SNAPSHOT]: bigSnapshot(3) });
  const store = createStore(model);
  const patch = (path, value) => ({ kind: "state_changed", patch: [{ op: "replace", path, value }], cause: { kind: "tool", label: "tool:t" } });
  // Items 2..5: the first two are covered by the snapshot (seq 3).
  model.receive(batch(2, [[0, started("old")], [0, finished("old")], [1, started("new")], [1, patch("/nodes/n4/value", -4)]]));
  assert.equal(store.seq, 5);
  assert.equal(store.applied.events, 2);
  assert.equal(store.turns[0].message, "m0");
  const turn = store.turns[1];
  assert.equal(turn.message, "new");
  assert.deepEqual(turn.state.nodes, { n0: { value: 0 }, n1: { value: 1 } }, "a change in a part not held");
  assert.equal(sizeOf(turn.state.nodes), 5);
  model.receive(batch(6, [[1, patch("/nodes/n1/value", -1)], [1, finished("done")]]));
  assert.equal(turn.state.nodes.n1.value, -1);
  assert.equal(turn.status, "ok");
  assert.deepEqual(model.sent, [], "followed: nothing to fetch");
  model.receive(event(9, 2, started()));
  assert.equal(store.applied.gaps, 1);
  assert.deepEqual(model.sent, [{ [WIRE.KIND]: WIRE.SYNC }]);
});

test("each store parses the trait afresh: two views never share the state they patch", () => {
  const model = new Model({ [WIRE.TRAIT_SNAPSHOT]: bigSnapshot() });
  const a = createStore(model);
  const b = createStore(model);
  assert.notEqual(a.turns[0].state, b.turns[0].state);
  model.receive(batch(4, [[1, started()], [1, { kind: "state_changed", patch: [{ op: "add", path: "/nodes/n1/extra", value: 1 }], cause: { kind: "user", label: "user" } }]]));
  assert.deepEqual(a.turns[1].state.nodes.n1, { value: 1, extra: 1 });
  assert.deepEqual(b.turns[1].state.nodes.n1, { value: 1, extra: 1 });
  assert.deepEqual(a.turns[0].state.nodes.n1, { value: 1 });
});

test("edits patched onto a state held in part: followed where they can be, else the state now is asked for", () => {
  const model = new Model({ [WIRE.TRAIT_SNAPSHOT]: bigSnapshot() });
  const store = createStore(model);
  const edited = (patch) => ({ [WIRE.KIND]: WIRE.EDITED, [WIRE.EDITS]: [{ path: "/nodes/n1/value", how: "changed", old: "1", new: "-1" }], [WIRE.LIVE_PATCH]: patch, [WIRE.TURN_INDEX]: 0 });
  model.receive(edited([{ op: "replace", path: "/nodes/n1/value", value: -1 }, { op: "remove", path: "/nodes/n4" }]));
  const live = store.liveState();
  assert.deepEqual(live.nodes, { n0: { value: 0 }, n1: { value: -1 } });
  assert.equal(sizeOf(live.nodes), 4);
  assert.deepEqual(store.turns[0].state.nodes.n1, { value: 1 }, "the turn keeps its own state");
  assert.deepEqual(model.sent, []);
  // A move out of a part not held cannot be followed: the state as it is now comes instead.
  model.receive(edited([{ op: "move", from: "/nodes/n4", path: "/moved" }]));
  assert.equal(store.liveState(), undefined);
  assert.deepEqual(model.sent, [{ [WIRE.KIND]: WIRE.NEED_SUBTREE, [WIRE.PATH]: "", [WIRE.FROM]: 0, [WIRE.LIVE]: true }]);
  assert.equal(store.liveState(), undefined);
  assert.equal(model.sent.length, 1, "asked once");
  model.receive({ [WIRE.KIND]: WIRE.SUBTREE, [WIRE.PATH]: "", [WIRE.TURN_INDEX]: null, [WIRE.LIVE]: true, [WIRE.FROM]: 0, [WIRE.WHOLE]: false, [WIRE.SIZE]: 2, [WIRE.VALUE]: { nodes: { n0: { value: 0 } }, moved: { value: 4 } }, [WIRE.STUBS]: { "/nodes": 4 } });
  const now = store.liveState();
  assert.deepEqual(now.moved, { value: 4 });
  assert.equal(sizeOf(now.nodes), 4);
});
