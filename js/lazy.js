// A state held in part (agentnb/ipython/lazy.py): containers holding only their first children,
// and long strings held as their head. The kernel lists such placeholders as {pointer: full size};
// the marks below are put on the held objects themselves, so a patch that moves a container
// moves its mark with it. What is not held is asked for when it is shown (the store's
// needSubtree), and the answer is grafted in place.

import { isFloat, markFloat } from "./floats.js";
import { decodePointer, hasOwn, setOwn } from "./pointer.js";

/** Containers held in part -> their full number of children. */
const PARTIAL = new WeakMap();

/** A string held as its first characters (``size`` in all). Never parsed from JSON, so no
 * value in a state can be mistaken for one. */
export class Cut {
  constructor(head, size) {
    this.head = head;
    this.size = size;
    Object.freeze(this);
  }
}

export function isContainer(value) {
  return value !== null && typeof value === "object" && !(value instanceof Cut);
}

/** Children held. */
export function heldCount(container) {
  return Array.isArray(container) ? container.length : Object.keys(container).length;
}

/** Children in all, held or not. */
export function sizeOf(container) {
  return PARTIAL.has(container) ? PARTIAL.get(container) : heldCount(container);
}

export function isPartial(container) {
  return PARTIAL.has(container);
}

/** Record that ``container`` has ``size`` children in all (unmarked once it holds them all). */
export function setSize(container, size) {
  if (size > heldCount(container)) PARTIAL.set(container, size);
  else PARTIAL.delete(container);
  return container;
}

/** Give a copy the mark of what it copies. */
export function copyMark(from, to) {
  if (PARTIAL.has(from)) PARTIAL.set(to, PARTIAL.get(from));
}

/** Whether ``value`` and everything under it is held. */
export function isWhole(value) {
  if (value instanceof Cut) return false;
  if (!isContainer(value)) return true;
  if (PARTIAL.has(value)) return false;
  return (Array.isArray(value) ? value : Object.values(value)).every(isWhole);
}

function childOf(node, token) {
  if (Array.isArray(node)) return /^(0|[1-9][0-9]*)$/.test(token) ? node[Number(token)] : undefined;
  return isContainer(node) && hasOwn(node, token) ? node[token] : undefined;
}

/** The held value at ``tokens`` (undefined where it is not held). */
export function held(root, tokens) {
  let node = root;
  for (const token of tokens) {
    node = childOf(node, token);
    if (node === undefined) return undefined;
  }
  return node;
}

/** Mark in ``root`` the placeholders the kernel listed for it: ``{pointer: full size}``. */
export function markStubs(root, stubs) {
  for (const [pointer, size] of Object.entries(stubs || {})) {
    const tokens = decodePointer(pointer);
    if (!tokens.length) {
      if (isContainer(root)) setSize(root, size);
      continue;
    }
    const parent = held(root, tokens.slice(0, -1));
    const key = tokens[tokens.length - 1];
    const value = childOf(parent, key);
    if (typeof value === "string") {
      if (Array.isArray(parent)) parent[Number(key)] = new Cut(value, size);
      else setOwn(parent, key, new Cut(value, size));
    } else if (isContainer(value)) {
      setSize(value, size);
    }
  }
  return root;
}

/**
 * Put a ``subtree`` reply into ``root``: the children of ``path`` from ``from`` on, or with
 * ``whole`` the whole value there. Returns false (and changes nothing) when the reply does not
 * fit what is held: the view then asks again from what it holds.
 */
export function graft(root, path, { from, size, value, stubs, whole, float = false }) {
  const tokens = decodePointer(path);
  if (whole) {
    if (!tokens.length) return false;
    const parent = held(root, tokens.slice(0, -1));
    const key = tokens[tokens.length - 1];
    if (childOf(parent, key) === undefined) return false;
    if (Array.isArray(parent)) parent[Number(key)] = value;
    else setOwn(parent, key, value);
    markFloat(parent, key, float); // a whole-number float keeps its form (floats.js)
    return true;
  }
  const node = held(root, tokens);
  if (!isContainer(node) || !isContainer(value) || Array.isArray(node) !== Array.isArray(value) || heldCount(node) !== from) return false;
  if (Array.isArray(node)) {
    node.push(...value);
    value.forEach((_, i) => isFloat(value, i) && markFloat(node, from + i, true));
  } else {
    const keys = Object.keys(value);
    if (keys.some((k) => hasOwn(node, k))) return false;
    for (const key of keys) {
      setOwn(node, key, value[key]);
      if (isFloat(value, key)) markFloat(node, key, true);
    }
  }
  setSize(node, size);
  markStubs(root, stubs);
  return true;
}
