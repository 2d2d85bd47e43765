// What a saved notebook keeps of the inspector.
//
// JupyterLab and Notebook 7 do not save widget state by default, so a reopened notebook cannot
// draw the widget. When the notebook is saved, each inspector puts its agent's latest turn (the
// ``static_text`` trait, kept current by the kernel after each cell) into the notebook's metadata
// under ``agentnb.inspectors``; agentnb's server extension (agentnb/serverext.py) then writes it,
// escaped, into the inspector's output in the saved file, in place of the widget whose state is not
// saved. Writing metadata leaves the outputs, and so the live views, alone.

import { WIRE } from "./wire.js";

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
  const text = model.get(WIRE.TRAIT_STATIC);
  if (!id || !text) return false;
  const meta = Object.assign({}, notebook.getMetadata(METADATA_KEY) || {});
  const inspectors = Object.assign({}, meta.inspectors || {});
  inspectors[id] = { agent: model.get(WIRE.TRAIT_AGENT), text };
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
