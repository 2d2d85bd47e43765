import assert from "node:assert/strict";
import test from "node:test";

import { METADATA_KEY, keepStaticOnSave, writeStatic } from "../saved.js";
import { WIRE } from "../wire.js";
import { Model } from "./model.js";

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
  const model = new Model({ [WIRE.TRAIT_ID]: "m1", [WIRE.TRAIT_STATIC]: "budget · inspector · 2 turn(s)", [WIRE.TRAIT_AGENT]: "budget" });
  model.widget_manager = { _context: context };
  const stop = keepStaticOnSave(model);
  assert.equal(slots.size, 1);
  for (const slot of slots) slot(null, "completed"); // only "started" writes
  assert.equal(metadata[METADATA_KEY].inspectors.m1, undefined);
  for (const slot of slots) slot(null, "started");
  assert.deepEqual(metadata[METADATA_KEY].inspectors.m1, { agent: "budget", text: "budget · inspector · 2 turn(s)" });
  assert.equal(metadata[METADATA_KEY].other, 1); // the rest of the key is kept
  assert.ok(metadata[METADATA_KEY].inspectors.old);
  stop();
  assert.equal(slots.size, 0);
});

test("nothing is written without a text or an id, and elsewhere than Jupyter nothing is watched", () => {
  const { metadata, notebook } = lab();
  assert.equal(writeStatic(notebook, new Model({ [WIRE.TRAIT_ID]: "m2" })), false);
  assert.equal(metadata[METADATA_KEY].inspectors.m2, undefined);
  const bare = new Model({});
  bare.widget_manager = {};
  assert.equal(typeof keepStaticOnSave(bare), "function");
});
