// Output: a typed turn's answers checked against its output type (agentnb/ipython/output_view.py),
// in order. Each attempt shows the answer as JSON with its errors placed where their paths lead,
// the errors listed, and the message that went back to the model; the accepted one shows the
// typed output as a tree beside the answer. A failed run (no answer matched) shows every attempt.
// The schema asked for and the mode head the tab (and the Request tab). Greyed out for a turn
// without an output type.

import { disclosure, empty, h } from "../dom.js";
import { errorMarks, jsonSegments, outputHead, outputOf, parseAnswer } from "../outputs.js";
import { jsonBlock, loading } from "./parts.js";

/** The answer as indented JSON with its errors marked (text only, as every part of the page). */
function markedAnswer(attempt) {
  const answer = parseAnswer(attempt.text);
  const { marks, placed } = errorMarks(answer, attempt.errors);
  if (!placed) return h("pre", { class: "anb-pre anb-out-answer anb-out-raw" }, attempt.text || "(empty answer)");
  return h(
    "pre",
    { class: "anb-pre anb-out-answer" },
    jsonSegments(answer.value, marks).map((s) => (s.mark ? h("span", { class: s.note ? "anb-out-note" : "anb-out-bad", "data-path": s.pointer, title: s.note ? null : s.mark.join("; ") }, s.text) : s.text)),
  );
}

/** A value as a collapsible tree: containers open two levels deep. */
export function jsonTree(view, key, name, value, depth = 0) {
  if (value === null || typeof value !== "object") {
    return h("div", { class: "anb-node anb-leaf" }, h("span", { class: "anb-key" }, name), ": ", h("span", { class: "anb-value anb-value-" + (value === null ? "null" : typeof value) }, JSON.stringify(value)));
  }
  const keys = Object.keys(value);
  const size = Array.isArray(value) ? " [" + keys.length + "]" : " {" + keys.length + "}";
  return disclosure(view, key, {
    attrs: { class: "anb-node anb-branch" },
    open: depth < 2,
    summary: h("summary", {}, h("span", { class: "anb-key" }, name), h("span", { class: "anb-size" }, size)),
    fill: () => h("div", { class: "anb-children" }, keys.map((k) => jsonTree(view, key + "/" + k, k, value[k], depth + 1))),
  });
}

function errorList(attempt) {
  if (!attempt.errors.length) return null;
  return h(
    "ul",
    { class: "anb-out-errors", "aria-label": "what was wrong" },
    attempt.errors.map((e) => h("li", { "data-path": e.path || "" }, h("code", {}, e.path || "(the answer)"), " ", e.message, e.validator ? h("span", { class: "anb-label" }, " output validator " + e.validator) : null)),
  );
}

function retryView(attempt, detail, spent) {
  if (attempt.ok) return null;
  if (!detail) return h("div", { class: "anb-empty anb-waiting" }, "Loading the message sent back…");
  const retry = detail.retry;
  if (retry === null || retry === undefined) return h("div", { class: "anb-out-retry anb-out-spent" }, spent ? "nothing went back: the attempts were spent, and the run failed (OutputValidationError)" : "no message back to the model found in the request after it");
  return h("div", { class: "anb-out-retry" }, h("div", { class: "anb-label" }, "sent back to the model for another attempt"), h("pre", { class: "anb-pre" }, retry));
}

function attemptView(ctx, attempt, detail, spent) {
  const key = "output:" + ctx.turn.index + ":" + attempt.attempt;
  const head = h(
    "div",
    { class: "anb-out-head" },
    h("span", { class: "anb-out-mark" }, attempt.ok ? "✓" : "✗"),
    " attempt " + attempt.attempt,
    h("span", { class: "anb-label" }, " · model call " + (attempt.call + 1) + (attempt.ok ? " · accepted" : " · " + attempt.errors.length + " error(s)")),
  );
  const answer = h("div", { class: "anb-out-side" }, h("div", { class: "anb-label" }, attempt.tool_call_id ? "the output tool's arguments" : "the answer"), markedAnswer(attempt));
  const output = attempt.ok ? h("div", { class: "anb-out-side anb-out-typed" }, h("div", { class: "anb-label" }, "the typed output (" + (attempt.output_type || "output") + ")"), h("div", { class: "anb-tree", role: "tree" }, jsonTree(ctx.view, key + ":tree", attempt.output_type || "output", attempt.output))) : null;
  return h("div", { class: "anb-out-attempt " + (attempt.ok ? "anb-out-ok" : "anb-out-failed"), "data-attempt": attempt.attempt, "data-anchor": key }, head, h("div", { class: "anb-out-split" }, answer, output), errorList(attempt), retryView(attempt, detail, spent));
}

/** The schema the model was asked to answer with, collapsible ("" when none was found). */
export function schemaView(view, key, held) {
  if (!held) return h("div", { class: "anb-empty anb-waiting" }, "Loading the output schema…");
  if (!held.schemas.length) return h("div", { class: "anb-empty" }, "The schema asked for was not found in the request.");
  return held.schemas.map((s, i) => disclosure(view, key + ":" + i, { attrs: { class: "anb-message-row anb-out-schema" }, summary: h("summary", {}, "output schema · from " + s.from), fill: () => jsonBlock(s.schema) }));
}

/** The Request tab's line about a typed turn: type, mode, and the schema asked for. */
export function outputAsked(ctx) {
  const turn = ctx.turn;
  if (!turn.attempts.length) return null;
  const held = outputOf(ctx.store, turn);
  return h("div", { class: "anb-out-asked" }, h("div", { class: "anb-label" }, "typed output: " + outputHead(turn.attempts)), schemaView(ctx.view, "request-schema:" + turn.index, held));
}

export default {
  id: "output",
  label: "Output",
  needsTurn: true,
  count: (ctx) => (ctx.turn && ctx.turn.attempts.length ? " (" + ctx.turn.attempts.length + ")" : ""),
  idle: (ctx) => (ctx.turn && ctx.turn.loaded && !ctx.turn.attempts.length ? "this turn has no output type (Agent(output_type=...))" : null),
  inputs: (ctx) => [ctx.turn.loaded, ctx.turn.v.output, ctx.store.version.outputs],
  panel(ctx) {
    const { store, turn } = ctx;
    if (!turn.loaded) return loading(ctx);
    const attempts = turn.attempts;
    if (!attempts.length) return empty("No typed output in this turn: give the agent an output type (Agent(output_type=...), %%agent --output T).");
    const held = outputOf(store, turn);
    const details = held ? new Map(held.attempts.map((a) => [a.attempt, a])) : new Map();
    const validators = held && held.validators.length ? " · output validators: " + held.validators.join(", ") : "";
    const failed = turn.status === "failed" && !attempts[attempts.length - 1].ok;
    return h(
      "div",
      { class: "anb-output" },
      h("div", { class: "anb-out-title" + (failed ? " anb-bad" : "") }, outputHead(attempts) + validators + (failed ? " · no answer matched: the run failed" : "")),
      schemaView(ctx.view, "output-schema:" + turn.index, held),
      attempts.map((a, i) => attemptView(ctx, a, details.get(a.attempt), failed && i === attempts.length - 1)),
    );
  },
};
