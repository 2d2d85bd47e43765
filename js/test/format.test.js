import assert from "node:assert/strict";
import test from "node:test";

import { CUT_MARK, changeText, changeTitle, inputItem, pathLabel, short, tokensText, usageTitle } from "../format.js";
import { applyEvent, blankTurn, turnFromSummary } from "../turn.js";
import { change } from "./model.js";

test("a path shows its keys exactly as they are, escapes undone", () => {
  assert.equal(pathLabel("/<~1session_state>"), "</session_state>");
  assert.equal(pathLabel("/items/1"), "items › 1");
  assert.equal(pathLabel("/a~0b/Shopping List"), "a~b › Shopping List");
  assert.equal(pathLabel("not a pointer"), "not a pointer");
});

test("a change reads old → new; a removed one keeps its old value", () => {
  assert.equal(changeText(change("/count", "changed", { old: "1", now: "2" })), "1 → 2");
  assert.equal(changeText(change("/items/1", "added", { now: '"eggs"' })), '"eggs"');
  assert.equal(changeText(change("/items/1", "removed", { old: '"eggs"' })), '"eggs" (removed)');
  assert.equal(changeTitle(change("/count", "changed", { old: "null", now: "0", authors: ["hook:guard", "user"] })), "changed by hook:guard, user: null → 0");
});

test("short text and token counts", () => {
  assert.equal(short("abcdef", 4), "abc…");
  assert.equal(short(null, 4), "");
  assert.equal(tokensText({ input: 3, output: 4, estimated: true }), "≈7 tok");
  assert.equal(tokensText(null), "");
});

test("a Responses request's input items read as rows, reasoning items with what was sent of them", () => {
  const reasoning = { type: "reasoning", id: "rs_1", summary: [{ type: "summary_text", text: "Look it up." }], encrypted_content: "gAAAA-1-xyz" };
  assert.deepEqual(inputItem(reasoning), { role: "reasoning", content: "Look it up.", note: "sent back as rs_1 with its encrypted content (11 chars)" });
  assert.deepEqual(inputItem({ type: "reasoning", id: "rs_2", summary: [] }), { role: "reasoning", content: "(no summary)", note: "sent back as rs_2" });
  assert.deepEqual(inputItem({ type: "function_call", call_id: "c1", name: "lookup", arguments: '{"city":"Oslo"}' }), {
    role: "assistant",
    content: null,
    tool_calls: [{ id: "c1", function: { name: "lookup", arguments: '{"city":"Oslo"}' } }],
  });
  assert.deepEqual(inputItem({ type: "function_call_output", call_id: "c1", output: "sunny" }), { role: "tool", tool_call_id: "c1", content: "sunny" });
  assert.deepEqual(inputItem({ role: "developer", content: "Be brief." }), { role: "developer", content: "Be brief." });
  // A summary holding markup stays text: the rows show it with textContent.
  assert.equal(inputItem({ type: "reasoning", summary: [{ text: "<img src=x onerror=alert(1)>" }] }).content, "<img src=x onerror=alert(1)>");
  assert.equal(CUT_MARK, "answer cut at the token limit");
});

test("a turn knows when its answer was cut at the token limit, from its events or its History row", () => {
  const turn = blankTurn(0);
  applyEvent(turn, { kind: "model_responded", call: 0, content: "The three reasons are", tool_calls: [], finish_reason: "length", usage: { input: 1, output: 8, estimated: false } });
  assert.equal(turn.finishReason, "length");
  applyEvent(turn, { kind: "model_responded", call: 1, content: "ok", tool_calls: [], finish_reason: "stop", usage: { input: 1, output: 1, estimated: false } });
  assert.equal(turn.finishReason, "stop");
  assert.equal(turnFromSummary({ turn: 3, status: "ok", usage: { input: 0, output: 0, estimated: false }, finish_reason: "length" }).finishReason, "length");
  assert.equal(turnFromSummary({ turn: 3, status: "ok", usage: { input: 0, output: 0, estimated: false } }).finishReason, null);
});

test("a reasoning model's thinking is counted in the turn's usage and named in the token tooltip", () => {
  const turn = blankTurn(0);
  applyEvent(turn, { kind: "model_responded", call: 0, content: null, tool_calls: [], finish_reason: "tool_calls", usage: { input: 30, output: 40, estimated: false, reasoning: 32 } });
  applyEvent(turn, { kind: "model_responded", call: 1, content: "ok", tool_calls: [], finish_reason: "stop", usage: { input: 60, output: 12, estimated: false, reasoning: 4 } });
  assert.deepEqual(turn.usage, { input: 90, output: 52, estimated: false, reasoning: 36 });
  assert.match(usageTitle(turn.usage, 2), /90 in \+ 52 out, summed over its 2 model calls \(of the output, 36 reasoning\)\./);
  assert.match(usageTitle({ input: 1, output: 2, estimated: true }, 1), /its one model call \(estimated from text length\)/);
  assert.doesNotMatch(usageTitle({ input: 1, output: 2, estimated: false }, 1), /reasoning/);
  assert.equal(usageTitle(null), "");
});
