// agentnb inspector: the browser side of agentnb/ipython/inspector.py (an anywidget module).
//
// Data flow: a view starts from the snapshot in the synced trait (the last turns' History rows,
// the last turn whole), then receives the events in batches; its store applies them (a state
// change is a JSON patch applied here; each batch brings the change summary the kernel computed)
// and the view redraws what changed. Older History rows, whole past turns and request payloads
// are asked for on demand.
//
// Built into agentnb/ipython/static/inspector.js by `make js` (esbuild).

import { keepStaticOnSave } from "./saved.js";
import { createBacklog } from "./backlog.js";
import { render as renderView } from "./view.js";
import { WIRE } from "./wire.js";

// anywidget hands initialize() and render() different wrappers of the same model; the trait's
// current value is one object both see, so the backlog is filed under it.
const backlogs = new WeakMap();

function initialize({ model }) {
  const backlog = createBacklog(model);
  const file = () => {
    const snap = model.get(WIRE.TRAIT_SNAPSHOT);
    if (snap && typeof snap === "object") backlogs.set(snap, backlog);
  };
  file();
  model.on("change:" + WIRE.TRAIT_SNAPSHOT, file);
  const stopSaving = keepStaticOnSave(model);
  return () => {
    model.off("change:" + WIRE.TRAIT_SNAPSHOT, file);
    stopSaving();
    backlog.dispose();
  };
}

function render({ model, el }) {
  try {
    model.send({ [WIRE.KIND]: WIRE.VIEWING }); // a front end renders it: the kernel stops refreshing the static view
  } catch (err) {
    // no kernel (a notebook reopened without one): nothing to tell
  }
  const snap = model.get(WIRE.TRAIT_SNAPSHOT);
  const backlog = snap && typeof snap === "object" ? backlogs.get(snap) : undefined;
  return renderView({ model, el, backlog: backlog ? backlog.messages() : [] });
}

export default { initialize, render };
