import assert from "node:assert/strict";
import test from "node:test";

import { offlineReason } from "../connection.js";
import { ANSWER_MS, NOT_CONNECTED, NO_ANSWER, createStore } from "../store.js";
import { WIRE } from "../wire.js";
import { Model, snapshot, summary } from "./model.js";

const T = WIRE.TRAIT_SNAPSHOT;

/** A model whose send throws as JupyterLab's comm does once its kernel is gone. */
class DeadModel extends Model {
  send() {
    throw new Error("Cannot send");
  }
}

const oneTurn = () => snapshot({ seq: 3, turns: [summary(0), summary(1)], turn: 1, events: [], state: { a: 1 } });

test("a send the kernel cannot take says 'not connected' instead of throwing, and nothing waits", () => {
  const store = createStore(new DeadModel({ [T]: oneTurn() }));
  assert.equal(store.offline, null);
  assert.doesNotThrow(() => store.askPreview("hi"));
  assert.equal(store.offline, NOT_CONNECTED);
  assert.equal(store.previewPending, false);
  // Later asks neither throw nor wait, and ask nothing.
  store.needTurn(0);
  store.edit("/a", "2");
  store.compare(null, null, 1);
  assert.equal(store.editPending, false);
  assert.equal(store.comparePending, false);
  assert.equal(store.asked.size, 0);
});

test("a request left unanswered is overdue after ANSWER_MS; any message from the kernel clears it", () => {
  let now = 1000;
  const model = new Model({ [T]: oneTurn() });
  const store = createStore(model, { now: () => now });
  store.needTurn(0);
  assert.equal(model.sent.length, 1);
  now += ANSWER_MS - 1;
  assert.deepEqual(store.overdue(ANSWER_MS), []);
  now += 1;
  assert.deepEqual(store.overdue(ANSWER_MS), ["t0"]);
  store.lost(NO_ANSWER);
  assert.equal(store.offline, NO_ANSWER);
  // Not "not connected": the view still asks (the kernel may only be busy).
  store.needTurn(0);
  assert.equal(model.sent.length, 2);
  store.receive({ [WIRE.KIND]: WIRE.ERROR, [WIRE.TEXT]: "x" });
  assert.equal(store.offline, null);
});

test("the connection check reads the widget manager: no kernel, a dead one, a model without a comm", () => {
  const comm = { isDisposed: false, _kernel: { isDisposed: false, id: "k1" } };
  const kernel = { id: "k1", status: "idle", connectionStatus: "connected", isDisposed: false };
  assert.equal(offlineReason({ kernel }, { comm, comm_live: true }), null);
  assert.equal(offlineReason({ kernel: null }, { comm }), NOT_CONNECTED);
  assert.equal(offlineReason({ kernel: { ...kernel, status: "dead" } }, { comm }), NOT_CONNECTED);
  assert.equal(offlineReason({ kernel }, { comm: undefined }), NOT_CONNECTED); // restored from saved state
  assert.equal(offlineReason({ kernel }, { comm: { ...comm, isDisposed: true } }), NOT_CONNECTED);
  assert.equal(offlineReason({ kernel: { ...kernel, id: "k2" } }, { comm }), NOT_CONNECTED); // a kernel started since
  assert.equal(offlineReason(undefined, null), null); // another front end: nothing to read
});
