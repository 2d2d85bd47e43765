// JSON pointers (RFC 6901) and JSON patches (RFC 6902), applied in place to the live state.
// The kernel makes the patches (agentnb/diff.py); the browser only applies them.

export class PatchError extends Error {}

const INDEX = /^(0|[1-9][0-9]*)$/;

/** The unescaped tokens of a JSON pointer ("" is the whole document). */
export function decodePointer(pointer) {
  if (pointer === "") return [];
  if (typeof pointer !== "string" || pointer[0] !== "/") throw new PatchError("a JSON pointer starts with '/': " + JSON.stringify(pointer));
  return pointer
    .slice(1)
    .split("/")
    .map((token) => {
      if (/~[^01]|~$/.test(token)) throw new PatchError("bad escape in JSON pointer " + JSON.stringify(pointer) + " (only ~0 and ~1 are allowed)");
      return token.replace(/~1/g, "/").replace(/~0/g, "~");
    });
}

/** A JSON pointer from its tokens. */
export function encodePointer(tokens) {
  return tokens.map((t) => "/" + String(t).replace(/~/g, "~0").replace(/\//g, "~1")).join("");
}

export function hasOwn(obj, key) {
  return Object.prototype.hasOwnProperty.call(obj, key);
}

function isContainer(node) {
  return node !== null && typeof node === "object";
}

/** Store ``value`` under ``key`` as data: a key named "__proto__" must not become a prototype. */
export function setOwn(obj, key, value) {
  Object.defineProperty(obj, key, { value, writable: true, enumerable: true, configurable: true });
}

function arrayIndex(array, token, { append = false } = {}) {
  if (append && token === "-") return array.length;
  if (!INDEX.test(token)) throw new PatchError("not an array index: " + JSON.stringify(token));
  const index = Number(token);
  if (index > array.length || (!append && index === array.length)) throw new PatchError("array index " + index + " out of range (length " + array.length + ")");
  return index;
}

/** The value at ``tokens`` in ``root``; throws when the path is not there. */
export function walk(root, tokens) {
  let node = root;
  for (const token of tokens) {
    if (Array.isArray(node)) node = node[arrayIndex(node, token)];
    else if (isContainer(node) && hasOwn(node, token)) node = node[token];
    else throw new PatchError("path not in the state: " + encodePointer(tokens));
  }
  return node;
}

/** A deep copy of a JSON value that keeps "__proto__" keys as data. */
export function copyJSON(value) {
  if (Array.isArray(value)) return value.map(copyJSON);
  if (!isContainer(value)) return value;
  const out = {};
  for (const key of Object.keys(value)) setOwn(out, key, copyJSON(value[key]));
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

function parentOf(root, tokens) {
  if (tokens.length === 0) throw new PatchError("operations on the whole state are not supported");
  const parent = walk(root, tokens.slice(0, -1));
  if (!isContainer(parent)) throw new PatchError("not a container: " + encodePointer(tokens.slice(0, -1)));
  return [parent, tokens[tokens.length - 1]];
}

function put(root, tokens, value, insert) {
  const [parent, key] = parentOf(root, tokens);
  if (Array.isArray(parent)) {
    const index = arrayIndex(parent, key, { append: insert });
    if (insert) parent.splice(index, 0, value);
    else parent[index] = value;
  } else {
    if (!insert && !hasOwn(parent, key)) throw new PatchError("replace of a missing key: " + encodePointer(tokens));
    setOwn(parent, key, value);
  }
}

function take(root, tokens) {
  const [parent, key] = parentOf(root, tokens);
  if (Array.isArray(parent)) return parent.splice(arrayIndex(parent, key), 1)[0];
  if (!hasOwn(parent, key)) throw new PatchError("remove of a missing key: " + encodePointer(tokens));
  const value = parent[key];
  delete parent[key];
  return value;
}

/** Apply one RFC 6902 patch to ``root`` in place. Throws a PatchError on a bad operation (the
 * state may then be half-patched: the caller drops it and fetches it again). */
export function applyPatch(root, patch) {
  if (!Array.isArray(patch)) throw new PatchError("a patch is a list of operations");
  for (const op of patch) {
    if (!isContainer(op) || typeof op.path !== "string") throw new PatchError("a patch operation needs a path");
    const path = decodePointer(op.path);
    switch (op.op) {
      case "add":
        put(root, path, copyJSON(op.value), true);
        break;
      case "replace":
        put(root, path, copyJSON(op.value), false);
        break;
      case "remove":
        take(root, path);
        break;
      case "move": {
        const from = decodePointer(op.from);
        if (op.path.startsWith(op.from + "/")) throw new PatchError("cannot move " + op.from + " into itself");
        if (op.from !== op.path) put(root, path, take(root, from), true);
        break;
      }
      case "copy":
        put(root, path, copyJSON(walk(root, decodePointer(op.from))), true);
        break;
      case "test":
        if (!equalJSON(walk(root, path), op.value)) throw new PatchError("test failed at " + op.path);
        break;
      default:
        throw new PatchError("unknown patch operation " + JSON.stringify(op.op));
    }
  }
  return root;
}
