// Text helpers: plain strings in, plain strings out (no DOM), so Node can test them.

import { jsonText, numberText } from "./floats.js";
import { decodePointer } from "./patch.js";

export function firstLine(text) {
  return String(text ?? "").split("\n")[0];
}

export function short(text, n) {
  const s = String(text ?? "");
  return s.length > n ? s.slice(0, n - 1) + "…" : s;
}

/** A duration in milliseconds as "12 ms" or "1.2 s" ("" when unknown). */
export function ms(value) {
  if (value === null || value === undefined) return "";
  return value >= 1000 ? (value / 1000).toFixed(1) + " s" : value.toFixed(value < 10 ? 1 : 0) + " ms";
}

export function pretty(value) {
  try {
    return JSON.stringify(value, null, 2);
  } catch (err) {
    return String(value);
  }
}

/** Tool-call arguments (a JSON string) on one line; kept as they are when not JSON. */
export function argsText(raw) {
  try {
    return JSON.stringify(JSON.parse(raw));
  } catch (err) {
    return String(raw ?? "");
  }
}

/** The mark on an answer the model stopped at its token limit (``finish_reason: length``). */
export const CUT_MARK = "answer cut at the token limit";

/** One item of a Responses API request's ``input`` as a chat-like row: a message (role and
 * content), a function call or its output, or a reasoning item (``role: "reasoning"``, its
 * summary as the content and what was sent of it in ``note``). */
export function inputItem(item) {
  const it = item && typeof item === "object" ? item : { content: item };
  const kind = it.type || "message";
  if (kind === "reasoning") {
    const summary = Array.isArray(it.summary) ? it.summary.map((p) => (p && p.text) || "").filter(Boolean).join("\n") : "";
    const encrypted = typeof it.encrypted_content === "string" ? it.encrypted_content.length : 0;
    const note = "sent back" + (it.id ? " as " + it.id : "") + (encrypted ? " with its encrypted content (" + encrypted + " chars)" : "");
    return { role: "reasoning", content: summary || "(no summary)", note };
  }
  if (kind === "function_call") {
    return { role: "assistant", content: null, tool_calls: [{ id: it.call_id, function: { name: it.name, arguments: it.arguments } }] };
  }
  if (kind === "function_call_output") return { role: "tool", tool_call_id: it.call_id, content: it.output };
  if (kind === "message") return { role: it.role, content: it.content };
  return { role: String(kind), content: it };
}

/** The header's tooltip on the token count: estimated or not, and a reasoning model's part. */
export function tokensText(usage) {
  if (!usage) return "";
  return (usage.estimated ? "≈" : "") + (usage.input + usage.output) + " tok";
}

/** A state path as people read it: its keys exactly as they are, joined by " › "
 * ("/</session_state>" is the pointer "/<~1session_state>"). */
export function pathLabel(pointer) {
  try {
    return decodePointer(pointer).join(" › ");
  } catch (err) {
    return String(pointer);
  }
}

/** What one change did to its value: "old → new", the new value, or the old one, removed. */
export function changeText(change) {
  if (change.how === "added") return String(change.new);
  if (change.how === "removed") return change.old + " (removed)";
  return change.old + " → " + change.new;
}

/** "+", "~" or "−" for added, changed or removed. */
export function changeSign(how) {
  return how === "added" ? "+" : how === "removed" ? "−" : "~";
}

/** A change's title: how, who and what ("changed by tool:add_item: 1 → 2"). */
export function changeTitle(change) {
  return change.how + " by " + change.authors.join(", ") + ": " + changeText(change);
}

/** A token count as shown: "42", or "≈42" when the counts are an estimate ("" when unknown). */
export function tokenCount(tokens, n) {
  if (!tokens || n === null || n === undefined) return "";
  return (tokens.exact ? "" : "≈") + n;
}

/** What counted a prompt's tokens: the tokenizer's name, or "≈ estimate" with the reason. */
export function counterText(tokens) {
  if (!tokens) return "";
  return tokens.exact ? "counted with " + tokens.counter : "≈ estimate" + (tokens.note ? ": " + tokens.note : "");
}

/** The parts of a prompt's cost after its sections: earlier turns, user message, chat template. */
export function tokenParts(tokens) {
  if (!tokens) return [];
  const parts = [];
  if (tokens.history) parts.push(["earlier turns", tokens.history]);
  const handed = (tokens.earlier_sections || []).reduce((n, x) => n + x, 0); // a handoff's history
  if (handed) parts.push(["handoff history", handed]);
  parts.push(["user message", tokens.user]);
  if (tokens.template !== null && tokens.template !== undefined) parts.push(["chat template", tokens.template]);
  parts.push(["total", tokens.total]);
  return parts.map(([label, n]) => label + " " + tokenCount(tokens, n));
}

/** A value as JSON text to edit (indented when it spans lines), whole-number floats as floats
 * (``float``: the value itself is one). */
export function editText(value, float = false) {
  if (typeof value === "number") return numberText(value, float);
  const text = jsonText(value);
  return text !== undefined && text.length > 60 ? jsonText(value, 2) : String(text);
}

/** What a hook changed in the arguments it passed on: "price: 1.289 → 1.29", "+ note: …",
 * "− key: …" (one line per top-level argument; [] when it passed them on as received). */
export function argsDiff(received, passed) {
  const a = received && typeof received === "object" ? received : {};
  const b = passed && typeof passed === "object" ? passed : {};
  const out = [];
  for (const key of Object.keys(a)) {
    if (!Object.prototype.hasOwnProperty.call(b, key)) out.push("− " + key + ": " + JSON.stringify(a[key]));
    else if (JSON.stringify(a[key]) !== JSON.stringify(b[key])) out.push(key + ": " + JSON.stringify(a[key]) + " → " + JSON.stringify(b[key]));
  }
  for (const key of Object.keys(b)) if (!Object.prototype.hasOwnProperty.call(a, key)) out.push("+ " + key + ": " + JSON.stringify(b[key]));
  return out;
}

/** A JSON-patch op's name as the State tab says it: "+" add, "~" replace, "−" remove. */
export function opSign(op) {
  return op === "add" ? "+" : op === "remove" ? "−" : op === "replace" ? "~" : op;
}

/** What the header's token count counts (the Prompt tab counts one prompt, not the turn). */
export function usageTitle(usage, calls) {
  if (!usage) return "";
  const of = calls === null || calls === undefined ? "its model calls" : calls === 1 ? "its one model call" : "its " + calls + " model calls";
  return (
    "tokens this turn used: " + usage.input + " in + " + usage.output + " out, summed over " + of +
    (usage.reasoning ? " (of the output, " + usage.reasoning + " reasoning)" : "") +
    (usage.estimated ? " (estimated from text length)" : "") +
    ". The Prompt tab counts one prompt: the input of the call it shows."
  );
}

/** A size in bytes as people read it: "812 B", "23.4 KB", "1.0 MB" (1 KB = 1024 bytes), rounded
 * half up in integers as agentnb/history/attachments.py size_text does, so both write the same. */
export function sizeText(size) {
  if (size < 1024) return size + " B";
  const [unit, name] = size < 1024 * 1024 ? [1024, "KB"] : [1024 * 1024, "MB"];
  const tenths = Math.floor((size * 10 + unit / 2) / unit);
  return Math.floor(tenths / 10) + "." + (tenths % 10) + " " + name;
}

/** One image or file in one line, from its description, as agentnb/history/attachments.py
 * part_line writes it: "image chart.png · image/png · 640×480 · 23.4 KB". */
export function partLine(part) {
  const p = part && typeof part === "object" ? part : {};
  if (p.url !== undefined && p.url !== null && (p.sha256 === undefined || p.sha256 === null)) return "image " + p.url + " (by URL)";
  const bits = [(p.type === "file" ? "file " : "image ") + (p.name || String(p.sha256 || "").slice(0, 12))];
  if (p.media_type) bits.push(String(p.media_type));
  if (p.width !== undefined && p.width !== null && p.height !== undefined && p.height !== null) bits.push(p.width + "×" + p.height);
  if (Number.isInteger(p.size)) bits.push(sizeText(p.size));
  return bits.join(" · ");
}
