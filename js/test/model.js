// A model with the surface anywidget gives the front end (get / on / off / send), fed by the
// tests as the kernel would feed it: trait updates and custom messages, their bodies as bytes.

import { WIRE } from "../wire.js";

/** JSON as UTF-8 bytes, the way ipywidgets hands buffers over (a DataView). */
export function bytes(value) {
  const array = new TextEncoder().encode(JSON.stringify(value));
  return new DataView(array.buffer);
}

const encodeTrait = (name, value) => (name === WIRE.TRAIT_SNAPSHOT && value && !ArrayBuffer.isView(value) && Object.keys(value).length ? bytes(value) : value);

export class Model {
  constructor(traits = {}) {
    this.traits = Object.fromEntries(Object.entries(traits).map(([name, value]) => [name, encodeTrait(name, value)]));
    this.handlers = new Map();
    this.sent = [];
  }

  get(name) {
    return this.traits[name];
  }

  on(name, fn) {
    if (!this.handlers.has(name)) this.handlers.set(name, new Set());
    this.handlers.get(name).add(fn);
  }

  off(name, fn) {
    this.handlers.get(name)?.delete(fn);
  }

  send(message) {
    this.sent.push(message);
  }

  emit(name, ...args) {
    for (const fn of [...(this.handlers.get(name) || [])]) fn(...args);
  }

  /** A trait update from the kernel (the snapshot as UTF-8 JSON bytes, as the kernel sets it). */
  setTrait(name, value) {
    this.traits[name] = encodeTrait(name, value);
    this.emit("change:" + name);
  }

  /** A custom message from the kernel, as on the wire: its kind (and a batch's numbers) in the
   * content, everything in one buffer of JSON. */
  receive(message) {
    const content = { [WIRE.KIND]: message[WIRE.KIND] };
    if (message[WIRE.KIND] === WIRE.BATCH) Object.assign(content, { [WIRE.SEQ]: message[WIRE.SEQ], [WIRE.LAST]: message[WIRE.LAST] });
    this.emit("msg:custom", content, [bytes(message)]);
  }

  listeners() {
    return [...this.handlers.values()].reduce((n, set) => n + set.size, 0);
  }
}

// -- messages as agentnb/ipython/inspector.py writes them ------------------------------------

export const usage = (input = 0, output = 0) => ({ input, output, estimated: false });

export function summary(turn, extra = {}) {
  return { turn, message: "m" + turn, status: "ok", content: "a" + turn, error: null, model: "scripted", usage: usage(3, 2), duration_ms: 5, tool_calls: 0, context: 0, context_blocks: 0, ...extra };
}

export function change(path, how, { key, authors = ["tool:add_item"], old = null, now = null } = {}) {
  return { path, key: key ?? path.split("/")[1], how, authors, old, new: now };
}

export function snapshot({ seq = 0, turns = [], from = 0, turn, events = [], state, changes, live_text = "" } = {}) {
  const snap = { [WIRE.KIND]: WIRE.SNAPSHOT, [WIRE.SEQ]: seq, [WIRE.SUMMARIES]: turns, [WIRE.TURNS_FROM]: from, [WIRE.STATE]: state };
  if (turn !== undefined) Object.assign(snap, { [WIRE.TURN_INDEX]: turn, [WIRE.EVENTS]: events, [WIRE.CHANGES]: changes ?? { keys: [], paths: [], more: 0 }, [WIRE.LIVE_TEXT]: live_text });
  return snap;
}

/** A batch of items numbered from ``first``: [turn, event body] each. */
export function batch(first, items) {
  return { [WIRE.KIND]: WIRE.BATCH, [WIRE.SEQ]: first, [WIRE.LAST]: first + items.length - 1, [WIRE.ITEMS]: items.map(([turn, e]) => ({ [WIRE.TURN_INDEX]: turn, [WIRE.EVENT_BODY]: e })) };
}

/** A batch of one item. */
export function event(seq, turn, body) {
  return batch(seq, [[turn, body]]);
}

export const started = (message = "hi") => ({ kind: "run_started", message, model: "scripted", at: 1000 });
export const finished = (content = "done", changes) => ({ kind: "run_finished", content, usage: usage(4, 1), duration_ms: 12, model_calls: 1, tool_calls: 0, ...(changes ? { changes } : {}) });
