// agentnb inspector: the module each inspector widget carries (its _esm), kept small so a saved
// notebook does not hold the front end once per inspector. It loads the front end
// (inspector.js and inspector.css beside this file) from agentnb's Jupyter server extension
// (agentnb/serverext.py), or, where the page is not served by a Jupyter server with it (another
// front end), asks the kernel for them. __VERSION__ is the bundle's hash: a new one is never
// taken from a stale cache. Modules loaded from blob: URLs get a sourceURL: stacks name agentnb/static/.
const VERSION = "__VERSION__";
const FRONT_END_NAME = "\n//# sourceURL=agentnb/static/inspector.js\n";
const loads = new WeakMap();
let served = null;

function fromServer() {
  if (served) return served;
  const config = document.getElementById("jupyter-config-data");
  if (!config) return Promise.reject(new Error("not a Jupyter server's page"));
  const base = new URL(JSON.parse(config.textContent).baseUrl || "/", location.href);
  const url = (name) => new URL("agentnb/static/" + name + "?v=" + VERSION, base).href;
  served = import(url("inspector.js")).then((mod) => {
    if (!document.getElementById("agentnb-inspector-css")) {
      document.head.appendChild(Object.assign(document.createElement("link"), { id: "agentnb-inspector-css", rel: "stylesheet", href: url("inspector.css") }));
    }
    return mod;
  });
  served.catch(() => (served = null));
  return served;
}

function fromKernel(model) {
  return new Promise((resolve, reject) => {
    const decode = (b) => new TextDecoder().decode(b instanceof ArrayBuffer ? b : new Uint8Array(b.buffer, b.byteOffset, b.byteLength));
    const onMessage = (msg, buffers) => {
      if (!msg || msg.k !== "front_end") return;
      model.off("msg:custom", onMessage);
      if (!buffers || buffers.length < 2) return reject(new Error("the kernel sent no front end"));
      if (!document.getElementById("agentnb-inspector-css")) {
        document.head.appendChild(Object.assign(document.createElement("style"), { id: "agentnb-inspector-css", textContent: decode(buffers[1]) }));
      }
      const url = URL.createObjectURL(new Blob([decode(buffers[0]) + FRONT_END_NAME], { type: "text/javascript" }));
      import(url).then(resolve, reject).finally(() => URL.revokeObjectURL(url));
    };
    model.on("msg:custom", onMessage);
    try {
      model.send({ k: "front_end" });
    } catch (err) {
      model.off("msg:custom", onMessage);
      reject(err);
    }
  });
}

/** The front end's module, loaded once for the page (per model while it comes from a kernel). */
function load(model) {
  if (!loads.has(model)) loads.set(model, fromServer().catch(() => fromKernel(model)));
  return loads.get(model);
}

export default {
  initialize({ model }) {
    // Not awaited: anywidget gives initialize two seconds, a kernel busy with cells may take longer.
    let stop = null;
    let stopped = false;
    const ready = load(model).then((mod) => {
      if (!stopped) stop = mod.default.initialize({ model });
      return mod;
    });
    loads.set(model, ready);
    return () => {
      stopped = true;
      if (typeof stop === "function") stop();
    };
  },
  async render({ model, el }) {
    let mod;
    try {
      mod = await load(model);
    } catch (err) {
      el.textContent = "The agentnb inspector could not load its front end (" + err + "). Run the cell again with the kernel up, or check that `jupyter server extension list` shows agentnb.serverext enabled.";
      return;
    }
    return mod.default.render({ model, el });
  },
};
//# sourceURL=agentnb/static/loader.js
