// Tool calls: one row per call; expanding shows the hook chain, the result or error, and the
// state the call changed.

import { disclosure, empty, h } from "../dom.js";
import { argsDiff, argsText, firstLine, ms, opSign, partLine, pathLabel, short } from "../format.js";
import { partsRow } from "../thumbs.js";
import { jsonBlock, loading } from "./parts.js";

/** What a hook that passed the call on changed in its arguments ("passed on as received" when
 * nothing): what it received, what it passed on, and the difference. */
function passedOn(step) {
  if (step.passed_arguments === null || step.passed_arguments === undefined) return null;
  const diff = argsDiff(step.arguments, step.passed_arguments);
  if (!diff.length) return h("div", { class: "anb-hook-detail" }, "passed on as received");
  return h(
    "div",
    { class: "anb-hook-detail anb-hook-changed-args", "data-changed": "true" },
    h("div", {}, "passed on " + JSON.stringify(step.passed_arguments)),
    h("div", { class: "anb-hook-diff" }, "changed: " + diff.join("; ")),
  );
}

function hookChain(t) {
  const chain = h("ol", { class: "anb-hooks", "aria-label": "hook chain" });
  const hooks = t.hooks || [];
  for (const step of hooks) {
    chain.appendChild(
      h(
        "li",
        { class: "anb-hook anb-hook-" + step.outcome, "data-hook": step.name },
        h("span", { class: "anb-hook-name" }, step.name),
        h("span", { class: "anb-hook-outcome" }, step.outcome === "passed" ? "passed on" : step.outcome),
        h("span", { class: "anb-tool-time" }, ms(step.duration_ms)),
        h("div", { class: "anb-hook-detail" }, "received " + JSON.stringify(step.arguments)),
        step.outcome === "passed" ? passedOn(step) : null,
        step.passed_error ? h("div", { class: "anb-hook-detail" }, "let through what a later link raised: " + step.passed_error) : null,
        step.outcome === "answered" ? h("div", { class: "anb-hook-detail" }, "answered: " + (step.result ?? "")) : null,
        step.outcome === "raised" ? h("div", { class: "anb-hook-detail anb-bad" }, "raised: " + (step.error ?? "")) : null,
      ),
    );
  }
  if (t.done) {
    const ran = t.answered_by === "tool" || (!t.answered_by && t.error_kind === "tool_error");
    const last = hooks[hooks.length - 1];
    // What the tool itself received: the last hook's passed-on arguments, else the model's.
    const got = last && last.passed_arguments ? last.passed_arguments : null;
    chain.appendChild(
      h(
        "li",
        { class: "anb-hook anb-hook-tool" + (ran ? "" : " anb-hook-skipped") + (ran && t.error ? " anb-hook-raised" : ""), "data-hook": "tool" },
        h("span", { class: "anb-hook-name" }, "tool " + t.name),
        h("span", { class: "anb-hook-outcome" }, ran ? (t.error ? "raised" : "ran") : "not called"),
        ran && got ? h("div", { class: "anb-hook-detail anb-tool-received" }, "received " + JSON.stringify(got)) : null,
        ran && t.error ? h("div", { class: "anb-hook-detail anb-bad" }, "raised: " + t.error) : null,
      ),
    );
  }
  return chain;
}

function patchList(turn, t) {
  // The patches this call made, as the kernel recorded them (paths shown with their keys as is).
  const ops = turn.patches.filter((p) => p.cause.tool_call_id === t.id).flatMap((p) => p.patch.map((op) => [op, p.cause.label]));
  if (!ops.length) return null;
  return h(
    "ul",
    { class: "anb-patch" },
    ops.map(([op, author]) => h("li", { "data-op": op.op }, opSign(op.op) + " " + pathLabel(op.path) + ("value" in op ? " = " + short(JSON.stringify(op.value), 120) : "") + "  by " + author)),
  );
}

function toolBody(turn, t, images) {
  const failed = t.done && t.error;
  const args = argsText(t.arguments);
  const body = h(
    "div",
    { class: "anb-tool-body" },
    h("div", { class: "anb-label" }, "arguments"),
    jsonBlock(args === t.arguments ? t.arguments : JSON.stringify(JSON.parse(t.arguments), null, 2)),
    h("div", { class: "anb-label" }, "hook chain"),
    hookChain(t),
  );
  if (t.done) {
    body.append(
      h("div", { class: "anb-label" }, failed ? "error (" + (t.error_kind || "error") + ")" : "result"),
      jsonBlock(failed ? t.error : t.result),
      partsRow(images, t.attachments, turn.index), // the images and files the result holds
      h("div", { class: "anb-label" }, "state keys changed: " + ((t.changed_keys || []).join(", ") || "none")),
    );
    const patches = patchList(turn, t);
    if (patches) body.appendChild(patches);
  }
  return body;
}

/** The key a call's expanded state is kept under: its run (a turn, or a member run picked in
 * Runs) and its call id — the n-th call of one id within a run when a model reused it — so
 * expanding one call opens that call only, in no other turn or run. */
export function toolKey(turn, tools, at) {
  const id = tools[at].id;
  const repeats = tools.slice(0, at).filter((t) => t.id === id).length;
  return "tool:" + (turn.runId || "turn " + turn.index) + ":" + id + (repeats ? "#" + repeats : "");
}

/** What a call's time measures (a delegation's includes the run it started). */
export function callTimeTitle(t) {
  if (!t.child_run_id) return "the call: its hooks and the tool";
  return "the call: its hooks and the run it started (see Runs), and for delegations of one response run side by side, the wait for the results before it";
}

function toolRow(ctx, t, key) {
  const failed = t.done && t.error;
  const tree = ctx.turn.runTree;
  const routed = Boolean(tree && tree.routed_to && t.child_run_id === tree.routed_to);
  const status = !t.done ? "running…" : failed ? "error" : routed ? "routed" : t.answered_by && t.answered_by !== "tool" ? "answered by " + t.answered_by : "ok";
  const attached = (t.attachments || []).length;
  const summary = h(
    "summary",
    { class: "anb-tool-summary" },
    h("span", { class: "anb-tool-name" }, t.name),
    t.source ? h("span", { class: "anb-tool-source", title: "served by " + t.source + (t.replayed ? "; answered from the recording" : "") }, t.source + (t.replayed ? " · replayed" : "")) : null,
    h("span", { class: "anb-tool-args" }, short(argsText(t.arguments), 80)),
    h("span", { class: "anb-tool-arrow" }, "→"),
    h("span", { class: "anb-tool-result" + (failed ? " anb-bad" : "") }, t.done ? short(firstLine(failed ? t.error : t.result), 80) : "…"),
    attached ? h("span", { class: "anb-tool-parts", title: t.attachments.map(partLine).join("\n") }, "+" + attached + (attached === 1 ? " attachment" : " attachments")) : null,
    h(
      "span",
      { class: "anb-tool-status anb-tool-" + (failed ? "error" : t.done ? "ok" : "running"), title: routed ? "made for this turn, not by its model: the agent in charge answered it" : null },
      status,
    ),
    h("span", { class: "anb-tool-time", title: t.done ? callTimeTitle(t) : null }, t.done ? ms(t.duration_ms) : ""),
  );
  return disclosure(ctx.view, key, { attrs: { class: "anb-tool", "data-tool": t.name }, summary, fill: () => toolBody(ctx.turn, t, ctx.view.images) });
}

export default {
  id: "tools",
  label: "Tool calls",
  needsTurn: true,
  count: (ctx) => {
    const turn = ctx.turn;
    const n = turn ? (turn.loaded ? turn.tools.length : turn.toolCount) : 0;
    return n ? " (" + n + ")" : "";
  },
  inputs: (ctx) => [ctx.turn.loaded, ctx.turn.v.tools],
  panel(ctx) {
    const turn = ctx.turn;
    if (!turn.loaded) return loading(ctx);
    if (!turn.tools.length) return empty("No tool calls in this turn.");
    return h(
      "div",
      { class: "anb-tools" },
      turn.tools.map((t, at) => toolRow(ctx, t, toolKey(turn, turn.tools, at))),
    );
  },
};
