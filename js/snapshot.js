// A snapshot into a store (store.js): the last turns' History rows, the last turn whole with its
// state, the pending edits and cards, and the number of the last item it covers. A view starts
// from the one in the synced trait; a newer trait (each cell's end) or the reply to a "sync"
// (after a gap in the batches) replaces what the store holds or, when it can, is merged into
// the rows held, so a History scrolled back keeps what it fetched. Older rows come a page at a
// time when History asks (``takeRows``).

import { markStubs } from "./lazy.js";
import { CARD_WIRE } from "./pending.js";
import { keepTree } from "./runs.js";
import { PARTS, bump, loadTurn, turnFromSummary } from "./turn.js";
import { WIRE } from "./wire.js";

/** Take a snapshot (the trait's, or the reply to a "sync"): its rows into the turns held, its
 * last turn whole (or the state before the first turn), the pending edits and cards, its number. */
export function adoptSnapshot(store, snap) {
  const from = snap[WIRE.TURNS_FROM] || 0;
  const rows = snap[WIRE.SUMMARIES];
  if (canMerge(store, from, rows.length)) {
    mergeRows(store, from, rows);
  } else {
    store.turns = new Array(from); // holes for the turns whose rows are not held
    for (const s of rows) store.turns.push(turnFromSummary(s));
    store.listedFrom = from;
    store.asked.clear();
  }
  store.baseState = undefined;
  const index = snap[WIRE.TURN_INDEX];
  const state = markStubs(snap[WIRE.STATE], snap[WIRE.STUBS]);
  if (index === undefined || index === null) {
    store.baseState = state;
  } else {
    const turn = store.turns[index];
    loadTurn(turn, snap[WIRE.EVENTS], snap[WIRE.CHANGES], state);
    keepTree(turn, snap);
    turn.text = snap[WIRE.LIVE_TEXT] || "";
    if (turn.status === "running") turn.receivedAt = turn.at ? turn.at * 1000 : store.now();
  }
  store.takeLive(snap);
  store.pending.take(snap[CARD_WIRE.PENDING] || null);
  store.seq = snap[WIRE.SEQ];
  store.synced = true;
  store.applied.snapshots += 1;
  store.version.list += 1;
  store.version.epoch += 1;
}

/** Whether a snapshot whose rows are turns ``from`` to ``from + count - 1`` can be merged into
 * the rows held: they reach its first row, and every turn held below it has ended (its row
 * is final), so what the snapshot does not carry is still true. */
function canMerge(store, from, count) {
  const turns = store.turns;
  if (!store.synced || !turns.length || turns.length < from || from + count < store.listedFrom) return false;
  for (let i = store.listedFrom; i < Math.min(from, turns.length); i++) {
    const turn = turns[i];
    if (!turn || turn.status === "running" || turn.status === "unknown") return false;
  }
  return true;
}

/** A snapshot into the rows held (a cell's end while a view is open): the rows before its
 * first stay as they are (a History scrolled back keeps what it fetched); its rows replace
 * those of the same turns, except a turn held with its events that has ended as its row says;
 * turns past its last are dropped (the history was cut). */
function mergeRows(store, from, rows) {
  const turns = store.turns;
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
  store.listedFrom = Math.min(store.listedFrom, from);
  store.applied.merged += 1;
}

/** Rows older than the ones held: each fills its turn's place unless the turn was loaded
 * meanwhile (time travel), which knows more than its row. */
export function takeRows(store, msg) {
  const from = msg[WIRE.TURNS_FROM];
  const rows = msg[WIRE.SUMMARIES] || [];
  store.asked.delete("rows" + (from + rows.length));
  if (from + rows.length !== store.listedFrom) return false; // not the page before the held rows
  for (const s of rows) {
    const held = store.turns[s.turn];
    if (!held || !held.loaded) store.turns[s.turn] = Object.assign(turnFromSummary(s), held ? { v: held.v } : {});
  }
  store.listedFrom = from;
  store.applied.rows += 1;
  store.version.list += 1;
  return true;
}
