// Feeds a store the kernel's messages as a view receives them, and prints what it ends with
// (tests/ipython/test_inspector_throttle.py compares a throttled kernel's stream with an unthrottled one).
//
//   node js/test/replay.js < {"snapshot": {...}, "messages": [...], "turns": {"3": turn reply}}
//
// Every turn the store holds only as a row is then fetched, as showing it would: "turns" holds
// the kernel's reply to need_turn for each. Printed: each turn's parts a user sees (not the
// clocks, nor streamed text, which a turn loaded from its record does not repeat).

import { readFileSync } from "node:fs";

import { createStore } from "../store.js";
import { WIRE } from "../wire.js";
import { Model } from "./model.js";

const input = JSON.parse(readFileSync(0, "utf8"));
const model = new Model({ [WIRE.TRAIT_SNAPSHOT]: input.snapshot });
const store = createStore(model);
// A message {"trait": snapshot} is the kernel setting the snapshot trait (at a cell's end).
for (const message of input.messages) {
  if (message.trait) model.setTrait(WIRE.TRAIT_SNAPSHOT, message.trait);
  else model.receive(message);
}
const rows = store.turns.filter((t) => !t.loaded).map((t) => t.index);
for (const index of rows) {
  store.needTurn(index);
  model.receive(input.turns[String(index)]);
}

const tool = (t) => ({ id: t.id, name: t.name, arguments: t.arguments, result: t.result, error: t.error, done: t.done, changed_keys: t.changed_keys, hooks: (t.hooks || []).map((h) => [h.name, h.outcome]) });
const call = (c) => c && { call: c.call, messages: c.messages, tools: c.tools, content: c.response ? c.response.content : null };
const turn = (t) => ({
  index: t.index,
  loaded: t.loaded,
  status: t.status,
  message: t.message,
  model: t.model,
  content: t.content,
  error: t.error,
  errorType: t.errorType,
  usage: t.usage,
  replayed: t.replayed,
  toolCount: t.toolCount,
  prompt: t.prompt,
  calls: t.calls.map(call),
  tools: t.tools.map(tool),
  patches: t.patches,
  changes: t.changes,
  context: t.context.length,
  contextCount: t.contextCount,
  contextBlocks: t.contextBlocks,
  state: t.state,
  promptTokens: t.promptTokens,
  stateTokens: t.stateTokens,
  tokensExact: t.tokensExact,
});
process.stdout.write(JSON.stringify({ seq: store.seq, asked: model.sent, fetched: rows, applied: store.applied, turns: store.turns.map(turn) }));
