// The store: what a view knows of the agent's turns, built from the kernel's messages.
//
// A view starts from the snapshot in the synced trait (no request, so it renders at once even
// while the kernel runs queued cells), then applies the numbered items that follow, which come in
// batches: events, or a whole turn of a fast loop as its History row (its events are asked for
// when it is shown, like an older turn's). A gap in the numbers is healed by the next snapshot: the trait's after each
// cell, or the reply to a "sync" message. The snapshot holds the last turns' summary rows only;
// older rows (History), whole past turns, request payloads and the parts of a large state not
// held yet (lazy.js) are asked for when shown. ``turns`` is indexed by turn number and has
// holes below ``listedFrom`` until their rows arrive (``turnAt`` fills one when a turn is shown).
//
// ``model`` is anywidget's model: get(name), on(event, fn), off(event, fn), send(message).

import { isFloat } from "./floats.js";
import { graft, markStubs, setSize } from "./lazy.js";
import { decodeMessage, decodeTrait, traitSeq } from "./message.js";
import { applyPatch, copyJSON } from "./patch.js";
import { WIRE } from "./wire.js";
import { PARTS, applyEvent, blankTurn, bump, loadTurn, stubTurn, turnFromSummary } from "./turn.js";
import { TREE_WIRE, keepTree, scopedTurn, takeProgress, takeRunText } from "./runs.js";
import { CARD_WIRE, Pending, isCardMessage } from "./pending.js";
import { OUTPUT_WIRE, takeOutput } from "./outputs.js";

/** What a view says when the kernel cannot be reached. */
export const NOT_CONNECTED = "the kernel is not connected";

/** What a view says when the kernel has not answered for a while. */
export const NO_ANSWER = "the kernel has not answered for 15 s (it is busy running a cell, or not connected)";

/** How long a request waits for its answer before the view says so. */
export const ANSWER_MS = 15000;

const isEnd = (e) => e.kind === "run_finished" || e.kind === "run_failed" || e.kind === "run_paused";

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

  /** Rows older than the ones held: each fills its turn's place unless the turn was loaded
   * meanwhile (time travel), which knows more than its row. */
  takeRows(msg) {
    const from = msg[WIRE.TURNS_FROM];
    const rows = msg[WIRE.SUMMARIES] || [];
    this.asked.delete("rows" + (from + rows.length));
    if (from + rows.length !== this.listedFrom) return false; // not the page before the held rows
    for (const s of rows) {
      const held = this.turns[s.turn];
      if (!held || !held.loaded) this.turns[s.turn] = Object.assign(turnFromSummary(s), held ? { v: held.v } : {});
    }
    this.listedFrom = from;
    this.applied.rows += 1;
    this.version.list += 1;
    return true;
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

  /** Put a part of a state where it belongs; one that no longer fits is asked for again when shown. */
  takeSubtree(msg) {
    const live = Boolean(msg[WIRE.LIVE]);
    const index = msg[WIRE.TURN_INDEX];
    const whole = Boolean(msg[WIRE.WHOLE]);
    const runId = msg[TREE_WIRE.RUN_ID];
    this.asked.delete(subtreeKey(live, index, msg[WIRE.PATH], whole, msg[WIRE.FROM], runId));
    const scoped = this.scoped;
    const turn = runId ? (scoped && scoped.runId === runId && scoped.parentTurn === index ? scoped : null) : index === null || index === undefined ? null : this.turns[index];
    if (runId && !turn) return; // another run was picked since: it is asked for again when shown
    if (live && this.live && this.live.unpatched && msg[WIRE.PATH] === "" && !whole) {
      this.live.state = setSize(markStubs(msg[WIRE.VALUE], msg[WIRE.STUBS]), msg[WIRE.SIZE]); // the whole state, lazily
      this.live.unpatched = false;
      this.version.live += 1;
      return;
    }
    const root = live ? this.live && this.live.state : turn ? turn.state : this.baseState;
    if (root === undefined || root === null) return;
    const part = { from: msg[WIRE.FROM], size: msg[WIRE.SIZE], value: msg[WIRE.VALUE], stubs: msg[WIRE.STUBS], whole, float: isFloat(msg, WIRE.VALUE) };
    if (graft(root, msg[WIRE.PATH], part)) this.applied.subtrees += 1;
    if (turn && !live) turn.v.state += 1;
    this.version.subtrees += 1;
  }

  // -- what the kernel sends --------------------------------------------------------------

  /** Take the trait's snapshot if it is newer than what the store holds. */
  fromTrait() {
    const value = this.model.get(WIRE.TRAIT_SNAPSHOT);
    const seq = traitSeq(value);
    if (seq < 0 || (this.synced && seq <= this.seq)) return false;
    if (this.synced) this.found(); // the kernel refreshed it: it is there
    this.adopt(decodeTrait(value));
    return true;
  }

  adopt(snap) {
    const from = snap[WIRE.TURNS_FROM] || 0;
    const rows = snap[WIRE.SUMMARIES];
    if (this.canMerge(from, rows.length)) {
      this.merge(from, rows);
    } else {
      this.turns = new Array(from); // holes for the turns whose rows are not held
      for (const s of rows) this.turns.push(turnFromSummary(s));
      this.listedFrom = from;
      this.asked.clear();
    }
    this.baseState = undefined;
    const index = snap[WIRE.TURN_INDEX];
    const state = markStubs(snap[WIRE.STATE], snap[WIRE.STUBS]);
    if (index === undefined || index === null) {
      this.baseState = state;
    } else {
      const turn = this.turns[index];
      loadTurn(turn, snap[WIRE.EVENTS], snap[WIRE.CHANGES], state);
      keepTree(turn, snap);
      turn.text = snap[WIRE.LIVE_TEXT] || "";
      if (turn.status === "running") turn.receivedAt = turn.at ? turn.at * 1000 : this.now();
    }
    this.takeLive(snap);
    this.pending.take(snap[CARD_WIRE.PENDING] || null);
    this.seq = snap[WIRE.SEQ];
    this.synced = true;
    this.applied.snapshots += 1;
    this.version.list += 1;
    this.version.epoch += 1;
  }

  /** Whether a snapshot whose rows are turns ``from`` to ``from + count - 1`` can be merged into
   * the rows held: they reach its first row, and every turn held below it has ended (its row
   * is final), so what the snapshot does not carry is still true. */
  canMerge(from, count) {
    const turns = this.turns;
    if (!this.synced || !turns.length || turns.length < from || from + count < this.listedFrom) return false;
    for (let i = this.listedFrom; i < Math.min(from, turns.length); i++) {
      const turn = turns[i];
      if (!turn || turn.status === "running" || turn.status === "unknown") return false;
    }
    return true;
  }

  /** A snapshot into the rows held (a cell's end while a view is open): the rows before its
   * first stay as they are (a History scrolled back keeps what it fetched); its rows replace
   * those of the same turns, except a turn held with its events that has ended as its row says;
   * turns past its last are dropped (the history was cut). */
  merge(from, rows) {
    const turns = this.turns;
    for (const s of rows) {
      const held = turns[s.turn];
      if (held && held.loaded && held.status === s.status && held.message === s.message && held.content === s.content && held.durationMs === s.duration_ms) continue;
      const turn = turnFromSummary(s);
      if (held) {
        turn.v = held.v;
        bump(turn, ...PARTS); // whatever showed the turn held before redraws
      }
      turns[s.turn] = turn;
    }
    turns.length = from + rows.length;
    this.listedFrom = Math.min(this.listedFrom, from);
    this.applied.merged += 1;
  }

  /** Take one message from the kernel; returns whether anything changed. */
  receive(msg) {
    if (!msg || typeof msg !== "object") return false;
    this.found(); // whatever the kernel sent, it is there
    const kind = msg[WIRE.KIND];
    if (kind === WIRE.BATCH) return this.receiveBatch(msg);
    if (kind === WIRE.SNAPSHOT) {
      if (!this.syncing) return false; // another view asked for it
      this.syncing = false;
      this.adopt(msg);
    } else if (kind === WIRE.ROWS) {
      return this.takeRows(msg);
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
      this.takeSubtree(msg);
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

  /** Apply a batch's items after the ones held; a gap asks for a snapshot. */
  receiveBatch(msg) {
    const first = msg[WIRE.SEQ];
    const last = msg[WIRE.LAST];
    if (!this.synced || last <= this.seq) return false; // the snapshot covers it
    if (first > this.seq + 1) {
      this.synced = false; // a message went missing: start again from a snapshot
      this.applied.gaps += 1;
      this.sync();
      return false;
    }
    const items = msg[WIRE.ITEMS];
    for (let i = this.seq + 1 - first; i < items.length; i++) this.applyItem(items[i]);
    this.seq = last;
    this.applied.batches += 1;
    return true;
  }

  applyItem(item) {
    const index = item[WIRE.TURN_INDEX];
    const row = item[WIRE.ROW];
    if (row) return this.takeRow(index, row);
    if (!this.turns[index]) {
      this.turns[index] = blankTurn(index);
      this.version.list += 1;
    }
    const turn = this.turns[index];
    const e = item[WIRE.EVENT_BODY];
    if (e.kind === TREE_WIRE.RUN_TEXT) {
      takeRunText(turn, e); // a member's text, into its node of the Runs tab (js/runs.js)
      this.applied.events += 1;
      return;
    }
    if (e.kind === "run_started" && this.live) {
      this.live = null; // the run takes the edits over as the user's changes
      this.version.live += 1;
    }
    // After a turn sent as its row, the item brings the state this turn starts from.
    const start = item[WIRE.STATE];
    const previous = start !== undefined ? markStubs(start, item[WIRE.STUBS]) : index === 0 ? this.baseState : this.turns[index - 1]?.state;
    const summary = turn.v.summary;
    applyEvent(turn, e, { live: true, previousState: previous, now: this.now });
    if (turn.v.summary !== summary) this.version.list += 1;
    this.applied.events += 1;
    // A state the browser could not follow (not loaded, or a patch that failed) is fetched once
    // the turn has ended.
    if (isEnd(e) && turn.state === undefined) this.needTurn(index);
  }

  /** A whole turn sent as its History row (a loop of quick turns): held as a row, its events
   * asked for when it is shown. */
  takeRow(index, row) {
    if (this.live) {
      this.live = null; // as at its run_started: the run took the edits over
      this.version.live += 1;
    }
    const held = this.turns[index];
    const turn = turnFromSummary(row);
    if (held) {
      turn.v = held.v;
      bump(turn, ...PARTS); // whatever showed the turn held before redraws
    }
    this.turns[index] = turn;
    this.version.list += 1;
    this.applied.folded += 1;
  }
}

function subtreeKey(live, turn, path, whole, from, run) {
  return "s" + (live ? "live" : turn ?? "base") + (run ? "/" + run : "") + ":" + (whole ? "whole" : from) + ":" + path;
}

export function createStore(model, options) {
  return new Store(model, options);
}

/**
 * The batches a model receives after its trait's snapshot, kept from the moment the model exists
 * (anywidget's ``initialize``), so a view created later — its output arrives while the next cell
 * already runs — replays them instead of finding a gap. Bounded: past ``limit`` batches it gives
 * up, and a view falls back to a sync.
 */
export function createBacklog(model, { limit = 5000 } = {}) {
  let messages = []; // [content, buffers]: parsed only if a view replays them
  let overflow = false;
  const seq = () => traitSeq(model.get(WIRE.TRAIT_SNAPSHOT));
  const onMessage = (msg, buffers) => {
    if (overflow || !msg || msg[WIRE.KIND] !== WIRE.BATCH) return;
    if (messages.length >= limit) {
      overflow = true;
      messages = [];
      return;
    }
    messages.push([msg, buffers]);
  };
  const onTrait = () => {
    const covered = seq();
    messages = messages.filter(([msg]) => msg[WIRE.LAST] > covered);
    overflow = false;
  };
  model.on("msg:custom", onMessage);
  model.on("change:" + WIRE.TRAIT_SNAPSHOT, onTrait);
  return {
    messages: () => (overflow ? [] : messages.filter(([msg]) => msg[WIRE.LAST] > seq()).map(([msg, buffers]) => decodeMessage(msg, buffers))),
    dispose: () => {
      model.off("msg:custom", onMessage);
      model.off("change:" + WIRE.TRAIT_SNAPSHOT, onTrait);
    },
  };
}
