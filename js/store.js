// The store: what a view knows of the agent's turns, built from the kernel's messages.
//
// A view starts from the snapshot in the synced trait (no request, so it renders at once even
// while the kernel runs queued cells), then applies the numbered event messages that follow. A
// gap in the numbers is healed by the next snapshot: the trait's after each turn, or the reply
// to a "sync" message. Whole past turns and request payloads are asked for when shown.
//
// ``model`` is anywidget's model: get(name), on(event, fn), off(event, fn), send(message).

import { WIRE } from "./wire.js";
import { applyEvent, blankTurn, loadTurn, turnFromSummary } from "./turn.js";

const isEnd = (e) => e.kind === "run_finished" || e.kind === "run_failed";

export function createStore(model, { backlog = [], now = Date.now } = {}) {
  const store = {
    synced: false, // holds a snapshot and every event after it
    syncing: false, // asked the kernel for a snapshot
    seq: 0,
    turns: [],
    baseState: undefined, // the state before the first turn
    requests: new Map(), // "turn:call" -> request payload
    asked: new Set(), // requests sent and not answered yet
    preview: null,
    previewPending: false,
    error: null,
    // Bumped when the list of turns (any summary row) changes, when a snapshot replaces
    // everything, and when a request, a preview or an error arrives.
    version: { list: 0, epoch: 0, requests: 0, preview: 0, error: 0 },
    // Counters, shown as data-* attributes for the browser tests.
    applied: { snapshots: 0, events: 0, turns: 0, gaps: 0, syncs: 0 },
  };
  const listeners = new Set();
  const changed = () => {
    for (const listener of listeners) listener();
  };
  store.subscribe = (listener) => {
    listeners.add(listener);
    return () => listeners.delete(listener);
  };

  store.sync = () => {
    if (store.syncing) return;
    store.syncing = true;
    store.applied.syncs += 1;
    model.send({ [WIRE.KIND]: WIRE.SYNC });
  };

  store.needTurn = (index) => {
    const key = "t" + index;
    if (store.asked.has(key)) return;
    store.asked.add(key);
    model.send({ [WIRE.KIND]: WIRE.NEED_TURN, [WIRE.TURN_INDEX]: index });
  };

  store.needRequest = (index, call) => {
    const key = index + ":" + call;
    if (store.requests.has(key) || store.asked.has("r" + key)) return;
    store.asked.add("r" + key);
    model.send({ [WIRE.KIND]: WIRE.NEED_REQUEST, [WIRE.TURN_INDEX]: index, [WIRE.CALL]: call });
  };

  store.askPreview = (message) => {
    store.previewPending = true;
    store.version.preview += 1;
    model.send({ [WIRE.KIND]: WIRE.PREVIEW, [WIRE.MESSAGE]: message });
    changed();
  };

  const adopt = (snap) => {
    store.turns = snap[WIRE.SUMMARIES].map(turnFromSummary);
    store.asked.clear();
    const index = snap[WIRE.TURN_INDEX];
    store.baseState = undefined;
    if (index === undefined || index === null) {
      store.baseState = snap[WIRE.STATE];
    } else {
      const turn = store.turns[index];
      loadTurn(turn, snap[WIRE.EVENTS], snap[WIRE.CHANGES], snap[WIRE.STATE]);
      turn.text = snap[WIRE.LIVE_TEXT] || "";
      if (turn.status === "running") turn.receivedAt = turn.at ? turn.at * 1000 : now();
    }
    store.seq = snap[WIRE.SEQ];
    store.synced = true;
    store.applied.snapshots += 1;
    store.version.list += 1;
    store.version.epoch += 1;
  };

  const applyLive = (msg) => {
    store.seq = msg[WIRE.SEQ];
    const index = msg[WIRE.TURN_INDEX];
    if (!store.turns[index]) {
      store.turns[index] = blankTurn(index);
      store.version.list += 1;
    }
    const turn = store.turns[index];
    const e = msg[WIRE.EVENT_BODY];
    const previous = index === 0 ? store.baseState : store.turns[index - 1]?.state;
    const summary = turn.v.summary;
    applyEvent(turn, e, { live: true, previousState: previous, now });
    if (turn.v.summary !== summary) store.version.list += 1;
    store.applied.events += 1;
    // A state the browser could not follow (not loaded, or a patch that failed) is fetched once
    // the turn has ended.
    if (isEnd(e) && turn.state === undefined) store.needTurn(index);
  };

  /** Take one message from the kernel; returns whether anything changed. */
  const receive = (msg) => {
    if (!msg || typeof msg !== "object") return false;
    const kind = msg[WIRE.KIND];
    if (kind === WIRE.SNAPSHOT) {
      if (!store.syncing) return false; // another view asked for it
      store.syncing = false;
      adopt(msg);
    } else if (kind === WIRE.EVENT) {
      const seq = msg[WIRE.SEQ];
      if (!store.synced || seq <= store.seq) return false; // the snapshot covers it
      if (seq !== store.seq + 1) {
        store.synced = false; // a message went missing: start again from a snapshot
        store.applied.gaps += 1;
        store.sync();
        return false;
      }
      applyLive(msg);
    } else if (kind === WIRE.TURN) {
      const index = msg[WIRE.TURN_INDEX];
      store.asked.delete("t" + index);
      const turn = store.turns[index];
      if (turn) loadTurn(turn, msg[WIRE.EVENTS], msg[WIRE.CHANGES], msg[WIRE.STATE]);
      store.version.list += 1;
      store.applied.turns += 1;
    } else if (kind === WIRE.REQUEST) {
      const key = msg[WIRE.TURN_INDEX] + ":" + msg[WIRE.CALL];
      store.asked.delete("r" + key);
      store.requests.set(key, msg[WIRE.REQUEST]);
      store.version.requests += 1;
    } else if (kind === WIRE.PREVIEW) {
      store.preview = msg;
      store.previewPending = false;
      store.version.preview += 1;
    } else if (kind === WIRE.ERROR) {
      store.error = msg[WIRE.TEXT];
      store.previewPending = false;
      store.syncing = false;
      store.version.error += 1;
      store.version.preview += 1;
    } else {
      return false;
    }
    return true;
  };

  const fromTrait = () => {
    const snap = model.get(WIRE.TRAIT_SNAPSHOT);
    if (!snap || snap[WIRE.SEQ] === undefined) return false;
    // Older than what the store holds (or the same): nothing to learn from it.
    if (store.synced && snap[WIRE.SEQ] <= store.seq) return false;
    adopt(snap);
    return true;
  };

  const onMessage = (msg) => {
    if (receive(msg)) changed();
  };
  const onTrait = () => {
    if (fromTrait()) changed();
  };

  if (fromTrait()) {
    // Events that reached the model before this view existed (see createBacklog).
    for (const msg of backlog) receive(msg);
  } else {
    store.sync();
  }
  model.on("msg:custom", onMessage);
  model.on("change:" + WIRE.TRAIT_SNAPSHOT, onTrait);
  store.dispose = () => {
    model.off("msg:custom", onMessage);
    model.off("change:" + WIRE.TRAIT_SNAPSHOT, onTrait);
    listeners.clear();
  };
  return store;
}

/**
 * The event messages a model receives after its trait's snapshot, kept from the moment the
 * model exists (anywidget's ``initialize``), so a view created later — its output arrives while
 * the next cell already runs — replays them instead of finding a gap. Bounded: past ``limit``
 * messages it gives up, and a view falls back to a sync.
 */
export function createBacklog(model, { limit = 5000 } = {}) {
  let messages = [];
  let overflow = false;
  const traitSeq = () => model.get(WIRE.TRAIT_SNAPSHOT)?.[WIRE.SEQ] ?? -1;
  const onMessage = (msg) => {
    if (overflow || !msg || msg[WIRE.KIND] !== WIRE.EVENT) return;
    if (messages.length >= limit) {
      overflow = true;
      messages = [];
      return;
    }
    messages.push(msg);
  };
  const onTrait = () => {
    const seq = traitSeq();
    messages = messages.filter((m) => m[WIRE.SEQ] > seq);
    overflow = false;
  };
  model.on("msg:custom", onMessage);
  model.on("change:" + WIRE.TRAIT_SNAPSHOT, onTrait);
  return {
    messages: () => (overflow ? [] : messages.filter((m) => m[WIRE.SEQ] > traitSeq())),
    dispose: () => {
      model.off("msg:custom", onMessage);
      model.off("change:" + WIRE.TRAIT_SNAPSHOT, onTrait);
    },
  };
}
