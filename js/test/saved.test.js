import assert from "node:assert/strict";
import test from "node:test";

import { METADATA_KEY, STATIC_NOTE, keepStaticOnSave, staticText, writeStatic } from "../saved.js";
import { WIRE } from "../wire.js";
import { Model, snapshot, summary } from "./model.js";

/** A model whose snapshot holds two turns, the last with a failed tool call. */
function budgetModel(id = "m1") {
  const failed = { kind: "tool_call_finished", name: "buy", arguments: '{"item":"caviar"}', result: "caviar is over budget", error: "caviar is over budget" };
  const traits = {
    [WIRE.TRAIT_ID]: id,
    [WIRE.TRAIT_AGENT]: "budget",
    [WIRE.TRAIT_MODEL]: { label: "scripted", kind: "scripted" },
    [WIRE.TRAIT_SNAPSHOT]: snapshot({ seq: 5, turns: [summary(0), summary(1, { message: "buy caviar", content: "No." })], turn: 1, events: [failed], state: {} }),
  };
  return new Model(traits);
}

/** A notebook model and document context as JupyterLab's widget manager holds them. */
function lab() {
  const metadata = { [METADATA_KEY]: { other: 1, inspectors: { old: { agent: "x", text: "t" } } } };
  const slots = new Set();
  const notebook = { getMetadata: (k) => metadata[k], setMetadata: (k, v) => (metadata[k] = v) };
  const context = { model: notebook, saveState: { connect: (fn) => slots.add(fn), disconnect: (fn) => slots.delete(fn) } };
  return { metadata, slots, notebook, context };
}

test("at a save, the inspector's latest turn goes into the notebook's metadata under its model id", () => {
  const { metadata, slots, context } = lab();
  const model = budgetModel();
  model.widget_manager = { _context: context };
  const stop = keepStaticOnSave(model);
  assert.equal(slots.size, 1);
  for (const slot of slots) slot(null, "completed"); // only "started" writes
  assert.equal(metadata[METADATA_KEY].inspectors.m1, undefined);
  for (const slot of slots) slot(null, "started");
  assert.deepEqual(metadata[METADATA_KEY].inspectors.m1, { agent: "budget", text: staticText(model) });
  assert.equal(metadata[METADATA_KEY].other, 1); // the rest of the key is kept
  assert.ok(metadata[METADATA_KEY].inspectors.old);
  stop();
  assert.equal(slots.size, 0);
});

test("the static text: header, the last turn's message, tool calls (errors marked) and answer", () => {
  const lines = staticText(budgetModel()).split("\n");
  assert.equal(lines[0], "budget · inspector · model scripted · 2 turn(s) · " + STATIC_NOTE);
  assert.match(lines[1], /^turn 2 · ok · \d+(\.\d)? m?s$/);
  assert.deepEqual(lines.slice(2), ["user: buy caviar", '  1. buy({"item":"caviar"}) -> error: caviar is over budget', "answer: No."]);
});

test("nothing is written without a text or an id, and elsewhere than Jupyter nothing is watched", () => {
  const { metadata, notebook } = lab();
  assert.equal(writeStatic(notebook, new Model({ [WIRE.TRAIT_ID]: "m2" })), false);
  assert.equal(metadata[METADATA_KEY].inspectors.m2, undefined);
  const bare = new Model({});
  bare.widget_manager = {};
  assert.equal(typeof keepStaticOnSave(bare), "function");
});
