// Prompt: the system prompt by section, and for a turn with several model calls, what each
// call added to the conversation.

import { empty, h } from "../dom.js";
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
    added.map((m, i) => (m.role === "system" ? null : messageView(ctx.view, "call:" + turn.index + ":" + call.call + ":" + i, m, true))),
  );
}

export default {
  id: "prompt",
  label: "Prompt",
  needsTurn: true,
  inputs: (ctx) => [ctx.turn.v.prompt, ctx.turn.v.calls, ctx.view.call, ctx.store.version.requests],
  panel(ctx) {
    const turn = ctx.turn;
    if (!turn.prompt) return turn.loaded ? empty("The prompt is not rendered yet.") : loading(ctx);
    const out = h("div", { class: "anb-prompt" }, sectionsView(turn.prompt));
    const picker = callPicker(ctx, "messages of");
    if (picker) out.append(picker, callMessages(ctx, pickedCall(ctx)));
    return out;
  },
};
