// A turn's typed output (agentnb/ipython/output_view.py): the schema and mode the model was asked
// with, and each attempt — the answer, its errors placed on the answer's JSON where their paths
// lead, and the retry message that went back. No DOM here: tabs/output.js draws it.
//
// The attempts arrive live as output_checked events (turn.attempts); the schema and the retry
// messages come with an "output" message when a view asks (need_output), again whenever the turn
// has checked more answers than the message it holds.

import { decodePointer, encodePointer } from "./pointer.js";
import { NOT_CONNECTED } from "./store.js";
import { WIRE } from "./wire.js";

// Must match agentnb/ipython/output_view.py's OUTPUT_WIRE (tests/ipython/test_output_view.py checks it).
export const OUTPUT_WIRE = {
  "NEED_OUTPUT": "need_output",
  "OUTPUT": "output"
};

/** The "output" message held for ``turn``, asking for it when it is missing or behind the turn's
 * attempts (null until it comes). */
export function outputOf(store, turn) {
  const held = store.outputs.get(turn.index);
  const current = held && held.attempts.length >= turn.attempts.length;
  if (!current && store.offline !== NOT_CONNECTED && store.ask("o" + turn.index + ":" + turn.attempts.length)) {
    store.send({ [WIRE.KIND]: OUTPUT_WIRE.NEED_OUTPUT, [WIRE.TURN_INDEX]: turn.index });
  }
  return held || null;
}

export function takeOutput(store, msg) {
  const index = msg[WIRE.TURN_INDEX];
  const attempts = msg.attempts || [];
  store.asked.delete("o" + index + ":" + attempts.length);
  for (const key of [...store.asked]) if (key.startsWith("o" + index + ":")) store.asked.delete(key);
  store.outputs.set(index, { type: msg.type ?? null, mode: msg.mode ?? null, validators: msg.validators || [], schemas: msg.schemas || [], attempts });
  store.version.outputs += 1;
}

/** "Invoice · tool mode · 2 attempts (1 failed)" for a turn's attempts. */
export function outputHead(attempts) {
  if (!attempts.length) return "";
  const last = attempts[attempts.length - 1];
  const failed = attempts.filter((a) => !a.ok).length;
  const count = attempts.length + " attempt" + (attempts.length === 1 ? "" : "s") + (failed ? " (" + failed + " failed)" : "");
  return (last.output_type || "output") + " · " + last.mode + " mode · " + count;
}

const FENCE = /^```(?:json)?\s*\n([\s\S]*)\n```$/;

/** An attempt's answer as JSON data ({ok: true, value}), or {ok: false} when it is not JSON (the
 * answer is shown as its text then). A fenced answer is read as the kernel reads it. */
export function parseAnswer(text) {
  let body = String(text ?? "").trim();
  const fenced = FENCE.exec(body);
  if (fenced) body = fenced[1].trim();
  try {
    return { ok: true, value: JSON.parse(body) };
  } catch (err) {
    return { ok: false };
  }
}

function child(node, token) {
  if (Array.isArray(node)) return /^(0|[1-9][0-9]*)$/.test(token) && Number(token) < node.length ? { found: true, value: node[Number(token)] } : { found: false };
  if (node && typeof node === "object" && Object.prototype.hasOwnProperty.call(node, token)) return { found: true, value: node[token] };
  return { found: false };
}

/**
 * Where each error of an attempt sits in its answer: ``marks`` maps a JSON pointer of the answer
 * to the messages about it — the value the path names, or, when the path is not in the answer (a
 * missing field), the deepest part of it that is, the message naming what is missing. A union's
 * errors name their member before the path ("Invoice/total"); that name is set aside. Errors
 * without a path are the answer's own (pointer ""). ``placed`` is false for an answer that is not
 * JSON: the errors are listed only.
 */
export function errorMarks(answer, errors) {
  const marks = new Map();
  const add = (pointer, text) => {
    if (!marks.has(pointer)) marks.set(pointer, []);
    marks.get(pointer).push(text);
  };
  if (!answer.ok) return { marks, placed: false };
  for (const error of errors || []) {
    let path = String(error.path ?? "");
    if (path && !path.startsWith("/")) path = path.includes("/") ? path.slice(path.indexOf("/")) : "";
    let tokens;
    try {
      tokens = decodePointer(path);
    } catch (err) {
      tokens = [];
    }
    let node = answer.value;
    let at = 0;
    while (at < tokens.length) {
      const next = child(node, tokens[at]);
      if (!next.found) break;
      node = next.value;
      at += 1;
    }
    const message = String(error.message ?? "") + (error.validator ? " [" + error.validator + "]" : "");
    const missing = tokens.slice(at).join("/");
    add(encodePointer(tokens.slice(0, at)), missing ? missing + ": " + message : message);
  }
  return { marks, placed: true };
}

/**
 * ``value`` as indented JSON text in segments, each ``{text, pointer, mark, note}``: the text of a
 * value, a key or a bracket names the pointer of its value, and carries the messages ``marks``
 * holds for it; a note segment after a marked value says them in words. The segments' texts
 * joined are ``JSON.stringify(value, null, 2)`` plus the notes.
 */
export function jsonSegments(value, marks = new Map()) {
  const out = [];
  const emit = (text, pointer = null) => out.push({ text, pointer, mark: pointer !== null && marks.has(pointer) ? marks.get(pointer) : null, note: false });
  const note = (pointer) => {
    if (marks.has(pointer)) out.push({ text: "  ⟵ " + marks.get(pointer).join("; "), pointer, mark: marks.get(pointer), note: true });
  };
  const pad = (n) => "  ".repeat(n);
  const walk = (v, pointer, depth) => {
    const container = v !== null && typeof v === "object";
    if (!container) {
      emit(v === undefined ? "null" : JSON.stringify(v), pointer);
      return;
    }
    const array = Array.isArray(v);
    const keys = array ? v.map((_, i) => String(i)) : Object.keys(v);
    const [open, close] = array ? ["[", "]"] : ["{", "}"];
    if (!keys.length) {
      emit(open + close, pointer);
      return;
    }
    emit(open, pointer);
    note(pointer);
    keys.forEach((key, i) => {
      const at = pointer + "/" + key.replace(/~/g, "~0").replace(/\//g, "~1");
      emit("\n" + pad(depth + 1));
      if (!array) emit(JSON.stringify(key) + ": ", at);
      walk(v[key], at, depth + 1);
      if (i < keys.length - 1) emit(",");
      const inner = v[key];
      if (!(inner !== null && typeof inner === "object" && Object.keys(inner).length)) note(at);
    });
    emit("\n" + pad(depth));
    emit(close, pointer);
  };
  walk(value, "", 0);
  if (!(value !== null && typeof value === "object" && Object.keys(value).length)) note("");
  return out;
}
