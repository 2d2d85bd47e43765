import assert from "node:assert/strict";
import test from "node:test";

import { createBacklog } from "../backlog.js";
import { createStore } from "../store.js";
import { WIRE } from "../wire.js";
import { Model, change, event, finished, snapshot, started, summary, usage } from "./model.js";

const T = WIRE.TRAIT_SNAPSHOT;

function twoTurns(seq = 9) {
  // Turn 1 added "eggs"; turn 2 (the last, loaded) removed "milk".
  const changes = { keys: [change("/items", "changed", { old: '["milk","eggs"]', now: '["eggs"]', authors: ["tool:remove_item"] })], paths: [change("/items/1", "removed", { old: '"eggs"' })], more: 0 };
  return snapshot({
    seq,
    turns: [summary(0, { tool_calls: 1 }), summary(1)],
    turn: 1,
    events: [started("m1"), { kind: "state_changed", patch: [{ op: "remove", path: "/items/0" }], cause: { kind: "tool", label: "tool:remove_item", tool_call_id: "c1" } }, finished("a1")],
    state: { items: ["eggs"] },
    changes,
  });
}

function counting(store) {
  const seen = { n: 0 };
  store.subscribe(() => (seen.n += 1));
  return seen;
}

test("a view starts from the trait's snapshot at once, without asking the kernel", () => {
  const model = new Model({ [T]: twoTurns() });
  const store = createStore(model);
  assert.deepEqual(model.sent, []);
  assert.equal(store.synced, true);
  assert.equal(store.seq, 9);
  assert.equal(store.turns.length, 2);
  const [first, last] = store.turns;
  assert.equal(first.loaded, false);
  assert.equal(first.toolCount, 1);
  assert.equal(first.state, undefined);
  assert.equal(last.loaded, true);
  assert.deepEqual(last.state, { items: ["eggs"] });
  assert.equal(last.changes.keys[0].key, "items");
  assert.equal(last.changes.paths[0].old, '"eggs"');
  assert.equal(last.patches.length, 1);
  assert.equal(last.status, "ok");
  assert.equal(store.applied.snapshots, 1);
});

test("before the first turn the snapshot holds the initial state", () => {
  const store = createStore(new Model({ [T]: snapshot({ seq: 0, state: { items: ["milk"] } }) }));
  assert.deepEqual(store.turns, []);
  assert.deepEqual(store.baseState, { items: ["milk"] });
});

test("without a snapshot in the trait the store asks for one, and takes only the reply it asked for", () => {
  const model = new Model({ [T]: {} });
  const store = createStore(model);
  assert.deepEqual(model.sent, [{ [WIRE.KIND]: WIRE.SYNC }]);
  assert.equal(store.synced, false);
  model.receive(event(1, 0, started()));
  assert.equal(store.turns.length, 0, "events before a snapshot are covered by it");
  model.receive(twoTurns(4));
  assert.equal(store.synced, true);
  assert.equal(store.seq, 4);
  // Another view's sync reply reaches this view too: it is not applied again.
  model.receive(twoTurns(4));
  assert.equal(store.applied.snapshots, 1);
});

test("live events apply in order: the new turn starts from the last state and follows its patches", () => {
  const model = new Model({ [T]: twoTurns(9) });
  const store = createStore(model);
  const seen = counting(store);
  model.receive(event(10, 2, started("add tea")));
  const turn = store.turns[2];
  assert.equal(turn.status, "running");
  assert.equal(turn.message, "add tea");
  assert.deepEqual(turn.state, { items: ["eggs"] });
  assert.notEqual(turn.state, store.turns[1].state, "a copy: the previous turn keeps its own state");
  const summaryBefore = { keys: [change("/items", "changed", { old: '["eggs"]', now: '["eggs","tea"]' })], paths: [change("/items/1", "added", { now: '"tea"' })], more: 0 };
  model.receive(event(11, 2, { kind: "state_changed", patch: [{ op: "add", path: "/items/-", value: "tea" }], cause: { kind: "tool", label: "tool:add_item", tool_call_id: "c9" }, changes: summaryBefore }));
  assert.deepEqual(turn.state, { items: ["eggs", "tea"] });
  assert.deepEqual(turn.changes, summaryBefore, "the kernel's summary, as sent");
  assert.deepEqual(store.turns[1].state, { items: ["eggs"] });
  const final = { keys: summaryBefore.keys, paths: summaryBefore.paths, more: 0 };
  model.receive(event(12, 2, finished("Added tea.", final)));
  assert.equal(turn.status, "ok");
  assert.equal(turn.content, "Added tea.");
  assert.deepEqual(turn.usage, usage(4, 1));
  assert.equal(store.seq, 12);
  assert.equal(store.applied.events, 3);
  assert.equal(seen.n, 3);
  assert.deepEqual(model.sent, [], "nothing to fetch: the state was followed");
});

test("each event bumps the parts of the turn it changes; streamed text only the text", () => {
  const model = new Model({ [T]: snapshot({ seq: 0, state: {} }) });
  const store = createStore(model);
  model.receive(event(1, 0, started()));
  const turn = store.turns[0];
  model.receive(event(2, 0, { kind: "model_requested", call: 0, at: 1, messages: 2, tools: 0 }));
  const before = { ...turn.v };
  const list = store.version.list;
  model.receive(event(3, 0, { kind: "text_delta", call: 0, text: "Hel" }));
  model.receive(event(4, 0, { kind: "text_delta", call: 0, text: "lo" }));
  assert.equal(turn.text, "Hello");
  assert.equal(turn.calls[0].text, "Hello");
  assert.deepEqual({ ...turn.v, text: before.text }, before, "no part but the text changed");
  assert.equal(turn.v.text, before.text + 2);
  assert.equal(store.version.list, list, "the History rows did not change");
  model.receive(event(5, 0, { kind: "tool_call_started", call: 0, id: "c1", name: "add_item", arguments: "{}" }));
  assert.equal(turn.v.tools, before.tools + 1);
  assert.equal(turn.v.prompt, before.prompt);
});

test("an event repeated or older than the snapshot is ignored", () => {
  const model = new Model({ [T]: twoTurns(9) });
  const store = createStore(model);
  model.receive(event(9, 1, started("old")));
  model.receive(event(3, 1, finished("older")));
  assert.equal(store.turns[1].message, "m1");
  assert.equal(store.applied.events, 0);
  assert.deepEqual(model.sent, []);
});

test("a gap in the numbers asks for a snapshot once, ignores events until it comes, then carries on", () => {
  const model = new Model({ [T]: twoTurns(9) });
  const store = createStore(model);
  model.receive(event(11, 2, started()));
  assert.equal(store.synced, false);
  assert.equal(store.applied.gaps, 1);
  assert.deepEqual(model.sent, [{ [WIRE.KIND]: WIRE.SYNC }]);
  model.receive(event(12, 2, finished()));
  assert.equal(model.sent.length, 1, "one request while waiting");
  assert.equal(store.turns.length, 2);
  const reply = twoTurns(12);
  reply[WIRE.SUMMARIES].push(summary(2));
  model.receive(reply);
  assert.equal(store.synced, true);
  assert.equal(store.turns.length, 3);
  model.receive(event(13, 3, started("next")));
  assert.equal(store.turns[3].message, "next");
  assert.equal(store.applied.gaps, 1);
});

test("a newer snapshot in the trait heals a gap (the kernel refreshes it after each turn)", () => {
  const model = new Model({ [T]: twoTurns(9) });
  const store = createStore(model);
  model.receive(event(11, 2, started()));
  assert.equal(store.synced, false);
  const fresh = twoTurns(15);
  fresh[WIRE.SUMMARIES].push(summary(2, { message: "healed" }));
  model.setTrait(T, fresh);
  assert.equal(store.synced, true);
  assert.equal(store.seq, 15);
  assert.equal(store.turns[2].message, "healed");
  // The same or an older trait changes nothing.
  model.setTrait(T, twoTurns(15));
  model.setTrait(T, twoTurns(10));
  assert.equal(store.applied.snapshots, 2);
  assert.equal(store.turns.length, 3);
});

test("events that reached the model before the view existed are replayed from the backlog", () => {
  const model = new Model({ [T]: twoTurns(9) });
  const backlog = createBacklog(model);
  model.receive(event(10, 2, started("early")));
  model.receive(event(11, 2, { kind: "text_delta", call: 0, text: "so far" }));
  const store = createStore(model, { backlog: backlog.messages() });
  assert.equal(store.seq, 11);
  assert.equal(store.turns[2].message, "early");
  assert.equal(store.turns[2].text, "so far");
  assert.equal(store.applied.gaps, 0);
  // A trait refresh drops what it covers.
  model.setTrait(T, twoTurns(11));
  assert.deepEqual(backlog.messages(), []);
  backlog.dispose();
});

test("a backlog that grew past its limit gives nothing, and the view falls back to a sync", () => {
  const model = new Model({ [T]: twoTurns(9) });
  const backlog = createBacklog(model, { limit: 2 });
  for (let seq = 10; seq < 14; seq++) model.receive(event(seq, 2, seq === 10 ? started() : { kind: "text_delta", call: 0, text: "." }));
  assert.deepEqual(backlog.messages(), []);
  const store = createStore(model, { backlog: backlog.messages() });
  model.receive(event(14, 2, finished()));
  assert.equal(store.applied.gaps, 1);
  assert.deepEqual(model.sent, [{ [WIRE.KIND]: WIRE.SYNC }]);
});

test("a past turn is fetched once and loaded with its events, change summary and state", () => {
  const model = new Model({ [T]: twoTurns(9) });
  const store = createStore(model);
  const first = store.turns[0];
  store.needTurn(0);
  store.needTurn(0);
  assert.deepEqual(model.sent, [{ [WIRE.KIND]: WIRE.NEED_TURN, [WIRE.TURN_INDEX]: 0 }]);
  const changes = { keys: [change("/items", "changed")], paths: [change("/items/1", "added", { now: '"eggs"' })], more: 0 };
  model.receive({ [WIRE.KIND]: WIRE.TURN, [WIRE.TURN_INDEX]: 0, [WIRE.EVENTS]: [started("m0"), { kind: "tool_call_started", call: 0, id: "c0", name: "add_item", arguments: "{}" }, finished("a0")], [WIRE.CHANGES]: changes, [WIRE.STATE]: { items: ["milk", "eggs"] } });
  assert.equal(first.loaded, true);
  assert.equal(first.tools.length, 1);
  assert.deepEqual(first.changes, changes);
  assert.deepEqual(first.state, { items: ["milk", "eggs"] });
  assert.equal(store.applied.turns, 1);
  store.needTurn(0);
  assert.equal(model.sent.length, 2, "asked again once answered (time travel back to it later)");
});

test("a state the view cannot follow is fetched when the turn ends", () => {
  const model = new Model({ [T]: twoTurns(9) });
  const store = createStore(model);
  model.receive(event(10, 2, started()));
  model.receive(event(11, 2, { kind: "state_changed", patch: [{ op: "remove", path: "/nothing/here" }], cause: { kind: "user", label: "user" } }));
  assert.equal(store.turns[2].state, undefined);
  assert.deepEqual(model.sent, []);
  model.receive(event(12, 2, finished()));
  assert.deepEqual(model.sent, [{ [WIRE.KIND]: WIRE.NEED_TURN, [WIRE.TURN_INDEX]: 2 }]);
});

test("request payloads are asked for once and kept by turn and call", () => {
  const model = new Model({ [T]: twoTurns(9) });
  const store = createStore(model);
  store.needRequest(1, 0);
  store.needRequest(1, 0);
  assert.deepEqual(model.sent, [{ [WIRE.KIND]: WIRE.NEED_REQUEST, [WIRE.TURN_INDEX]: 1, [WIRE.CALL]: 0 }]);
  model.receive({ [WIRE.KIND]: WIRE.REQUEST, [WIRE.TURN_INDEX]: 1, [WIRE.CALL]: 0, [WIRE.REQUEST]: { model: "scripted", messages: [] } });
  assert.deepEqual(store.requests.get("1:0"), { model: "scripted", messages: [] });
  assert.equal(store.version.requests, 1);
  store.needRequest(1, 0);
  assert.equal(model.sent.length, 1, "kept: not asked again");
});

test("a preview is pending until its reply arrives", () => {
  const model = new Model({ [T]: twoTurns(9) });
  const store = createStore(model);
  store.askPreview("what is on {items}?");
  assert.equal(store.previewPending, true);
  assert.deepEqual(model.sent, [{ [WIRE.KIND]: WIRE.PREVIEW, [WIRE.MESSAGE]: "what is on {items}?" }]);
  model.receive({ [WIRE.KIND]: WIRE.PREVIEW, [WIRE.MESSAGE]: "what is on {items}?", sections: [], user_prompt: "what is on ['eggs']?", notes: [], [WIRE.REQUEST]: {} });
  assert.equal(store.previewPending, false);
  assert.equal(store.preview.user_prompt, "what is on ['eggs']?");
});

test("an error reply is kept for the view and ends what was pending", () => {
  const model = new Model({ [T]: {} });
  const store = createStore(model);
  store.askPreview("x");
  assert.equal(store.syncing, true);
  model.receive({ [WIRE.KIND]: WIRE.ERROR, [WIRE.TEXT]: "preview: TypeError: a preview needs a message (text)" });
  assert.equal(store.error, "preview: TypeError: a preview needs a message (text)");
  assert.equal(store.previewPending, false);
  assert.equal(store.syncing, false);
});

test("messages that are not the inspector's are ignored; dispose stops listening", () => {
  const model = new Model({ [T]: twoTurns(9) });
  const store = createStore(model);
  const seen = counting(store);
  model.receive({ other: "widget" });
  model.emit("msg:custom", null);
  assert.equal(seen.n, 0);
  assert.ok(model.listeners() > 0);
  store.dispose();
  assert.equal(model.listeners(), 0);
  model.receive(event(10, 2, started()));
  assert.equal(store.turns.length, 2);
});

test("a turn answered from the notebook's recording is marked replayed, loaded or live", () => {
  const snap = twoTurns(9);
  snap[WIRE.SUMMARIES][1].replayed = true;
  const model = new Model({ [T]: snap });
  const store = createStore(model);
  assert.equal(store.turns[1].replayed, true, "kept through loading the turn's events");
  assert.equal(store.turns[0].replayed, false);
  model.receive(event(10, 2, started()));
  model.receive(event(11, 2, { ...finished(), replayed: true }));
  assert.equal(store.turns[2].replayed, true);
});

/** A snapshot of a long history: the rows of turns 30 to 49 only, the last turn loaded. */
function longHistory() {
  const rows = Array.from({ length: 20 }, (_, i) => summary(30 + i));
  return snapshot({ seq: 80, turns: rows, from: 30, turn: 49, events: [started("m49"), finished("a49")], state: { items: [] } });
}

const rowsReply = (from, count) => ({ [WIRE.KIND]: WIRE.ROWS, [WIRE.TURNS_FROM]: from, [WIRE.SUMMARIES]: Array.from({ length: count }, (_, i) => summary(from + i, { message: "older " + (from + i) })) });

test("a long history starts from the last rows; older rows are asked for a page at a time", () => {
  const model = new Model({ [T]: longHistory() });
  const store = createStore(model);
  assert.equal(store.turns.length, 50, "the count is known");
  assert.equal(store.listedFrom, 30);
  assert.equal(store.turns[29], undefined, "no row held for turn 30");
  assert.equal(store.turns[30].message, "m30");
  const seen = counting(store);
  store.needRows();
  store.needRows();
  assert.deepEqual(model.sent, [{ [WIRE.KIND]: WIRE.NEED_ROWS, [WIRE.BEFORE]: 30 }], "asked once");
  assert.equal(seen.n, 1, "the view learns that the rows are on their way");
  // A reply that does not end where the held rows begin (asked by another view) changes nothing.
  model.receive(rowsReply(0, 10));
  assert.equal(store.listedFrom, 30);
  model.receive(rowsReply(10, 20));
  assert.equal(store.listedFrom, 10);
  assert.equal(store.turns[10].message, "older 10");
  assert.equal(store.turns[10].status, "ok");
  assert.equal(store.turns[29].loaded, false);
  assert.equal(store.applied.rows, 1);
  store.needRows();
  assert.deepEqual(model.sent[1], { [WIRE.KIND]: WIRE.NEED_ROWS, [WIRE.BEFORE]: 10 });
  model.receive(rowsReply(0, 10));
  assert.equal(store.listedFrom, 0);
  store.needRows();
  assert.equal(model.sent.length, 2, "nothing older to ask for");
});

test("a turn older than the rows held can be shown: it is loaded whole, and its row does not replace it", () => {
  const model = new Model({ [T]: longHistory() });
  const store = createStore(model);
  const stub = store.turnAt(3);
  assert.equal(stub.status, "unknown");
  assert.equal(stub.loaded, false);
  assert.equal(store.turnAt(3), stub, "the same stub each time");
  assert.equal(store.turnAt(50), null);
  store.needTurn(3);
  model.receive({ [WIRE.KIND]: WIRE.TURN, [WIRE.TURN_INDEX]: 3, [WIRE.EVENTS]: [started("m3"), finished("a3")], [WIRE.CHANGES]: null, [WIRE.STATE]: { items: ["x"] } });
  const loaded = store.turns[3];
  assert.equal(loaded.loaded, true);
  assert.equal(loaded.content, "a3");
  assert.deepEqual(loaded.state, { items: ["x"] });
  store.needRows();
  model.receive(rowsReply(0, 30));
  assert.equal(store.turns[3], loaded, "the loaded turn is kept");
  assert.equal(store.turns[4].message, "older 4");
});

/** A snapshot after ``cells`` more one-turn cells: the last 20 rows of the history, the last turn
 * in full (turn 49 + cells). */
function later(cells, seq = 80 + cells) {
  const last = 49 + cells;
  const rows = Array.from({ length: 20 }, (_, i) => summary(last - 19 + i));
  return snapshot({ seq, turns: rows, from: last - 19, turn: last, events: [started("m" + last), finished("a" + last)], state: { items: [String(last)] } });
}

test("a newer snapshot is merged into the rows an open view holds: rows scrolled back to stay", () => {
  const model = new Model({ [T]: longHistory() });
  const store = createStore(model);
  store.needRows();
  model.receive(rowsReply(0, 30));
  assert.equal(store.listedFrom, 0);
  const early = store.turns[5];
  const seen = counting(store);
  model.setTrait(T, later(3)); // three cells ran: turns 50-52, the snapshot's rows 33-52
  assert.equal(seen.n, 1);
  assert.equal(store.applied.merged, 1);
  assert.equal(store.listedFrom, 0, "the rows fetched before the snapshot's first are kept");
  assert.equal(store.turns.length, 53);
  assert.equal(store.turns[5], early);
  assert.equal(store.turns[5].message, "older 5");
  assert.equal(store.turns[40].message, "m40");
  assert.equal(store.turns[52].loaded, true);
  assert.deepEqual(store.turns[52].state, { items: ["52"] });
  assert.equal(store.turns[51].loaded, false, "a turn the view never saw is held as its row");
  assert.equal(store.seq, 83);
  store.needRows();
  assert.equal(model.sent.filter((m) => m[WIRE.KIND] === WIRE.NEED_ROWS).length, 1, "nothing more to ask for");
});

test("a merged snapshot replaces a turn followed up to the middle of its run, keeps one that ended as its row says", () => {
  const model = new Model({ [T]: twoTurns(9) });
  const store = createStore(model);
  const kept = store.turns[1];
  model.receive(event(10, 2, started("m2"))); // the batch with the rest of turn 2 is covered by the next snapshot
  const running = store.turns[2];
  const v = running.v.summary;
  const next = snapshot({
    seq: 14,
    turns: [summary(0, { tool_calls: 1 }), summary(1, { content: "a1", duration_ms: 12 }), summary(2, { duration_ms: 12 }), summary(3, { duration_ms: 12 })],
    turn: 3,
    events: [started("m3"), finished("a3")],
    state: { items: ["tea"] },
  });
  model.setTrait(T, next);
  assert.equal(store.applied.merged, 1);
  assert.equal(store.turns[1], kept, "turn 1 ended as its row says: its events and state stay");
  assert.deepEqual(store.turns[1].state, { items: ["eggs"] });
  assert.notEqual(store.turns[2], running);
  assert.equal(store.turns[2].status, "ok");
  assert.equal(store.turns[2].loaded, false, "its events are asked for when it is shown");
  assert.ok(store.turns[2].v.summary > v, "what showed it redraws");
  assert.equal(store.turns[3].content, "a3");
  assert.deepEqual(model.sent, []);
});

test("a snapshot is taken whole when the view's rows do not reach it or a turn below it still runs", () => {
  // A gap: the view holds turns 30-49, the snapshot's rows start at 53.
  const model = new Model({ [T]: longHistory() });
  const store = createStore(model);
  model.setTrait(T, later(23));
  assert.equal(store.applied.merged, 0);
  assert.equal(store.listedFrom, 53);
  assert.equal(store.turns[52], undefined, "no row held below the snapshot's: asked for when History shows them");
  // A turn below the snapshot's rows held as running: its row would never come.
  const other = new Model({ [T]: twoTurns(9) });
  const view = createStore(other);
  other.receive(event(10, 2, started("m2")));
  const rows = Array.from({ length: 20 }, (_, i) => summary(3 + i));
  other.setTrait(T, snapshot({ seq: 40, turns: rows, from: 3, turn: 22, events: [started("m22"), finished("a22")], state: {} }));
  assert.equal(view.applied.merged, 0);
  assert.equal(view.listedFrom, 3);
  assert.equal(view.turns[2], undefined);
});

test("a merged snapshot with fewer turns than held cuts the rows (the agent was reset)", () => {
  const model = new Model({ [T]: twoTurns(9) });
  const store = createStore(model);
  model.setTrait(T, snapshot({ seq: 12, turns: [summary(0, { message: "after reset" })], turn: 0, events: [started("after reset"), finished("a0")], state: { items: [] } }));
  assert.equal(store.applied.merged, 1);
  assert.equal(store.turns.length, 1);
  assert.equal(store.turns[0].message, "after reset");
  assert.deepEqual(store.turns[0].state, { items: [] });
});

test("a whole turn sent as its row is held as a row; the turn after it starts from the state it brings", () => {
  const model = new Model({ [T]: twoTurns(9) });
  const store = createStore(model);
  const seen = counting(store);
  const patch = { kind: "state_changed", patch: [{ op: "add", path: "/items/-", value: "jam" }], cause: { kind: "tool", label: "tool:add_item", tool_call_id: "c3" } };
  const items = [
    { [WIRE.TURN_INDEX]: 2, [WIRE.ROW]: summary(2, { message: "add tea", content: "Added tea.", tool_calls: 1 }) },
    { [WIRE.TURN_INDEX]: 3, [WIRE.EVENT_BODY]: started("add jam"), [WIRE.STATE]: { items: ["eggs", "tea"] } },
    { [WIRE.TURN_INDEX]: 3, [WIRE.EVENT_BODY]: patch },
    { [WIRE.TURN_INDEX]: 3, [WIRE.EVENT_BODY]: finished("Added jam.") },
  ];
  model.receive({ [WIRE.KIND]: WIRE.BATCH, [WIRE.SEQ]: 10, [WIRE.LAST]: 13, [WIRE.ITEMS]: items });
  assert.equal(store.seq, 13);
  assert.equal(seen.n, 1, "one batch, one redraw");
  const row = store.turns[2];
  assert.equal(row.loaded, false);
  assert.equal(row.status, "ok");
  assert.equal(row.message, "add tea");
  assert.equal(row.content, "Added tea.");
  assert.equal(row.toolCount, 1);
  assert.equal(row.state, undefined, "its events and state are fetched when it is shown");
  const last = store.turns[3];
  assert.equal(last.loaded, true);
  assert.deepEqual(last.state, { items: ["eggs", "tea", "jam"] }, "followed from the state the item brought");
  assert.equal(last.content, "Added jam.");
  assert.deepEqual(model.sent, [], "the latest turn needs nothing fetched");
  assert.equal(store.applied.folded, 1);
  assert.equal(store.applied.events, 3);
  // Shown later, the row's turn is fetched like any past turn.
  store.needTurn(2);
  assert.deepEqual(model.sent, [{ [WIRE.KIND]: WIRE.NEED_TURN, [WIRE.TURN_INDEX]: 2 }]);
});

test("a row in place of a turn followed live redraws what showed it, and ends the pending edits", () => {
  const model = new Model({ [T]: twoTurns(9) });
  const store = createStore(model);
  model.receive(event(10, 2, started("add tea")));
  const followed = store.turns[2];
  const versions = { ...followed.v };
  store.live = { edits: [{ path: "/x", how: "added" }], state: { items: [], x: 1 } };
  const list = store.version.list;
  const live = store.version.live;
  model.receive({ [WIRE.KIND]: WIRE.BATCH, [WIRE.SEQ]: 11, [WIRE.LAST]: 11, [WIRE.ITEMS]: [{ [WIRE.TURN_INDEX]: 2, [WIRE.ROW]: summary(2, { message: "add tea" }) }] });
  const row = store.turns[2];
  assert.notEqual(row, followed);
  assert.equal(row.loaded, false);
  for (const part of Object.keys(versions)) assert.ok(row.v[part] > versions[part], part + " redraws");
  assert.ok(store.version.list > list);
  assert.equal(store.live, null);
  assert.ok(store.version.live > live);
});
