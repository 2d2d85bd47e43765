// Text helpers: plain strings in, plain strings out (no DOM), so Node can test them.

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
