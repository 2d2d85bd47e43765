// Request: the exact payload of one model call, fetched when shown; for a typed turn, the output
// type, its mode and the schema asked for above it (tabs/output.js).

import { empty, h } from "../dom.js";
import { outputAsked } from "./output.js";
import { callPicker, loading, pickedCall, requestView, waiting } from "./parts.js";

export default {
  id: "request",
  label: "Request",
  needsTurn: true,
  inputs: (ctx) => [ctx.turn.loaded, ctx.turn.v.calls, ctx.view.call, ctx.store.version.requests, ctx.turn.v.output, ctx.store.version.outputs],
  panel(ctx) {
    const { store, turn } = ctx;
    if (!turn.loaded) return loading(ctx);
    const call = pickedCall(ctx);
    if (!call) return empty("No request sent yet.");
    const request = store.requests.get((turn.requestKey ?? turn.index) + ":" + call.call);
    const out = h("div", {}, outputAsked(ctx), callPicker(ctx, "request of"));
    if (!request) {
      store.needRequest(turn.index, call.call);
      out.appendChild(waiting(ctx.store, "the request of call " + (call.call + 1)));
    } else {
      out.appendChild(requestView(ctx.view, "request:" + turn.index + ":" + call.call, request, turn.index));
    }
    return out;
  },
};
