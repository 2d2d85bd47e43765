import assert from "node:assert/strict";
import test from "node:test";

import { isFloat, jsonText, markFloat, numberText, shiftFloats } from "../floats.js";
import { argsDiff, editText, opSign, usageTitle } from "../format.js";
import { applyPatch } from "../patch.js";

test("a whole-number float is written as one: in the tree, the editor and JSON text", () => {
  const state = { budget: { limit: 50, count: 3 } };
  markFloat(state.budget, "limit", true);
  assert.equal(numberText(state.budget.limit, isFloat(state.budget, "limit")), "50.0");
  assert.equal(numberText(state.budget.count, isFloat(state.budget, "count")), "3");
  assert.equal(editText(50, true), "50.0");
  assert.equal(editText(50, false), "50");
  assert.equal(jsonText(state), '{"budget":{"limit":50.0,"count":3}}');
  assert.equal(editText(state.budget), '{"limit":50.0,"count":3}');
});

test("patches carry the marks: a float replaced by an int loses it, array inserts shift it", () => {
  const state = { budget: { limit: 50 }, prices: [1, 2] };
  markFloat(state.budget, "limit", true);
  markFloat(state.prices, "1", true);
  const op = { op: "replace", path: "/budget/limit", value: 80 };
  markFloat(op, "value", true); // as the parse marks "80.0"
  applyPatch(state, [op]);
  assert.equal(jsonText(state.budget), '{"limit":80.0}');
  applyPatch(state, [{ op: "replace", path: "/budget/limit", value: 80 }]);
  assert.equal(jsonText(state.budget), '{"limit":80}');
  applyPatch(state, [{ op: "add", path: "/prices/0", value: 7 }]);
  assert.equal(jsonText(state.prices), "[7,1,2.0]");
  applyPatch(state, [{ op: "remove", path: "/prices/0" }]);
  assert.equal(jsonText(state.prices), "[1,2.0]");
  shiftFloats(state.prices, 0, -1);
  assert.equal(isFloat(state.prices, "0"), true);
});

test("what a hook changed in the arguments, patch ops in the State tab's words, token labels", () => {
  assert.deepEqual(argsDiff({ item: "coffee", price: 1.289 }, { item: "coffee", price: 1.29 }), ["price: 1.289 → 1.29"]);
  assert.deepEqual(argsDiff({ a: 1 }, { a: 1 }), []);
  assert.deepEqual(argsDiff({ a: 1, b: 2 }, { a: 1, c: 3 }), ["− b: 2", "+ c: 3"]);
  assert.deepEqual(["add", "replace", "remove", "move"].map(opSign), ["+", "~", "−", "move"]);
  const title = usageTitle({ input: 300, output: 46, estimated: true }, 2);
  assert.match(title, /300 in \+ 46 out, summed over its 2 model calls \(estimated/);
  assert.match(title, /Prompt tab counts one prompt/);
});

test("a running turn's answer line: the tool running, else the streamed text, else waiting", async () => {
  const { liveAnswer } = await import("../view.js");
  const turn = { text: "", tools: [{ name: "buy", arguments: '{"item": "tea"}', done: true }] };
  assert.deepEqual(liveAnswer(turn), ["waiting", "for the model's answer…"]);
  turn.tools.push({ name: "buy", arguments: '{"item": "caviar"}', done: false });
  turn.text = "Let me";
  assert.deepEqual(liveAnswer(turn), ["running tool", 'buy({"item":"caviar"}) …']);
  turn.tools[1].done = true;
  assert.deepEqual(liveAnswer(turn), ["streaming", "Let me"]);
});

test("a part of a state fetched later keeps its floats' form (whole, or its children)", async () => {
  const { graft } = await import("../lazy.js");
  const state = { a: { x: 1 }, list: [1] };
  const children = { y: 2, z: 3 };
  markFloat(children, "y", true);
  assert.equal(graft(state, "/a", { from: 1, size: 3, value: children, stubs: {}, whole: false }), true);
  assert.equal(jsonText(state.a), '{"x":1,"y":2.0,"z":3}');
  const items = [5, 6];
  markFloat(items, "1", true);
  graft(state, "/list", { from: 1, size: 3, value: items, stubs: {}, whole: false });
  assert.equal(jsonText(state.list), "[1,5,6.0]");
  graft(state, "/a/x", { value: 7, whole: true, float: true });
  assert.equal(jsonText(state.a), '{"x":7.0,"y":2.0,"z":3}');
});
