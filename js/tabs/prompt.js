// Prompt: the system prompt by section, and for a turn with several model calls, what each
// call added to the conversation. For a member's run picked in Runs, also what its team added to
// its message (the task, the interaction and history blocks, a handoff's history), each part
// labelled by what produced it, with its tokens.

import { empty, h } from "../dom.js";
import { counterText, tokenCount } from "../format.js";
import { callPicker, loading, messageView, modelCalls, pickedCall, sectionsView, waiting } from "./parts.js";

function callMessages(ctx, call) {
  const { store, turn } = ctx;
  const request = store.requests.get((turn.requestKey ?? turn.index) + ":" + call.call);
  if (!request) {
    store.needRequest(turn.index, call.call);
    return waiting(ctx.store, "call " + (call.call + 1));
  }
  const calls = modelCalls(turn);
  const previous = calls[calls.indexOf(call) - 1];
  const added = (request.messages || []).slice(previous ? previous.messages : 0);
  return h(
    "div",
    { class: "anb-call-messages" },
    h("div", { class: "anb-label" }, previous ? "+" + added.length + " message(s) since call " + (previous.call + 1) : "messages of call 1"),
    added.map((m, i) => (m.role === "system" ? null : messageView(ctx.view, "call:" + turn.index + ":" + call.call + ":" + i, m, true, turn.index))),
  );
}

/** The parts of a member run's messages its team (or a handoff) made, labelled, with tokens. */
function addedView(turn) {
  const parts = (turn.sections || []).filter((s) => s.message !== "system");
  if (!turn.runId || !parts.length) return null;
  const tokens = turn.prompt && turn.prompt.tokens;
  return h(
    "div",
    { class: "anb-added" },
    h("div", { class: "anb-label" }, "the messages as its caller made them, part by part"),
    parts.map((s) =>
      h(
        "div",
        { class: "anb-section anb-added-part", "data-message": s.message, "data-source": s.source },
        h(
          "div",
          { class: "anb-section-label" },
          s.message + " · " + s.source,
          s.tokens !== null && s.tokens !== undefined ? h("span", { class: "anb-section-tokens", title: counterText(tokens) }, tokenCount(tokens || { exact: true }, s.tokens) + " tok") : null,
        ),
        h("div", { class: "anb-section-text" }, s.text),
      ),
    ),
  );
}

export default {
  id: "prompt",
  label: "Prompt",
  needsTurn: true,
  inputs: (ctx) => [ctx.turn.v.prompt, ctx.turn.v.calls, ctx.view.call, ctx.store.version.requests, ctx.turn.runId || null],
  panel(ctx) {
    const turn = ctx.turn;
    if (!turn.prompt) return turn.loaded ? empty("The prompt is not rendered yet.") : loading(ctx);
    const user = { parts: turn.userParts, images: ctx.view.images, turn: turn.index }; // its images and files
    const out = h("div", { class: "anb-prompt" }, sectionsView(turn.prompt, user), addedView(turn));
    const picker = callPicker(ctx, "messages of");
    if (picker) out.append(picker, callMessages(ctx, pickedCall(ctx)));
    return out;
  },
};
