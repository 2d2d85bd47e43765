import assert from "node:assert/strict";
import test from "node:test";

import { counterText, editText, tokenCount, tokenParts } from "../format.js";
import { createStore } from "../store.js";
import { WIRE } from "../wire.js";
import { Model, event, finished, snapshot, started, summary } from "./model.js";

const T = WIRE.TRAIT_SNAPSHOT;
const estimate = { counter: "estimate", exact: false, note: "no tokenizer known for scripted", sections: [3, 9], system: 12, history: 0, user: 2, template: null, total: 14 };
const exact = { counter: "o200k_base", exact: true, note: null, sections: [4], system: 4, history: 6, user: 1, template: 9, total: 20 };

function oneTurn() {
  return snapshot({ seq: 3, turns: [summary(0)], turn: 0, events: [started("m0"), finished("a0")], state: { items: ["milk"], budget: 10 } });
}

test("token counts read as exact or estimated, with what counted them", () => {
  assert.equal(tokenCount(estimate, 9), "≈9");
  assert.equal(tokenCount(exact, 9), "9");
  assert.equal(tokenCount(null, 9), "");
  assert.equal(counterText(exact), "counted with o200k_base");
  assert.equal(counterText(estimate), "≈ estimate: no tokenizer known for scripted");
  assert.deepEqual(tokenParts(exact), ["earlier turns 6", "user message 1", "chat template 9", "total 20"]);
  assert.deepEqual(tokenParts(estimate), ["user message ≈2", "total ≈14"]);
  // a member run a handoff started: its history before the user message is a part of its own
  assert.deepEqual(tokenParts({ ...exact, history: 0, earlier_sections: [4, 2], total: 22 }), ["handoff history 6", "user message 1", "chat template 9", "total 22"]);
  assert.equal(editText([1, 2]), "[1,2]");
  assert.equal(editText("x".repeat(70)).startsWith('"x'), true);
  assert.equal(editText({ long: "y".repeat(70) }), '{\n  "long": "' + "y".repeat(70) + '"\n}');
});

test("a prompt's tokens and its state block's part reach the turn and its History row", () => {
  const model = new Model({ [T]: snapshot({ seq: 0, state: {} }) });
  const store = createStore(model);
  model.receive(event(1, 0, started()));
  const sections = [{ source: "instructions", text: "List", start: 0, placeholders: [] }, { source: "session_state", text: "<session_state>…", start: 4, placeholders: [] }];
  model.receive(event(2, 0, { kind: "prompt_rendered", sections, user_prompt: "hi", notes: [], hidden_keys: ["api_key"], unused_keys: ["notes"], tokens: estimate }));
  const turn = store.turns[0];
  assert.deepEqual(turn.prompt.hiddenKeys, ["api_key"]);
  assert.deepEqual(turn.prompt.unusedKeys, ["notes"]);
  assert.equal(turn.stateTokens, 9);
  assert.equal(turn.tokensExact, false);
  // Counted again at the end with the model's tokenizer: the turn takes the new counts.
  const recounted = { ...exact, sections: [4, 11], system: 15, total: 31 };
  model.receive(event(3, 0, { ...finished("ok"), prompt_tokens: recounted }));
  assert.equal(turn.prompt.tokens.counter, "o200k_base");
  assert.equal(turn.stateTokens, 11);
  assert.equal(turn.promptTokens, 31);
  const fromSummary = createStore(new Model({ [T]: snapshot({ seq: 0, turns: [summary(0, { state_tokens: 42, prompt_tokens: 60, tokens_exact: true })] }) })).turns[0];
  assert.equal(fromSummary.stateTokens, 42);
  assert.equal(fromSummary.tokensExact, true);
});

test("edits go to the kernel; the edited state and the pending edits come back", () => {
  const model = new Model({ [T]: oneTurn() });
  const store = createStore(model);
  store.edit("/budget", "25");
  assert.deepEqual(model.sent.at(-1), { [WIRE.KIND]: WIRE.EDIT, [WIRE.PATH]: "/budget", [WIRE.VALUE]: "25" });
  assert.equal(store.editPending, true);
  const edits = [{ path: "/budget", how: "changed", old: "10", new: "25" }];
  model.receive({ [WIRE.KIND]: WIRE.EDITED, [WIRE.EDITS]: edits, [WIRE.LIVE_STATE]: { items: ["milk"], budget: 25 } });
  assert.equal(store.editPending, false);
  assert.deepEqual(store.liveState(), { items: ["milk"], budget: 25 });
  assert.deepEqual(store.live.edits, edits);
  store.remove("/items/0");
  assert.deepEqual(model.sent.at(-1), { [WIRE.KIND]: WIRE.EDIT, [WIRE.PATH]: "/items/0", [WIRE.OP]: "remove" });
  model.receive({ [WIRE.KIND]: WIRE.EDIT_FAILED, [WIRE.PATH]: "/items/0", [WIRE.TEXT]: "no" });
  assert.deepEqual(store.editError, { path: "/items/0", text: "no" });
  store.undo();
  assert.deepEqual(model.sent.at(-1), { [WIRE.KIND]: WIRE.UNDO });
  model.receive({ [WIRE.KIND]: WIRE.EDITED, [WIRE.EDITS]: [], [WIRE.LIVE_STATE]: { items: ["milk"], budget: 10 } });
  assert.equal(store.live, null, "no edits pending: the turn's own state is the state");
});

test("a large edited state is patched onto the last turn's state, fetched first when missing", () => {
  const model = new Model({ [T]: snapshot({ seq: 3, turns: [summary(0), summary(1)], turn: 1, events: [started("m1"), finished("a1")], state: { n: 2 } }) });
  const store = createStore(model);
  model.receive({ [WIRE.KIND]: WIRE.EDITED, [WIRE.EDITS]: [{ path: "/n", how: "changed", old: "1", new: "5" }], [WIRE.LIVE_PATCH]: [{ op: "replace", path: "/n", value: 5 }], [WIRE.TURN_INDEX]: 1 });
  assert.deepEqual(store.liveState(), { n: 5 });
  assert.deepEqual(store.turns[1].state, { n: 2 }, "the turn keeps its own state");
  model.receive({ [WIRE.KIND]: WIRE.EDITED, [WIRE.EDITS]: [{ path: "/n", how: "changed", old: "1", new: "7" }], [WIRE.LIVE_PATCH]: [{ op: "replace", path: "/n", value: 7 }], [WIRE.TURN_INDEX]: 0 });
  assert.equal(store.liveState(), undefined);
  assert.deepEqual(model.sent.at(-1), { [WIRE.KIND]: WIRE.NEED_TURN, [WIRE.TURN_INDEX]: 0 });
  model.receive({ [WIRE.KIND]: WIRE.TURN, [WIRE.TURN_INDEX]: 0, [WIRE.EVENTS]: [started("m0"), finished("a0")], [WIRE.CHANGES]: null, [WIRE.STATE]: { n: 1 } });
  assert.deepEqual(store.liveState(), { n: 7 });
});

test("a snapshot brings the pending edits; the next turn takes them over", () => {
  const snap = Object.assign(oneTurn(), { [WIRE.EDITS]: [{ path: "/budget", how: "changed", old: "10", new: "3" }], [WIRE.LIVE_STATE]: { items: ["milk"], budget: 3 } });
  const model = new Model({ [T]: snap });
  const store = createStore(model);
  assert.deepEqual(store.liveState(), { items: ["milk"], budget: 3 });
  model.receive(event(4, 1, started("next")));
  assert.equal(store.live, null);
});

test("compare asks for the default pair or two sides, and keeps the reply", () => {
  const model = new Model({ [T]: oneTurn() });
  const store = createStore(model);
  store.compare(null, null, 0);
  assert.deepEqual(model.sent.at(-1), { [WIRE.KIND]: WIRE.COMPARE, [WIRE.TURN_INDEX]: 0 });
  const left = { agent: "shop", turn: 0 };
  const right = { agent: "shop_v2", turn: 0 };
  store.compare(left, right);
  assert.deepEqual(model.sent.at(-1), { [WIRE.KIND]: WIRE.COMPARE, [WIRE.LEFT]: left, [WIRE.RIGHT]: right });
  const reply = { [WIRE.KIND]: WIRE.COMPARISON, comparison: { causes: [] }, agents: [], [WIRE.LEFT]: left, [WIRE.RIGHT]: right };
  model.receive(reply);
  assert.equal(store.comparePending, false);
  assert.deepEqual(store.comparison[WIRE.RIGHT], right);
  model.receive({ [WIRE.KIND]: WIRE.ERROR, [WIRE.TEXT]: "compare: LookupError: no" });
  assert.equal(store.comparePending, false);
});
