// JSON patches (RFC 6902), applied in place to the state the browser holds. The kernel makes
// the patches (agentnb/state/diff.py); the browser only applies them. A state may be held in part
// (lazy.js): an operation inside a part not held changes nothing held but the sizes it moves,
// so that part is still right when it is fetched.

import { Cut, copyMark, heldCount, isContainer, isPartial, isWhole, setSize, sizeOf } from "./lazy.js";
import { PatchError, decodePointer, encodePointer, hasOwn, setOwn } from "./pointer.js";
import { copyFloats, isFloat, markFloat, shiftFloats } from "./floats.js";

export { PatchError, decodePointer, encodePointer, hasOwn, setOwn };

const INDEX = /^(0|[1-9][0-9]*)$/;
const NOT_HELD = Symbol("not held");

function indexIn(length, token, { append = false } = {}) {
  if (append && token === "-") return length;
  if (!INDEX.test(token)) throw new PatchError("not an array index: " + JSON.stringify(token));
  const index = Number(token);
  if (index > length || (!append && index === length)) throw new PatchError("array index " + index + " out of range (length " + length + ")");
  return index;
}

/** The value at ``tokens`` in ``root``; throws when the path is not there. */
export function walk(root, tokens) {
  const node = reach(root, tokens);
  if (node === NOT_HELD) throw new PatchError("path not held: " + encodePointer(tokens));
  return node;
}

/** The value at ``tokens``, or NOT_HELD where the path runs into a part not held. */
function reach(root, tokens) {
  let node = root;
  for (const token of tokens) {
    if (Array.isArray(node)) {
      if (isPartial(node) && INDEX.test(token) && Number(token) >= node.length) return NOT_HELD;
      node = node[indexIn(node.length, token)];
    } else if (isContainer(node) && hasOwn(node, token)) node = node[token];
    else if (isContainer(node) && isPartial(node)) return NOT_HELD;
    else throw new PatchError("path not in the state: " + encodePointer(tokens));
  }
  return node;
}

/** A deep copy of a JSON value that keeps "__proto__" keys as data and the marks of parts not held. */
export function copyJSON(value) {
  if (!isContainer(value)) return value; // a Cut is never changed in place: shared
  let out;
  if (Array.isArray(value)) {
    out = value.map(copyJSON);
  } else {
    out = {};
    for (const key of Object.keys(value)) setOwn(out, key, copyJSON(value[key]));
  }
  copyMark(value, out);
  copyFloats(value, out);
  return out;
}

/** Whether two JSON values are equal. */
export function equalJSON(a, b) {
  if (a === b) return true;
  if (Array.isArray(a) !== Array.isArray(b) || !isContainer(a) || !isContainer(b)) return false;
  const keys = Object.keys(a);
  if (keys.length !== Object.keys(b).length) return false;
  return keys.every((k) => hasOwn(b, k) && equalJSON(a[k], b[k]));
}

/** [parent, last token], with a null parent where the parent is not held. */
function parentOf(root, tokens) {
  if (tokens.length === 0) throw new PatchError("operations on the whole state are not supported");
  const parent = reach(root, tokens.slice(0, -1));
  const key = tokens[tokens.length - 1];
  if (parent === NOT_HELD) return [null, key];
  if (!isContainer(parent)) throw new PatchError("not a container: " + encodePointer(tokens.slice(0, -1)));
  return [parent, key];
}

function put(root, tokens, value, insert, float = false) {
  const [parent, key] = parentOf(root, tokens);
  if (parent === null) return; // inside a part not held: nothing held changes
  const size = sizeOf(parent);
  if (Array.isArray(parent)) {
    const index = indexIn(size, key, { append: insert });
    if (index >= parent.length && isPartial(parent)) {
      if (insert) setSize(parent, size + 1); // past the part held (a partial array): counted
    } else if (insert) {
      const partial = isPartial(parent);
      parent.splice(index, 0, value);
      shiftFloats(parent, index, 1);
      markFloat(parent, index, float);
      if (partial) setSize(parent, size + 1);
    } else {
      parent[index] = value;
      markFloat(parent, index, float);
    }
  } else if (!hasOwn(parent, key) && isPartial(parent)) {
    // A new key goes last, past the part held; a replaced one not held stays not held.
    if (insert) setSize(parent, size + 1);
  } else {
    if (!insert && !hasOwn(parent, key)) throw new PatchError("replace of a missing key: " + encodePointer(tokens));
    setOwn(parent, key, value);
    markFloat(parent, key, float);
  }
}

function take(root, tokens) {
  const [parent, key] = parentOf(root, tokens);
  if (parent === null) return NOT_HELD;
  const size = sizeOf(parent);
  const partial = isPartial(parent);
  let value = NOT_HELD;
  if (Array.isArray(parent)) {
    const index = indexIn(size, key);
    if (index < parent.length) {
      value = parent.splice(index, 1)[0];
      shiftFloats(parent, index, -1);
    }
  } else if (hasOwn(parent, key)) {
    value = parent[key];
    delete parent[key];
    markFloat(parent, key, false);
  } else if (!partial) {
    throw new PatchError("remove of a missing key: " + encodePointer(tokens));
  }
  if (partial) setSize(parent, size - 1);
  return value;
}

/** Apply one RFC 6902 patch to ``root`` in place. Throws a PatchError on a bad operation, or on
 * one that needs a part not held (the state may then be half-patched: the caller drops it and
 * fetches it again). */
export function applyPatch(root, patch) {
  if (!Array.isArray(patch)) throw new PatchError("a patch is a list of operations");
  for (const op of patch) {
    if (!isContainer(op) || typeof op.path !== "string") throw new PatchError("a patch operation needs a path");
    const path = decodePointer(op.path);
    switch (op.op) {
      case "add":
        put(root, path, copyJSON(op.value), true, isFloat(op, "value"));
        break;
      case "replace":
        put(root, path, copyJSON(op.value), false, isFloat(op, "value"));
        break;
      case "remove":
        take(root, path);
        break;
      case "move": {
        const from = decodePointer(op.from);
        if (op.path.startsWith(op.from + "/")) throw new PatchError("cannot move " + op.from + " into itself");
        if (op.from === op.path) break;
        const value = take(root, from);
        if (value === NOT_HELD) throw new PatchError("moved from a part not held: " + op.from);
        put(root, path, value, true);
        break;
      }
      case "copy": {
        const value = reach(root, decodePointer(op.from));
        if (value === NOT_HELD) throw new PatchError("copied from a part not held: " + op.from);
        put(root, path, copyJSON(value), true);
        break;
      }
      case "test": {
        const value = reach(root, path);
        // A test needs the whole value; on a part not held it cannot fail here.
        if (value !== NOT_HELD && isWhole(value) && !equalJSON(value, op.value)) throw new PatchError("test failed at " + op.path);
        break;
      }
      default:
        throw new PatchError("unknown patch operation " + JSON.stringify(op.op));
    }
  }
  return root;
}

export { Cut, heldCount };
