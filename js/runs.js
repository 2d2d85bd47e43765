// A turn's tree of runs (a team turn, its delegations, the member runs below them): what the
// kernel computed (agentnb/ipython/run_tree.py), kept by the store, and one run of it loaded as a
// turn of its own so every tab can show it ("scoped" to it).

import { blankTurn, loadTurn } from "./turn.js";
import { WIRE } from "./wire.js";

// Must match TREE_WIRE in agentnb/ipython/run_tree.py (tests/test_run_tree.py checks it).
export const TREE_WIRE = {
  "RUN_TREE": "run_tree",
  "NEED_RUN": "need_run",
  "RUN": "run",
  "RUN_ID": "run_id",
  "IN_CHARGE": "in_charge",
  "RUN_PROGRESS": "run_progress"
};

/** A run below a turn started or ended while the turn runs: kept on the turn (``liveRuns``,
 * in the order they started) until its whole tree comes with its end. */
export function takeProgress(turn, msg) {
  if (!turn) return;
  const runs = turn.liveRuns || (turn.liveRuns = []);
  const id = msg[TREE_WIRE.RUN_ID];
  let run = runs.find((r) => r.run_id === id);
  if (!run) runs.push((run = { run_id: id, path: msg[WIRE.PATH] || [], status: "running", duration_ms: null }));
  run.status = msg.status;
  if (msg.duration_ms !== undefined) run.duration_ms = msg.duration_ms;
}

/** Keep the run tree a snapshot or turn reply carries on its turn. */
export function keepTree(turn, msg) {
  if (turn) turn.runTree = msg[TREE_WIRE.RUN_TREE] || null;
}

/** The key a scoped run's requests are kept under in ``store.requests`` (with ":" and the call). */
export function runKey(runId) {
  return "run:" + runId;
}

/** A ``run`` reply as a turn the tabs can show (numbered as the turn it belongs to); its
 * requests go into ``requests`` under ``turn.requestKey``. */
export function scopedTurn(msg, requests) {
  const runId = msg[TREE_WIRE.RUN_ID];
  const turn = blankTurn(msg[WIRE.TURN_INDEX]);
  loadTurn(turn, msg[WIRE.EVENTS] || [], msg[WIRE.CHANGES], msg[WIRE.STATE]);
  turn.runId = runId;
  turn.requestKey = runKey(runId);
  turn.parentTurn = msg[WIRE.TURN_INDEX];
  turn.breadcrumb = msg.breadcrumb || "";
  turn.sections = msg.sections || [];
  for (const [call, request] of Object.entries(msg.requests || {})) requests.set(runKey(runId) + ":" + call, request);
  return turn;
}

/** Every node of a tree, depth first (the order the Runs tab lists them). */
export function walk(node, depth = 0, out = []) {
  if (!node) return out;
  out.push({ node, depth });
  for (const child of node.children || []) walk(child, depth + 1, out);
  return out;
}
