import assert from "node:assert/strict";
import test from "node:test";

import { PatchError, applyPatch, copyJSON, decodePointer, encodePointer, equalJSON } from "../patch.js";

const apply = (doc, ...ops) => applyPatch(doc, ops);

test("add puts a key into an object and an item into an array (at an index or at the end with -)", () => {
  const doc = { items: ["milk", "tea"] };
  apply(doc, { op: "add", path: "/count", value: 2 }, { op: "add", path: "/items/1", value: "eggs" }, { op: "add", path: "/items/-", value: "jam" }, { op: "add", path: "/items/4", value: "rice" });
  assert.deepEqual(doc, { items: ["milk", "eggs", "tea", "jam", "rice"], count: 2 });
});

test("add over an existing key replaces its value", () => {
  const doc = { a: { b: 1 } };
  apply(doc, { op: "add", path: "/a", value: [1] });
  assert.deepEqual(doc, { a: [1] });
});

test("remove deletes a key or an item (later items move up)", () => {
  const doc = { items: ["milk", "eggs", "tea"], gone: null };
  apply(doc, { op: "remove", path: "/items/0" }, { op: "remove", path: "/gone" });
  assert.deepEqual(doc, { items: ["eggs", "tea"] });
});

test("replace changes a value that exists, and refuses one that does not", () => {
  const doc = { n: 1, items: ["a"] };
  apply(doc, { op: "replace", path: "/n", value: { deep: true } }, { op: "replace", path: "/items/0", value: "b" });
  assert.deepEqual(doc, { n: { deep: true }, items: ["b"] });
  assert.throws(() => apply(doc, { op: "replace", path: "/missing", value: 1 }), /replace of a missing key: \/missing/);
  assert.throws(() => apply(doc, { op: "replace", path: "/items/1", value: 1 }), /out of range/);
});

test("move takes a value from one place to another, across objects and arrays", () => {
  const doc = { a: { x: 1 }, items: ["milk", "eggs", "tea"], b: {} };
  apply(doc, { op: "move", from: "/a/x", path: "/b/y" }, { op: "move", from: "/items/0", path: "/items/2" }, { op: "move", from: "/items/0", path: "/first" });
  assert.deepEqual(doc, { a: {}, items: ["tea", "milk"], b: { y: 1 }, first: "eggs" });
});

test("move refuses to put a value inside itself", () => {
  const doc = { a: { b: {} } };
  assert.throws(() => apply(doc, { op: "move", from: "/a", path: "/a/b/c" }), /into itself/);
  assert.deepEqual(doc, { a: { b: {} } });
});

test("copy puts a deep copy elsewhere: changing one later leaves the other alone", () => {
  const doc = { a: { list: [1, 2] } };
  apply(doc, { op: "copy", from: "/a", path: "/b" }, { op: "add", path: "/b/list/-", value: 3 });
  assert.deepEqual(doc, { a: { list: [1, 2] }, b: { list: [1, 2, 3] } });
});

test("values are copied in: the patch's own objects are not shared with the state", () => {
  const value = { tags: ["x"] };
  const doc = {};
  apply(doc, { op: "add", path: "/v", value });
  value.tags.push("y");
  assert.deepEqual(doc.v, { tags: ["x"] });
});

test("test passes on an equal value and fails on a different one", () => {
  const doc = { a: [1, { b: "c" }] };
  apply(doc, { op: "test", path: "/a", value: [1, { b: "c" }] });
  assert.throws(() => apply(doc, { op: "test", path: "/a/1/b", value: "d" }), /test failed at \/a\/1\/b/);
});

test("escaped tokens: ~1 is a slash and ~0 a tilde, in that order", () => {
  assert.deepEqual(decodePointer("/<~1session_state>/a~0b/~01"), ["</session_state>", "a~b", "~1"]);
  assert.equal(encodePointer(["</session_state>", "a~b", "~1"]), "/<~1session_state>/a~0b/~01");
  assert.deepEqual(decodePointer(""), []);
  assert.deepEqual(decodePointer("/"), [""]);
  const doc = { "</session_state>": 1 };
  apply(doc, { op: "replace", path: "/<~1session_state>", value: 2 }, { op: "add", path: "/~0home", value: "x" });
  assert.deepEqual(doc, { "</session_state>": 2, "~home": "x" });
});

test("a __proto__ key is stored as data and never becomes a prototype", () => {
  const doc = {};
  apply(doc, { op: "add", path: "/__proto__", value: { polluted: true } });
  apply(doc, { op: "add", path: "/__proto__/more", value: 1 });
  assert.equal(Object.getPrototypeOf(doc), Object.prototype);
  assert.equal({}.polluted, undefined);
  assert.deepEqual(Object.keys(doc), ["__proto__"]);
  assert.deepEqual(JSON.parse(JSON.stringify(doc)), JSON.parse('{"__proto__": {"polluted": true, "more": 1}}'));
  // Nested in a value, and through a copy.
  const nested = { box: {} };
  apply(nested, { op: "add", path: "/box/v", value: JSON.parse('{"__proto__": {"admin": true}}') }, { op: "copy", from: "/box/v", path: "/c" });
  assert.equal(nested.c.admin, undefined);
  assert.equal(Object.getPrototypeOf(nested.c), Object.prototype);
  assert.deepEqual(Object.keys(nested.c), ["__proto__"]);
  // A path through an inherited property is not in the state.
  assert.throws(() => apply({}, { op: "add", path: "/constructor/prototype/x", value: 1 }), PatchError);
  assert.equal({}.x, undefined);
});

test("bad paths and operations are rejected with a PatchError that says what was wrong", () => {
  const doc = () => ({ items: ["a", "b"], n: 1 });
  const cases = [
    [{ op: "add", path: "items/0", value: 1 }, /starts with '\/'/],
    [{ op: "add", path: "/items/x", value: 1 }, /not an array index: "x"/],
    [{ op: "add", path: "/items/01", value: 1 }, /not an array index: "01"/],
    [{ op: "add", path: "/items/-1", value: 1 }, /not an array index/],
    [{ op: "add", path: "/items/3", value: 1 }, /out of range/],
    [{ op: "remove", path: "/items/-" }, /not an array index: "-"/],
    [{ op: "remove", path: "/items/2" }, /out of range/],
    [{ op: "remove", path: "/missing" }, /remove of a missing key/],
    [{ op: "add", path: "/n/deeper", value: 1 }, /not a container: \/n/],
    [{ op: "add", path: "/missing/x", value: 1 }, /path not in the state: \/missing/],
    [{ op: "add", path: "/a~2b", value: 1 }, /bad escape/],
    [{ op: "add", path: "/a~", value: 1 }, /bad escape/],
    [{ op: "add", path: "", value: {} }, /whole state/],
    [{ op: "copy", from: "/nothing", path: "/x" }, /path not in the state/],
    [{ op: "frobnicate", path: "/n" }, /unknown patch operation "frobnicate"/],
    [{ op: "add", value: 1 }, /needs a path/],
  ];
  for (const [op, message] of cases) {
    assert.throws(() => applyPatch(doc(), [op]), (err) => err instanceof PatchError && message.test(err.message), JSON.stringify(op));
  }
  assert.throws(() => applyPatch(doc(), { op: "add" }), /list of operations/);
});

test("copyJSON and equalJSON treat values as JSON", () => {
  const value = { a: [1, { b: null }], s: "x" };
  const copy = copyJSON(value);
  assert.deepEqual(copy, value);
  assert.notEqual(copy.a, value.a);
  assert.ok(equalJSON(value, copy));
  assert.ok(!equalJSON({ a: 1 }, { a: 1, b: 2 }));
  assert.ok(!equalJSON([1], { 0: 1 }));
  assert.ok(!equalJSON({ a: 1 }, { b: 1 }));
  assert.ok(!equalJSON(1, "1"));
});
