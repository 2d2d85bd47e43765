// Whether the kernel behind a view can be reached, checked without sending it anything.
//
// A view can outlive its kernel (shut down, restarted, or a notebook reopened with its widget
// state saved): it still shows what it received, but nothing it asks for will come. Jupyter's
// widget manager knows: the kernel it serves, and whether this widget's model has a comm to it
// (a model restored from saved state has none). Where those are not there to read (another
// front end), the view finds out when a send throws, and stops waiting for answers that take
// too long (store.overdue).

import { NOT_CONNECTED } from "./store.js";
import { WIRE } from "./wire.js";

const CHECK_MS = 1000;

/** Why the kernel cannot be reached, or null when it can (or nothing says otherwise). */
export function offlineReason(manager, widget) {
  if (!manager) return null;
  if ("kernel" in manager) {
    const kernel = manager.kernel;
    if (!kernel || kernel.isDisposed || kernel.status === "dead" || kernel.connectionStatus === "disconnected") return NOT_CONNECTED;
  }
  if (widget) {
    if (!widget.comm || widget.comm_live === false) return NOT_CONNECTED;
    const comm = widget.comm.jsServicesComm || widget.comm;
    if (comm.isDisposed || (comm._kernel && comm._kernel.isDisposed)) return NOT_CONNECTED;
    if (manager.kernel && comm._kernel && comm._kernel.id && manager.kernel.id && comm._kernel.id !== manager.kernel.id) return NOT_CONNECTED; // a kernel started since
  }
  return null;
}

/** Check the connection of ``store``'s model now and every second; returns the stop function. */
export function watchConnection(model, store) {
  const manager = model.widget_manager;
  let widget = null;
  let stopped = false;
  const id = model.get(WIRE.TRAIT_ID);
  if (manager && id && typeof manager.get_model === "function") {
    Promise.resolve(manager.get_model(id)).then(
      (found) => {
        widget = found;
        check();
      },
      () => {},
    );
  }
  const check = () => {
    if (stopped) return;
    let why = null;
    try {
      why = offlineReason(manager, widget);
    } catch (err) {
      why = null;
    }
    if (why) store.lost(why, "watch");
    else if (store.offline && store.offlineBy === "watch" && widget) {
      store.found();
      store.changed();
    }
  };
  const timer = setInterval(check, CHECK_MS);
  check();
  return () => {
    stopped = true;
    clearInterval(timer);
  };
}
