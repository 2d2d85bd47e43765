// What a saved notebook keeps of the inspector.
//
// JupyterLab and Notebook 7 do not save widget state by default, so a reopened notebook cannot
// draw the widget. When the notebook is saved, each inspector puts its agent's latest turn, as
// text made from the snapshot in its trait (kept current by the kernel after each cell), into the
// notebook's metadata under ``agentnb.inspectors``; agentnb's server extension
// (agentnb/serverext.py) then writes it, escaped, into the inspector's output in the saved file,
// in place of the widget whose state is not saved. Writing metadata leaves the outputs, and so the
// live views, alone. The text is made here, at the save, so the kernel spends nothing on it; the
// last turn's images go with it as the small thumbnails the kernel's snapshot carries.

import { ms, partLine } from "./format.js";
import { decodeTrait } from "./message.js";
import { CARD_WIRE } from "./pending.js";
import { inCharge } from "./runs.js";
import { WIRE } from "./wire.js";

/** What the static view says of itself. */
export const STATIC_NOTE = "a static view: re-run this cell for the live inspector";

/** What a paused turn's static view says under it (agentnb.history.render.PAUSED_NOTE). */
export const PAUSED_NOTE = "waits for a person — decide each item (approve / reject / answer), then continue_run()";

const CUT = 300; // characters of a message, answer, argument list or tool result kept

const cut = (text) => {
  const s = String(text ?? "");
  return s.length <= CUT ? s : s.slice(0, CUT - 1) + "…";
};

/** The agent's latest turn as text (header, message, tool calls, answer or error), from the
 * snapshot in the model's trait; "" when there is none. */
export function staticText(model) {
  const snap = decodeTrait(model.get(WIRE.TRAIT_SNAPSHOT));
  if (!snap) return "";
  const info = model.get(WIRE.TRAIT_MODEL) || {};
  const rows = snap[WIRE.SUMMARIES] || [];
  const count = (snap[WIRE.TURNS_FROM] || 0) + rows.length;
  const lines = [model.get(WIRE.TRAIT_AGENT) + " · inspector · model " + (info.label ?? "?") + " · " + count + " turn(s) · " + STATIC_NOTE];
  if (inCharge(model)) lines.push("in charge: " + inCharge(model) + " (a handoff left it answering)");
  const last = rows[rows.length - 1];
  if (!last || last.status === "running") return lines.join("\n");
  const routed = last.routed ? " · routed to " + last.routed.agent : "";
  lines.push("turn " + (last.turn + 1) + " · " + last.status + routed + " · " + ms(last.duration_ms || 0), "user: " + cut(last.message)); // as the header says it
  const events = snap[WIRE.EVENTS] || [];
  // The user's images and files, as its first request named them (agentnb/history/attachments.py).
  const asked = events.find((e) => e.kind === "model_requested" && e.call === 0);
  for (const part of (asked && asked.user_parts) || []) lines.push("  + " + partLine(part));
  // A routed turn's one call is the handoff made for it, not a call of the model's.
  const calls = last.routed ? [] : events.filter((e) => e.kind === "tool_call_finished");
  calls.forEach((c, i) => {
    lines.push("  " + (i + 1) + ". " + c.name + "(" + cut(c.arguments) + ") -> " + (c.error !== null && c.error !== undefined ? "error: " + cut(c.error) : cut(c.result)));
    for (const part of c.attachments || []) lines.push("     + " + partLine(part));
  });
  if (last.status === "paused") {
    // What it waits for, one line per item, as the kernel wrote each (agentnb.history.render.pending_line).
    const pending = snap[CARD_WIRE.PENDING];
    lines.push("paused: " + PAUSED_NOTE);
    for (const item of (pending && pending[CARD_WIRE.ITEMS]) || []) lines.push("  " + item.line);
  } else {
    lines.push(last.status === "failed" ? "error: " + cut(last.error) : "answer: " + cut(last.content ?? ""));
  }
  return lines.join("\n");
}

export const METADATA_KEY = "agentnb";

/** The notebook document behind ``model`` (JupyterLab / Notebook 7), or null elsewhere. */
function documentOf(model) {
  const manager = model.widget_manager;
  const context = manager && manager._context;
  if (!context || !context.saveState || !context.model || typeof context.model.setMetadata !== "function") return null;
  return context;
}

/** Put this inspector's static text into the notebook's metadata. */
export function writeStatic(notebook, model) {
  const id = model.get(WIRE.TRAIT_ID);
  const text = staticText(model);
  if (!id || !text) return false;
  const meta = Object.assign({}, notebook.getMetadata(METADATA_KEY) || {});
  const inspectors = Object.assign({}, meta.inspectors || {});
  inspectors[id] = { agent: model.get(WIRE.TRAIT_AGENT), text };
  // The last turn's images as small thumbnails (data: URLs the kernel made; the server extension
  // draws only raster images): a saved notebook grows by these, never by the images.
  const snap = decodeTrait(model.get(WIRE.TRAIT_SNAPSHOT));
  const images = snap && snap[WIRE.STATIC_IMAGES];
  if (Array.isArray(images) && images.length) inspectors[id].images = images;
  meta.inspectors = inspectors;
  notebook.setMetadata(METADATA_KEY, meta);
  return true;
}

/** Keep the static text in the notebook at each save; returns the stop function. */
export function keepStaticOnSave(model) {
  const context = documentOf(model);
  if (!context) return () => {};
  const onSave = (_sender, state) => {
    if (state !== "started") return;
    try {
      writeStatic(context.model, model);
    } catch (err) {
      console.warn("agentnb inspector: could not keep its static view in the notebook:", err);
    }
  };
  context.saveState.connect(onSave);
  return () => context.saveState.disconnect(onSave);
}
