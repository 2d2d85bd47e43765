// The inline JSON editor: a text box, apply / cancel, and why the kernel refused what was
// applied. The State tab edits a path of the state with it; a pending card edits a call's
// arguments (or a breakpoint's request) with it. The kernel checks what is applied; the editor
// only says when the text is not JSON at all.

import { h } from "./dom.js";

/** Why ``text`` is not JSON, or null when it is. */
export function notJSON(text) {
  try {
    JSON.parse(text);
    return null;
  } catch (err) {
    return "not JSON: " + err.message;
  }
}

/**
 * The editor. ``text`` fills the box (``waiting``: the value is on its way, the box is disabled);
 * ``onInput(text)`` follows each keystroke, ``onApply(text)`` is Apply or Ctrl+Enter,
 * ``onCancel()`` is Cancel or Escape. ``error`` (a refusal, shown as an alert) and ``note`` (a
 * remark, such as a check that passed) go under it; ``before`` goes above the box. ``fkey``
 * prefixes the focus keys, so the focus survives a redraw.
 */
export function jsonEditor({ text = "", waiting = false, label = "value as JSON", applyLabel = "apply", applying = false, hint = "JSON · Ctrl+Enter applies", error = null, note = null, before = null, fkey = "edit", attrs = {}, onInput, onApply, onCancel }) {
  const box = h("textarea", { class: "anb-edit-text", "aria-label": label, rows: String(Math.min(12, Math.max(1, (text || "").split("\n").length))), "data-fkey": fkey + "-text", spellcheck: "false" });
  box.value = waiting ? "" : text || "";
  if (waiting) {
    box.disabled = true;
    box.placeholder = "loading the whole value…";
  }
  box.addEventListener("input", () => onInput && onInput(box.value));
  const apply = () => {
    if (!waiting) onApply(box.value);
  };
  box.addEventListener("keydown", (ev) => {
    if (ev.key === "Enter" && (ev.ctrlKey || ev.metaKey)) apply();
    if (ev.key === "Escape") onCancel();
  });
  return h(
    "div",
    Object.assign({ class: "anb-editor" }, attrs),
    before,
    box,
    h(
      "div",
      { class: "anb-editor-actions" },
      h("button", { type: "button", class: "anb-edit-apply", "data-fkey": fkey + "-apply", disabled: waiting, onclick: apply }, applying ? "applying…" : applyLabel),
      h("button", { type: "button", class: "anb-edit-cancel", "data-fkey": fkey + "-cancel", onclick: () => onCancel() }, "cancel"),
      h("span", { class: "anb-label" }, hint),
    ),
    error ? h("div", { class: "anb-edit-error", role: "alert" }, error) : null,
    note ? h("div", { class: "anb-edit-note" }, note) : null,
  );
}
