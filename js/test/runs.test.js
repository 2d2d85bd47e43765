import assert from "node:assert/strict";
import test from "node:test";

import { TREE_WIRE, walk } from "../runs.js";
import { createStore } from "../store.js";
import { WIRE } from "../wire.js";
import { Model, finished, snapshot, started, summary } from "./model.js";

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
  snap[TREE_WIRE.IN_CHARGE] = "billing";
  const model = new Model({ [WIRE.TRAIT_SNAPSHOT]: snap });
  return { model, store: createStore(model) };
}

test("a snapshot's run tree stays on its turn, and who is in charge after a handoff", () => {
  const { store } = teamStore();
  assert.equal(store.turns[0].runTree.run_id, "top");
  assert.equal(store.inCharge, "billing");
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
