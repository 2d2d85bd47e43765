// agentnb inspector: the browser side of agentnb/ipython/inspector.py.
//
// Safety rule: every piece of content (prompts, tool results, state, errors) goes into the page
// through textContent / createTextNode / attribute values. Nothing is ever parsed as HTML.
//
// Data flow: a view asks the kernel for a snapshot once, then receives one small message per
// event; its store applies them (a state change is a JSON patch applied here) and the view
// redraws from the store. Whole past turns and request payloads are asked for on demand.

// Must match agentnb/ipython/wire.py (tests/test_inspector.py checks it).
const WIRE = {
  "KIND": "k",
  "SNAPSHOT": "snapshot",
  "EVENT": "event",
  "TURN": "turn",
  "REQUEST": "request",
  "PREVIEW": "preview",
  "ERROR": "error",
  "SYNC": "sync",
  "NEED_TURN": "need_turn",
  "NEED_REQUEST": "need_request",
  "SEQ": "seq",
  "TURN_INDEX": "turn",
  "CALL": "call",
  "EVENTS": "events",
  "EVENT_BODY": "e",
  "STATE": "state",
  "SUMMARIES": "turns",
  "LIVE_TEXT": "live_text",
  "MESSAGE": "message",
  "TEXT": "text",
  "TRAIT_AGENT": "agent_name",
  "TRAIT_MODEL": "model_info"
};

const CHILD_CHUNK = 100; // children of a tree node rendered per "show more"
const STRING_CUT = 240; // characters of a long string shown before "show all"
const AUTO_OPEN_MAX = 100; // containers on the way to a change open by themselves up to this size
const BLOCK_CUT = 600; // characters of a context block shown before "show all"

// ---------------------------------------------------------------------------------------------
// DOM helpers: the only way this file creates nodes.

function h(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (name === "class") node.className = value;
    else if (name.startsWith("on")) node.addEventListener(name.slice(2), value);
    else node.setAttribute(name, value === true ? "" : String(value));
  }
  append(node, children);
  return node;
}

function append(node, children) {
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    node.appendChild(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

function clear(node) {
  while (node.firstChild) node.removeChild(node.firstChild);
}

function firstLine(text) {
  return String(text ?? "").split("\n")[0];
}

function short(text, n) {
  const s = String(text ?? "");
  return s.length > n ? s.slice(0, n - 1) + "…" : s;
}

function ms(value) {
  if (value === null || value === undefined) return "";
  return value >= 1000 ? (value / 1000).toFixed(1) + " s" : value.toFixed(value < 10 ? 1 : 0) + " ms";
}

function pretty(value) {
  try {
    return JSON.stringify(value, null, 2);
  } catch (err) {
    return String(value);
  }
}

function argsText(raw) {
  try {
    return JSON.stringify(JSON.parse(raw));
  } catch (err) {
    return String(raw ?? "");
  }
}

function hasOwn(obj, key) {
  return Object.prototype.hasOwnProperty.call(obj, key);
}

// ---------------------------------------------------------------------------------------------
// RFC 6902 JSON patch, applied in place (the kernel sends patches made by python-jsonpatch).

function decodePointer(pointer) {
  if (pointer === "") return [];
  return pointer.slice(1).split("/").map((t) => t.replace(/~1/g, "/").replace(/~0/g, "~"));
}

function encodePointer(tokens) {
  return tokens.map((t) => "/" + String(t).replace(/~/g, "~0").replace(/\//g, "~1")).join("");
}

function setOwn(obj, key, value) {
  // defineProperty, so a key named "__proto__" is stored as data, not as a prototype.
  Object.defineProperty(obj, key, { value, writable: true, enumerable: true, configurable: true });
}

function walk(root, tokens) {
  let node = root;
  for (const token of tokens) {
    if (node === null || typeof node !== "object") throw new Error("patch path leaves the state");
    if (Array.isArray(node)) node = node[Number(token)];
    else if (hasOwn(node, token)) node = node[token];
    else throw new Error("patch path not in the state: " + token);
  }
  return node;
}

function putValue(root, tokens, value, insert) {
  const parent = walk(root, tokens.slice(0, -1));
  const key = tokens[tokens.length - 1];
  if (Array.isArray(parent)) {
    const index = key === "-" ? parent.length : Number(key);
    if (!Number.isInteger(index) || index < 0 || index > parent.length) throw new Error("bad index " + key);
    if (insert) parent.splice(index, 0, value);
    else parent[index] = value;
  } else if (parent !== null && typeof parent === "object") {
    if (!insert && !hasOwn(parent, key)) throw new Error("replace of a missing key " + key);
    setOwn(parent, key, value);
  } else {
    throw new Error("patch target is not a container");
  }
}

function takeValue(root, tokens) {
  const parent = walk(root, tokens.slice(0, -1));
  const key = tokens[tokens.length - 1];
  if (Array.isArray(parent)) return parent.splice(Number(key), 1)[0];
  if (parent === null || typeof parent !== "object" || !hasOwn(parent, key)) throw new Error("remove of a missing key " + key);
  const value = parent[key];
  delete parent[key];
  return value;
}

function applyPatch(root, patch) {
  for (const op of patch) {
    const path = decodePointer(op.path);
    if (path.length === 0) throw new Error("patches on the whole state are not supported");
    if (op.op === "add") putValue(root, path, structuredClone(op.value), true);
    else if (op.op === "replace") putValue(root, path, structuredClone(op.value), false);
    else if (op.op === "remove") takeValue(root, path);
    else if (op.op === "move") putValue(root, path, takeValue(root, decodePointer(op.from)), true);
    else if (op.op === "copy") putValue(root, path, structuredClone(walk(root, decodePointer(op.from))), true);
    else if (op.op !== "test") throw new Error("unknown patch op " + op.op);
  }
}

// ---------------------------------------------------------------------------------------------
// The store: what a view knows of the agent's turns, built from the kernel's messages.

function blankTurn(index) {
  return {
    index,
    loaded: false, // its events are known (not just the summary)
    status: "running",
    message: "",
    model: "",
    content: null,
    error: null,
    errorType: null,
    usage: { input: 0, output: 0, estimated: false },
    durationMs: null,
    at: null,
    receivedAt: null,
    toolCount: 0,
    prompt: null,
    calls: [],
    tools: [],
    changes: [],
    context: [], // context retrievals: passive injections, then the model's retrieve_context calls
    contextCount: 0, // retrievals and blocks, known from the summary before the turn is loaded
    contextBlocks: 0,
    state: undefined,
    text: "",
    version: 0,
  };
}

function turnFromSummary(s) {
  const turn = blankTurn(s.turn);
  turn.status = s.status;
  turn.message = s.message;
  turn.content = s.content;
  turn.error = s.error;
  turn.model = s.model;
  turn.usage = s.usage;
  turn.durationMs = s.duration_ms;
  turn.toolCount = s.tool_calls;
  turn.contextCount = s.context || 0;
  turn.contextBlocks = s.context_blocks || 0;
  return turn;
}

function addUsage(a, b) {
  return { input: a.input + b.input, output: a.output + b.output, estimated: a.estimated || b.estimated };
}

function applyEvent(store, turn, e, live) {
  turn.version += 1;
  switch (e.kind) {
    case "run_started": {
      Object.assign(turn, blankTurn(turn.index), { loaded: true, version: turn.version });
      turn.message = e.message;
      turn.model = e.model;
      turn.at = e.at;
      turn.receivedAt = live ? Date.now() : null;
      if (live) {
        const before = turn.index === 0 ? store.baseState : store.turns[turn.index - 1]?.state;
        turn.state = before === undefined ? undefined : structuredClone(before);
      }
      break;
    }
    case "prompt_rendered":
      turn.prompt = { sections: e.sections, userPrompt: e.user_prompt, notes: e.notes };
      break;
    case "model_requested":
      turn.calls[e.call] = { call: e.call, messages: e.messages, tools: e.tools, text: "", response: null };
      break;
    case "text_delta": {
      const call = turn.calls[e.call];
      if (call) call.text += e.text;
      turn.text += e.text;
      turn.version -= 1; // streamed text redraws the answer line only
      turn.textVersion = (turn.textVersion || 0) + 1;
      break;
    }
    case "model_responded": {
      const call = turn.calls[e.call] || (turn.calls[e.call] = { call: e.call, text: "" });
      call.response = e;
      turn.usage = addUsage(turn.usage, e.usage);
      break;
    }
    case "tool_call_started":
      turn.tools.push({ id: e.id, name: e.name, arguments: e.arguments, call: e.call, done: false, hooks: [] });
      break;
    case "tool_call_finished": {
      const row = turn.tools.find((t) => t.id === e.id && !t.done);
      const done = Object.assign(row || {}, e, { done: true });
      if (!row) turn.tools.push(done);
      turn.toolCount = turn.tools.filter((t) => t.done).length;
      break;
    }
    case "context_retrieved": {
      // A retrieve_context call reports its blocks while the call runs: tie them to that call.
      const running = e.via === "tool" ? turn.tools.filter((t) => !t.done) : [];
      turn.context.push(Object.assign({}, e, { toolId: running.length ? running[running.length - 1].id : null }));
      turn.contextCount = turn.context.length;
      turn.contextBlocks += e.blocks.length;
      break;
    }
    case "state_changed":
      turn.changes.push(e);
      if (live && turn.state !== undefined) {
        try {
          applyPatch(turn.state, e.patch);
        } catch (err) {
          turn.state = undefined; // refetched when the turn ends (see finishTurn)
        }
      }
      break;
    case "run_finished":
      turn.status = "ok";
      turn.content = e.content;
      turn.usage = e.usage;
      turn.durationMs = e.duration_ms;
      break;
    case "run_failed":
      turn.status = "failed";
      turn.error = e.error;
      turn.errorType = e.error_type;
      turn.usage = e.usage;
      turn.durationMs = e.duration_ms;
      break;
    default:
      break;
  }
}

function createStore(model) {
  const store = {
    model,
    synced: false,
    syncing: false,
    seq: 0,
    turns: [],
    baseState: undefined,
    requests: new Map(),
    asked: new Set(),
    preview: null,
    previewPending: false,
    error: null,
    listeners: new Set(),
    applied: { snapshots: 0, events: 0, turns: 0, gaps: 0, syncs: 0 }, // counters, shown as data-* attributes for tests
  };

  store.changed = () => {
    for (const listener of store.listeners) listener();
  };

  store.sync = () => {
    if (store.syncing) return;
    store.syncing = true;
    store.applied.syncs += 1;
    model.send({ [WIRE.KIND]: WIRE.SYNC });
  };

  store.needTurn = (index) => {
    const key = "t" + index;
    if (store.asked.has(key)) return;
    store.asked.add(key);
    model.send({ [WIRE.KIND]: WIRE.NEED_TURN, [WIRE.TURN_INDEX]: index });
  };

  store.needRequest = (index, call) => {
    const key = index + ":" + call;
    if (store.requests.has(key) || store.asked.has("r" + key)) return;
    store.asked.add("r" + key);
    model.send({ [WIRE.KIND]: WIRE.NEED_REQUEST, [WIRE.TURN_INDEX]: index, [WIRE.CALL]: call });
  };

  store.askPreview = (message) => {
    store.previewPending = true;
    model.send({ [WIRE.KIND]: WIRE.PREVIEW, [WIRE.MESSAGE]: message });
    store.changed();
  };

  const loadTurn = (turn, events, state) => {
    Object.assign(turn, blankTurn(turn.index));
    for (const e of events) applyEvent(store, turn, e, false);
    turn.loaded = true;
    turn.state = state;
    turn.version += 1;
  };

  const onMessage = (msg) => {
    if (!msg || typeof msg !== "object") return;
    const kind = msg[WIRE.KIND];
    if (kind === WIRE.SNAPSHOT) {
      if (!store.syncing) return; // another view asked for it
      store.turns = msg[WIRE.SUMMARIES].map(turnFromSummary);
      store.asked.clear();
      const index = msg[WIRE.TURN_INDEX];
      if (index === undefined || index === null) {
        store.baseState = msg[WIRE.STATE];
      } else {
        const turn = store.turns[index];
        loadTurn(turn, msg[WIRE.EVENTS], msg[WIRE.STATE]);
        turn.text = msg[WIRE.LIVE_TEXT] || "";
        if (turn.status === "running") turn.receivedAt = turn.at ? turn.at * 1000 : Date.now();
      }
      store.seq = msg[WIRE.SEQ];
      store.applied.snapshots += 1;
      store.synced = true;
      store.syncing = false;
    } else if (kind === WIRE.EVENT) {
      if (!store.synced || msg[WIRE.SEQ] <= store.seq) return; // the snapshot covers it
      if (msg[WIRE.SEQ] !== store.seq + 1) {
        store.synced = false; // a message went missing: start again from a snapshot
        store.applied.gaps += 1;
        store.sync();
        return;
      }
      store.seq = msg[WIRE.SEQ];
      const index = msg[WIRE.TURN_INDEX];
      if (!store.turns[index]) store.turns[index] = blankTurn(index);
      const turn = store.turns[index];
      const e = msg[WIRE.EVENT_BODY];
      applyEvent(store, turn, e, true);
      store.applied.events += 1;
      if ((e.kind === "run_finished" || e.kind === "run_failed") && turn.state === undefined) store.needTurn(index);
    } else if (kind === WIRE.TURN) {
      const turn = store.turns[msg[WIRE.TURN_INDEX]];
      store.asked.delete("t" + msg[WIRE.TURN_INDEX]);
      if (turn) loadTurn(turn, msg[WIRE.EVENTS], msg[WIRE.STATE]);
      store.applied.turns += 1;
    } else if (kind === WIRE.REQUEST) {
      store.requests.set(msg[WIRE.TURN_INDEX] + ":" + msg[WIRE.CALL], msg[WIRE.REQUEST]);
    } else if (kind === WIRE.PREVIEW) {
      store.preview = msg;
      store.previewPending = false;
    } else if (kind === WIRE.ERROR) {
      store.error = msg[WIRE.TEXT];
      store.previewPending = false;
      store.syncing = false;
    } else {
      return;
    }
    store.changed();
  };

  model.on("msg:custom", onMessage);
  store.dispose = () => model.off("msg:custom", onMessage);
  return store;
}

// ---------------------------------------------------------------------------------------------
// State changes of a turn: which paths were added / changed / removed, and by whom.

function changeMap(turn) {
  const marks = new Map(); // pointer -> {how, authors:Set}
  const within = new Set(); // pointers of containers holding a change
  const mark = (pointer, how, author) => {
    let entry = marks.get(pointer);
    if (!entry) marks.set(pointer, (entry = { how, authors: new Set() }));
    else if (entry.how !== how) entry.how = entry.how === "removed" && how === "added" ? "changed" : entry.how === "added" && how === "removed" ? "removed" : "changed";
    entry.authors.add(author);
    const tokens = decodePointer(pointer);
    for (let i = 0; i < tokens.length; i++) within.add(encodePointer(tokens.slice(0, i)));
  };
  for (const change of turn.changes) {
    const author = change.cause.label;
    for (const op of change.patch) {
      if (op.op === "add" || op.op === "copy") mark(op.path, "added", author);
      else if (op.op === "remove") mark(op.path, "removed", author);
      else if (op.op === "replace") mark(op.path, "changed", author);
      else if (op.op === "move") {
        mark(op.from, "removed", author);
        mark(op.path, "added", author);
      }
    }
  }
  return { marks, within };
}

function topLevelChanges(turn) {
  const keys = new Map(); // key -> {how, authors}
  for (const change of turn.changes) {
    for (const op of change.patch) {
      for (const path of op.op === "move" ? [op.from, op.path] : [op.path]) {
        const tokens = decodePointer(path);
        if (!tokens.length) continue;
        const key = tokens[0];
        let how = "changed";
        if (tokens.length === 1 && (op.op === "add" || op.op === "copy")) how = "added";
        if (tokens.length === 1 && op.op === "remove") how = "removed";
        const entry = keys.get(key);
        if (!entry) keys.set(key, { how, authors: new Set([change.cause.label]) });
        else {
          if (entry.how !== how) entry.how = "changed";
          entry.authors.add(change.cause.label);
        }
      }
    }
  }
  return keys;
}

// ---------------------------------------------------------------------------------------------
// The view.

const TABS = [
  ["prompt", "Prompt"],
  ["request", "Request"],
  ["tools", "Tool calls"],
  ["state", "State"],
  ["context", "Context"],
  ["history", "History"],
  ["preview", "Preview"],
];

function render({ model, el }) {
  // One store per view: views of the same widget may come from separate copies of this module,
  // so nothing is shared between them but the model.
  const store = createStore(model);
  const view = {
    tab: "prompt",
    selected: null, // null: follow the newest turn
    call: null, // model call picked in Prompt / Request (null: the last)
    open: new Set(), // tree pointers and tool-call ids the user opened
    closed: new Set(), // tree pointers the user closed
    shown: new Map(), // tree pointer -> number of children shown
    full: new Set(), // strings shown in full
    previewText: "",
    drawnKey: null,
  };

  const root = h("div", { class: "anb-root", "data-agent": model.get(WIRE.TRAIT_AGENT) });
  const header = h("div", { class: "anb-header" });
  const answer = h("div", { class: "anb-answer", "aria-live": "polite" });
  const tablist = h("div", { class: "anb-tabs", role: "tablist" });
  const panel = h("div", { class: "anb-panel", role: "tabpanel", tabindex: "-1" });
  const errorLine = h("div", { class: "anb-error-line", role: "status" });
  append(root, [header, answer, tablist, panel, errorLine]);
  el.appendChild(root);

  const turnIndex = () => {
    if (!store.turns.length) return null;
    const index = view.selected === null ? store.turns.length - 1 : Math.min(view.selected, store.turns.length - 1);
    return index;
  };
  const current = () => {
    const index = turnIndex();
    return index === null ? null : store.turns[index];
  };

  const select = (index) => {
    view.selected = index >= store.turns.length - 1 ? null : Math.max(0, index);
    view.call = null;
    draw();
  };

  // -- header -----------------------------------------------------------------------------

  const statusNode = h("span", { class: "anb-status" });

  function statusText(turn) {
    if (!turn) return ["idle", "no turns yet"];
    if (turn.status === "running") {
      const since = turn.receivedAt || Date.now();
      return ["running", "● running " + ((Date.now() - since) / 1000).toFixed(1) + " s"];
    }
    if (turn.status === "failed") return ["failed", "✕ failed: " + firstLine(turn.error)];
    return ["ok", "✓ done " + ms(turn.durationMs)];
  }

  function drawHeader(turn) {
    clear(header);
    const info = model.get(WIRE.TRAIT_MODEL) || {};
    const index = turnIndex();
    const total = store.turns.length;
    const [statusClass, text] = statusText(turn);
    statusNode.className = "anb-status anb-status-" + statusClass;
    statusNode.textContent = text;
    const usage = turn ? turn.usage : null;
    const tokens = usage ? (usage.estimated ? "≈" : "") + (usage.input + usage.output) + " tok" : "";
    append(header, [
      h("span", { class: "anb-name", title: "agent" }, model.get(WIRE.TRAIT_AGENT)),
      h(
        "span",
        { class: "anb-model anb-model-" + String(info.kind || "model").replace(/[^a-z]/g, ""), title: "model kind: " + (info.kind || "?") + (info.origin ? ", chosen: " + info.origin : "") },
        (info.kind && !String(info.label || "").startsWith(info.kind) ? info.kind + " · " + info.label : info.label || "?") +
          // Where the model came from matters when it was not chosen explicitly (a fallback).
          (info.origin && info.origin !== "explicit" ? " · " + info.origin : ""),
      ),
      h("span", { class: "anb-pos" }, total ? "turn " + (index + 1) + " of " + total : "no turns"),
      statusNode,
      h("span", { class: "anb-tokens", title: usage && usage.estimated ? "estimated from text length" : "tokens" }, tokens),
      h(
        "span",
        { class: "anb-stepper" },
        h("button", { type: "button", class: "anb-prev", "aria-label": "previous turn", title: "previous turn", disabled: !total || index === 0, "data-fkey": "prev", onclick: () => select(index - 1) }, "◀"),
        h("button", { type: "button", class: "anb-next", "aria-label": "next turn", title: "next turn", disabled: !total || index === total - 1, "data-fkey": "next", onclick: () => select(index + 1) }, "▶"),
      ),
    ]);
  }

  function drawAnswer(turn) {
    clear(answer);
    if (!turn) return;
    answer.className = "anb-answer";
    if (turn.status === "running") {
      answer.classList.add("anb-answer-live");
      append(answer, [h("span", { class: "anb-label" }, "streaming"), h("span", { class: "anb-text" }, turn.text || "…")]);
    } else if (turn.status === "failed") {
      answer.classList.add("anb-answer-failed");
      append(answer, [h("span", { class: "anb-label" }, turn.errorType || "error"), h("span", { class: "anb-text" }, turn.error || "")]);
    } else {
      append(answer, [h("span", { class: "anb-label" }, "answer"), h("span", { class: "anb-text" }, turn.content ?? "")]);
    }
    answer.insertBefore(h("span", { class: "anb-message", title: "user message" }, "» " + short(turn.message, 120)), answer.firstChild);
  }

  // -- tabs -------------------------------------------------------------------------------

  function drawTabs(turn) {
    clear(tablist);
    const changed = turn ? topLevelChanges(turn).size : 0;
    const counts = {
      tools: turn && turn.loaded ? turn.tools.length : turn ? turn.toolCount : 0,
      state: changed,
      context: turn ? turn.contextCount : 0,
      contextBlocks: turn ? turn.contextBlocks : 0,
      history: store.turns.length,
    };
    for (const [id, label] of TABS) {
      let text = label;
      if (id === "tools" && counts.tools) text += " (" + counts.tools + ")";
      if (id === "state" && counts.state) text += " (" + counts.state + " changed)";
      if (id === "context" && counts.context) text += " (" + counts.contextBlocks + ")";
      if (id === "history" && counts.history) text += " (" + counts.history + ")";
      const selected = view.tab === id;
      // Greyed, not hidden: tabs keep their places while the user steps through turns.
      const idle = id === "context" && !counts.context;
      tablist.appendChild(
        h(
          "button",
          {
            type: "button",
            role: "tab",
            class: "anb-tab" + (selected ? " anb-tab-selected" : "") + (idle ? " anb-tab-idle" : ""),
            title: idle ? "no context retrieved in this turn" : null,
            "aria-selected": selected ? "true" : "false",
            tabindex: selected ? "0" : "-1",
            "data-tab": id,
            "data-fkey": "tab-" + id,
            onclick: () => {
              view.tab = id;
              draw();
            },
            onkeydown: (ev) => {
              const ids = TABS.map((t) => t[0]);
              const at = ids.indexOf(id);
              let next = null;
              if (ev.key === "ArrowRight") next = ids[(at + 1) % ids.length];
              if (ev.key === "ArrowLeft") next = ids[(at - 1 + ids.length) % ids.length];
              if (next) {
                ev.preventDefault();
                view.tab = next;
                draw();
                tablist.querySelector('[data-tab="' + next + '"]')?.focus();
              }
            },
          },
          text,
        ),
      );
    }
  }

  // -- panels -----------------------------------------------------------------------------

  function empty(text) {
    return h("div", { class: "anb-empty" }, text);
  }

  function callPicker(turn, forWhat) {
    const calls = turn.calls.filter(Boolean);
    if (calls.length <= 1) return null;
    const picked = view.call === null ? calls.length - 1 : Math.min(view.call, calls.length - 1);
    return h(
      "div",
      { class: "anb-picker", role: "group", "aria-label": "model call" },
      h("span", { class: "anb-label" }, forWhat),
      calls.map((c, i) =>
        h(
          "button",
          {
            type: "button",
            class: "anb-pick" + (i === picked ? " anb-pick-selected" : ""),
            "aria-pressed": i === picked ? "true" : "false",
            "data-fkey": "call-" + i,
            onclick: () => {
              view.call = i;
              draw();
            },
          },
          "call " + (i + 1),
        ),
      ),
    );
  }

  function pickedCall(turn) {
    const calls = turn.calls.filter(Boolean);
    if (!calls.length) return null;
    return calls[view.call === null ? calls.length - 1 : Math.min(view.call, calls.length - 1)];
  }

  function sectionText(section) {
    // The section's text with its placeholders marked; offsets are in the whole prompt.
    const out = h("div", { class: "anb-section-text" });
    let pos = 0;
    const text = section.text;
    const holders = [...(section.placeholders || [])].sort((a, b) => a.start - b.start);
    for (const p of holders) {
      const start = p.start - section.start;
      const end = p.end - section.start;
      if (start < pos || end > text.length) continue;
      out.appendChild(document.createTextNode(text.slice(pos, start)));
      out.appendChild(
        h(
          "span",
          {
            class: p.resolved ? "anb-ph" : "anb-ph anb-ph-unresolved",
            title: p.resolved ? "{" + p.name + "} filled from " + p.source + "." + p.name : "{" + p.name + "} unresolved: no state key or dependency of that name",
          },
          text.slice(start, end),
          h("span", { class: "anb-ph-key" }, p.resolved ? p.name : "unresolved"),
        ),
      );
      pos = end;
    }
    out.appendChild(document.createTextNode(text.slice(pos)));
    return out;
  }

  function sectionsView(sections, userPrompt, notes) {
    const rows = h("div", { class: "anb-sections" });
    for (const section of sections) {
      const isState = section.source === "session_state";
      rows.appendChild(
        h(
          "div",
          { class: "anb-section" + (isState ? " anb-section-state" : ""), "data-source": section.source },
          h("div", { class: "anb-section-label", title: "produced by the " + section.source + " option" }, section.source),
          sectionText(section),
        ),
      );
    }
    if (userPrompt !== undefined && userPrompt !== null) {
      rows.appendChild(
        h("div", { class: "anb-section anb-section-user", "data-source": "user" }, h("div", { class: "anb-section-label" }, "user message"), h("div", { class: "anb-section-text" }, userPrompt)),
      );
    }
    const out = h("div", {}, rows);
    if (notes && notes.length) out.appendChild(h("ul", { class: "anb-notes" }, notes.map((n) => h("li", {}, n))));
    return out;
  }

  function messageView(m, open) {
    const body = [];
    if (m.content !== null && m.content !== undefined && m.content !== "") body.push(h("pre", { class: "anb-pre" }, typeof m.content === "string" ? m.content : pretty(m.content)));
    if (m.tool_calls) {
      const calls = m.tool_calls.map((c) => "→ " + (c.function?.name ?? "?") + "(" + argsText(c.function?.arguments) + ")  [" + c.id + "]");
      body.push(h("pre", { class: "anb-pre anb-tool-calls" }, calls.join("\n")));
    }
    const head = m.role + (m.tool_call_id ? " (" + m.tool_call_id + ")" : "") + ": " + short(firstLine(m.content ?? (m.tool_calls ? m.tool_calls.map((c) => c.function?.name).join(", ") : "")), 100);
    return h("details", { class: "anb-message-row anb-role-" + String(m.role).replace(/[^a-z]/g, ""), open: open }, h("summary", {}, head), body);
  }

  function promptPanel(turn) {
    if (!turn.prompt) {
      if (!turn.loaded) store.needTurn(turn.index);
      return empty(turn.loaded ? "The prompt is not rendered yet." : "Loading turn " + (turn.index + 1) + "…");
    }
    const out = h("div", { class: "anb-prompt" }, sectionsView(turn.prompt.sections, turn.prompt.userPrompt, turn.prompt.notes));
    const picker = callPicker(turn, "messages of");
    if (picker) {
      out.appendChild(picker);
      const call = pickedCall(turn);
      const request = store.requests.get(turn.index + ":" + call.call);
      if (!request) {
        store.needRequest(turn.index, call.call);
        out.appendChild(empty("Loading call " + (call.call + 1) + "…"));
      } else {
        const calls = turn.calls.filter(Boolean);
        const previous = calls[calls.indexOf(call) - 1];
        const skip = previous ? previous.messages : 0;
        const added = (request.messages || []).slice(skip);
        out.appendChild(
          h(
            "div",
            { class: "anb-call-messages" },
            h("div", { class: "anb-label" }, previous ? "+" + added.length + " message(s) since call " + (previous.call + 1) : "messages of call 1"),
            added.filter((m) => m.role !== "system").map((m) => messageView(m, true)),
          ),
        );
      }
    }
    return out;
  }

  function copyButton(getText) {
    const button = h("button", { type: "button", class: "anb-copy", "data-fkey": "copy" }, "copy JSON");
    button.addEventListener("click", () => {
      const done = (text) => (button.textContent = text);
      try {
        navigator.clipboard.writeText(getText()).then(() => done("copied"), () => done("copy failed"));
      } catch (err) {
        done("copy failed");
      }
    });
    return button;
  }

  function requestView(request) {
    const { messages = [], tools = [], ...rest } = request;
    return h(
      "div",
      { class: "anb-request" },
      h(
        "div",
        { class: "anb-request-head" },
        h("span", {}, (rest.model ? rest.model + " · " : "") + messages.length + " message(s) · " + tools.length + " tool(s)"),
        copyButton(() => JSON.stringify(request, null, 2)),
      ),
      messages.map((m, i) => messageView(m, i === messages.length - 1)),
      tools.length
        ? h("details", { class: "anb-message-row" }, h("summary", {}, "tools: " + tools.map((t) => t.function?.name || t.name).join(", ")), h("pre", { class: "anb-pre anb-json" }, pretty(tools)))
        : null,
      Object.keys(rest).length ? h("details", { class: "anb-message-row" }, h("summary", {}, "options: " + Object.keys(rest).join(", ")), h("pre", { class: "anb-pre anb-json" }, pretty(rest))) : null,
      h("details", { class: "anb-message-row" }, h("summary", {}, "raw JSON"), h("pre", { class: "anb-pre anb-json" }, pretty(request))),
    );
  }

  function requestPanel(turn) {
    if (!turn.loaded) {
      store.needTurn(turn.index);
      return empty("Loading turn " + (turn.index + 1) + "…");
    }
    const call = pickedCall(turn);
    if (!call) return empty("No request sent yet.");
    const request = store.requests.get(turn.index + ":" + call.call);
    const out = h("div", {}, callPicker(turn, "request of"));
    if (!request) {
      store.needRequest(turn.index, call.call);
      out.appendChild(empty("Loading the request of call " + (call.call + 1) + "…"));
    } else {
      out.appendChild(requestView(request));
    }
    return out;
  }

  function jsonBlock(value) {
    return h("pre", { class: "anb-pre anb-json" }, typeof value === "string" ? value : pretty(value));
  }

  function toolRow(turn, t) {
    const failed = t.done && t.error;
    const status = !t.done ? "running…" : failed ? "error" : t.answered_by && t.answered_by !== "tool" ? "answered by " + t.answered_by : "ok";
    const summary = h(
      "summary",
      { class: "anb-tool-summary" },
      h("span", { class: "anb-tool-name" }, t.name),
      h("span", { class: "anb-tool-args" }, short(argsText(t.arguments), 80)),
      h("span", { class: "anb-tool-arrow" }, "→"),
      h("span", { class: "anb-tool-result" + (failed ? " anb-bad" : "") }, t.done ? short(firstLine(failed ? t.error : t.result), 80) : "…"),
      h("span", { class: "anb-tool-status anb-tool-" + (failed ? "error" : t.done ? "ok" : "running") }, status),
      h("span", { class: "anb-tool-time" }, t.done ? ms(t.duration_ms) : ""),
    );
    const body = h("div", { class: "anb-tool-body" });
    body.appendChild(h("div", { class: "anb-label" }, "arguments"));
    body.appendChild(jsonBlock(argsText(t.arguments) === t.arguments ? t.arguments : pretty(JSON.parse(t.arguments))));
    const chain = h("ol", { class: "anb-hooks", "aria-label": "hook chain" });
    for (const step of t.hooks || []) {
      chain.appendChild(
        h(
          "li",
          { class: "anb-hook anb-hook-" + step.outcome, "data-hook": step.name },
          h("span", { class: "anb-hook-name" }, step.name),
          h("span", { class: "anb-hook-outcome" }, step.outcome),
          h("span", { class: "anb-tool-time" }, ms(step.duration_ms)),
          h("div", { class: "anb-hook-detail" }, "received " + JSON.stringify(step.arguments)),
          step.outcome === "answered" ? h("div", { class: "anb-hook-detail" }, "answered: " + (step.result ?? "")) : null,
          step.outcome === "raised" ? h("div", { class: "anb-hook-detail anb-bad" }, "raised: " + (step.error ?? "")) : null,
        ),
      );
    }
    if (t.done) {
      const ran = t.answered_by === "tool" || (!t.answered_by && t.error_kind === "tool_error");
      chain.appendChild(
        h("li", { class: "anb-hook anb-hook-tool" + (ran ? "" : " anb-hook-skipped"), "data-hook": "tool" }, h("span", { class: "anb-hook-name" }, "tool " + t.name), h("span", { class: "anb-hook-outcome" }, ran ? (t.error ? "raised" : "ran") : "not called")),
      );
    }
    body.appendChild(h("div", { class: "anb-label" }, "hook chain"));
    body.appendChild(chain);
    if (t.done) {
      body.appendChild(h("div", { class: "anb-label" }, failed ? "error (" + (t.error_kind || "error") + ")" : "result"));
      body.appendChild(jsonBlock(failed ? t.error : t.result));
      const changes = turn.changes.filter((c) => c.cause.tool_call_id === t.id);
      body.appendChild(h("div", { class: "anb-label" }, "state keys changed: " + ((t.changed_keys || []).join(", ") || "none")));
      if (changes.length) {
        body.appendChild(
          h(
            "ul",
            { class: "anb-patch" },
            changes.flatMap((c) => c.patch.map((op) => h("li", {}, op.op + " " + op.path + ("value" in op ? " = " + short(JSON.stringify(op.value), 120) : "") + "  by " + c.cause.label))),
          ),
        );
      }
    }
    const details = h("details", { class: "anb-tool", "data-tool": t.name, open: view.open.has("tool:" + t.id) }, summary, body);
    details.addEventListener("toggle", () => (details.open ? view.open.add("tool:" + t.id) : view.open.delete("tool:" + t.id)));
    return details;
  }

  function toolsPanel(turn) {
    if (!turn.loaded) {
      store.needTurn(turn.index);
      return empty("Loading turn " + (turn.index + 1) + "…");
    }
    if (!turn.tools.length) return empty("No tool calls in this turn.");
    return h("div", { class: "anb-tools" }, turn.tools.map((t) => toolRow(turn, t)));
  }

  // -- context: blocks injected into the user message, and the model's retrieval calls ------

  function blockText(text, key) {
    const s = String(text ?? "");
    if (s.length <= BLOCK_CUT || view.full.has(key)) return h("td", { class: "anb-ctx-text" }, s);
    const more = h("button", { type: "button", class: "anb-more", "data-fkey": "full" + key }, "show all (" + s.length + " chars)");
    const cell = h("td", { class: "anb-ctx-text" }, s.slice(0, BLOCK_CUT) + "…", " ", more);
    more.addEventListener("click", () => {
      view.full.add(key);
      cell.replaceWith(blockText(s, key));
    });
    return cell;
  }

  function scoreText(score) {
    return score === null || score === undefined ? "—" : String(Math.round(score * 1000) / 1000);
  }

  function retrievalView(turn, r, i) {
    const key = "ctx:" + turn.index + ":" + i;
    const found = r.blocks.length;
    const summary = h(
      "summary",
      { class: "anb-ctx-summary" },
      h("span", { class: "anb-ctx-label" }, r.label),
      h("span", { class: "anb-ctx-provider" }, r.provider),
      h("span", { class: "anb-ctx-query", title: "query: " + r.query }, JSON.stringify(short(r.query, 80))),
      h("span", { class: "anb-ctx-count" + (found ? "" : " anb-ctx-none") }, found + " block(s)" + (r.top_k ? ", top " + r.top_k : ", all")),
      h("span", { class: "anb-tool-time" }, ms(r.duration_ms)),
    );
    const body = h("div", { class: "anb-ctx-body" });
    if (r.via === "tool" && r.toolId) {
      const show = () => {
        view.open.add("tool:" + r.toolId);
        view.tab = "tools";
        draw();
      };
      body.appendChild(h("div", { class: "anb-ctx-call" }, "asked by the model through a tool call ", h("button", { type: "button", class: "anb-more", "data-fkey": "ctx-call-" + i, onclick: show }, "show call " + r.toolId)));
    }
    if (!found) body.appendChild(empty("The provider returned no block for this query."));
    else {
      body.appendChild(
        h(
          "table",
          { class: "anb-ctx-blocks" },
          h("thead", {}, h("tr", {}, ["label", "score", "source", "text"].map((c) => h("th", {}, c)))),
          h(
            "tbody",
            {},
            r.blocks.map((b, j) =>
              h(
                "tr",
                { class: "anb-ctx-block", title: b.metadata && Object.keys(b.metadata).length ? "metadata: " + JSON.stringify(b.metadata) : null },
                h("td", { class: "anb-ctx-label" }, "(" + r.label + ")"),
                h("td", { class: "anb-num" }, scoreText(b.score)),
                h("td", { class: "anb-ctx-source" }, b.source ?? ""),
                blockText(b.text, key + ":" + j),
              ),
            ),
          ),
        ),
      );
    }
    const details = h("details", { class: "anb-ctx anb-ctx-" + r.via, "data-label": r.label, open: !view.closed.has(key) }, summary, body);
    details.addEventListener("toggle", () => (details.open ? view.closed.delete(key) : view.closed.add(key)));
    return details;
  }

  function contextPanel(turn) {
    if (!turn.loaded) {
      store.needTurn(turn.index);
      return empty("Loading turn " + (turn.index + 1) + "…");
    }
    if (!turn.context.length) {
      return empty("No context in this turn. Passive providers (context_providers=[...], or %%agent --context) put blocks into the user message; active ones let the model call retrieve_context.");
    }
    const indexed = turn.context.map((r, i) => [r, i]);
    const passive = indexed.filter(([r]) => r.via === "passive");
    const asked = indexed.filter(([r]) => r.via !== "passive");
    const out = h("div", { class: "anb-context" });
    if (passive.length) {
      out.appendChild(h("div", { class: "anb-label" }, "injected into the user message (CONTEXT field)"));
      out.appendChild(h("div", {}, passive.map(([r, i]) => retrievalView(turn, r, i))));
      // The field as the model read it: "[Context]" then one "(LABEL) text" line per block.
      const lines = passive.flatMap(([r]) => r.blocks.map((b) => ("(" + r.label + ") " + b.text).trimEnd()));
      if (lines.length) {
        out.appendChild(h("details", { class: "anb-message-row" }, h("summary", {}, "CONTEXT field as sent"), h("pre", { class: "anb-pre" }, ["[Context]", ...lines].join("\n"))));
      }
    }
    if (asked.length) {
      out.appendChild(h("div", { class: "anb-label" }, "retrieved by the model (" + asked.length + " call(s))"));
      out.appendChild(h("div", {}, asked.map(([r, i]) => retrievalView(turn, r, i))));
    }
    return out;
  }

  // -- state tree: children are built only when a node is opened ---------------------------

  function leafText(value, pointer) {
    if (typeof value !== "string") return h("span", { class: "anb-value anb-value-" + (value === null ? "null" : typeof value) }, JSON.stringify(value));
    const quoted = JSON.stringify(value);
    if (quoted.length <= STRING_CUT || view.full.has(pointer)) return h("span", { class: "anb-value anb-value-string" }, quoted);
    const more = h("button", { type: "button", class: "anb-more", "data-fkey": "full" + pointer }, "show all (" + value.length + " chars)");
    const span = h("span", { class: "anb-value anb-value-string" }, quoted.slice(0, STRING_CUT) + "…", " ", more);
    more.addEventListener("click", () => {
      view.full.add(pointer);
      span.replaceWith(leafText(value, pointer));
    });
    return span;
  }

  function badge(entry) {
    if (!entry) return null;
    const sign = entry.how === "added" ? "+" : entry.how === "removed" ? "−" : "~";
    return h("span", { class: "anb-badge anb-badge-" + entry.how, title: entry.how + " by " + [...entry.authors].join(", ") }, sign + " " + [...entry.authors].join(", "));
  }

  function treeNode(key, value, pointer, changes, removedUnder) {
    const entry = changes.marks.get(pointer);
    const markClass = entry ? " anb-mark-" + entry.how : changes.within.has(pointer) ? " anb-mark-within" : "";
    const keyNode = h("span", { class: "anb-key" }, key);
    if (value === null || typeof value !== "object") {
      return h("div", { class: "anb-node anb-leaf" + markClass, "data-path": pointer }, keyNode, ": ", leafText(value, pointer), badge(entry));
    }
    const isArray = Array.isArray(value);
    const size = isArray ? value.length : Object.keys(value).length;
    const autoOpen = changes.within.has(pointer) && size <= AUTO_OPEN_MAX;
    const open = view.open.has(pointer) || (autoOpen && !view.closed.has(pointer));
    const details = h(
      "details",
      { class: "anb-node anb-branch" + markClass, "data-path": pointer, open },
      h("summary", {}, keyNode, h("span", { class: "anb-size" }, isArray ? " [" + size + "]" : " {" + size + "}"), badge(entry)),
    );
    let built = false;
    const build = () => {
      if (built) return;
      built = true;
      details.appendChild(childList(value, pointer, changes, removedUnder));
    };
    if (open) build();
    details.addEventListener("toggle", () => {
      if (details.open) {
        view.open.add(pointer);
        view.closed.delete(pointer);
        build();
      } else {
        view.open.delete(pointer);
        view.closed.add(pointer);
      }
    });
    return details;
  }

  function childList(value, pointer, changes, removedUnder) {
    const list = h("div", { class: "anb-children" });
    const keys = Array.isArray(value) ? value.map((_, i) => String(i)) : Object.keys(value);
    const addChunk = () => {
      const from = list.querySelectorAll(":scope > .anb-node").length;
      const limit = Math.max(view.shown.get(pointer) || CHILD_CHUNK, from + 1);
      const to = Math.min(keys.length, Math.max(limit, from + CHILD_CHUNK));
      const before = list.querySelector(":scope > .anb-more-row");
      for (const key of keys.slice(from, to)) {
        const child = treeNode(key, value[key], pointer + "/" + key.replace(/~/g, "~0").replace(/\//g, "~1"), changes, removedUnder);
        list.insertBefore(child, before);
      }
      view.shown.set(pointer, to);
      if (before) before.remove();
      if (to < keys.length) {
        list.appendChild(
          h(
            "div",
            { class: "anb-more-row" },
            h("button", { type: "button", class: "anb-more", "data-fkey": "more" + pointer, onclick: addChunk }, "show " + Math.min(CHILD_CHUNK, keys.length - to) + " more of " + (keys.length - to) + " (" + keys.length + " in all)"),
          ),
        );
      }
    };
    addChunk();
    for (const gone of removedUnder.get(pointer) || []) {
      list.appendChild(h("div", { class: "anb-node anb-leaf anb-mark-removed", "data-path": gone.pointer }, h("span", { class: "anb-key" }, gone.key), ": ", h("span", { class: "anb-value" }, "(removed)"), badge(changes.marks.get(gone.pointer))));
    }
    return list;
  }

  function statePanel(turn) {
    const state = turn ? turn.state : store.baseState;
    if (state === undefined) {
      if (turn) store.needTurn(turn.index);
      return empty("Loading the state…");
    }
    const changes = turn ? changeMap(turn) : { marks: new Map(), within: new Set() };
    // Keys removed during the turn and absent at its end are shown as ghost rows.
    const removedUnder = new Map();
    for (const [pointer, entry] of changes.marks) {
      if (entry.how !== "removed") continue;
      const tokens = decodePointer(pointer);
      let exists = true;
      try {
        exists = walk(state, tokens) !== undefined;
      } catch (err) {
        exists = false;
      }
      if (exists) continue;
      const parent = encodePointer(tokens.slice(0, -1));
      if (!removedUnder.has(parent)) removedUnder.set(parent, []);
      removedUnder.get(parent).push({ key: tokens[tokens.length - 1], pointer });
    }
    const top = turn ? topLevelChanges(turn) : new Map();
    const legend = h(
      "div",
      { class: "anb-state-head" },
      h("span", {}, turn ? (turn.status === "running" ? "live state of turn " : "state after turn ") + (turn.index + 1) : "initial state"),
      top.size ? h("span", { class: "anb-label" }, " · changed in this turn: ") : turn ? h("span", { class: "anb-label" }, " · no changes in this turn") : null,
      [...top.entries()].map(([key, entry]) => h("span", { class: "anb-chip anb-badge-" + entry.how, title: entry.how + " by " + [...entry.authors].join(", ") }, key)),
    );
    const tree = h("div", { class: "anb-tree", role: "tree" }, childList(state, "", changes, removedUnder));
    return h("div", {}, legend, tree);
  }

  function historyPanel() {
    if (!store.turns.length) return empty("No turns yet.");
    const selected = turnIndex();
    const rows = store.turns.map((t) =>
      h(
        "tr",
        {
          class: "anb-history-row" + (t.index === selected ? " anb-history-selected" : "") + " anb-row-" + t.status,
          tabindex: "0",
          "aria-selected": t.index === selected ? "true" : "false",
          "data-turn": t.index,
          "data-fkey": "turn-" + t.index,
          onclick: () => select(t.index),
          onkeydown: (ev) => {
            if (ev.key === "Enter" || ev.key === " ") {
              ev.preventDefault();
              select(t.index);
            }
          },
        },
        h("td", {}, String(t.index + 1)),
        h("td", { class: "anb-cell-text" }, short(t.message, 80)),
        h("td", { class: "anb-cell-text" + (t.status === "failed" ? " anb-bad" : "") }, t.status === "failed" ? "✕ " + short(firstLine(t.error), 80) : t.status === "running" ? "running…" : short(t.content ?? "", 80)),
        h("td", { class: "anb-num" }, String(t.loaded ? t.tools.length : t.toolCount)),
        h("td", { class: "anb-num" }, (t.usage.estimated ? "≈" : "") + (t.usage.input + t.usage.output)),
        h("td", { class: "anb-num" }, ms(t.durationMs)),
      ),
    );
    return h(
      "table",
      { class: "anb-history" },
      h("thead", {}, h("tr", {}, ["#", "message", "answer", "tools", "tokens", "time"].map((c) => h("th", {}, c)))),
      h("tbody", {}, rows),
    );
  }

  function previewPanel() {
    const input = h("input", { type: "text", class: "anb-preview-input", "aria-label": "message to preview", placeholder: "a message to preview (no model call)", value: view.previewText, "data-fkey": "preview-input" });
    input.addEventListener("input", () => (view.previewText = input.value));
    const go = () => store.askPreview(input.value);
    input.addEventListener("keydown", (ev) => {
      if (ev.key === "Enter") go();
    });
    const out = h(
      "div",
      { class: "anb-preview" },
      h("div", { class: "anb-preview-form" }, input, h("button", { type: "button", class: "anb-preview-go", "data-fkey": "preview-go", onclick: go }, store.previewPending ? "observing…" : "observe")),
    );
    const p = store.preview;
    if (p) {
      out.appendChild(h("div", { class: "anb-label" }, "what the model would receive for " + JSON.stringify(p[WIRE.MESSAGE]) + " now"));
      out.appendChild(sectionsView(p.sections, p.user_prompt, p.notes));
      out.appendChild(requestView(p[WIRE.REQUEST]));
    }
    return out;
  }

  // -- drawing ----------------------------------------------------------------------------

  function drawPanel(turn) {
    const key = [view.tab, turn ? turn.index : -1, turn ? turn.version : 0, turn ? turn.state !== undefined : store.baseState !== undefined, view.call, store.requests.size, store.preview, store.previewPending, store.turns.length].join("|");
    if (key === view.drawnKey) return;
    view.drawnKey = key;
    clear(panel);
    panel.setAttribute("data-tab", view.tab);
    if (view.tab === "history") panel.appendChild(historyPanel());
    else if (view.tab === "preview") panel.appendChild(previewPanel());
    else if (view.tab === "state") panel.appendChild(statePanel(turn));
    else if (!turn) panel.appendChild(empty("No turns yet: run the agent (agent.run(...) or %%chat)."));
    else if (view.tab === "prompt") panel.appendChild(promptPanel(turn));
    else if (view.tab === "request") panel.appendChild(requestPanel(turn));
    else if (view.tab === "tools") panel.appendChild(toolsPanel(turn));
    else if (view.tab === "context") panel.appendChild(contextPanel(turn));
  }

  function draw() {
    const focused = root.contains(document.activeElement) ? document.activeElement.getAttribute("data-fkey") : null;
    const turn = current();
    if (turn && !turn.loaded && turn.state === undefined) store.needTurn(turn.index);
    root.setAttribute("data-turn", turn ? turn.index : "");
    root.setAttribute("data-status", turn ? turn.status : "idle");
    for (const [name, count] of Object.entries(store.applied)) root.setAttribute("data-applied-" + name, count);
    drawHeader(turn);
    drawAnswer(turn);
    drawTabs(turn);
    drawPanel(turn);
    errorLine.textContent = store.error ? "inspector: " + store.error : "";
    if (focused) root.querySelector('[data-fkey="' + CSS.escape(focused) + '"]')?.focus();
  }

  let scheduled = false;
  const schedule = () => {
    if (scheduled) return;
    scheduled = true;
    setTimeout(() => {
      scheduled = false;
      draw();
    }, 30);
  };

  const tick = setInterval(() => {
    const turn = current();
    if (turn && turn.status === "running") {
      statusNode.textContent = statusText(turn)[1];
      if (turn.textVersion !== view.textVersion) {
        view.textVersion = turn.textVersion;
        drawAnswer(turn);
      }
    }
  }, 200);

  store.listeners.add(schedule);
  const onTraits = () => schedule();
  model.on("change:" + WIRE.TRAIT_AGENT, onTraits);
  model.on("change:" + WIRE.TRAIT_MODEL, onTraits);
  if (!store.synced) store.sync();
  draw();

  return () => {
    clearInterval(tick);
    store.listeners.delete(schedule);
    model.off("change:" + WIRE.TRAIT_AGENT, onTraits);
    model.off("change:" + WIRE.TRAIT_MODEL, onTraits);
    store.dispose();
  };
}

export default { render };
