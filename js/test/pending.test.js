import assert from "node:assert/strict";
import test from "node:test";

import { CARD_WIRE, callText, decisionText, goneText } from "../pending.js";
import { PAUSED_NOTE, staticText } from "../saved.js";
import { NOT_CONNECTED, createStore } from "../store.js";
import { turnFromSummary } from "../turn.js";
import { WIRE } from "../wire.js";
import { Model, event, snapshot, started, summary, usage } from "./model.js";

const T = WIRE.TRAIT_SNAPSHOT;

const card = (id, customer, extra = {}) => ({ id, kind: "approval", tool: "charge", arguments: { customer, amount: 10 }, reason: "charge requires approval", path: ["pay"], run_id: "r1", call: 0, parameters: null, request: null, line: "[" + id + "] approval: charge(...)", decision: null, ...extra });
const paused = (items = [card("a1", "bob"), card("b2", "ann")]) => ({ kind: "run_paused", items: items.map(({ id, kind, tool, arguments: args, reason, call, path }) => ({ id, kind, tool, arguments: args, reason, call, path })), usage: usage(3, 2), duration_ms: 4 });
const led = { state: '{"charged": []}', prompt: [{ role: "user", content: "bob ann" }], earlier: 2 };
const pendingMessage = (items, pauses = 1) => ({ [WIRE.KIND]: CARD_WIRE.PENDING, [WIRE.TURN_INDEX]: 0, [CARD_WIRE.RUN_ID]: "r1", [CARD_WIRE.PAUSES]: pauses, [CARD_WIRE.ITEMS]: items, [CARD_WIRE.RUNS]: { r1: led } });

/** A view whose snapshot holds turn 1 paused on two charges, with their cards. */
function pausedView() {
  const items = [card("a1", "bob"), card("b2", "ann")];
  const snap = snapshot({ seq: 4, turns: [summary(0, { status: "paused", content: null, pauses: 1, resumed: 0 })], turn: 0, events: [started("bob ann"), paused(items)], state: {} });
  snap[CARD_WIRE.PENDING] = pendingMessage(items);
  const model = new Model({ [T]: snap, [WIRE.TRAIT_AGENT]: "pay", [WIRE.TRAIT_MODEL]: { label: "scripted" } });
  return { model, store: createStore(model) };
}

/** The decision a view sent last. */
const lastSent = (model) => model.sent.filter((m) => m[WIRE.KIND] === CARD_WIRE.DECIDE || m[WIRE.KIND] === CARD_WIRE.CHECK).at(-1);

test("a snapshot of a paused turn brings its cards; the turn is paused with what it waits for", () => {
  const { store } = pausedView();
  const turn = store.turns[0];
  assert.equal(turn.status, "paused");
  assert.equal(turn.pauses, 1);
  assert.deepEqual(turn.waiting.map((i) => i.id), ["a1", "b2"]);
  assert.deepEqual(store.pending.shown(store.turns).map((c) => c.id), ["a1", "b2"]);
  // What led to both is their run's, held once.
  assert.deepEqual(store.pending.ledTo(store.pending.shown(store.turns)[1]), led);
  assert.deepEqual(store.pending.ledTo({ run_id: "elsewhere" }), {});
});

test("the same cards again (a snapshot after each cell) redraw nothing", () => {
  const { model, store } = pausedView();
  const version = store.version.cards;
  model.receive(pendingMessage([card("a1", "bob"), card("b2", "ann")]));
  assert.equal(store.version.cards, version);
  model.receive(pendingMessage([card("a1", "bob", { decision: { verdict: "approved", by: "person" } }), card("b2", "ann")]));
  assert.equal(store.version.cards, version + 1);
});

test("the turn going on hides the cards at once; a new pause shows only its own", () => {
  const { model, store } = pausedView();
  model.receive(event(5, 0, { kind: "run_resumed", decisions: [{ id: "a1", verdict: "approved", by: "person" }] }));
  assert.equal(store.turns[0].status, "running");
  assert.deepEqual(store.pending.shown(store.turns), []);
  model.receive(event(6, 0, paused([card("c3", "cy")])));
  // The old cards do not come back with the second pause: they belong to the first.
  assert.deepEqual(store.pending.shown(store.turns), []);
  model.receive(pendingMessage([card("c3", "cy")], 2));
  assert.deepEqual(store.pending.shown(store.turns).map((c) => c.id), ["c3"]);
  // A new turn (a paused one left behind) shows no card of the turn before.
  model.receive(event(7, 1, started("next")));
  assert.deepEqual(store.pending.shown(store.turns), []);
});

test("a decision goes out with the turn, the run and a ticket; only this view's refusal is shown", () => {
  const { model, store } = pausedView();
  const [bob] = store.pending.shown(store.turns);
  assert.equal(store.pending.decide(bob, "edit", { arguments: '{"customer": "bob", "amount": 5}' }), true);
  const sent = lastSent(model);
  assert.equal(sent[WIRE.KIND], CARD_WIRE.DECIDE);
  assert.equal(sent[WIRE.TURN_INDEX], 0);
  assert.equal(sent[CARD_WIRE.RUN_ID], "r1");
  assert.equal(sent[CARD_WIRE.ITEM], "a1");
  assert.equal(sent[CARD_WIRE.VERDICT], "edit");
  assert.equal(sent[CARD_WIRE.ARGUMENTS], '{"customer": "bob", "amount": 5}');
  assert.equal(store.pending.sent.get("a1").sending, true);
  // Another view's refusal of the same item: not this one's to show.
  model.receive({ [WIRE.KIND]: CARD_WIRE.DECIDE_FAILED, [CARD_WIRE.ITEM]: "a1", [CARD_WIRE.TICKET]: "someone-else:1", [WIRE.TEXT]: "no" });
  assert.equal(store.pending.sent.get("a1").error, null);
  model.receive({ [WIRE.KIND]: CARD_WIRE.DECIDE_FAILED, [CARD_WIRE.ITEM]: "a1", [CARD_WIRE.TICKET]: sent[CARD_WIRE.TICKET], [WIRE.TEXT]: "amount: must be integer" });
  assert.deepEqual(store.pending.sent.get("a1"), { verdict: null, note: null, error: "amount: must be integer", sending: false });
  // Taken: the kernel says so, and every view's cards carry the decision.
  store.pending.decide(bob, "approve");
  model.receive({ [WIRE.KIND]: CARD_WIRE.DECIDED, [CARD_WIRE.ITEM]: "a1", [CARD_WIRE.TICKET]: lastSent(model)[CARD_WIRE.TICKET], [CARD_WIRE.VERDICT]: "approved", [WIRE.TEXT]: "1 other item(s) still wait for a decision" });
  assert.equal(store.pending.sent.get("a1").note, "1 other item(s) still wait for a decision");
  model.receive(pendingMessage([card("a1", "bob", { decision: { verdict: "approved", by: "person" } }), card("b2", "ann")]));
  assert.equal(decisionText(store.pending.shown(store.turns)[0].decision), "approved by person");
});

test("tickets differ between views of one widget", () => {
  const one = pausedView();
  const other = createStore(one.model);
  one.store.pending.decide(one.store.pending.shown(one.store.turns)[0], "approve");
  other.pending.decide(other.pending.shown(other.turns)[0], "approve");
  const [a, b] = one.model.sent.filter((m) => m[WIRE.KIND] === CARD_WIRE.DECIDE).map((m) => m[CARD_WIRE.TICKET]);
  assert.notEqual(a, b);
});

test("arguments typed are checked by the kernel; a reply for text typed over since is dropped", () => {
  const { model, store } = pausedView();
  const [bob] = store.pending.shown(store.turns);
  store.pending.check(bob, '{"amount": "x"}');
  const first = lastSent(model);
  store.pending.check(bob, '{"amount": 3}');
  const second = lastSent(model);
  assert.equal(second[WIRE.KIND], CARD_WIRE.CHECK);
  model.receive({ [WIRE.KIND]: CARD_WIRE.CHECKED, [CARD_WIRE.ITEM]: "a1", [CARD_WIRE.TICKET]: first[CARD_WIRE.TICKET], [CARD_WIRE.ARGUMENTS]: '{"amount": "x"}', [WIRE.TEXT]: "amount: must be integer" });
  assert.equal(store.pending.checks.get("a1").ok, null); // still waiting for the current text's check
  model.receive({ [WIRE.KIND]: CARD_WIRE.CHECKED, [CARD_WIRE.ITEM]: "a1", [CARD_WIRE.TICKET]: second[CARD_WIRE.TICKET], [CARD_WIRE.ARGUMENTS]: '{"amount": 3}', [WIRE.TEXT]: null });
  assert.deepEqual(store.pending.checks.get("a1"), { text: '{"amount": 3}', error: null, ok: true });
});

test("with the kernel gone nothing is sent, and the card says how to decide from a cell", () => {
  const { model, store } = pausedView();
  store.lost(NOT_CONNECTED);
  const before = model.sent.length;
  assert.equal(store.pending.decide(store.pending.shown(store.turns)[0], "approve"), false);
  assert.equal(model.sent.length, before);
  assert.equal(
    goneText("pay", card("a1", "bob"), 0),
    "The kernel that paused this turn is gone: re-run the %%agent cell (and %agentnb resume pay) to reload the session, then decide with %agentnb approve pay a1 (or %agentnb reject pay a1 --reason WHY), then %agentnb continue pay.",
  );
  assert.match(goneText("pay", card("q1", "x", { kind: "question", tool: "ask_user" }), 2), /decide with pay\.pending\[2\]\.answer\(\.\.\.\) then %agentnb continue pay\.$/);
  assert.match(goneText("pay", card("m1", "x", { kind: "breakpoint", tool: null }), 0), /%agentnb approve pay m1, then %agentnb continue pay\.$/);
});

test("the call in one line, a breakpoint as its model call", () => {
  assert.equal(callText(card("a1", "bob")), 'charge({"customer":"bob","amount":10})');
  assert.equal(callText({ tool: null, call: 1 }), "model call 2");
  assert.equal(decisionText({ verdict: "rejected", reason: "paid in cash", by: "person" }), "rejected by person: paid in cash");
  assert.equal(decisionText({ verdict: "answered", value: "Lisbon", by: "person" }), 'answered by person: "Lisbon"');
});

test("History rows say a turn paused, and went on", () => {
  assert.equal(turnFromSummary(summary(0, { status: "paused", pauses: 1, resumed: 0 })).pauses, 1);
  const resumed = turnFromSummary(summary(1, { pauses: 2, resumed: 2 }));
  assert.deepEqual([resumed.pauses, resumed.resumed], [2, 2]);
  assert.deepEqual([turnFromSummary(summary(2)).pauses, turnFromSummary(summary(2)).resumed], [0, 0]);
});

test("a paused turn's static text lists what it waits for, as the kernel wrote each item", () => {
  const { model } = pausedView();
  model.traits[WIRE.TRAIT_ID] = "m1";
  const lines = staticText(model).split("\n");
  assert.deepEqual(lines.slice(-3), ["paused: " + PAUSED_NOTE, "  [a1] approval: charge(...)", "  [b2] approval: charge(...)"]);
  assert.ok(!lines.some((l) => l.startsWith("answer:")));
});
