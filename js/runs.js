// A turn's tree of runs (a team turn, its delegations, the member runs below them): what the
// kernel computed (agentnb/ipython/run_tree.py), kept by the store, and one run of it loaded as a
// turn of its own so every tab can show it ("scoped" to it).

import { markStubs } from "./lazy.js";
import { blankTurn, loadTurn } from "./turn.js";
import { WIRE } from "./wire.js";

// Must match TREE_WIRE in agentnb/ipython/run_tree.py (tests/ipython/test_run_tree.py checks it).
export const TREE_WIRE = {
  "RUN_TREE": "run_tree",
  "NEED_RUN": "need_run",
  "RUN": "run",
  "RUN_ID": "run_id",
  "IN_CHARGE": "in_charge",
  "RUN_PROGRESS": "run_progress",
  "RUN_TEXT": "run_text",
  "LIVE_RUNS": "live_runs"
};

/** The live run ``id`` of ``turn`` (made, at ``path``, when it is not held yet). */
function liveRun(turn, id, path) {
  const runs = turn.liveRuns || (turn.liveRuns = []);
  let run = runs.find((r) => r.run_id === id);
  if (!run) runs.push((run = { run_id: id, path: path || [], parent: null, call: null, order: null, status: "running", duration_ms: null, text: "", textCall: null }));
  turn.liveRunsV = (turn.liveRunsV || 0) + 1;
  return run;
}

/** A run below a turn started or ended while the turn runs: kept on the turn (``liveRuns``,
 * in the order they started) until its whole tree comes with its end. */
export function takeProgress(turn, msg) {
  if (!turn) return;
  const run = liveRun(turn, msg[TREE_WIRE.RUN_ID], msg[WIRE.PATH]);
  if (msg.parent !== undefined) run.parent = msg.parent;
  if (msg.call !== undefined) run.call = msg.call;
  if (msg.order !== undefined) run.order = msg.order;
  run.status = msg.status;
  if (msg.duration_ms !== undefined) run.duration_ms = msg.duration_ms;
}

/** Text a run below the turn streamed (a ``run_text`` item of a batch): added to its live run,
 * a new model call's text on a line of its own. */
export function takeRunText(turn, e) {
  if (!turn) return;
  const run = liveRun(turn, e[TREE_WIRE.RUN_ID], e[WIRE.PATH]);
  if (run.textCall !== null && run.textCall !== e.call && run.text) run.text += "\n";
  run.textCall = e.call;
  run.text += e.text;
}

/** Keep the run tree a snapshot or turn reply carries on its turn, and for a turn still
 * running the runs below it so far (a snapshot's ``live_runs``). */
export function keepTree(turn, msg) {
  if (!turn) return;
  turn.runTree = msg[TREE_WIRE.RUN_TREE] || null;
  const live = msg[TREE_WIRE.LIVE_RUNS];
  if (live) {
    turn.liveRuns = live.map((r) => ({ run_id: r[TREE_WIRE.RUN_ID], path: r[WIRE.PATH] || [], parent: r.parent ?? null, call: r.call ?? null, order: r.order ?? null, status: r.status, duration_ms: r.duration_ms ?? null, text: r.text || "", textCall: null }));
    turn.liveRunsV = (turn.liveRunsV || 0) + 1;
  }
}

/** The live runs that ran side by side: those of one parent started by one model call's
 * response, when there are two or more (as the finished tree's lanes group them), each group in
 * the order of the response's calls (the order their changes are applied in). */
export function liveLanes(runs) {
  const groups = new Map();
  for (const run of runs || []) {
    if (run.call === null || run.call === undefined || run.parent === null) continue;
    const key = run.parent + ":" + run.call;
    if (!groups.has(key)) groups.set(key, { parent: run.parent, call: run.call, runs: [] });
    groups.get(key).runs.push(run);
  }
  const lanes = [...groups.values()].filter((g) => g.runs.length > 1);
  for (const g of lanes) g.runs.sort((a, b) => (a.order ?? 0) - (b.order ?? 0));
  return lanes;
}

/** Where the time axis of one response's lanes ends (ms from the first member's start): with the
 * last run or bar (a bar's start is a wall-clock time, a run's end its measured duration: the two
 * clocks can differ by a hair, and no bar may overrun its track). */
export function axisEnd(batch) {
  return Math.max(1, ...batch.lanes.flatMap((l) => [l.end_ms, ...l.bars.map((b) => b.end_ms)]));
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
  // Its state held in part when large (lazy.js): the rest is asked for by turn and run.
  loadTurn(turn, msg[WIRE.EVENTS] || [], msg[WIRE.CHANGES], markStubs(msg[WIRE.STATE], msg[WIRE.STUBS]));
  turn.runId = runId;
  turn.requestKey = runKey(runId);
  turn.parentTurn = msg[WIRE.TURN_INDEX];
  turn.breadcrumb = msg.breadcrumb || "";
  turn.sections = msg.sections || [];
  for (const [call, request] of Object.entries(msg.requests || {})) requests.set(runKey(runId) + ":" + call, request);
  return turn;
}

/** The agent a handoff left answering the inspected agent's turns (a synced trait), or "". */
export function inCharge(model) {
  return (model && typeof model.get === "function" && model.get(TREE_WIRE.IN_CHARGE)) || "";
}

/** The run a turn was routed to — an earlier handoff left another agent in charge, which
 * answered without a model call of the turn's own agent — as {agent, run_id, usage,
 * duration_ms} (usage null when only the tree says so), or null. */
export function routedOf(turn) {
  if (!turn) return null;
  if (turn.routed) return turn.routed;
  const tree = turn.runTree;
  const node = tree && tree.routed_to ? (tree.children || []).find((c) => c.run_id === tree.routed_to) : null;
  return node ? { agent: node.agent, run_id: node.run_id, usage: null, duration_ms: node.duration_ms } : null;
}

/** Every node of a tree, depth first (the order the Runs tab lists them). */
export function walk(node, depth = 0, out = []) {
  if (!node) return out;
  out.push({ node, depth });
  for (const child of node.children || []) walk(child, depth + 1, out);
  return out;
}
