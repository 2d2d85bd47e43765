// Runs: a turn's tree of runs — the team turn, each delegation, each member run at any depth —
// with status, duration and own / total tokens per node. Selecting a node shows that run in
// every tab (Prompt, Request, Tool calls, State, Context), with a breadcrumb in the header; here
// it shows what crossed the boundary (the ledger), the member's message by what produced each
// part, and the delegations of one response as swim lanes in the order they were merged. While
// the turn runs, each member run is listed as it starts and ends, with its text as it streams
// (and, for the delegations of one response, in a lane of its own).

import { empty, h } from "../dom.js";
import { ms } from "../format.js";
import { axisEnd, liveLanes, walk } from "../runs.js";

/** What a node's duration measures, and the call that ran it: a member run cannot take longer
 * than that call, unless the two were timed in different runs (a replay keeps the recorded times
 * of the turn it replays, while its members run now). */
export function timing(node) {
  const run = "run " + ms(node.duration_ms);
  const call = node.delegation ? node.delegation.call_ms : null;
  if (call === null || call === undefined) return { text: run, title: "the run, from its start to its answer" };
  const mixed = node.duration_ms > call + 0.5;
  return {
    text: run + " · call " + ms(call) + (mixed ? " ⚠" : ""),
    title:
      "run: " + node.agent + "'s run, from its start to its answer. call: the " + (node.delegation.tool || "delegation") + " call that ran it, from the model's response to its result (its hooks, the run, and for delegations of one response run side by side, the wait for the results before it)" +
      (mixed ? ". The run is longer than its call: they were timed in different runs (a replayed turn keeps its recorded times; its members ran now)" : ""),
  };
}

function nodeButton(ctx, node, depth, tree) {
  const scoped = ctx.shown || tree.run_id;
  const tokens = node.tokens_own === node.tokens_total ? node.tokens_own + " tok" : node.tokens_own + " own / " + node.tokens_total + " total tok";
  const refused = node.ledger && node.ledger.refused;
  const [mark, kind] = node.status === "failed" ? ["✕", "failed"] : node.status === "running" ? ["●", "running"] : refused ? ["⚠", "refused"] : ["✓", "ok"];
  const task = node.delegation ? " · " + node.delegation.task : "";
  const time = timing(node);
  return h(
    "button",
    {
      type: "button",
      class: "anb-run-node" + (scoped === node.run_id ? " anb-run-selected" : "") + (refused ? " anb-run-refused" : ""),
      "aria-pressed": scoped === node.run_id ? "true" : "false",
      style: "display:block;margin-left:" + depth * 16 + "px" + (scoped === node.run_id ? ";font-weight:bold" : ""),
      "data-run": node.run_id,
      "data-path": node.path.join("/"),
      "data-status": refused ? "refused" : node.status,
      "data-fkey": "run-" + node.run_id,
      title: refused ? "merge refused: " + refused : null,
      onclick: () => ctx.update(() => ctx.scope(node.run_id)),
    },
    h("span", { class: "anb-run-mark anb-run-mark-" + kind, "aria-label": kind }, mark),
    " " + node.path.join(" ▸ ") + task,
    refused ? h("span", { class: "anb-run-mark-refused" }, " · merge refused") : null,
    node.routed_to ? h("span", { class: "anb-label" }, " · routed: no model call of its own") : null,
    " · ",
    h("span", { class: "anb-run-time", title: time.title }, time.text),
    " · " + tokens,
  );
}

function ledgerView(ledger) {
  const rows = (title, items, text) =>
    h("div", { class: "anb-ledger-" + title }, h("b", {}, title + ": "), items.length ? items.map((x) => h("div", {}, text(x))) : "—");
  return h(
    "div",
    { class: "anb-ledger" },
    rows("down", ledger.down, (r) => r.key + " = " + r.value),
    rows("changed", ledger.changed, (r) => r.text + " (by " + r.authors.join(", ") + ")"),
    rows("up", ledger.up, (r) => r.op + " " + r.path + " = " + r.value + " · " + r.chain),
    ledger.refused ? h("div", { class: "anb-ledger-refused anb-error" }, h("b", {}, "refused: "), ledger.refused) : null,
  );
}

function sectionsView(sections) {
  return h(
    "div",
    { class: "anb-run-sections" },
    sections.map((s) =>
      h(
        "div",
        { class: "anb-run-section", "data-message": s.message, "data-source": s.source },
        h("span", { class: "anb-label" }, s.message + " · " + s.source + (s.tokens !== null && s.tokens !== undefined ? " · " + s.tokens + " tok" : "")),
        h("pre", { class: "anb-run-section-text" }, s.text),
      ),
    ),
  );
}

function legend() {
  return h(
    "div",
    { class: "anb-lanes-legend" },
    h("span", {}, h("span", { class: "anb-swatch anb-swatch-model" }), "model call"),
    h("span", {}, h("span", { class: "anb-swatch anb-swatch-tool" }), "tool call"),
    h("span", {}, "one time axis for every lane: 0 is the first member's start"),
  );
}

/** The delegations of one response side by side, on one time axis (a grid: every track starts at
 * the same x), in the order they were merged; ``selected``: the member run picked in Runs. */
function lanesView(lanes, selected) {
  return lanes.map((batch) => {
    const end = axisEnd(batch);
    return h(
      "div",
      { class: "anb-lanes", "data-call": batch.call },
      h("div", { class: "anb-label" }, "delegations of model call " + (batch.call + 1) + ", side by side (merged in this order), over " + ms(end)),
      batch.lanes.map((lane) =>
        h(
          "div",
          { class: "anb-lane" + (lane.conflict ? " anb-lane-conflict" : "") + (lane.run_id === selected ? " anb-lane-selected" : ""), "data-agent": lane.agent },
          h("span", { class: "anb-lane-name" }, lane.merge_order + ". " + lane.agent + (lane.conflict ? " ⚠ merge refused" : "")),
          h(
            "span",
            { class: "anb-lane-track", title: lane.agent + ": " + ms(lane.start_ms) + " to " + ms(lane.end_ms) },
            lane.bars.map((bar) =>
              h("span", {
                class: "anb-bar anb-bar-" + bar.kind,
                title: bar.label + " " + ms(bar.duration_ms ?? bar.end_ms - bar.start_ms), // the call's own time, as Tool calls shows it
                // Inline geometry only: the bars are placed by their times (colours are the theme's).
                style: "left:" + (100 * bar.start_ms) / end + "%;width:" + Math.max(0.5, (100 * (bar.end_ms - bar.start_ms)) / end) + "%",
              }),
            ),
          ),
        ),
      ),
      legend(),
    );
  });
}

function runText(run) {
  // A model's text: a text node only, never markup.
  return run.text ? h("pre", { class: "anb-run-text", style: "white-space:pre-wrap;margin:2px 0 4px 16px" }, run.text) : null;
}

function liveView(runs) {
  const lanes = liveLanes(runs);
  return h(
    "div",
    { class: "anb-run-tree anb-runs-live" },
    runs.map((run) =>
      h(
        "div",
        { class: "anb-run-node anb-run-" + run.status, "data-run": run.run_id, "data-path": run.path.join("/"), style: "margin-left:" + (run.path.length - 1) * 16 + "px" },
        h("span", { class: "anb-run-head" }, (run.status === "running" ? "● " : run.status === "failed" ? "✕ " : "✓ ") + run.path.join(" ▸ ") + (run.duration_ms !== null ? " · " + ms(run.duration_ms) : " · running")),
        runText(run),
      ),
    ),
    lanes.map((group) =>
      h(
        "div",
        { class: "anb-lanes anb-lanes-live", "data-call": group.call },
        h("div", { class: "anb-label" }, "delegations of model call " + (group.call + 1) + " of " + group.runs[0].path.slice(0, -1).join(" ▸ ") + ", side by side"),
        group.runs.map((run) =>
          h(
            "div",
            { class: "anb-lane anb-run-" + run.status, "data-agent": run.path[run.path.length - 1], "data-run": run.run_id },
            h("span", { class: "anb-lane-name" }, run.path[run.path.length - 1] + (run.status === "running" ? " ●" : run.status === "failed" ? " ✕" : " ✓")),
            runText(run),
          ),
        ),
      ),
    ),
  );
}

export default {
  id: "runs",
  label: "Runs",
  needsTurn: true,
  count: (ctx) => {
    const team = ctx.team;
    if (team && team.runTree) return " (" + walk(team.runTree).length + ")";
    return team && team.liveRuns ? " (" + (team.liveRuns.length + 1) + ")" : "";
  },
  idle: (ctx) => (ctx.team && (ctx.team.runTree || ctx.team.liveRuns) ? null : "this turn delegated to no other agent"),
  inputs: (ctx) => [ctx.team && ctx.team.runTree, ctx.team && ctx.team.liveRunsV, ctx.shown, ctx.turn && ctx.turn.runId],
  panel(ctx) {
    const tree = ctx.team && ctx.team.runTree;
    if (!tree && ctx.team && ctx.team.liveRuns) return liveView(ctx.team.liveRuns);
    if (!tree) return empty("This turn delegated to no other agent.");
    const nodes = walk(tree);
    const chosen = nodes.find((n) => n.node.run_id === ctx.shown)?.node || tree;
    const out = h("div", { class: "anb-runs" }, h("div", { class: "anb-run-tree", role: "tree" }, nodes.map(({ node, depth }) => nodeButton(ctx, node, depth, tree))));
    if (chosen.ledger) out.append(h("div", { class: "anb-label" }, "state across the boundary"), ledgerView(chosen.ledger));
    const scoped = ctx.turn && ctx.turn.runId === chosen.run_id ? ctx.turn : null;
    if (scoped) out.appendChild(sectionsView(scoped.sections));
    // The lanes of the chosen run's delegations, or those its own run ran in (itself marked).
    const parent = nodes.find((n) => (n.node.lanes || []).some((b) => b.lanes.some((l) => l.run_id === chosen.run_id)))?.node;
    const lanes = chosen.lanes || (parent && parent.lanes.filter((b) => b.lanes.some((l) => l.run_id === chosen.run_id)));
    if (lanes) out.append(...lanesView(lanes, chosen.run_id));
    return out;
  },
};
