// Preview: what the model would receive for a message now (agent.observe), without calling it.
// After an edit of the state the kernel sends it again at once (for the message previewed last,
// else the last turn's), with the sections that differ from the last turn's prompt marked.

import { h } from "../dom.js";
import { WIRE } from "../wire.js";
import { promptOf, requestView, sectionsView } from "./parts.js";

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

/** The newest turn's prompt, to mark what an edit changed (null until that turn is loaded). */
function lastPrompt(store) {
  const last = store.turns[store.turns.length - 1];
  return last && last.prompt ? last.prompt : null;
}

export default {
  id: "preview",
  label: "Preview",
  count: (ctx) => (ctx.store.live ? " (" + ctx.store.live.edits.length + " edit" + (ctx.store.live.edits.length === 1 ? "" : "s") + ")" : ""),
  inputs: (ctx) => [ctx.store.version.preview, ctx.store.version.list],
  panel(ctx) {
    const { store, view } = ctx;
    const box = input(ctx);
    const go = h("button", { type: "button", class: "anb-preview-go", "data-fkey": "preview-go", onclick: () => store.askPreview(box.value) }, store.previewPending ? "observing…" : "observe");
    const out = h("div", { class: "anb-preview" }, h("div", { class: "anb-preview-form" }, box, go));
    const p = store.preview;
    // The box says which message the preview is for (after an edit, the last one previewed or
    // the last turn's), unless the user is typing another.
    if (p && typeof p[WIRE.MESSAGE] === "string" && document.activeElement !== box && box.value !== p[WIRE.MESSAGE]) box.value = p[WIRE.MESSAGE];
    if (p) {
      const edits = p[WIRE.EDITS] || 0;
      const against = edits ? lastPrompt(store) : null;
      const label = edits
        ? "the next prompt, after " + edits + " edit(s) of the state " + (store.turns.length ? "since turn " + store.turns.length : "before the first turn") + ", for " + JSON.stringify(p[WIRE.MESSAGE]) + (against ? " (changed sections marked)" : "")
        : "what the model would receive for " + JSON.stringify(p[WIRE.MESSAGE]) + " now";
      out.appendChild(h("div", { class: "anb-label anb-preview-what", "data-edits": edits }, label));
      out.appendChild(sectionsView(promptOf(p), { against }));
      out.appendChild(requestView(view, "preview:" + store.version.preview, p[WIRE.REQUEST]));
    }
    return out;
  },
};
