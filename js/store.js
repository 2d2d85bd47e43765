// The store: what a view knows of the agent's turns, built from the kernel's messages.
//
// A view starts from the snapshot in the synced trait (no request, so it renders at once even
// while the kernel runs queued cells: snapshot.js), then applies the numbered items that follow,
// which come in batches (batches.js): events, or a whole turn of a fast loop as its History row.
// A gap in the numbers is healed by the next snapshot: the trait's after each cell, or the reply
// to a "sync" message. The snapshot holds the last turns' summary rows only; older rows
// (History), whole past turns, request payloads and the parts of a large state not held yet
// (lazy.js, subtrees.js) are asked for when shown. ``turns`` is indexed by turn number and has
// holes below ``listedFrom`` until their rows arrive (``turnAt`` fills one when a turn is shown).
//
// ``model`` is anywidget's model: get(name), on(event, fn), off(event, fn), send(message).

import { receiveBatch } from "./batches.js";
import { markStubs } from "./lazy.js";
import { decodeMessage, decodeTrait, traitSeq } from "./message.js";
import { applyPatch, copyJSON } from "./patch.js";
import { WIRE } from "./wire.js";
import { loadTurn, stubTurn } from "./turn.js";
import { TREE_WIRE, keepTree, scopedTurn, takeProgress } from "./runs.js";
import { Pending, isCardMessage } from "./pending.js";
import { OUTPUT_WIRE, takeOutput } from "./outputs.js";
import { adoptSnapshot, takeRows } from "./snapshot.js";
import { subtreeKey, takeSubtree } from "./subtrees.js";

/** What a view says when the kernel cannot be reached. */
export const NOT_CONNECTED = "the kernel is not connected";

/** What a view says when the kernel has not answered for a while. */
export const NO_ANSWER = "the kernel has not answered for 15 s (it is busy running a cell, or not connected)";

/** How long a request waits for its answer before the view says so. */
export const ANSWER_MS = 15000;

export class Store {
  constructor(model, { backlog = [], now = Date.now } = {}) {
    this.model = model;
    this.now = now;
    this.synced = false; // holds a snapshot and every event after it
    this.syncing = false; // asked the kernel for a snapshot
    this.seq = 0;
    this.turns = [];
    this.listedFrom = 0; // the first turn whose summary row is held (all rows after it are)
    this.baseState = undefined; // the state before the first turn
    this.requests = new Map(); // "turn:call" -> request payload
    this.scoped = null; // the run of a turn's tree last asked for (js/runs.js), as a turn
    this.asked = new Set(); // requests sent and not answered yet
    this.preview = null;
    this.previewPending = false;
    this.error = null;
    // Whether the kernel can be reached: null while it can, else why not (a sentence). A send that
    // throws (the kernel was shut down) or a connection check (connection.js) sets it.
    this.offline = null;
    this.askedAt = new Map(); // request key -> when it was sent (to stop waiting for a silent kernel)
    // Edits of the state by hand since the last turn: {edits, state, patch, base}, or null.
    this.live = null;
    this.editError = null; // {path, text} of the last refused edit
    this.editPending = false;
    this.comparison = null; // the last comparison received (a "comparison" message)
    this.comparePending = false;
    this.pending = new Pending(this); // the paused turn's cards (js/pending.js)
    this.outputs = new Map(); // turn index -> its typed output's schema, attempts and retries (js/outputs.js)
    // Bumped when the list of turns (any summary row) changes, when a snapshot replaces
    // everything, and when a request, a preview, an edit, a comparison, a part of a state or an
    // error arrives.
    this.version = { list: 0, epoch: 0, requests: 0, preview: 0, error: 0, live: 0, compare: 0, subtrees: 0, cards: 0, outputs: 0 };
    // Counters, shown as data-* attributes for the browser tests.
    this.applied = { snapshots: 0, merged: 0, batches: 0, events: 0, turns: 0, subtrees: 0, gaps: 0, syncs: 0, rows: 0, folded: 0 };
    this.listeners = new Set();
    this.onMessage = (msg, buffers) => this.receive(decodeMessage(msg, buffers)) && this.changed();
    this.onTrait = () => this.fromTrait() && this.changed();
    if (this.fromTrait()) {
      // Events that reached the model before this view existed (backlog.js).
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

  /** Send ``message`` to the kernel; false (and the view says so) when it cannot be reached. */
  send(message) {
    if (this.offline === NOT_CONNECTED) return false;
    try {
      this.model.send(message);
      return true;
    } catch (err) {
      this.lost(NOT_CONNECTED);
      return false;
    }
  }

  /** The kernel cannot be reached (``why``); everything waiting for it stops waiting. */
  lost(why, by = "store") {
    if (this.offline === why) return;
    this.offline = why;
    this.offlineBy = by; // "watch" when the connection check said so (it may say otherwise later)
    this.syncing = false;
    this.previewPending = false;
    this.editPending = false;
    this.comparePending = false;
    this.asked.clear();
    for (const name of Object.keys(this.version)) this.version[name] += 1;
    this.changed();
  }

  /** The kernel is reachable again (a new snapshot reached the trait). */
  found() {
    if (this.offline === null) return;
    this.offline = null;
    this.version.epoch += 1;
  }

  /** Requests sent longer than ``ms`` ago and not answered. */
  overdue(ms) {
    const now = this.now();
    for (const key of [...this.askedAt.keys()]) if (!this.asked.has(key)) this.askedAt.delete(key); // answered
    return [...this.askedAt.keys()].filter((key) => now - this.askedAt.get(key) >= ms);
  }

  /** Note ``key`` as asked (its reply clears it); false if it already was. */
  ask(key) {
    if (this.asked.has(key)) return false;
    this.asked.add(key);
    this.askedAt.set(key, this.now());
    return true;
  }

  sync() {
    if (this.syncing) return;
    this.syncing = true;
    this.applied.syncs += 1;
    this.send({ [WIRE.KIND]: WIRE.SYNC });
  }

  /** Turn ``index``: a stub in place of one whose row is not held yet (its events are asked
   * for when it is shown). */
  turnAt(index) {
    if (index < 0 || index >= this.turns.length) return null;
    return this.turns[index] || (this.turns[index] = stubTurn(index));
  }

  /** Ask for the summary rows before the first one held (History), a page at a time. */
  needRows() {
    const before = this.listedFrom;
    const key = "rows" + before;
    if (before <= 0 || this.offline === NOT_CONNECTED || !this.ask(key)) return;
    this.send({ [WIRE.KIND]: WIRE.NEED_ROWS, [WIRE.BEFORE]: before });
    this.version.list += 1; // the History tab shows that they are on their way
    this.changed();
  }

  needTurn(index) {
    const key = "t" + index;
    if (this.offline === NOT_CONNECTED || !this.ask(key)) return;
    this.send({ [WIRE.KIND]: WIRE.NEED_TURN, [WIRE.TURN_INDEX]: index });
  }

  /**
   * Ask for a part of a state held in part: the children of ``path`` from ``from`` on, or with
   * ``whole`` all of it. ``source`` says which state: {turn: index}, {live: true} (the state
   * with the pending edits) or {} (the state before the first turn).
   */
  needSubtree(source, path, { from = 0, whole = false } = {}) {
    const key = subtreeKey(source.live, source.turn, path, whole, from, source.run);
    if (this.offline === NOT_CONNECTED || !this.ask(key)) return;
    const msg = { [WIRE.KIND]: WIRE.NEED_SUBTREE, [WIRE.PATH]: path, [WIRE.FROM]: from };
    if (whole) msg[WIRE.WHOLE] = true;
    if (source.live) msg[WIRE.LIVE] = true;
    if (source.turn !== undefined && source.turn !== null) msg[WIRE.TURN_INDEX] = source.turn;
    if (source.run) msg[TREE_WIRE.RUN_ID] = source.run; // a run of the turn's tree (js/runs.js)
    this.send(msg);
  }

  /** Ask for run ``runId`` of turn ``index``'s tree (it comes as ``scoped``). */
  needRun(index, runId) {
    if (this.asked.has("run" + runId)) return;
    this.asked.add("run" + runId);
    this.model.send({ [WIRE.KIND]: TREE_WIRE.NEED_RUN, [WIRE.TURN_INDEX]: index, [TREE_WIRE.RUN_ID]: runId });
  }

  needRequest(index, call) {
    const key = index + ":" + call;
    if (this.requests.has(key) || this.offline === NOT_CONNECTED || !this.ask("r" + key)) return;
    this.send({ [WIRE.KIND]: WIRE.NEED_REQUEST, [WIRE.TURN_INDEX]: index, [WIRE.CALL]: call });
  }

  askPreview(message) {
    if (this.offline === NOT_CONNECTED) return this.changed();
    this.previewPending = true;
    this.version.preview += 1;
    this.send({ [WIRE.KIND]: WIRE.PREVIEW, [WIRE.MESSAGE]: message });
    this.changed();
  }

  /** Set ``path`` (a JSON pointer) to the value written as JSON ``text``; the kernel checks it. */
  edit(path, text) {
    if (this.offline === NOT_CONNECTED) return this.changed();
    this.editPending = true;
    this.editError = null;
    this.version.live += 1;
    this.send({ [WIRE.KIND]: WIRE.EDIT, [WIRE.PATH]: path, [WIRE.VALUE]: text });
    this.changed();
  }

  remove(path) {
    if (this.offline === NOT_CONNECTED) return this.changed();
    this.editPending = true;
    this.editError = null;
    this.version.live += 1;
    this.send({ [WIRE.KIND]: WIRE.EDIT, [WIRE.PATH]: path, [WIRE.OP]: "remove" });
    this.changed();
  }

  undo() {
    if (this.offline === NOT_CONNECTED) return this.changed();
    this.editPending = true;
    this.version.live += 1;
    this.send({ [WIRE.KIND]: WIRE.UNDO });
    this.changed();
  }

  /** Compare two turns ({agent, turn} each), or with none the default pair for turn ``index``. */
  compare(left, right, index) {
    if (this.offline === NOT_CONNECTED) return this.changed();
    this.comparePending = true;
    this.version.compare += 1;
    const msg = { [WIRE.KIND]: WIRE.COMPARE };
    if (left && right) Object.assign(msg, { [WIRE.LEFT]: left, [WIRE.RIGHT]: right });
    if (index !== undefined && index !== null) msg[WIRE.TURN_INDEX] = index;
    this.send(msg);
    this.changed();
  }

  /** The state with the pending edits, once it can be built (a patch needs its base turn). */
  liveState() {
    const live = this.live;
    if (!live) return undefined;
    if (live.state === undefined && live.patch && !live.unpatched) {
      const base = this.turns[live.base];
      if (!base || base.state === undefined) {
        this.needTurn(live.base);
        return undefined;
      }
      try {
        live.state = applyPatch(copyJSON(base.state), live.patch);
      } catch (err) {
        // The patch needs a part of the base not held here (or another base): the state is
        // asked for as it is now instead.
        live.unpatched = true;
        this.needSubtree({ live: true }, "", { from: 0 });
        return undefined;
      }
    }
    return live.state;
  }

  takeLive(msg) {
    const edits = msg[WIRE.EDITS] || [];
    const state = msg[WIRE.LIVE_STATE] === undefined ? undefined : markStubs(msg[WIRE.LIVE_STATE], msg[WIRE.LIVE_STUBS]);
    this.live = edits.length ? { edits, state, patch: msg[WIRE.LIVE_PATCH], base: msg[WIRE.TURN_INDEX] } : null;
    this.version.live += 1;
  }

  // -- what the kernel sends --------------------------------------------------------------

  /** Take the trait's snapshot if it is newer than what the store holds. */
  fromTrait() {
    const value = this.model.get(WIRE.TRAIT_SNAPSHOT);
    const seq = traitSeq(value);
    if (seq < 0 || (this.synced && seq <= this.seq)) return false;
    if (this.synced) this.found(); // the kernel refreshed it: it is there
    adoptSnapshot(this, decodeTrait(value));
    return true;
  }

  /** Take one message from the kernel; returns whether anything changed. */
  receive(msg) {
    if (!msg || typeof msg !== "object") return false;
    this.found(); // whatever the kernel sent, it is there
    const kind = msg[WIRE.KIND];
    if (kind === WIRE.BATCH) return receiveBatch(this, msg);
    if (kind === WIRE.SNAPSHOT) {
      if (!this.syncing) return false; // another view asked for it
      this.syncing = false;
      adoptSnapshot(this, msg);
    } else if (kind === WIRE.ROWS) {
      return takeRows(this, msg);
    } else if (kind === WIRE.TURN) {
      const index = msg[WIRE.TURN_INDEX];
      this.asked.delete("t" + index);
      const turn = this.turnAt(index);
      if (turn) loadTurn(turn, msg[WIRE.EVENTS], msg[WIRE.CHANGES], markStubs(msg[WIRE.STATE], msg[WIRE.STUBS]));
      keepTree(turn, msg);
      this.version.list += 1;
      this.applied.turns += 1;
    } else if (kind === TREE_WIRE.RUN_PROGRESS) {
      takeProgress(this.turnAt(msg[WIRE.TURN_INDEX]), msg);
      this.version.list += 1;
    } else if (kind === TREE_WIRE.RUN) {
      this.asked.delete("run" + msg[TREE_WIRE.RUN_ID]);
      this.scoped = scopedTurn(msg, this.requests);
      this.version.list += 1;
      this.version.requests += 1;
    } else if (kind === WIRE.SUBTREE) {
      takeSubtree(this, msg);
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
    } else if (isCardMessage(kind)) {
      return this.pending.receive(msg);
    } else if (kind === OUTPUT_WIRE.OUTPUT) {
      takeOutput(this, msg);
    } else if (kind === WIRE.COMPARISON) {
      this.comparison = msg;
      this.comparePending = false;
      this.version.compare += 1;
    } else if (kind === WIRE.ERROR) {
      this.error = msg[WIRE.TEXT];
      this.askedAt.clear(); // an error answers what was asked: nothing is overdue
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
}

export function createStore(model, options) {
  return new Store(model, options);
}
