// Pieces several tabs show: prompt sections, chat messages, a request payload, the model-call
// picker.

import { disclosure, h } from "../dom.js";
import { argsText, counterText, firstLine, inputItem, pretty, short, tokenCount, tokenParts } from "../format.js";
import { NO_ANSWER } from "../store.js";
import { contentView, contentHead, partsRow } from "../thumbs.js";

export function jsonBlock(value) {
  return h("pre", { class: "anb-pre anb-json" }, typeof value === "string" ? value : pretty(value));
}

function sectionText(section) {
  // The section's text with its placeholders marked; offsets are in the whole prompt.
  const out = h("div", { class: "anb-section-text" });
  let pos = 0;
  const text = section.text;
  const holders = [...(section.placeholders || [])].sort((a, b) => a.start - b.start);
  for (const p of holders) {
    const start = p.start - section.start;
    const end = p.end - section.start;
    if (start < pos || end > text.length) continue;
    out.appendChild(document.createTextNode(text.slice(pos, start)));
    out.appendChild(
      h(
        "span",
        {
          class: p.resolved ? "anb-ph" : "anb-ph anb-ph-unresolved",
          title: p.resolved ? "{" + p.name + "} filled from " + p.source + "." + p.name : "{" + p.name + "} unresolved: no state key or dependency of that name",
        },
        text.slice(start, end),
        h("span", { class: "anb-ph-key" }, p.resolved ? p.name : "unresolved"),
      ),
    );
    pos = end;
  }
  out.appendChild(document.createTextNode(text.slice(pos)));
  return out;
}

/** A prompt as the tabs show it, from a prompt_rendered event's fields or a preview message. */
export function promptOf(p) {
  return {
    sections: p.sections || [],
    userPrompt: p.userPrompt ?? p.user_prompt,
    notes: p.notes || [],
    hiddenKeys: p.hiddenKeys || p.hidden_keys || [],
    unusedKeys: p.unusedKeys || p.unused_keys || [],
    tokens: p.tokens || null,
  };
}

function textBySource(prompt) {
  const out = new Map();
  for (const s of prompt ? prompt.sections : []) out.set(s.source, (out.get(s.source) || "") + s.text);
  return out;
}

/** The sources of ``prompt``'s sections whose text differs from ``against``'s (new ones too). */
export function changedSources(prompt, against) {
  if (!against) return new Set();
  const a = textBySource(against);
  const b = textBySource(prompt);
  return new Set([...b.keys()].filter((source) => a.get(source) !== b.get(source)));
}

/** Which key filled each placeholder, which stayed as written, the state keys the prompt did not
 * use, and those hidden from the model. */
export function templateMap(prompt) {
  const rows = [];
  const seen = new Set();
  for (const p of prompt.sections.flatMap((s) => s.placeholders || [])) {
    if (seen.has(p.name)) continue;
    seen.add(p.name);
    rows.push(
      h(
        "tr",
        { class: p.resolved ? "anb-map-filled" : "anb-map-unresolved", "data-placeholder": p.name },
        h("td", {}, h("code", {}, "{" + p.name + "}")),
        h("td", {}, p.resolved ? "← " + p.source + "." + p.name : "unresolved: left as written"),
      ),
    );
  }
  const keyRow = (cls, label, keys) =>
    keys.length ? h("tr", { class: cls }, h("td", {}, label), h("td", {}, keys.flatMap((k, i) => [i ? ", " : "", h("code", {}, k)]))) : null;
  rows.push(keyRow("anb-map-unused", "not in the prompt", prompt.unusedKeys), keyRow("anb-map-hidden", "hidden from the model", prompt.hiddenKeys));
  if (!rows.some(Boolean)) return null;
  return h("div", { class: "anb-map" }, h("div", { class: "anb-label" }, "template map"), h("table", { class: "anb-map-table" }, h("tbody", {}, rows)));
}

function tokensFooter(prompt) {
  const tokens = prompt.tokens;
  if (!tokens) return null;
  return h("div", { class: "anb-tokens-line" + (tokens.exact ? "" : " anb-estimate"), title: counterText(tokens) }, "this prompt's tokens (the input of one model call; the header sums the turn's calls, in and out): " + tokenParts(tokens).join(" · ") + " — " + counterText(tokens));
}

/** The system prompt one section per row (each with its token count), then the user message
 * (with its images and files, ``parts``: thumbnails from ``images``, looked for in turn ``turn``),
 * the prompt's cost, the template map and the notes. Sections that differ from ``against`` are
 * marked changed. */
export function sectionsView(prompt, { against = null, parts = null, images = null, turn = null } = {}) {
  const rows = h("div", { class: "anb-sections" });
  const changed = changedSources(prompt, against);
  const tokens = prompt.tokens;
  prompt.sections.forEach((section, i) => {
    const isState = section.source === "session_state";
    const count = tokens ? tokenCount(tokens, tokens.sections[i]) : "";
    const isChanged = changed.has(section.source);
    rows.appendChild(
      h(
        "div",
        { class: "anb-section" + (isState ? " anb-section-state" : "") + (isChanged ? " anb-section-changed" : ""), "data-source": section.source },
        h(
          "div",
          { class: "anb-section-label", title: "produced by the " + section.source + " option" },
          section.source,
          count ? h("span", { class: "anb-section-tokens", title: counterText(tokens) }, count + " tok") : null,
          isChanged ? h("span", { class: "anb-section-mark" }, "changed") : null,
        ),
        sectionText(section),
      ),
    );
  });
  if (prompt.userPrompt !== undefined && prompt.userPrompt !== null) {
    const count = tokens ? tokenCount(tokens, tokens.user) : "";
    rows.appendChild(
      h(
        "div",
        { class: "anb-section anb-section-user", "data-source": "user" },
        h("div", { class: "anb-section-label" }, "user message", count ? h("span", { class: "anb-section-tokens" }, count + " tok") : null),
        h("div", { class: "anb-section-text" }, prompt.userPrompt, partsRow(images, parts, turn)),
      ),
    );
  }
  const out = h("div", {}, rows, tokensFooter(prompt), templateMap(prompt));
  if (prompt.notes && prompt.notes.length) out.appendChild(h("ul", { class: "anb-notes" }, prompt.notes.map((n) => h("li", {}, n))));
  return out;
}

/** One chat message of a request, collapsible (``key`` remembers whether the user opened it); its
 * images and files as thumbnails and lines (their pictures looked for first in turn ``turn``). */
export function messageView(view, key, m, open, turn = null) {
  const head = m.role + (m.tool_call_id ? " (" + m.tool_call_id + ")" : "") + ": " + short(firstLine(contentHead(m.content) ?? (m.tool_calls ? m.tool_calls.map((c) => c.function?.name).join(", ") : "")), 100);
  return disclosure(view, key, {
    attrs: { class: "anb-message-row anb-role-" + String(m.role).replace(/[^a-z]/g, "") },
    open,
    summary: h("summary", {}, head),
    fill: () => {
      const body = [];
      if (m.content !== null && m.content !== undefined && m.content !== "") body.push(contentView(view.images, m.content, turn));
      if (m.tool_calls) {
        const calls = m.tool_calls.map((c) => "→ " + (c.function?.name ?? "?") + "(" + argsText(c.function?.arguments) + ")  [" + c.id + "]");
        body.push(h("pre", { class: "anb-pre anb-tool-calls" }, calls.join("\n")));
      }
      if (m.note) body.push(h("div", { class: "anb-label anb-note" }, m.note));
      return body;
    },
  });
}

function copyButton(getText) {
  const button = h("button", { type: "button", class: "anb-copy", "data-fkey": "copy" }, "copy JSON");
  button.addEventListener("click", () => {
    const done = (text) => (button.textContent = text);
    try {
      navigator.clipboard.writeText(getText()).then(
        () => done("copied"),
        () => done("copy failed"),
      );
    } catch (err) {
      done("copy failed");
    }
  });
  return button;
}

function rawRow(view, key, summary, value) {
  return disclosure(view, key, { attrs: { class: "anb-message-row" }, summary: h("summary", {}, summary), fill: () => jsonBlock(value) });
}

/** A model request payload: its messages, tools and options, and the raw JSON (``turn``: where
 * its images are looked for first). */
export function requestView(view, key, request, turn = null) {
  // A Responses API request lists ``input`` items (reasoning items among them), not messages.
  const { messages: chat = [], tools = [], ...rest } = request;
  const items = Array.isArray(rest.input) ? rest.input : null;
  if (items) delete rest.input;
  const messages = items ? items.map(inputItem) : chat;
  return h(
    "div",
    { class: "anb-request" },
    h(
      "div",
      { class: "anb-request-head" },
      h("span", {}, (rest.model ? rest.model + " · " : "") + messages.length + " message(s) · " + tools.length + " tool(s)"),
      copyButton(() => JSON.stringify(request, null, 2)),
    ),
    messages.map((m, i) => messageView(view, key + ":m" + i, m, i === messages.length - 1, turn)),
    tools.length ? rawRow(view, key + ":tools", "tools: " + tools.map((t) => t.function?.name || t.name).join(", "), tools) : null,
    Object.keys(rest).length ? rawRow(view, key + ":options", "options: " + Object.keys(rest).join(", "), rest) : null,
    rawRow(view, key + ":raw", "raw JSON", request),
  );
}

/** The turn's model calls that have started. */
export function modelCalls(turn) {
  return turn.calls.filter(Boolean);
}

/** The model call picked in Prompt / Request (the last one unless the user picked another). */
export function pickedCall(ctx) {
  const calls = modelCalls(ctx.turn);
  if (!calls.length) return null;
  return calls[ctx.view.call === null ? calls.length - 1 : Math.min(ctx.view.call, calls.length - 1)];
}

/** Buttons to pick one model call of the turn (none when it made one call). */
export function callPicker(ctx, forWhat) {
  const calls = modelCalls(ctx.turn);
  if (calls.length <= 1) return null;
  const picked = calls.indexOf(pickedCall(ctx));
  return h(
    "div",
    { class: "anb-picker", role: "group", "aria-label": "model call" },
    h("span", { class: "anb-label" }, forWhat),
    calls.map((c, i) =>
      h(
        "button",
        {
          type: "button",
          class: "anb-pick" + (i === picked ? " anb-pick-selected" : ""),
          "aria-pressed": i === picked ? "true" : "false",
          "data-fkey": "call-" + i,
          onclick: () => ctx.update(() => (ctx.view.call = i)),
        },
        "call " + (i + 1),
      ),
    ),
  );
}

/** A placeholder for something asked of the kernel: "Loading …", or why it will not come. */
export function waiting(store, what) {
  if (!store.offline) return h("div", { class: "anb-empty anb-waiting" }, "Loading " + what + "…");
  return h("div", { class: "anb-empty anb-waiting anb-offline-note" }, "Cannot load " + what + ": " + store.offline + ". " + whatToDo(store.offline));
}

/** How to get a live inspector back. */
export const RECONNECT = "Re-run this cell for a live inspector.";

/** What to do about ``offline`` (why the kernel cannot be reached): wait for a busy kernel,
 * else re-run the cell (a kernel restarted or shut down has no live widget behind this view). */
export function whatToDo(offline) {
  return offline === NO_ANSWER ? "It catches up when the kernel is free; if it does not, re-run this cell." : RECONNECT;
}

/** Ask for a turn that is only known from its summary; the placeholder to show meanwhile. */
export function loading(ctx) {
  ctx.store.needTurn(ctx.turn.index);
  return waiting(ctx.store, "turn " + (ctx.turn.index + 1));
}
