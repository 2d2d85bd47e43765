// The numbered items that follow a store's snapshot (store.js), in batches: a turn's events,
// or a whole turn of a fast loop as its History row (its events are asked for when it is shown,
// like an older turn's). A gap in the numbers asks for a snapshot, which heals it.

import { markStubs } from "./lazy.js";
import { TREE_WIRE, takeRunText } from "./runs.js";
import { PARTS, applyEvent, blankTurn, bump, turnFromSummary } from "./turn.js";
import { WIRE } from "./wire.js";

const isEnd = (e) => e.kind === "run_finished" || e.kind === "run_failed" || e.kind === "run_paused";

/** Apply a batch's items after the ones held; a gap asks for a snapshot. */
export function receiveBatch(store, msg) {
  const first = msg[WIRE.SEQ];
  const last = msg[WIRE.LAST];
  if (!store.synced || last <= store.seq) return false; // the snapshot covers it
  if (first > store.seq + 1) {
    store.synced = false; // a message went missing: start again from a snapshot
    store.applied.gaps += 1;
    store.sync();
    return false;
  }
  const items = msg[WIRE.ITEMS];
  for (let i = store.seq + 1 - first; i < items.length; i++) applyItem(store, items[i]);
  store.seq = last;
  store.applied.batches += 1;
  return true;
}

function applyItem(store, item) {
  const index = item[WIRE.TURN_INDEX];
  const row = item[WIRE.ROW];
  if (row) return takeRow(store, index, row);
  if (!store.turns[index]) {
    store.turns[index] = blankTurn(index);
    store.version.list += 1;
  }
  const turn = store.turns[index];
  const e = item[WIRE.EVENT_BODY];
  if (e.kind === TREE_WIRE.RUN_TEXT) {
    takeRunText(turn, e); // a member's text, into its node of the Runs tab (js/runs.js)
    store.applied.events += 1;
    return;
  }
  if (e.kind === "run_started" && store.live) {
    store.live = null; // the run takes the edits over as the user's changes
    store.version.live += 1;
  }
  // After a turn sent as its row, the item brings the state this turn starts from.
  const start = item[WIRE.STATE];
  const previous = start !== undefined ? markStubs(start, item[WIRE.STUBS]) : index === 0 ? store.baseState : store.turns[index - 1]?.state;
  const summary = turn.v.summary;
  applyEvent(turn, e, { live: true, previousState: previous, now: store.now });
  if (turn.v.summary !== summary) store.version.list += 1;
  store.applied.events += 1;
  // A state the browser could not follow (not loaded, or a patch that failed) is fetched once
  // the turn has ended.
  if (isEnd(e) && turn.state === undefined) store.needTurn(index);
}

/** A whole turn sent as its History row (a loop of quick turns): held as a row, its events
 * asked for when it is shown. */
function takeRow(store, index, row) {
  if (store.live) {
    store.live = null; // as at its run_started: the run took the edits over
    store.version.live += 1;
  }
  const held = store.turns[index];
  const turn = turnFromSummary(row);
  if (held) {
    turn.v = held.v;
    bump(turn, ...PARTS); // whatever showed the turn held before redraws
  }
  store.turns[index] = turn;
  store.version.list += 1;
  store.applied.folded += 1;
}
