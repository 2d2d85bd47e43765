// One view of the inspector: header, answer line, tab bar and the selected tab's panel.
//
// The frame (header, answer line, tab buttons) is built once and updated in place, so focus and
// layout stay put. A panel is rebuilt only when one of its inputs changes (tabs/index.js), with
// its scroll position, focus and open tree nodes kept; streamed text redraws the answer line only.

import { append, attr, clear, empty, h } from "./dom.js";
import { firstLine, ms, short, tokensText } from "./format.js";
import { createStore } from "./store.js";
import { TABS } from "./tabs/index.js";
import { WIRE } from "./wire.js";

const DRAW_DELAY_MS = 30; // store changes within this time are drawn together
const CLOCK_MS = 200; // how often the running clock in the header ticks

function statusOf(turn, now) {
  if (!turn) return ["idle", "no turns yet"];
  if (turn.status === "running") return ["running", "● running " + ((now - (turn.receivedAt || now)) / 1000).toFixed(1) + " s"];
  if (turn.status === "failed") return ["failed", "✕ failed: " + firstLine(turn.error)];
  return ["ok", "✓ done " + ms(turn.durationMs)];
}

function modelText(info) {
  const label = String(info.label || "?");
  // The kind is said once: "scripted", not "scripted · scripted"; where a model came from
  // matters when it was not chosen explicitly (a fallback).
  const text = info.kind && !label.startsWith(info.kind) ? info.kind + " · " + label : label;
  return text + (info.origin && info.origin !== "explicit" ? " · " + info.origin : "");
}

function buildHeader(actions) {
  const parts = {
    name: h("span", { class: "anb-name", title: "agent" }),
    model: h("span", { class: "anb-model" }),
    pos: h("span", { class: "anb-pos" }),
    status: h("span", { class: "anb-status" }),
    tokens: h("span", { class: "anb-tokens" }),
    prev: h("button", { type: "button", class: "anb-prev", "aria-label": "previous turn", title: "previous turn", "data-fkey": "prev", onclick: actions.prev }, "◀"),
    next: h("button", { type: "button", class: "anb-next", "aria-label": "next turn", title: "next turn", "data-fkey": "next", onclick: actions.next }, "▶"),
  };
  parts.node = h("div", { class: "anb-header" }, parts.name, parts.model, parts.pos, parts.status, parts.tokens, h("span", { class: "anb-stepper" }, parts.prev, parts.next));
  return parts;
}

function buildAnswer() {
  const parts = {
    message: h("span", { class: "anb-message", title: "user message" }),
    label: h("span", { class: "anb-label" }),
    text: h("span", { class: "anb-text" }),
  };
  parts.node = h("div", { class: "anb-answer", "aria-live": "polite" });
  return parts;
}

function buildTabs(onPick) {
  const buttons = new Map();
  const node = h("div", { class: "anb-tabs", role: "tablist" });
  TABS.forEach((tab, at) => {
    const button = h("button", {
      type: "button",
      role: "tab",
      class: "anb-tab",
      "data-tab": tab.id,
      "data-fkey": "tab-" + tab.id,
      onclick: () => onPick(tab.id),
      onkeydown: (ev) => {
        const step = ev.key === "ArrowRight" ? 1 : ev.key === "ArrowLeft" ? -1 : 0;
        if (!step) return;
        ev.preventDefault();
        const next = TABS[(at + step + TABS.length) % TABS.length].id;
        onPick(next);
        buttons.get(next).focus();
      },
    });
    buttons.set(tab.id, button);
    node.appendChild(button);
  });
  return { node, buttons };
}

export function render({ model, el, backlog = [] }) {
  const store = createStore(model, { backlog });
  const view = {
    tab: "prompt",
    selected: null, // null: follow the newest turn
    call: null, // model call picked in Prompt / Request (null: the last)
    open: new Set(), // keys of <details> the user opened (tree pointers, "tool:<id>", …)
    closed: new Set(), // … and closed
    shown: new Map(), // tree pointer -> number of children shown
    full: new Set(), // long texts and lists shown in full
    previewInput: null,
    nonce: 0, // bumped by the user's actions on a panel, to rebuild it
  };
  const drawn = { header: null, answer: null, panel: null, builds: 0 };

  const turnIndex = () => (store.turns.length ? (view.selected === null ? store.turns.length - 1 : Math.min(view.selected, store.turns.length - 1)) : null);
  const current = () => (store.turns.length ? store.turns[turnIndex()] : null);
  const update = (change) => {
    change();
    view.nonce += 1;
    draw();
  };
  const select = (index) =>
    update(() => {
      view.selected = index >= store.turns.length - 1 ? null : Math.max(0, index);
      view.call = null;
    });
  const ctxFor = (turn) => ({ store, view, turn, update, select });

  const header = buildHeader({ prev: () => select(turnIndex() - 1), next: () => select(turnIndex() + 1) });
  const answer = buildAnswer();
  const tabs = buildTabs((id) => {
    view.tab = id;
    draw();
  });
  const panel = h("div", { class: "anb-panel", role: "tabpanel", tabindex: "-1" });
  const errorLine = h("div", { class: "anb-error-line", role: "status" });
  const root = h("div", { class: "anb-root" }, header.node, answer.node, tabs.node, panel, errorLine);
  el.appendChild(root);

  function drawHeader(turn) {
    const info = model.get(WIRE.TRAIT_MODEL) || {};
    const index = turnIndex();
    const total = store.turns.length;
    const key = JSON.stringify([model.get(WIRE.TRAIT_AGENT), info, index, total, turn && [turn.status, turn.error, turn.durationMs, turn.usage]]);
    if (key === drawn.header) return;
    drawn.header = key;
    header.name.textContent = model.get(WIRE.TRAIT_AGENT);
    header.model.className = "anb-model anb-model-" + String(info.kind || "model").replace(/[^a-z]/g, "");
    header.model.title = "model kind: " + (info.kind || "?") + (info.origin ? ", chosen: " + info.origin : "");
    header.model.textContent = modelText(info);
    header.pos.textContent = total ? "turn " + (index + 1) + " of " + total : "no turns";
    drawClock(turn);
    header.tokens.textContent = turn ? tokensText(turn.usage) : "";
    header.tokens.title = turn && turn.usage.estimated ? "estimated from text length" : "tokens";
    header.prev.disabled = !total || index === 0;
    header.next.disabled = !total || index === total - 1;
  }

  function drawClock(turn) {
    const [status, text] = statusOf(turn, Date.now());
    header.status.className = "anb-status anb-status-" + status;
    header.status.textContent = text;
  }

  function drawAnswer(turn) {
    const key = turn ? [turn.index, turn.status, turn.v.text, turn.v.summary, store.version.epoch].join("|") : "";
    if (key === drawn.answer) return;
    drawn.answer = key;
    clear(answer.node);
    answer.node.className = "anb-answer";
    if (!turn) return;
    let label = "answer";
    let text = turn.content ?? "";
    if (turn.status === "running") {
      answer.node.classList.add("anb-answer-live");
      [label, text] = ["streaming", turn.text || "…"];
    } else if (turn.status === "failed") {
      answer.node.classList.add("anb-answer-failed");
      [label, text] = [turn.errorType || "error", turn.error || ""];
    }
    answer.message.textContent = "» " + short(turn.message, 120);
    answer.label.textContent = label;
    answer.text.textContent = text;
    append(answer.node, [answer.message, answer.label, answer.text]);
  }

  function drawTabs(ctx) {
    for (const tab of TABS) {
      const button = tabs.buttons.get(tab.id);
      const selected = view.tab === tab.id;
      const idle = tab.idle ? tab.idle(ctx) : null;
      const text = tab.label + (tab.count ? tab.count(ctx) : "");
      if (button.textContent !== text) button.textContent = text;
      button.className = "anb-tab" + (selected ? " anb-tab-selected" : "") + (idle ? " anb-tab-idle" : "");
      attr(button, "title", idle);
      button.setAttribute("aria-selected", selected ? "true" : "false");
      button.setAttribute("tabindex", selected ? "0" : "-1");
    }
  }

  function drawPanel(ctx) {
    const tab = TABS.find((t) => t.id === view.tab);
    const turn = ctx.turn;
    const noTurn = tab.needsTurn && !turn;
    const key = JSON.stringify([tab.id, turn ? turn.index : -1, store.version.epoch, view.nonce, noTurn ? null : tab.inputs(ctx)]);
    if (key === drawn.panel) return;
    // Same tab and turn: a redraw of what the user is looking at, so keep the scroll position.
    const sameView = drawn.panelView === tab.id + ":" + (turn ? turn.index : -1);
    const top = sameView ? panel.scrollTop : 0;
    drawn.panel = key;
    drawn.panelView = tab.id + ":" + (turn ? turn.index : -1);
    drawn.builds += 1;
    clear(panel);
    panel.setAttribute("data-tab", tab.id);
    panel.appendChild(noTurn ? empty("No turns yet: run the agent (agent.run(...) or %%chat).") : tab.panel(ctx));
    panel.scrollTop = top;
  }

  function draw() {
    const active = root.contains(document.activeElement) ? document.activeElement : null;
    const focusKey = active ? active.getAttribute("data-fkey") : null;
    const turn = current();
    const ctx = ctxFor(turn);
    if (turn && !turn.loaded && turn.state === undefined) store.needTurn(turn.index);
    root.setAttribute("data-agent", model.get(WIRE.TRAIT_AGENT));
    root.setAttribute("data-turn", turn ? turn.index : "");
    root.setAttribute("data-status", turn ? turn.status : "idle");
    for (const [name, count] of Object.entries(store.applied)) root.setAttribute("data-applied-" + name, count);
    drawHeader(turn);
    drawAnswer(turn);
    drawTabs(ctx);
    drawPanel(ctx);
    root.setAttribute("data-panel-builds", drawn.builds);
    errorLine.textContent = store.error ? "inspector: " + store.error : "";
    // A rebuilt panel dropped the focused element: focus its counterpart in the new panel.
    if (focusKey && !root.contains(document.activeElement)) root.querySelector('[data-fkey="' + CSS.escape(focusKey) + '"]')?.focus();
  }

  let scheduled = null;
  const schedule = () => {
    if (scheduled === null) {
      scheduled = setTimeout(() => {
        scheduled = null;
        draw();
      }, DRAW_DELAY_MS);
    }
  };
  const clock = setInterval(() => {
    const turn = current();
    if (turn && turn.status === "running") drawClock(turn);
  }, CLOCK_MS);

  const unsubscribe = store.subscribe(schedule);
  model.on("change:" + WIRE.TRAIT_AGENT, schedule);
  model.on("change:" + WIRE.TRAIT_MODEL, schedule);
  draw();

  return () => {
    clearInterval(clock);
    if (scheduled !== null) clearTimeout(scheduled);
    unsubscribe();
    model.off("change:" + WIRE.TRAIT_AGENT, schedule);
    model.off("change:" + WIRE.TRAIT_MODEL, schedule);
    store.dispose();
  };
}
