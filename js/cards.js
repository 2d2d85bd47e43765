// The pending cards at the top of the inspector: one per item the paused turn waits for, with the
// call and its arguments, why it waits, the state it would act on and the prompt that led to it,
// and the person's buttons — Approve, Edit & approve, Reject (with a reason), Answer. What the
// cards hold and send is js/pending.js's; everything from the model, a tool or the state is text.
//
// The region is rebuilt only when what it shows changes; typing in a card's editor or reason box
// redraws nothing (the text is kept in the view's state), and the kernel's check of arguments
// being typed updates its note in place, so the caret stays where it is.

import { clear, disclosure, h } from "./dom.js";
import { jsonEditor, notJSON } from "./editor.js";
import { pretty } from "./format.js";
import { callText, decisionText, goneText } from "./pending.js";
import { NOT_CONNECTED } from "./store.js";
import { jsonBlock, messageView, requestView } from "./tabs/parts.js";
import { WIRE } from "./wire.js";

const CHECK_DELAY_MS = 250; // arguments typed are checked this long after the last keystroke
const LONG_CALL = 100; // a call longer than this in one line is shown indented too

const KIND_TEXT = { approval: "approval", question: "question", external: "external result", breakpoint: "breakpoint" };

/** The state a card's text was given as (compact JSON, maybe cut), indented when it is whole. */
function stateText(text) {
  try {
    return pretty(JSON.parse(text));
  } catch (err) {
    return String(text ?? "");
  }
}

export class Cards {
  constructor(inspector) {
    this.inspector = inspector; // the InspectorView: store, view state, model, redraw
    this.node = h("section", { class: "anb-cards", "aria-label": "decisions this turn waits for", hidden: true });
    this.drawn = null;
    this.timers = new Map();
  }

  /** The card's own state in the view (what is being edited or typed), kept across redraws. */
  local(id) {
    const cards = this.inspector.view.cards;
    if (!cards.has(id)) cards.set(id, { mode: null, text: "", reason: "", answer: "", error: null });
    return cards.get(id);
  }

  redraw(change) {
    if (change) change();
    this.drawn = null;
    this.inspector.draw();
  }

  draw() {
    const { store, model } = this.inspector;
    const items = store.pending.shown(store.turns);
    const local = items.map((c) => this.local(c.id));
    const key = JSON.stringify([items, store.offline, store.version.cards, local.map((l) => [l.mode, l.error])]);
    if (key !== this.drawn) {
      this.drawn = key;
      clear(this.node);
      this.node.hidden = !items.length;
      if (items.length) {
        const open = items.filter((c) => !c.decision).length;
        this.node.appendChild(h("div", { class: "anb-cards-head" }, "‖ This turn waits for you: " + (open ? open + " of " + items.length + " item(s) to decide" : "every item is decided")));
        items.forEach((card, i) => this.node.appendChild(this.card(card, i, model.get(WIRE.TRAIT_AGENT))));
      }
    }
    this.showChecks(items);
  }

  /** Put the kernel's checks of the arguments being typed into their notes. */
  showChecks(items) {
    const checks = this.inspector.store.pending.checks;
    for (const card of items) {
      const note = this.node.querySelector('.anb-card-check[data-item="' + CSS.escape(card.id) + '"]');
      if (!note) continue;
      const local = this.local(card.id);
      const check = checks.get(card.id);
      const bad = notJSON(local.text);
      const current = check && check.text === local.text;
      note.textContent = bad ? bad : !current || check.ok === null ? "checking against the schema of " + card.tool + "…" : check.ok ? "✓ fits the schema of " + card.tool : check.error;
      note.className = "anb-card-check" + (bad || (current && check.ok === false) ? " anb-bad" : current && check.ok ? " anb-good" : "");
    }
  }

  card(card, index, agent) {
    const { store, view } = this.inspector;
    const sent = store.pending.sent.get(card.id);
    const gone = store.offline === NOT_CONNECTED;
    const call = callText(card);
    const head = h(
      "div",
      { class: "anb-card-head" },
      h("span", { class: "anb-badge anb-card-kind" }, KIND_TEXT[card.kind] || card.kind),
      card.kind === "question" ? h("span", { class: "anb-label" }, "the model asks you") : h("code", { class: "anb-card-call" }, call),
      card.path && card.path.length > 1 ? h("span", { class: "anb-card-path", title: "the team member whose run waits" }, "member " + card.path.join(" ▸ ")) : null,
      h("span", { class: "anb-card-id", title: "its id: %agentnb approve " + agent + " " + card.id }, card.id),
    );
    const attrs = { class: "anb-card anb-card-" + card.kind + (card.decision ? " anb-card-done" : ""), "data-item": card.id, "data-kind": card.kind };
    if (card.decision) {
      // Decided: one line, out of the way of the items still waiting.
      const note = sent && sent.note ? " — " + sent.note : "";
      const refused = sent && sent.error ? h("div", { class: "anb-card-error", role: "alert" }, sent.error) : null;
      return h("div", attrs, head, h("div", { class: "anb-card-decided", role: "status" }, "✓ " + decisionText(card.decision) + note), refused);
    }
    const body = [head];
    if (card.kind === "question") body.push(h("div", { class: "anb-card-asks" }, card.reason));
    else body.push(h("div", { class: "anb-card-reason" }, h("span", { class: "anb-label" }, "why it waits "), card.reason));
    // Long arguments read better indented than in the one line above.
    if (card.tool && card.kind !== "question" && call.length > LONG_CALL) body.push(jsonBlock(card.arguments ?? {}));
    const more = [];
    const led = store.pending.ledTo(card);
    if (card.request) more.push(disclosure(view, "card-request:" + card.id, { attrs: { class: "anb-card-more anb-card-request" }, open: true, summary: h("summary", {}, "the request about to go"), fill: () => requestView(view, "card-request-view:" + card.id, card.request) }));
    if (led.state !== undefined) more.push(disclosure(view, "card-state:" + card.id, { attrs: { class: "anb-card-more anb-card-state" }, summary: h("summary", {}, "the state it would act on"), fill: () => h("pre", { class: "anb-pre" }, stateText(led.state)) }));
    // A breakpoint's request holds the prompt already.
    if (!card.request && led.prompt && led.prompt.length) {
      const prompt = led.prompt;
      const earlier = led.earlier ? " (and " + led.earlier + " of earlier turns, not shown)" : "";
      more.push(disclosure(view, "card-prompt:" + card.id, { attrs: { class: "anb-card-more anb-card-prompt" }, summary: h("summary", {}, "the prompt that led to it: " + prompt.length + " message(s)" + earlier), fill: () => prompt.map((m, i) => messageView(view, "card-prompt:" + card.id + ":" + i, m, i === prompt.length - 1)) }));
    }
    body.push(h("div", { class: "anb-card-context" }, more));
    if (gone) body.push(h("div", { class: "anb-card-gone", role: "alert" }, goneText(agent, card, index)));
    body.push(this.actions(card, gone, sent));
    if (sent && sent.sending) body.push(h("div", { class: "anb-card-note", role: "status" }, "sending the decision to the kernel…"));
    if (sent && sent.error) body.push(h("div", { class: "anb-card-error", role: "alert" }, sent.error));
    return h("div", attrs, body);
  }

  /** The buttons, or the editor / reason / answer box the person opened. */
  actions(card, gone, sent) {
    const local = this.local(card.id);
    const pending = this.inspector.store.pending;
    const busy = gone || Boolean(sent && sent.sending);
    const fkey = "card-" + card.id;
    const button = (cls, text, onclick, title) => h("button", { type: "button", class: cls, "data-fkey": fkey + "-" + cls, disabled: busy, title, onclick }, text);
    const open = (mode, text = "") => {
      this.redraw(() => Object.assign(local, { mode, text, error: null }));
      // The box the person opened takes the focus (and comes into sight in a long list of cards).
      this.node.querySelector('[data-fkey="' + CSS.escape(fkey + (mode === "edit" ? "-edit-text" : "-reason")) + '"]')?.focus();
    };
    const cancel = () => this.redraw(() => Object.assign(local, { mode: null, error: null }));
    if (local.mode === "edit") {
      const isRequest = !card.tool;
      return jsonEditor({
        text: local.text,
        label: isRequest ? "the request as JSON" : "arguments as JSON",
        applyLabel: isRequest ? "approve with this request" : "approve with these arguments",
        hint: "JSON · Ctrl+Enter approves" + (isRequest ? "" : " · checked against the tool's schema as you type"),
        error: local.error,
        note: isRequest ? null : h("span", { class: "anb-card-check", "data-item": card.id, "aria-live": "polite" }),
        fkey: fkey + "-edit",
        attrs: { "data-item": card.id },
        onInput: (text) => {
          local.text = text;
          if (!isRequest) this.checkSoon(card, text);
        },
        onApply: (text) => {
          local.text = text;
          const bad = notJSON(text);
          if (bad) return this.redraw(() => (local.error = bad));
          local.error = null;
          pending.decide(card, "edit", isRequest ? { request: text } : { arguments: text });
        },
        onCancel: cancel,
      });
    }
    if (local.mode === "reject") {
      const box = h("input", { type: "text", class: "anb-card-reason-input", "aria-label": "why (the model reads it)", placeholder: "why — the model reads it as the call's result", "data-fkey": fkey + "-reason", value: local.reason, disabled: busy });
      const send = () => (local.reason.trim() ? pending.decide(card, "reject", { reason: local.reason }) : this.redraw(() => (local.error = "write why: the model reads it")));
      box.addEventListener("input", () => (local.reason = box.value));
      box.addEventListener("keydown", (ev) => ev.key === "Enter" && send());
      return h("div", { class: "anb-card-actions anb-card-rejecting" }, box, button("anb-card-reject-send", "reject", send), button("anb-card-cancel", "cancel", cancel), local.error ? h("div", { class: "anb-edit-error", role: "alert" }, local.error) : null);
    }
    if (card.kind === "question" || card.kind === "external") {
      const box = h("textarea", { class: "anb-edit-text anb-card-answer-input", rows: "2", "aria-label": card.kind === "question" ? "your answer" : "the call's result", placeholder: card.kind === "question" ? "your answer (text)" : "the call's result (text)", "data-fkey": fkey + "-answer", disabled: busy, spellcheck: "true" });
      box.value = local.answer;
      box.addEventListener("input", () => (local.answer = box.value));
      return h("div", { class: "anb-card-actions anb-card-answering" }, box, button("anb-card-answer", "answer", () => pending.decide(card, "answer", { answer: local.answer })));
    }
    const editText = card.tool ? pretty(card.arguments ?? {}) : pretty(card.request ?? {});
    return h(
      "div",
      { class: "anb-card-actions" },
      button("anb-card-approve", "approve", () => pending.decide(card, "approve"), card.tool ? "run it as the model asked" : "send the request as it is"),
      button("anb-card-edit", "edit & approve", () => {
        open("edit", editText);
        if (card.tool) this.checkSoon(card, editText);
      }, card.tool ? "run it with arguments you edit (checked against the tool's schema)" : "send a request you edit"),
      card.tool ? button("anb-card-reject", "reject…", () => open("reject"), "do not run it; the model reads your reason") : null,
    );
  }

  /** Check the arguments typed once the typing pauses. */
  checkSoon(card, text) {
    clearTimeout(this.timers.get(card.id));
    this.timers.set(
      card.id,
      setTimeout(() => {
        if (!notJSON(text)) this.inspector.store.pending.check(card, text);
        this.showChecks(this.inspector.store.pending.shown(this.inspector.store.turns));
      }, CHECK_DELAY_MS),
    );
  }

  dispose() {
    for (const timer of this.timers.values()) clearTimeout(timer);
  }
}
