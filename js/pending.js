// What a view knows of the paused turn's pending cards (agentnb/ipython/pending_cards.py), and of
// the decisions it sent from them (agentnb/ipython/card_decisions.py). No DOM here: cards.js
// draws the cards from it.
//
// The kernel sends the cards whole (a "pending" message, and the snapshot's "pending" part) when
// the turn pauses and whenever a decision is taken, by this view, another view or Python. A card
// is shown while its turn is the last one and still paused the number of times the message says:
// the turn going on (run_resumed) hides them at once, and a new pause brings new ones. A decision
// goes out with a ticket; the kernel's reply carries it back, so only the view that asked shows a
// refusal ("already approved" from another tab, arguments that do not fit the schema).

import { NOT_CONNECTED } from "./store.js";
import { WIRE } from "./wire.js";

// The pending cards' wire names: must match agentnb/ipython/pending_cards.py's CARD_WIRE
// (tests/ipython/test_pending_cards.py checks it).
export const CARD_WIRE = {
  "PENDING": "pending",
  "DECIDE": "decide",
  "DECIDED": "decided",
  "DECIDE_FAILED": "decide_failed",
  "CHECK": "check_arguments",
  "CHECKED": "arguments_checked",
  "ITEMS": "items",
  "RUNS": "runs",
  "PAUSES": "pauses",
  "ITEM": "item",
  "VERDICT": "verdict",
  "ARGUMENTS": "arguments",
  "REQUEST": "request",
  "REASON": "reason",
  "ANSWER": "answer",
  "TICKET": "ticket",
  "RUN_ID": "run_id"
};

const KINDS = new Set([CARD_WIRE.PENDING, CARD_WIRE.DECIDED, CARD_WIRE.DECIDE_FAILED, CARD_WIRE.CHECKED]);

/** Whether a kernel message is about the pending cards. */
export const isCardMessage = (kind) => KINDS.has(kind);

let views = 0; // tickets are unique per view: another view's replies are not this one's

export class Pending {
  constructor(store) {
    this.store = store;
    this.message = null; // the last "pending" message: {turn, run_id, pauses, items}
    this.view = "v" + ++views + Math.random().toString(36).slice(2, 8);
    this.count = 0;
    this.tickets = new Map(); // ticket -> item id, for the decisions and checks sent
    this.sent = new Map(); // item id -> {verdict, note, error} of this view's last decision
    this.checks = new Map(); // item id -> {text, error, ok} the kernel's check of typed arguments
  }

  /** Take the cards of a "pending" message (or a snapshot's part: null when nothing waits). */
  take(msg) {
    const next = msg && Array.isArray(msg[CARD_WIRE.ITEMS]) && msg[CARD_WIRE.ITEMS].length ? msg : null;
    // A snapshot after each cell brings the same cards again: nothing to redraw (an editor open
    // in a card keeps its caret).
    if (JSON.stringify(next) === JSON.stringify(this.message)) return;
    this.message = next;
    const ids = new Set(this.items().map((c) => c.id));
    for (const id of [...this.sent.keys()]) if (!ids.has(id)) this.sent.delete(id);
    this.store.version.cards += 1;
  }

  /** Take one message about the cards; returns whether anything changed. */
  receive(msg) {
    const kind = msg[WIRE.KIND];
    if (kind === CARD_WIRE.PENDING) {
      this.take(msg);
      return true;
    }
    const ticket = msg[CARD_WIRE.TICKET];
    const item = this.tickets.get(ticket);
    if (item === undefined) return false; // another view's request
    this.tickets.delete(ticket);
    if (kind === CARD_WIRE.CHECKED) {
      const typed = this.checks.get(item);
      if (!typed || typed.text !== msg[CARD_WIRE.ARGUMENTS]) return false; // typed on since
      this.checks.set(item, { text: typed.text, error: msg[WIRE.TEXT] ?? null, ok: msg[WIRE.TEXT] === null || msg[WIRE.TEXT] === undefined });
      return true; // shown in place (cards.js): the cards are not rebuilt under the caret
    } else if (kind === CARD_WIRE.DECIDED) {
      this.sent.set(item, { verdict: msg[CARD_WIRE.VERDICT], note: msg[WIRE.TEXT], error: null, sending: false });
    } else {
      this.sent.set(item, { verdict: null, note: null, error: msg[WIRE.TEXT], sending: false });
    }
    this.store.version.cards += 1;
    return true;
  }

  items() {
    return this.message ? this.message[CARD_WIRE.ITEMS] : [];
  }

  /** What led ``card``'s item to wait: its run's state as it paused and the prompt, as
   * {state, prompt, earlier} (said once for the items of one response). */
  ledTo(card) {
    const runs = (this.message && this.message[CARD_WIRE.RUNS]) || {};
    return Object.prototype.hasOwnProperty.call(runs, card.run_id) ? runs[card.run_id] : {};
  }

  /** The cards to show: those of the last turn while it is paused as the message says. */
  shown(turns) {
    const msg = this.message;
    if (!msg) return [];
    const turn = turns[turns.length - 1];
    if (!turn || turn.index !== msg[WIRE.TURN_INDEX] || turn.status !== "paused") return [];
    if (turn.loaded && turn.pauses !== msg[CARD_WIRE.PAUSES]) return [];
    return msg[CARD_WIRE.ITEMS];
  }

  ticket(item) {
    const ticket = this.view + ":" + ++this.count;
    this.tickets.set(ticket, item);
    return ticket;
  }

  /**
   * Send a decision about ``item`` (a card): ``verdict`` approve, edit, reject or answer, with
   * ``fields`` ({arguments} or {request} as JSON text, {reason}, {answer}). False when the kernel
   * cannot be reached.
   */
  decide(item, verdict, fields = {}) {
    const msg = this.message;
    if (!msg || this.store.offline === NOT_CONNECTED) return false;
    const out = { [WIRE.KIND]: CARD_WIRE.DECIDE, [WIRE.TURN_INDEX]: msg[WIRE.TURN_INDEX], [CARD_WIRE.RUN_ID]: msg[CARD_WIRE.RUN_ID], [CARD_WIRE.ITEM]: item.id, [CARD_WIRE.VERDICT]: verdict };
    for (const [name, value] of Object.entries(fields)) out[CARD_WIRE[name.toUpperCase()]] = value;
    out[CARD_WIRE.TICKET] = this.ticket(item.id);
    this.sent.set(item.id, { verdict, note: null, error: null, sending: true });
    this.store.version.cards += 1;
    const ok = this.store.send(out);
    if (!ok) this.sent.delete(item.id);
    this.store.changed();
    return ok;
  }

  /** Ask the kernel whether ``text`` (the arguments typed) fits ``item``'s tool's schema. */
  check(item, text) {
    const msg = this.message;
    if (!msg || this.store.offline === NOT_CONNECTED) return;
    this.checks.set(item.id, { text, error: null, ok: null });
    this.store.send({ [WIRE.KIND]: CARD_WIRE.CHECK, [WIRE.TURN_INDEX]: msg[WIRE.TURN_INDEX], [CARD_WIRE.RUN_ID]: msg[CARD_WIRE.RUN_ID], [CARD_WIRE.ITEM]: item.id, [CARD_WIRE.ARGUMENTS]: text, [CARD_WIRE.TICKET]: this.ticket(item.id) });
  }
}

/** What a card says when the kernel that paused its turn is gone: how to decide from a cell. */
export function goneText(agent, card, index) {
  const how =
    card.kind === "question" || card.kind === "external"
      ? agent + ".pending[" + index + "].answer(...) then %agentnb continue " + agent
      : "%agentnb approve " + agent + " " + card.id + (card.tool ? " (or %agentnb reject " + agent + " " + card.id + " --reason WHY)" : "") + ", then %agentnb continue " + agent;
  return "The kernel that paused this turn is gone: re-run the %%agent cell (and %agentnb resume " + agent + ") to reload the session, then decide with " + how + ".";
}

/** The call a card is about, in one line: ``charge({"amount":250})`` or ``model call 2``. */
export function callText(card) {
  return card.tool ? card.tool + "(" + JSON.stringify(card.arguments ?? {}) + ")" : "model call " + (card.call + 1);
}

/** What a decision taken about a card reads as ("approved by person"). */
export function decisionText(decision) {
  if (!decision) return "";
  const extra = decision.verdict === "rejected" && decision.reason ? ": " + decision.reason : decision.verdict === "answered" ? ": " + JSON.stringify(decision.value) : decision.verdict === "edited" && decision.arguments ? ": " + JSON.stringify(decision.arguments) : "";
  return decision.verdict + (decision.by ? " by " + decision.by : "") + extra;
}
