// The parts of a state a store holds in part (lazy.js) as they arrive: grafted into the turn's
// state, the live state with the pending edits, the state before the first turn, or a run of a
// turn's tree (runs.js).

import { isFloat } from "./floats.js";
import { graft, markStubs, setSize } from "./lazy.js";
import { TREE_WIRE } from "./runs.js";
import { WIRE } from "./wire.js";

/** Put a part of a state where it belongs; one that no longer fits is asked for again when shown. */
export function takeSubtree(store, msg) {
  const live = Boolean(msg[WIRE.LIVE]);
  const index = msg[WIRE.TURN_INDEX];
  const whole = Boolean(msg[WIRE.WHOLE]);
  const runId = msg[TREE_WIRE.RUN_ID];
  store.asked.delete(subtreeKey(live, index, msg[WIRE.PATH], whole, msg[WIRE.FROM], runId));
  const scoped = store.scoped;
  const turn = runId ? (scoped && scoped.runId === runId && scoped.parentTurn === index ? scoped : null) : index === null || index === undefined ? null : store.turns[index];
  if (runId && !turn) return; // another run was picked since: it is asked for again when shown
  if (live && store.live && store.live.unpatched && msg[WIRE.PATH] === "" && !whole) {
    store.live.state = setSize(markStubs(msg[WIRE.VALUE], msg[WIRE.STUBS]), msg[WIRE.SIZE]); // the whole state, lazily
    store.live.unpatched = false;
    store.version.live += 1;
    return;
  }
  const root = live ? store.live && store.live.state : turn ? turn.state : store.baseState;
  if (root === undefined || root === null) return;
  const part = { from: msg[WIRE.FROM], size: msg[WIRE.SIZE], value: msg[WIRE.VALUE], stubs: msg[WIRE.STUBS], whole, float: isFloat(msg, WIRE.VALUE) };
  if (graft(root, msg[WIRE.PATH], part)) store.applied.subtrees += 1;
  if (turn && !live) turn.v.state += 1;
  store.version.subtrees += 1;
}

/** The key a part of a state is asked for under (store.needSubtree) and cleared by when it comes. */
export function subtreeKey(live, turn, path, whole, from, run) {
  return "s" + (live ? "live" : turn ?? "base") + (run ? "/" + run : "") + ":" + (whole ? "whole" : from) + ":" + path;
}
