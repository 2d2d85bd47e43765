// One view of the inspector: header, answer line, tab bar and the selected tab's panel.
//
// The frame (header, answer line, tab buttons) is built once and updated in place, so focus and
// layout stay put. A panel is rebuilt only when one of its inputs changes (tabs/index.js), with
// its scroll position, focus and open tree nodes kept; streamed text redraws the answer line only.

import { append, attr, clear, empty, h } from "./dom.js";
import { CUT_MARK, argsText, firstLine, ms, short, tokensText, usageTitle } from "./format.js";
import { Cards } from "./cards.js";
import { Images } from "./images.js";
import { watchConnection } from "./connection.js";
import { ANSWER_MS, NO_ANSWER, createStore } from "./store.js";
import { whatToDo } from "./tabs/parts.js";
import { TABS } from "./tabs/index.js";
import { TREE_WIRE, inCharge, routedOf } from "./runs.js";
import { WIRE } from "./wire.js";

const DRAW_DELAY_MS = 30; // store changes within this time are drawn together
const TOP_PX = 24; // a panel scrolled up to within this of its top is at its top
const CLOCK_MS = 200; // how often the running clock in the header ticks

/** The header's status of ``turn``: [kind, text] (a finished run's time as ``ms`` writes it, the
 * Runs tab's node too). */
export function statusOf(turn, now, offline) {
  if (offline) return ["offline", "⚠ not connected"];
  if (!turn) return ["idle", "no turns yet"];
  if (turn.status === "unknown") return ["idle", "loading turn " + (turn.index + 1) + "…"];
  if (turn.status === "running") return ["running", "● running " + ((now - (turn.receivedAt || now)) / 1000).toFixed(1) + " s"];
  if (turn.status === "failed") return ["failed", "✕ failed: " + firstLine(turn.error)];
  if (turn.status === "paused") return ["paused", "‖ paused: waits for a person" + (turn.waiting && turn.waiting.length ? " (" + turn.waiting.length + ")" : "")];
  return ["ok", "✓ done " + ms(turn.durationMs) + (turn.replayed ? " · replayed" : "")];
}

/** The answer line of a running turn: the tool running now, the text streamed so far, or that
 * the model has not answered yet. */
export function liveAnswer(turn) {
  const running = (turn.tools || []).filter((t) => !t.done);
  if (running.length) {
    const t = running[running.length - 1];
    return ["running tool", t.name + "(" + short(argsText(t.arguments), 100) + ") …"];
  }
  if (turn.text) return ["streaming", turn.text];
  return ["waiting", "for the model's answer…"];
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
    scope: h("span", { class: "anb-scope", title: "the run the tabs show (pick another in Runs)" }),
    routed: h("span", { class: "anb-routed", hidden: true }),
    charge: h("span", { class: "anb-in-charge", hidden: true }),
    prev: h("button", { type: "button", class: "anb-prev", "aria-label": "previous turn", title: "previous turn", "data-fkey": "prev", onclick: actions.prev }, "◀"),
    next: h("button", { type: "button", class: "anb-next", "aria-label": "next turn", title: "next turn", "data-fkey": "next", onclick: actions.next }, "▶"),
  };
  parts.node = h("div", { class: "anb-header" }, parts.name, parts.model, parts.pos, parts.status, parts.tokens, parts.routed, parts.scope, parts.charge, h("span", { class: "anb-stepper" }, parts.prev, parts.next));
  return parts;
}

function buildAnswer(onToggle) {
  const parts = {
    message: h("span", { class: "anb-message", title: "user message" }),
    label: h("span", { class: "anb-label" }),
    text: h("span", { class: "anb-text" }),
    box: h("div", { class: "anb-answer-box" }),
    // A long answer scrolls in the box, or shows whole (the box's fixed height keeps streaming
    // from shifting the layout below it).
    toggle: h("button", { type: "button", class: "anb-answer-toggle", "data-fkey": "answer-toggle", hidden: true, onclick: onToggle }),
  };
  parts.node = h("div", { class: "anb-answer", "aria-live": "polite" }, parts.box, parts.toggle);
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

/** The tab a view opens on: the one its widget names (an evaluation case: Checks, or Compare for a
 * flipped case), else Prompt. */
export function openingTab(model) {
  const wanted = typeof model.get === "function" ? model.get(WIRE.TRAIT_TAB) : null;
  return TABS.some((t) => t.id === wanted) ? wanted : "prompt";
}

class InspectorView {
  constructor(model, el, backlog) {
    this.model = model;
    this.store = createStore(model, { backlog });
    this.images = new Images(model, this.store);
    this.view = {
      tab: openingTab(model),
      selected: null, // null: follow the newest turn
      call: null, // model call picked in Prompt / Request (null: the last)
      open: new Set(), // keys of <details> the user opened (tree pointers, tools.js toolKey, …)
      closed: new Set(), // … and closed
      shown: new Map(), // tree pointer -> number of children shown
      full: new Set(), // long texts and lists shown in full
      previewInput: null,
      editing: false, // the State tab shows edit buttons
      editPath: null, // where an editor is open (a JSON pointer, "" for a new key)
      editTarget: null,
      editSent: false,
      editText: "",
      editKey: "",
      editError: null,
      askedNext: false,
      answerOpen: false, // the answer box shows a long answer whole
      compareSides: null, // the turns picked in Compare (null: the default pair)
      scope: null, // the run of the selected turn's tree the tabs show (null: the turn itself)
      compareAsked: null,
      nonce: 0, // bumped by the user's actions on a panel, to rebuild it
      cards: new Map(), // pending card id -> what the person is editing or typing in it (cards.js)
      images: this.images, // the pictures of the images shown, asked for when shown (images.js)
    };
    this.drawn = { header: null, answer: null, panel: null, panelView: null, builds: 0, scrollTop: 0 };
    this.header = buildHeader({ prev: () => this.select(this.turnIndex() - 1), next: () => this.select(this.turnIndex() + 1) });
    this.answer = buildAnswer(() => {
      this.view.answerOpen = !this.view.answerOpen;
      this.drawn.answer = null;
      this.draw();
    });
    this.tabs = buildTabs((id) => {
      this.view.tab = id;
      this.draw();
    });
    this.panel = h("div", {
      class: "anb-panel",
      role: "tabpanel",
      tabindex: "-1",
      onscroll: () => this.scrolled(),
      // At the top already, a scroll up moves nothing (no scroll event): the wheel says it.
      onwheel: (ev) => {
        if (ev.deltaY < 0 && this.panel.scrollTop === 0) {
          this.drawn.scrollTop = 1;
          this.scrolled();
        }
      },
    });
    this.errorLine = h("div", { class: "anb-error-line", role: "status" });
    this.cards = new Cards(this);
    this.root = h("div", { class: "anb-root" }, this.header.node, this.cards.node, this.answer.node, this.tabs.node, this.panel, this.errorLine);
    el.appendChild(this.root);
  }

  turnIndex() {
    const turns = this.store.turns;
    if (!turns.length) return null;
    return this.view.selected === null ? turns.length - 1 : Math.min(this.view.selected, turns.length - 1);
  }

  current() {
    return this.store.turns.length ? this.store.turnAt(this.turnIndex()) : null;
  }

  /** Apply a change the user made to what the view shows, and redraw its panel. */
  update(change) {
    change();
    this.view.nonce += 1;
    this.draw();
  }

  select(index) {
    this.update(() => {
      this.view.selected = index >= this.store.turns.length - 1 ? null : Math.max(0, index);
      this.view.call = null;
      this.view.scope = null;
    });
  }

  ctx(turn) {
    const scope = (runId) => {
      this.view.scope = runId;
      this.view.call = null;
    };
    const shown = this.shownRun(turn);
    return { store: this.store, view: this.view, turn: this.scoped(turn, shown), team: turn, shown, update: (change) => this.update(change), select: (index) => this.select(index), scope };
  }

  /** The id of the run of ``turn``'s tree the tabs show: the one picked in Runs, else the run a
   * routed turn went to (the agent in charge answered it), else null (the turn itself). */
  shownRun(turn) {
    if (!turn) return null;
    if (this.view.scope) return this.view.scope;
    const routed = routedOf(turn);
    return routed ? routed.run_id : null;
  }

  /** The run the tabs show: the turn, or the run ``runId`` of its tree (asked for once). */
  scoped(turn, runId) {
    if (!turn || !runId || (turn.runTree && turn.runTree.run_id === runId)) return turn;
    const held = this.store.scoped;
    if (held && held.runId === runId && held.parentTurn === turn.index) return held;
    this.store.needRun(turn.index, runId);
    return turn;
  }

  draw() {
    const { root, store, model } = this;
    const active = root.contains(document.activeElement) ? document.activeElement : null;
    const focusKey = active ? active.getAttribute("data-fkey") : null;
    const turn = this.current();
    const ctx = this.ctx(turn);
    if (turn && !turn.loaded && turn.state === undefined) store.needTurn(turn.index);
    root.setAttribute("data-agent", model.get(WIRE.TRAIT_AGENT));
    root.setAttribute("data-turn", turn ? turn.index : "");
    root.setAttribute("data-status", turn ? turn.status : "idle");
    for (const [name, count] of Object.entries(store.applied)) root.setAttribute("data-applied-" + name, count);
    this.drawHeader(turn, ctx.turn);
    this.cards.draw();
    this.drawScope(ctx);
    this.drawAnswer(ctx.turn);
    this.drawTabs(ctx);
    this.drawPanel(ctx);
    root.setAttribute("data-panel-builds", this.drawn.builds);
    this.errorLine.textContent = store.offline ? "Not live: " + store.offline + ", so this shows what the inspector last received. " + whatToDo(store.offline) : store.error ? "inspector: " + store.error : "";
    this.errorLine.className = "anb-error-line" + (store.offline ? " anb-offline" : "");
    root.setAttribute("data-connected", store.offline ? "false" : "true");
    // A rebuilt panel dropped the focused element: focus its counterpart in the new panel.
    if (focusKey && !root.contains(document.activeElement)) root.querySelector('[data-fkey="' + CSS.escape(focusKey) + '"]')?.focus();
  }

  /** The header: the agent, its model, the turn's place, and the status, time and tokens of the
   * run the tabs show (``shown``: the turn, or a member run picked in Runs, or the run a routed
   * turn went to). */
  drawHeader(turn, shown) {
    const { header, model, store } = this;
    const info = model.get(WIRE.TRAIT_MODEL) || {};
    const index = this.turnIndex();
    const total = store.turns.length;
    const routed = routedOf(turn);
    const run = shown || turn;
    const charge = inCharge(model);
    const key = JSON.stringify([model.get(WIRE.TRAIT_AGENT), info, index, total, store.offline, charge, routed, run && [run.runId, run.status, run.error, run.durationMs, run.usage, run.replayed, run.loaded]]);
    if (key === this.drawn.header) return;
    this.drawn.header = key;
    header.name.textContent = model.get(WIRE.TRAIT_AGENT);
    header.model.className = "anb-model anb-model-" + String(info.kind || "model").replace(/[^a-z]/g, "");
    header.model.title = "model kind: " + (info.kind || "?") + (info.origin ? ", chosen: " + info.origin : "");
    header.model.textContent = modelText(info);
    header.pos.textContent = total ? "turn " + (index + 1) + " of " + total : "no turns";
    this.drawClock(run);
    // A routed turn's own record holds no model call: until the run it went to is loaded, its
    // summary says what that run used.
    const waiting = routed && run === turn;
    const usage = waiting && routed.usage ? routed.usage : run ? run.usage : null;
    // No count before the first model response: "0 tok" would read as a measurement.
    const counted = run && !(waiting && !routed.usage) && (run.status !== "running" || usage.input + usage.output > 0);
    const calls = run && !waiting ? run.calls.filter(Boolean).length || (run.loaded ? 0 : null) : null;
    header.tokens.textContent = counted ? tokensText(usage) + " used" + (calls > 1 ? " · " + calls + " calls" : "") : "";
    header.tokens.title = counted ? usageTitle(usage, calls) + (run && run.runId ? " (of the run shown: " + run.breadcrumb + ")" : "") : "";
    header.routed.hidden = !routed;
    header.routed.textContent = routed ? "→ routed to " + routed.agent : "";
    attr(header.routed, "title", routed ? routed.agent + " was in charge (an earlier handoff left it answering): this turn went straight to it, with no model call of " + model.get(WIRE.TRAIT_AGENT) + "'s; the tabs show " + routed.agent + "'s run" : null);
    header.charge.hidden = !charge;
    header.charge.textContent = charge ? "in charge: " + charge : "";
    attr(header.charge, "title", charge ? "a handoff left " + charge + " in charge: " + model.get(WIRE.TRAIT_AGENT) + "'s next message goes to it" : null);
    header.prev.disabled = !total || index === 0;
    header.next.disabled = !total || index === total - 1;
  }

  /** The breadcrumb of the run the tabs show. */
  drawScope(ctx) {
    const text = ctx.turn && ctx.turn.runId ? "▸ " + ctx.turn.breadcrumb : "";
    if (this.header.scope.textContent !== text) this.header.scope.textContent = text;
  }

  drawClock(turn) {
    const offline = this.store.offline;
    const [status, text] = statusOf(turn, Date.now(), offline);
    this.header.status.className = "anb-status anb-status-" + status;
    this.header.status.textContent = text;
    attr(this.header.status, "title", offline ? offline + ": this is what the inspector last received" : turn && turn.replayed ? "answered from the recording beside the notebook" : null);
  }

  /** The message and answer line of the run the tabs show (a member run's task and answer). */
  drawAnswer(turn) {
    const answer = this.answer;
    const key = turn ? [turn.index, turn.runId || "", turn.status, turn.v.text, turn.v.summary, turn.v.tools, this.store.version.epoch].join("|") : "";
    if (key === this.drawn.answer) return;
    this.drawn.answer = key;
    clear(answer.box);
    answer.node.className = "anb-answer" + (this.view.answerOpen ? " anb-answer-open" : "");
    answer.toggle.hidden = true;
    if (!turn) return;
    let [label, text] = ["answer", turn.content ?? ""];
    if (turn.status === "running") {
      answer.node.classList.add("anb-answer-live");
      [label, text] = liveAnswer(turn);
    } else if (turn.status === "failed") {
      answer.node.classList.add("anb-answer-failed");
      [label, text] = [turn.errorType || "error", turn.error || ""];
    } else if (turn.status === "paused") {
      [label, text] = ["paused", "waits for a person: " + ((turn.waiting || []).map((i) => (i.tool ? i.tool : "model call " + (i.call + 1)) + " (" + i.kind + ")").join(", ") || "see the cards above")];
    }
    answer.message.textContent = "» " + short(turn.message, 120);
    attr(answer.message, "title", turn.runId ? "the task " + turn.breadcrumb + " was given" : "user message");
    answer.label.textContent = label;
    answer.text.textContent = text;
    append(answer.box, [answer.message, answer.label, answer.text]);
    if (turn.status === "ok" && turn.finishReason === "length") {
      answer.node.classList.add("anb-answer-cut");
      append(answer.box, [h("span", { class: "anb-cut", title: "finish_reason: length — raise the model's max_tokens for the whole answer" }, CUT_MARK)]);
    }
    this.fitAnswer();
  }

  /** Offer "show all" when the answer overflows its box (or "fold" when it is shown whole). */
  fitAnswer() {
    const { box, toggle } = this.answer;
    const open = this.view.answerOpen;
    toggle.hidden = !(open || box.scrollHeight > box.clientHeight + 2);
    toggle.textContent = open ? "fold ▴" : "show all ▾";
    toggle.setAttribute("aria-expanded", open ? "true" : "false");
  }

  drawTabs(ctx) {
    for (const tab of TABS) {
      const button = this.tabs.buttons.get(tab.id);
      const selected = this.view.tab === tab.id;
      const idle = tab.idle ? tab.idle(ctx) : null;
      const text = tab.label + (tab.count ? tab.count(ctx) : "");
      if (button.textContent !== text) button.textContent = text;
      button.className = "anb-tab" + (selected ? " anb-tab-selected" : "") + (idle ? " anb-tab-idle" : "");
      attr(button, "title", idle);
      button.setAttribute("aria-selected", selected ? "true" : "false");
      button.setAttribute("tabindex", selected ? "0" : "-1");
    }
  }

  drawPanel(ctx) {
    const { panel, drawn, store, view } = this;
    const tab = TABS.find((t) => t.id === view.tab);
    const turn = ctx.turn;
    const noTurn = tab.needsTurn && !turn;
    const key = JSON.stringify([tab.id, turn ? turn.index : -1, turn ? turn.runId || "" : "", store.version.epoch, view.nonce, noTurn ? null : tab.inputs(ctx)]);
    if (key === drawn.panel) return;
    // Same tab and turn: a redraw of what the user is looking at, so keep the scroll position,
    // and the first row in sight where it was (rows added above it do not push it away).
    const shows = tab.id + ":" + (turn ? turn.index : -1);
    const same = drawn.panelView === shows;
    const top = same ? panel.scrollTop : 0;
    const anchor = same ? firstInSight(panel) : null;
    drawn.panel = key;
    drawn.panelView = shows;
    drawn.builds += 1;
    clear(panel);
    panel.setAttribute("data-tab", tab.id);
    panel.appendChild(noTurn ? empty("No turns yet: run the agent (agent.run(...) or %%chat).") : tab.panel(ctx));
    panel.scrollTop = top;
    if (anchor) keepInPlace(panel, anchor);
    drawn.scrollTop = panel.scrollTop;
  }

  /** The panel scrolled: a scroll up to its top tells the tab (History lists earlier turns). */
  scrolled() {
    const { panel, drawn } = this;
    const up = panel.scrollTop < drawn.scrollTop;
    drawn.scrollTop = panel.scrollTop;
    const tab = TABS.find((t) => t.id === this.view.tab);
    if (up && panel.scrollTop <= TOP_PX && tab.onScrollTop) tab.onScrollTop(this.ctx(this.current()));
  }

  /** Follow the store and the traits until the returned function is called. */
  start() {
    let scheduled = null;
    const schedule = () => {
      if (scheduled !== null) return;
      scheduled = setTimeout(() => {
        scheduled = null;
        this.draw();
      }, DRAW_DELAY_MS);
    };
    const clock = setInterval(() => {
      const turn = this.current();
      if (turn && turn.status === "running") this.drawClock(turn);
      // Never wait for ever: a request left unanswered says so (a reply clears it).
      if (!this.store.offline && this.store.overdue(ANSWER_MS).length) this.store.lost(NO_ANSWER);
    }, CLOCK_MS);
    const unwatch = watchConnection(this.model, this.store);
    const unsubscribe = this.store.subscribe(schedule);
    // The answer box's size is known once the view is in the page, and changes with its width.
    const resized = typeof ResizeObserver === "undefined" ? null : new ResizeObserver(() => this.fitAnswer());
    if (resized) resized.observe(this.answer.box);
    this.model.on("change:" + WIRE.TRAIT_AGENT, schedule);
    this.model.on("change:" + WIRE.TRAIT_MODEL, schedule);
    this.model.on("change:" + TREE_WIRE.IN_CHARGE, schedule);
    this.draw();
    return () => {
      clearInterval(clock);
      this.cards.dispose();
      unwatch();
      if (resized) resized.disconnect();
      if (scheduled !== null) clearTimeout(scheduled);
      unsubscribe();
      this.images.dispose();
      this.model.off("change:" + WIRE.TRAIT_AGENT, schedule);
      this.model.off("change:" + WIRE.TRAIT_MODEL, schedule);
      this.model.off("change:" + TREE_WIRE.IN_CHARGE, schedule);
      this.store.dispose();
    };
  }
}

/** The first element marked ``data-anchor`` that is in sight in ``panel``, and where. */
function firstInSight(panel) {
  const top = panel.getBoundingClientRect().top;
  for (const el of panel.querySelectorAll("[data-anchor]")) {
    const box = el.getBoundingClientRect();
    if (box.bottom > top) return { key: el.getAttribute("data-anchor"), at: box.top - top };
  }
  return null;
}

/** Scroll ``panel`` so that the element ``anchor`` names is where it was. */
function keepInPlace(panel, anchor) {
  const el = panel.querySelector('[data-anchor="' + CSS.escape(anchor.key) + '"]');
  if (el) panel.scrollTop += el.getBoundingClientRect().top - panel.getBoundingClientRect().top - anchor.at;
}

/** anywidget's render: draw the inspector into ``el``; returns the clean-up function. */
export function render({ model, el, backlog = [] }) {
  return new InspectorView(model, el, backlog).start();
}
