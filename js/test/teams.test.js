import assert from "node:assert/strict";
import test from "node:test";

import { STATIC_NOTE, staticText } from "../saved.js";
import { ms } from "../format.js";
import { TREE_WIRE, axisEnd, inCharge, routedOf, scopedTurn } from "../runs.js";
import { NOT_CONNECTED, NO_ANSWER, createStore } from "../store.js";
import { RECONNECT, whatToDo } from "../tabs/parts.js";
import { timing } from "../tabs/runs.js";
import { callTimeTitle, toolKey } from "../tabs/tools.js";
import { loadTurn, turnFromSummary } from "../turn.js";
import { openingTab, statusOf } from "../view.js";
import { WIRE } from "../wire.js";
import { Model, finished, snapshot, started, summary } from "./model.js";

const routed = { agent: "billing", run_id: "b2", usage: { input: 30, output: 4, estimated: true }, duration_ms: 0.8 };
const handoff = { kind: "tool_call_finished", id: "handoff_t2", name: "transfer_to_billing", arguments: "{}", result: "Thanks, it is paid.", error: null };

/** Triage's inspector after a handoff: turn 1 handed over, turn 2 went straight to billing. */
function triage() {
  const snap = snapshot({ seq: 4, turns: [summary(0), summary(1, { message: "I paid it.", content: "Thanks, it is paid.", routed })], turn: 1, events: [started("I paid it."), handoff, finished("Thanks, it is paid.")], state: {} });
  snap[TREE_WIRE.RUN_TREE] = { run_id: "t2", path: ["triage"], agent: "triage", routed_to: "b2", children: [{ run_id: "b2", path: ["triage", "billing"], agent: "billing", duration_ms: 0.8, children: [] }] };
  return new Model({ [WIRE.TRAIT_ID]: "m1", [WIRE.TRAIT_AGENT]: "triage", [WIRE.TRAIT_MODEL]: { label: "scripted" }, [WIRE.TRAIT_SNAPSHOT]: snap, [TREE_WIRE.IN_CHARGE]: "billing" });
}

test("a routed turn is known from its History row before it is loaded, and from its tree after", () => {
  const store = createStore(triage());
  const [first, second] = store.turns;
  assert.equal(routedOf(first), null);
  assert.deepEqual(routedOf(second), routed);
  const row = turnFromSummary(summary(1, { routed }));
  loadTurn(row, [started("I paid it."), handoff, finished("Thanks.")], null, {});
  assert.deepEqual(row.routed, routed); // loading its events keeps what its row said
  const live = turnFromSummary(summary(1));
  live.runTree = store.turns[1].runTree; // a turn followed live: only its tree says it
  assert.deepEqual(routedOf(live), { agent: "billing", run_id: "b2", usage: null, duration_ms: 0.8 });
});

test("who is in charge is a trait: a view that took every event live hears of the handoff", () => {
  const model = triage();
  const store = createStore(model);
  const seen = [];
  model.on("change:" + TREE_WIRE.IN_CHARGE, () => seen.push(inCharge(model)));
  assert.equal(inCharge(model), "billing");
  // the snapshot after the cell holds nothing newer than the view: it is not taken again...
  assert.equal(store.fromTrait(), false);
  // ...and the trait still tells who answers now (a reset hands the turns back)
  model.setTrait(TREE_WIRE.IN_CHARGE, "");
  assert.deepEqual(seen, [""]);
  assert.equal(inCharge(model), "");
  assert.equal(staticText(model).split("\n")[1].startsWith("in charge"), false);
});

test("the static text says who is in charge and where the last turn went, with no handoff call", () => {
  const lines = staticText(triage()).split("\n");
  assert.equal(lines[0], "triage · inspector · model scripted · 2 turn(s) · " + STATIC_NOTE);
  assert.equal(lines[1], "in charge: billing (a handoff left it answering)");
  assert.match(lines[2], /^turn 2 · ok · routed to billing · \d+(\.\d)? m?s$/);
  assert.deepEqual(lines.slice(3), ["user: I paid it.", "answer: Thanks, it is paid."]);
  assert.match(STATIC_NOTE, /re-run this cell/);
});

test("a tool call's expanded state is its own: keyed by run and call id, never shared by position", () => {
  const tools = [{ id: "call_0_0" }, { id: "call_0_1" }, { id: "call_0_0" }];
  const turn = { index: 0, runId: null };
  const keys = tools.map((_, at) => toolKey(turn, tools, at));
  assert.equal(new Set(keys).size, 3); // a reused id too
  // the same call id in another turn, or in a member run of the turn, is another call
  assert.notEqual(toolKey({ index: 1, runId: null }, tools, 0), keys[0]);
  assert.notEqual(toolKey({ index: 0, runId: "desk" }, tools, 0), keys[0]);
  // and a call keeps its key when calls are added after it
  assert.equal(toolKey(turn, [...tools, { id: "x" }], 1), keys[1]);
});

test("a case's inspector opens on the tab it names; any other on Prompt", () => {
  assert.equal(openingTab(new Model({ [WIRE.TRAIT_TAB]: "checks" })), "checks");
  assert.equal(openingTab(new Model({ [WIRE.TRAIT_TAB]: "compare" })), "compare");
  assert.equal(openingTab(new Model({ [WIRE.TRAIT_TAB]: "nonsense" })), "prompt");
  assert.equal(openingTab(new Model({})), "prompt");
});

test("offline, the view says what to do: re-run the cell, or wait for a busy kernel", () => {
  assert.equal(whatToDo(NOT_CONNECTED), RECONNECT);
  assert.match(RECONNECT, /^Re-run this cell/);
  assert.match(whatToDo(NO_ANSWER), /catches up when the kernel is free/);
});

test("a member run's times say what they measure, and flag a run longer than the call that ran it", () => {
  const node = { agent: "desk", duration_ms: 354, delegation: { tool: "delegate_task_to_member", call_ms: 400 } };
  const fine = timing(node);
  assert.equal(fine.text, "run 354 ms · call 400 ms");
  assert.match(fine.title, /run: desk's run, from its start to its answer\. call: the delegate_task_to_member call that ran it/);
  const mixed = timing({ ...node, duration_ms: 10, delegation: { tool: "transfer_to_billing", call_ms: 6.8 } });
  assert.equal(mixed.text, "run 10 ms · call 6.8 ms ⚠");
  assert.match(mixed.title, /timed in different runs/);
  assert.deepEqual(timing({ agent: "team", duration_ms: 428 }), { text: "run 428 ms", title: "the run, from its start to its answer" });
});

test("a member run's time reads the same in the header and in its node of the Runs tab", () => {
  // The kernel sends the run's own time to both (agentnb/ipython/run_tree.py); each formats it with ms.
  for (const took of [1.1500004, 1.15, 0.04999, 9.95, 999.96, 1234.5]) {
    const run = scopedTurn({ [WIRE.TURN_INDEX]: 0, [TREE_WIRE.RUN_ID]: "b1", [WIRE.EVENTS]: [started("go"), { ...finished("done"), duration_ms: took }] }, new Map());
    const [, header] = statusOf(run, 0, null);
    const node = timing({ agent: "b", duration_ms: took, delegation: { tool: "delegate_task_to_member", call_ms: took + 1 } });
    assert.equal(header, "✓ done " + ms(took));
    assert.equal(node.text.split(" · ")[0], "run " + ms(took));
  }
});

test("the lanes' axis ends with the last run or bar, so no bar overruns its track", () => {
  const batch = { lanes: [{ end_ms: 40, bars: [{ end_ms: 39 }] }, { end_ms: 38, bars: [{ end_ms: 40.2 }] }] };
  assert.equal(axisEnd(batch), 40.2);
  assert.equal(axisEnd({ lanes: [{ end_ms: 0, bars: [] }] }), 1);
});

test("a delegation's time says it holds the run it started", () => {
  assert.match(callTimeTitle({ child_run_id: "r1" }), /the run it started/);
  assert.equal(callTimeTitle({}), "the call: its hooks and the tool");
});
