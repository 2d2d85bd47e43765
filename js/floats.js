// Whole-number floats keep their form: Python's 50.0 arrives as the JSON text "50.0", which
// JSON.parse makes the number 50, the same as the int 50. Where the browser can read a number's
// source text (JSON.parse source access), the parse marks the place of each such float
// (holder and key); the marks follow copies and patches, and the tree and the editor show the
// value as 50.0. Without source access nothing is marked and numbers show as JavaScript writes them.

const FLOATS = new WeakMap(); // holder (object or array) -> Set of keys holding a whole-number float

/** JSON.parse's reviver: marks whole-number floats by their source text. */
export function floatReviver(key, value, context) {
  if (typeof value === "number" && Number.isInteger(value) && context && typeof context.source === "string" && /[.eE]/.test(context.source)) markFloat(this, key, true);
  return value;
}

/** Whether ``holder[key]`` is a whole-number float. */
export function isFloat(holder, key) {
  const keys = holder && typeof holder === "object" ? FLOATS.get(holder) : undefined;
  return keys !== undefined && keys.has(String(key));
}

/** Mark (or unmark) ``holder[key]`` as a whole-number float. */
export function markFloat(holder, key, on) {
  if (!holder || typeof holder !== "object") return;
  let keys = FLOATS.get(holder);
  if (on) {
    if (!keys) FLOATS.set(holder, (keys = new Set()));
    keys.add(String(key));
  } else if (keys) keys.delete(String(key));
}

/** Copy ``from``'s marks to ``to`` (a copy of it). */
export function copyFloats(from, to) {
  const keys = FLOATS.get(from);
  if (keys && keys.size) FLOATS.set(to, new Set(keys));
}

/** An array's marks after ``count`` items were inserted (count > 0) or removed (< 0) at ``index``. */
export function shiftFloats(array, index, count) {
  const keys = FLOATS.get(array);
  if (!keys || !keys.size) return;
  const moved = new Set();
  for (const key of keys) {
    const i = Number(key);
    if (i < index) moved.add(key);
    else if (count > 0 || i >= index - count) moved.add(String(i + count));
  }
  FLOATS.set(array, moved);
}

/** A number as the state holds it: "50.0" for a whole-number float, else as JavaScript writes it. */
export function numberText(value, float) {
  return float && Number.isFinite(value) && Number.isInteger(value) && Math.abs(value) < 1e16 ? value.toFixed(1) : JSON.stringify(value);
}

const TAG = "\u0000float:";

/** JSON text of ``value`` with its whole-number floats written as floats ("50.0"). */
export function jsonText(value, indent) {
  let tagged = false;
  const text = JSON.stringify(
    value,
    function (key, v) {
      if (typeof v === "number" && isFloat(this, key)) {
        tagged = true;
        return TAG + numberText(v, true);
      }
      return v;
    },
    indent,
  );
  return tagged ? text.replace(/"\\u0000float:([^"]*)"/g, "$1") : text;
}
