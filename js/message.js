// What the kernel sends, as the store reads it. Each message's body travels as one binary
// buffer of UTF-8 JSON (agentnb/ipython/outbox.py) whose keys are merged into the message; the
// snapshot trait holds the same JSON as bytes.

import { floatReviver } from "./floats.js";
import { WIRE } from "./wire.js";

const decoder = new TextDecoder();

function isBytes(value) {
  return value instanceof ArrayBuffer || ArrayBuffer.isView(value);
}

function parse(bytes) {
  return JSON.parse(decoder.decode(bytes), floatReviver);
}

/** A custom message with its body merged in (one without a buffer is taken as it is). */
export function decodeMessage(msg, buffers) {
  const buffer = buffers && buffers[0];
  if (!msg || typeof msg !== "object" || !buffer || !isBytes(buffer)) return msg;
  return Object.assign(parse(buffer), msg);
}

/** The snapshot in the trait, parsed afresh (each store changes what it holds); null if none. */
export function decodeTrait(value) {
  if (!value || typeof value !== "object") return null;
  if (!isBytes(value)) return value;
  return value.byteLength ? parse(value) : null;
}

const seqs = new WeakMap();

/** The ``seq`` of the snapshot in the trait (-1 without one), read once per trait value. */
export function traitSeq(value) {
  if (!value || typeof value !== "object") return -1;
  if (!seqs.has(value)) seqs.set(value, decodeTrait(value)?.[WIRE.SEQ] ?? -1);
  return seqs.get(value);
}
