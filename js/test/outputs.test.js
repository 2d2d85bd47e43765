import assert from "node:assert/strict";
import test from "node:test";

import { OUTPUT_WIRE, errorMarks, jsonSegments, outputHead, outputOf, parseAnswer } from "../outputs.js";
import { NOT_CONNECTED, createStore } from "../store.js";
import { WIRE } from "../wire.js";
import { Model, event, finished, snapshot, started, summary } from "./model.js";

const T = WIRE.TRAIT_SNAPSHOT;

const checked = (attempt, ok, extra = {}) => ({ kind: "output_checked", call: attempt - 1, attempt, mode: "tool", ok, errors: [], output: null, text: "", tool_call_id: "c" + attempt, output_type: "Invoice", validators: [], ...extra });
const failedAttempt = checked(1, false, { text: '{"customer": "ann", "total": "forty"}', errors: [{ path: "/total", message: "Input should be a valid integer" }] });
const goodAttempt = checked(2, true, { text: '{"customer": "ann", "total": 40}', output: { customer: "ann", total: 40 } });

test("each answer checked joins its turn in order, and the head says how it went", () => {
  const model = new Model({ [T]: snapshot({ seq: 0, state: {} }) });
  const store = createStore(model);
  model.receive(event(1, 0, started()));
  const before = store.turns[0].v.output;
  model.receive(event(2, 0, failedAttempt));
  model.receive(event(3, 0, goodAttempt));
  model.receive(event(4, 0, finished('{"customer": "ann", "total": 40}')));
  const turn = store.turns[0];
  assert.deepEqual(turn.attempts.map((a) => [a.attempt, a.ok]), [[1, false], [2, true]]);
  assert.equal(turn.v.output, before + 2); // the Output tab redraws for each
  assert.equal(outputHead(turn.attempts), "Invoice · tool mode · 2 attempts (1 failed)");
  assert.equal(outputHead([goodAttempt]), "Invoice · tool mode · 1 attempt");
});

test("the schema and retry messages are asked for once per number of attempts held", () => {
  const model = new Model({ [T]: snapshot({ seq: 2, turns: [summary(0)], turn: 0, events: [started(), failedAttempt], state: {} }) });
  const store = createStore(model);
  const turn = store.turns[0];
  assert.equal(outputOf(store, turn), null);
  assert.equal(outputOf(store, turn), null);
  const asked = () => model.sent.filter((m) => m[WIRE.KIND] === OUTPUT_WIRE.NEED_OUTPUT);
  assert.deepEqual(asked(), [{ [WIRE.KIND]: OUTPUT_WIRE.NEED_OUTPUT, [WIRE.TURN_INDEX]: 0 }]);
  const reply = { [WIRE.KIND]: OUTPUT_WIRE.OUTPUT, [WIRE.TURN_INDEX]: 0, type: "Invoice", mode: "tool", validators: [], schemas: [{ name: "final_result", schema: { type: "object" }, from: "the parameters of tool final_result" }], attempts: [{ ...failedAttempt, retry: "Error: try again" }] };
  model.receive(reply);
  assert.equal(outputOf(store, turn).attempts[0].retry, "Error: try again");
  assert.equal(asked().length, 1);
  // A second attempt arrives: the message held is behind it, so it is asked for again.
  model.receive(event(3, 0, goodAttempt));
  assert.equal(outputOf(store, turn).attempts.length, 1); // the held one meanwhile
  assert.equal(asked().length, 2);
  model.receive(event(4, 0, checked(3, true)));
  store.lost(NOT_CONNECTED);
  outputOf(store, turn);
  assert.equal(asked().length, 2); // nothing is asked of a kernel that is gone
});

test("an answer is read as the kernel reads it: JSON, or JSON in a fence; anything else is text", () => {
  assert.deepEqual(parseAnswer('{"a": 1}'), { ok: true, value: { a: 1 } });
  assert.deepEqual(parseAnswer('```json\n{"a": [1]}\n```'), { ok: true, value: { a: [1] } });
  assert.deepEqual(parseAnswer("forty"), { ok: false });
  assert.deepEqual(parseAnswer(null), { ok: false });
});

test("errors are placed on the answer where their paths lead", () => {
  const answer = parseAnswer('{"customer": "ann", "lines": [{"price": "x"}]}');
  const { marks, placed } = errorMarks(answer, [
    { path: "/lines/0/price", message: "Input should be a valid number" },
    { path: "/total", message: "Field required" }, // missing: on the object that lacks it
    { path: "Invoice/customer", message: "too short" }, // a union's member named first
    { path: "", message: "too many lines", validator: "check_lines" },
    { path: "/lines/3/price", message: "no such line" }, // past the end: on the list
  ]);
  assert.equal(placed, true);
  assert.deepEqual(Object.fromEntries(marks), {
    "/lines/0/price": ["Input should be a valid number"],
    "": ["total: Field required", "too many lines [check_lines]"],
    "/customer": ["too short"],
    "/lines": ["3/price: no such line"],
  });
  assert.deepEqual(errorMarks(parseAnswer("not json"), [{ path: "", message: "not valid JSON" }]), { marks: new Map(), placed: false });
});

test("the answer's JSON in segments: the same text, each value named by its pointer, notes after the marked", () => {
  const value = { customer: "ann", lines: [{ price: "x" }, 2], empty: {}, total: null };
  const marks = new Map([["/lines/0/price", ["not a number"]], ["", ["total: Field required"]], ["/empty", ["must not be empty"]]]);
  const segments = jsonSegments(value, marks);
  assert.equal(segments.filter((s) => !s.note).map((s) => s.text).join(""), JSON.stringify(value, null, 2));
  const price = segments.filter((s) => s.pointer === "/lines/0/price" && !s.note);
  assert.deepEqual(price.map((s) => s.text), ['"price": ', '"x"']);
  assert.ok(price.every((s) => s.mark[0] === "not a number"));
  const notes = segments.filter((s) => s.note).map((s) => [s.pointer, s.text]);
  assert.deepEqual(notes, [
    ["", "  ⟵ total: Field required"],
    ["/lines/0/price", "  ⟵ not a number"],
    ["/empty", "  ⟵ must not be empty"],
  ]);
  assert.equal(segments.find((s) => s.pointer === "/customer" && s.text === '"ann"').mark, null);
  // A scalar answer, and keys that need escaping in a pointer.
  assert.deepEqual(jsonSegments("x", new Map([["", ["expected an object"]]])).map((s) => s.text), ['"x"', "  ⟵ expected an object"]);
  assert.ok(jsonSegments({ "a/b": 1 }).some((s) => s.pointer === "/a~1b"));
});
