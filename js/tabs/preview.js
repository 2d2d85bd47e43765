// Preview: what the model would receive for a message now (agent.observe), without calling it.

import { h } from "../dom.js";
import { WIRE } from "../wire.js";
import { requestView, sectionsView } from "./parts.js";

/** The message box, made once per view so typing, focus and caret survive redraws. */
function input(ctx) {
  const { store, view } = ctx;
  if (!view.previewInput) {
    const box = h("input", { type: "text", class: "anb-preview-input", "aria-label": "message to preview", placeholder: "a message to preview (no model call)", "data-fkey": "preview-input" });
    box.addEventListener("keydown", (ev) => {
      if (ev.key === "Enter") store.askPreview(box.value);
    });
    view.previewInput = box;
  }
  return view.previewInput;
}

export default {
  id: "preview",
  label: "Preview",
  inputs: (ctx) => [ctx.store.version.preview],
  panel(ctx) {
    const { store, view } = ctx;
    const box = input(ctx);
    const go = h("button", { type: "button", class: "anb-preview-go", "data-fkey": "preview-go", onclick: () => store.askPreview(box.value) }, store.previewPending ? "observing…" : "observe");
    const out = h("div", { class: "anb-preview" }, h("div", { class: "anb-preview-form" }, box, go));
    const p = store.preview;
    if (p) {
      out.appendChild(h("div", { class: "anb-label" }, "what the model would receive for " + JSON.stringify(p[WIRE.MESSAGE]) + " now"));
      out.appendChild(sectionsView(p.sections, p.user_prompt, p.notes));
      out.appendChild(requestView(view, "preview:" + store.version.preview, p[WIRE.REQUEST]));
    }
    return out;
  },
};
