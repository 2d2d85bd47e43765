import assert from "node:assert/strict";
import test from "node:test";

import { changeText, changeTitle, pathLabel, short, tokensText } from "../format.js";
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
