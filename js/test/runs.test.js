import assert from "node:assert/strict";
import test from "node:test";

import { TREE_WIRE, liveLanes, walk } from "../runs.js";
import { isPartial, sizeOf } from "../lazy.js";
import { createStore } from "../store.js";
import { WIRE } from "../wire.js";
import { Model, batch, event, finished, snapshot, started, summary } from "./model.js";

const tree = {
  run_id: "top", path: ["team"], status: "ok", duration_ms: 9, tokens_own: 10, tokens_total: 31,
  children: [
    { run_id: "r1", path: ["team", "researcher"], status: "ok", duration_ms: 2, tokens_own: 5, tokens_total: 5, children: [], delegation: { task: "why?" }, ledger: { down: [], changed: [], up: [], refused: null } },
    { run_id: "d1", path: ["team", "desk"], status: "ok", duration_ms: 5, tokens_own: 6, tokens_total: 16, delegation: { task: "file it" }, ledger: { down: [], changed: [], up: [], refused: null },
      children: [{ run_id: "a1", path: ["team", "desk", "analyst"], status: "ok", duration_ms: 1, tokens_own: 10, tokens_total: 10, children: [] }] },
  ],
};

function teamStore() {
  const snap = snapshot({ seq: 3, turns: [summary(0)], turn: 0, events: [started("go"), finished("done")], state: { notes: [] } });
  snap[TREE_WIRE.RUN_TREE] = tree;
  const model = new Model({ [WIRE.TRAIT_SNAPSHOT]: snap });
  return { model, store: createStore(model) };
}

test("a snapshot's run tree stays on its turn", () => {
  const { store } = teamStore();
  assert.equal(store.turns[0].runTree.run_id, "top");
  assert.deepEqual(walk(store.turns[0].runTree).map(({ node, depth }) => [node.run_id, depth]), [["top", 0], ["r1", 1], ["d1", 1], ["a1", 2]]);
});

test("a run of the tree is asked for once and arrives as a turn the tabs can show", () => {
  const { model, store } = teamStore();
  store.needRun(0, "a1");
  store.needRun(0, "a1");
  assert.deepEqual(model.sent, [{ [WIRE.KIND]: TREE_WIRE.NEED_RUN, [WIRE.TURN_INDEX]: 0, [TREE_WIRE.RUN_ID]: "a1" }]);
  const reply = {
    [WIRE.KIND]: TREE_WIRE.RUN, [WIRE.TURN_INDEX]: 0, [TREE_WIRE.RUN_ID]: "a1", breadcrumb: "team ▸ desk ▸ analyst (its turn 1)",
    [WIRE.EVENTS]: [started("note it"), { kind: "prompt_rendered", system_prompt: "Notes: []", sections: [{ source: "instructions", text: "Notes: []" }], user_prompt: "note it" }, finished("noted")],
    [WIRE.STATE]: { notes: ["lunar"] },
    sections: [{ message: "user", source: "task (delegate_task_to_member)", text: "note it", tokens: null }],
    requests: { 0: { messages: [{ role: "user", content: "note it" }] } },
  };
  model.receive(reply);
  const scoped = store.scoped;
  assert.equal(scoped.runId, "a1");
  assert.equal(scoped.parentTurn, 0);
  assert.equal(scoped.content, "noted");
  assert.deepEqual(scoped.state, { notes: ["lunar"] });
  assert.equal(scoped.breadcrumb, "team ▸ desk ▸ analyst (its turn 1)");
  assert.equal(scoped.index, 0); // numbered as the turn it belongs to
  assert.deepEqual(store.requests.get(scoped.requestKey + ":0"), { messages: [{ role: "user", content: "note it" }] });
  assert.equal(store.requests.get("0:0"), undefined); // never mixed with the turn's own requests
  // asked again after it came: the kernel is asked again (another run may have been picked since)
  store.needRun(0, "a1");
  assert.equal(model.sent.length, 2);
});

test("while a turn runs, its member runs show as they start and end", () => {
  const { model, store } = teamStore();
  const progress = (body) => model.receive({ [WIRE.KIND]: TREE_WIRE.RUN_PROGRESS, [WIRE.TURN_INDEX]: 0, ...body });
  progress({ [TREE_WIRE.RUN_ID]: "r1", [WIRE.PATH]: ["team", "researcher"], status: "running" });
  progress({ [TREE_WIRE.RUN_ID]: "d1", [WIRE.PATH]: ["team", "desk"], status: "running" });
  progress({ [TREE_WIRE.RUN_ID]: "r1", status: "ok", duration_ms: 3 });
  assert.deepEqual(store.turns[0].liveRuns.map((r) => [r.run_id, r.path.join("/"), r.status, r.duration_ms]), [
    ["r1", "team/researcher", "ok", 3],
    ["d1", "team/desk", "running", null],
  ]);
});

test("a member's streamed text goes into its own live run, never into the turn's answer", () => {
  const snap = snapshot({ seq: 3, turns: [summary(0, { status: "running" })], turn: 0, events: [started("go")], state: { notes: [] } });
  const model = new Model({ [WIRE.TRAIT_SNAPSHOT]: snap });
  const store = createStore(model);
  const progress = (body) => model.receive({ [WIRE.KIND]: TREE_WIRE.RUN_PROGRESS, [WIRE.TURN_INDEX]: 0, ...body });
  progress({ [TREE_WIRE.RUN_ID]: "r1", [WIRE.PATH]: ["team", "researcher"], parent: "top", call: 0, order: 1, status: "running" });
  progress({ [TREE_WIRE.RUN_ID]: "d1", [WIRE.PATH]: ["team", "desk"], parent: "top", call: 0, order: 0, status: "running" });
  const text = (run, path, call, t) => ({ kind: TREE_WIRE.RUN_TEXT, [TREE_WIRE.RUN_ID]: run, [WIRE.PATH]: path, call, text: t });
  const before = store.turns[0].liveRunsV;
  model.receive(batch(4, [
    [0, text("r1", ["team", "researcher"], 0, "Tides follow ")],
    [0, text("d1", ["team", "desk"], 0, "<img src=x onerror=alert(1)>")],
    [0, text("r1", ["team", "researcher"], 0, "the moon.")],
  ]));
  assert.equal(store.seq, 6, "each text item is numbered like any other");
  const runs = store.turns[0].liveRuns;
  assert.deepEqual(runs.map((r) => [r.run_id, r.text]), [["r1", "Tides follow the moon."], ["d1", "<img src=x onerror=alert(1)>"]]);
  assert.equal(store.turns[0].text, "", "the team's own answer line stays its own");
  assert.ok(store.turns[0].liveRunsV > before, "the Runs tab redraws");
  // a second model call of the desk starts a line of its own
  model.receive(event(7, 0, text("d1", ["team", "desk"], 1, "Filed.")));
  assert.equal(runs[1].text, "<img src=x onerror=alert(1)>\nFiled.");
  // the two were started by one response of the team: they show as lanes, in the response's order
  assert.deepEqual(liveLanes(runs).map((g) => g.runs.map((r) => r.run_id)), [["d1", "r1"]]);
  // a grandchild, alone under its parent, is no lane; text of a run not announced yet makes its node
  model.receive(event(8, 0, text("a1", ["team", "desk", "analyst"], 0, "noting")));
  progress({ [TREE_WIRE.RUN_ID]: "a1", [WIRE.PATH]: ["team", "desk", "analyst"], parent: "d1", call: 0, status: "running" });
  assert.deepEqual(runs.map((r) => r.run_id), ["r1", "d1", "a1"]);
  assert.equal(runs[2].text, "noting");
  assert.equal(liveLanes(runs).length, 1);
  progress({ [TREE_WIRE.RUN_ID]: "r1", status: "ok", duration_ms: 3 });
  assert.equal(runs[0].text, "Tides follow the moon.", "its text stays once it ended");
});

test("a snapshot taken while a team turn runs brings the runs below it with their text so far", () => {
  const snap = snapshot({ seq: 9, turns: [summary(0, { status: "running" })], turn: 0, events: [started("go")], state: {} });
  snap[TREE_WIRE.LIVE_RUNS] = [
    { [TREE_WIRE.RUN_ID]: "r1", [WIRE.PATH]: ["team", "researcher"], parent: "top", call: 0, status: "running", duration_ms: null, text: "Tides " },
    { [TREE_WIRE.RUN_ID]: "d1", [WIRE.PATH]: ["team", "desk"], parent: "top", call: 0, status: "ok", duration_ms: 4, text: "done" },
  ];
  const model = new Model({ [WIRE.TRAIT_SNAPSHOT]: snap });
  const store = createStore(model);
  model.receive(event(10, 0, { kind: TREE_WIRE.RUN_TEXT, [TREE_WIRE.RUN_ID]: "r1", [WIRE.PATH]: ["team", "researcher"], call: 0, text: "rise." }));
  assert.deepEqual(store.turns[0].liveRuns.map((r) => [r.run_id, r.status, r.text]), [["r1", "running", "Tides rise."], ["d1", "ok", "done"]]);
});

test("a picked run's large state is held in part and its parts come into that run, not the turn", () => {
  const { model, store } = teamStore();
  store.needRun(0, "r1");
  const held = { k0: "v0", k1: "v1" };
  model.receive({
    [WIRE.KIND]: TREE_WIRE.RUN, [WIRE.TURN_INDEX]: 0, [TREE_WIRE.RUN_ID]: "r1", breadcrumb: "team ▸ researcher (its turn 1)",
    [WIRE.EVENTS]: [started("why?"), finished("moon")], [WIRE.STATE]: { own: held, notes: [] }, [WIRE.STUBS]: { "/own": 5 },
  });
  const scoped = store.scoped;
  assert.equal(sizeOf(scoped.state.own), 5);
  assert.equal(isPartial(scoped.state.own), true);
  const sent = model.sent.length;
  store.needSubtree({ turn: 0, run: "r1" }, "/own", { from: 2 });
  store.needSubtree({ turn: 0, run: "r1" }, "/own", { from: 2 }); // asked once
  assert.deepEqual(model.sent.slice(sent), [{ [WIRE.KIND]: WIRE.NEED_SUBTREE, [WIRE.PATH]: "/own", [WIRE.FROM]: 2, [WIRE.TURN_INDEX]: 0, [TREE_WIRE.RUN_ID]: "r1" }]);
  const turnState = store.turns[0].state;
  model.receive({ [WIRE.KIND]: WIRE.SUBTREE, [WIRE.PATH]: "/own", [WIRE.TURN_INDEX]: 0, [TREE_WIRE.RUN_ID]: "r1", [WIRE.LIVE]: false, [WIRE.FROM]: 2, [WIRE.WHOLE]: false, [WIRE.SIZE]: 5, [WIRE.VALUE]: { k2: "v2", k3: "v3", k4: "v4" }, [WIRE.STUBS]: {} });
  assert.deepEqual(Object.keys(scoped.state.own), ["k0", "k1", "k2", "k3", "k4"]);
  assert.equal(isPartial(scoped.state.own), false);
  assert.deepEqual(store.turns[0].state, turnState); // the team's own state is left alone
  assert.equal(store.turns[0].state.own, undefined);
  // a part of a run no longer picked is dropped (asked again if that run is shown again)
  store.needSubtree({ turn: 0, run: "gone" }, "/x", { from: 0 });
  model.receive({ [WIRE.KIND]: WIRE.SUBTREE, [WIRE.PATH]: "/x", [WIRE.TURN_INDEX]: 0, [TREE_WIRE.RUN_ID]: "gone", [WIRE.FROM]: 0, [WIRE.SIZE]: 1, [WIRE.VALUE]: { a: 1 }, [WIRE.STUBS]: {} });
  assert.equal(store.asked.has("s0/gone:0:/x"), false);
  assert.equal(scoped.state.x, undefined);
});
