// The store: what a view knows of the agent's turns, built from the kernel's messages.
//
// A view starts from the snapshot in the synced trait (no request, so it renders at once even
// while the kernel runs queued cells), then applies the numbered event messages that follow. A
// gap in the numbers is healed by the next snapshot: the trait's after each turn, or the reply
// to a "sync" message. Whole past turns and request payloads are asked for when shown.
//
// ``model`` is anywidget's model: get(name), on(event, fn), off(event, fn), send(message).

import { applyPatch, copyJSON } from "./patch.js";
import { WIRE } from "./wire.js";
import { applyEvent, blankTurn, loadTurn, turnFromSummary } from "./turn.js";

const isEnd = (e) => e.kind === "run_finished" || e.kind === "run_failed";

export class Store {
  constructor(model, { backlog = [], now = Date.now } = {}) {
    this.model = model;
    this.now = now;
    this.synced = false; // holds a snapshot and every event after it
    this.syncing = false; // asked the kernel for a snapshot
    this.seq = 0;
    this.turns = [];
    this.baseState = undefined; // the state before the first turn
    this.requests = new Map(); // "turn:call" -> request payload
    this.asked = new Set(); // requests sent and not answered yet
    this.preview = null;
    this.previewPending = false;
    this.error = null;
    // Edits of the state by hand since the last turn: {edits, state, patch, base}, or null.
    this.live = null;
    this.editError = null; // {path, text} of the last refused edit
    this.editPending = false;
    this.comparison = null; // the last comparison received (a "comparison" message)
    this.comparePending = false;
    // Bumped when the list of turns (any summary row) changes, when a snapshot replaces
    // everything, and when a request, a preview, an edit, a comparison or an error arrives.
    this.version = { list: 0, epoch: 0, requests: 0, preview: 0, error: 0, live: 0, compare: 0 };
    // Counters, shown as data-* attributes for the browser tests.
    this.applied = { snapshots: 0, events: 0, turns: 0, gaps: 0, syncs: 0 };
    this.listeners = new Set();
    this.onMessage = (msg) => this.receive(msg) && this.changed();
    this.onTrait = () => this.fromTrait() && this.changed();
    if (this.fromTrait()) {
      // Events that reached the model before this view existed (see createBacklog).
      for (const msg of backlog) this.receive(msg);
    } else {
      this.sync();
    }
    model.on("msg:custom", this.onMessage);
    model.on("change:" + WIRE.TRAIT_SNAPSHOT, this.onTrait);
  }

  subscribe(listener) {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  changed() {
    for (const listener of this.listeners) listener();
  }

  dispose() {
    this.model.off("msg:custom", this.onMessage);
    this.model.off("change:" + WIRE.TRAIT_SNAPSHOT, this.onTrait);
    this.listeners.clear();
  }

  // -- asking the kernel ------------------------------------------------------------------

  sync() {
    if (this.syncing) return;
    this.syncing = true;
    this.applied.syncs += 1;
    this.model.send({ [WIRE.KIND]: WIRE.SYNC });
  }

  needTurn(index) {
    const key = "t" + index;
    if (this.asked.has(key)) return;
    this.asked.add(key);
    this.model.send({ [WIRE.KIND]: WIRE.NEED_TURN, [WIRE.TURN_INDEX]: index });
  }

  needRequest(index, call) {
    const key = index + ":" + call;
    if (this.requests.has(key) || this.asked.has("r" + key)) return;
    this.asked.add("r" + key);
    this.model.send({ [WIRE.KIND]: WIRE.NEED_REQUEST, [WIRE.TURN_INDEX]: index, [WIRE.CALL]: call });
  }

  askPreview(message) {
    this.previewPending = true;
    this.version.preview += 1;
    this.model.send({ [WIRE.KIND]: WIRE.PREVIEW, [WIRE.MESSAGE]: message });
    this.changed();
  }

  /** Set ``path`` (a JSON pointer) to the value written as JSON ``text``; the kernel checks it. */
  edit(path, text) {
    this.editPending = true;
    this.editError = null;
    this.version.live += 1;
    this.model.send({ [WIRE.KIND]: WIRE.EDIT, [WIRE.PATH]: path, [WIRE.VALUE]: text });
    this.changed();
  }

  remove(path) {
    this.editPending = true;
    this.editError = null;
    this.version.live += 1;
    this.model.send({ [WIRE.KIND]: WIRE.EDIT, [WIRE.PATH]: path, [WIRE.OP]: "remove" });
    this.changed();
  }

  undo() {
    this.editPending = true;
    this.version.live += 1;
    this.model.send({ [WIRE.KIND]: WIRE.UNDO });
    this.changed();
  }

  /** Compare two turns ({agent, turn} each), or with none the default pair for turn ``index``. */
  compare(left, right, index) {
    this.comparePending = true;
    this.version.compare += 1;
    const msg = { [WIRE.KIND]: WIRE.COMPARE };
    if (left && right) Object.assign(msg, { [WIRE.LEFT]: left, [WIRE.RIGHT]: right });
    if (index !== undefined && index !== null) msg[WIRE.TURN_INDEX] = index;
    this.model.send(msg);
    this.changed();
  }

  /** The state with the pending edits, once it can be built (a patch needs its base turn). */
  liveState() {
    const live = this.live;
    if (!live) return undefined;
    if (live.state === undefined && live.patch) {
      const base = this.turns[live.base];
      if (!base || base.state === undefined) {
        this.needTurn(live.base);
        return undefined;
      }
      try {
        live.state = applyPatch(copyJSON(base.state), live.patch);
      } catch (err) {
        this.sync(); // the base the kernel patched against is not the one held here
        return undefined;
      }
    }
    return live.state;
  }

  takeLive(msg) {
    const edits = msg[WIRE.EDITS] || [];
    this.live = edits.length ? { edits, state: msg[WIRE.LIVE_STATE], patch: msg[WIRE.LIVE_PATCH], base: msg[WIRE.TURN_INDEX] } : null;
    this.version.live += 1;
  }

  // -- what the kernel sends --------------------------------------------------------------

  /** Take the trait's snapshot if it is newer than what the store holds. */
  fromTrait() {
    const snap = this.model.get(WIRE.TRAIT_SNAPSHOT);
    if (!snap || snap[WIRE.SEQ] === undefined) return false;
    if (this.synced && snap[WIRE.SEQ] <= this.seq) return false;
    this.adopt(snap);
    return true;
  }

  adopt(snap) {
    this.turns = snap[WIRE.SUMMARIES].map(turnFromSummary);
    this.asked.clear();
    this.baseState = undefined;
    const index = snap[WIRE.TURN_INDEX];
    if (index === undefined || index === null) {
      this.baseState = snap[WIRE.STATE];
    } else {
      const turn = this.turns[index];
      loadTurn(turn, snap[WIRE.EVENTS], snap[WIRE.CHANGES], snap[WIRE.STATE]);
      turn.text = snap[WIRE.LIVE_TEXT] || "";
      if (turn.status === "running") turn.receivedAt = turn.at ? turn.at * 1000 : this.now();
    }
    this.takeLive(snap);
    this.seq = snap[WIRE.SEQ];
    this.synced = true;
    this.applied.snapshots += 1;
    this.version.list += 1;
    this.version.epoch += 1;
  }

  /** Take one message from the kernel; returns whether anything changed. */
  receive(msg) {
    if (!msg || typeof msg !== "object") return false;
    const kind = msg[WIRE.KIND];
    if (kind === WIRE.EVENT) return this.receiveEvent(msg);
    if (kind === WIRE.SNAPSHOT) {
      if (!this.syncing) return false; // another view asked for it
      this.syncing = false;
      this.adopt(msg);
    } else if (kind === WIRE.TURN) {
      const index = msg[WIRE.TURN_INDEX];
      this.asked.delete("t" + index);
      const turn = this.turns[index];
      if (turn) loadTurn(turn, msg[WIRE.EVENTS], msg[WIRE.CHANGES], msg[WIRE.STATE]);
      this.version.list += 1;
      this.applied.turns += 1;
    } else if (kind === WIRE.REQUEST) {
      const key = msg[WIRE.TURN_INDEX] + ":" + msg[WIRE.CALL];
      this.asked.delete("r" + key);
      this.requests.set(key, msg[WIRE.REQUEST]);
      this.version.requests += 1;
    } else if (kind === WIRE.PREVIEW) {
      this.preview = msg;
      this.previewPending = false;
      this.version.preview += 1;
    } else if (kind === WIRE.EDITED) {
      this.takeLive(msg);
      this.editPending = false;
      this.editError = null;
    } else if (kind === WIRE.EDIT_FAILED) {
      this.editError = { path: msg[WIRE.PATH], text: msg[WIRE.TEXT] };
      this.editPending = false;
      this.version.live += 1;
    } else if (kind === WIRE.COMPARISON) {
      this.comparison = msg;
      this.comparePending = false;
      this.version.compare += 1;
    } else if (kind === WIRE.ERROR) {
      this.error = msg[WIRE.TEXT];
      this.previewPending = false;
      this.editPending = false;
      this.comparePending = false;
      this.syncing = false;
      this.version.error += 1;
      this.version.preview += 1;
      this.version.live += 1;
      this.version.compare += 1;
    } else {
      return false;
    }
    return true;
  }

  receiveEvent(msg) {
    const seq = msg[WIRE.SEQ];
    if (!this.synced || seq <= this.seq) return false; // the snapshot covers it
    if (seq !== this.seq + 1) {
      this.synced = false; // a message went missing: start again from a snapshot
      this.applied.gaps += 1;
      this.sync();
      return false;
    }
    this.seq = seq;
    const index = msg[WIRE.TURN_INDEX];
    if (!this.turns[index]) {
      this.turns[index] = blankTurn(index);
      this.version.list += 1;
    }
    const turn = this.turns[index];
    const e = msg[WIRE.EVENT_BODY];
    if (e.kind === "run_started" && this.live) {
      this.live = null; // the run takes the edits over as the user's changes
      this.version.live += 1;
    }
    const previous = index === 0 ? this.baseState : this.turns[index - 1]?.state;
    const summary = turn.v.summary;
    applyEvent(turn, e, { live: true, previousState: previous, now: this.now });
    if (turn.v.summary !== summary) this.version.list += 1;
    this.applied.events += 1;
    // A state the browser could not follow (not loaded, or a patch that failed) is fetched once
    // the turn has ended.
    if (isEnd(e) && turn.state === undefined) this.needTurn(index);
    return true;
  }
}

export function createStore(model, options) {
  return new Store(model, options);
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
