// JSON pointers (RFC 6901): the paths into the state both sides use.

export class PatchError extends Error {}

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

/** Store ``value`` under ``key`` as data: a key named "__proto__" must not become a prototype. */
export function setOwn(obj, key, value) {
  Object.defineProperty(obj, key, { value, writable: true, enumerable: true, configurable: true });
}
