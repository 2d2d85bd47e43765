// History: one row per turn; selecting a row makes that turn the selected one everywhere.
//
// A view holds the last turns' rows (the snapshot's); the older ones are fetched a page at a time
// when the user asks for them (the "earlier turns" row) or scrolls up to the top of the table.
// The view keeps the rows that were in sight in place when older rows arrive above them.

import { empty, h } from "../dom.js";
import { firstLine, ms, short } from "../format.js";

const COLUMNS = ["#", "message", "answer", "tools", "tokens", "state block", "time"];

/** The turn's tool calls, and how many of them failed ("2 · ✕ 1 failed"). */
export function toolsCell(t) {
  const count = t.loaded ? t.tools.length : t.toolCount;
  const failed = t.loaded ? t.tools.filter((c) => c.done && c.error).length : t.failedTools || 0;
  if (!failed) return h("td", { class: "anb-num" }, String(count));
  return h("td", { class: "anb-num anb-history-failed-tool", "data-failed": failed, title: failed + " tool call(s) failed in this turn" }, count + " · ✕ " + failed + " failed");
}

/** A turn that paused for a person: "paused" while it waits, "resumed" once it went on. */
export function pauseBadge(t) {
  if (t.status === "paused") return h("span", { class: "anb-badge anb-badge-paused", "data-pause": "paused", title: "this turn waits for a person: decide on the cards at the top" }, "‖ paused");
  if (!t.resumed) return null; // never paused, or left behind by a newer turn (its answer says so)
  const times = t.resumed > 1 ? " ×" + t.resumed : "";
  return h("span", { class: "anb-badge anb-badge-resumed", "data-pause": "resumed", title: "this turn paused for a person and went on with their decisions (" + t.resumed + " time(s))" }, "resumed" + times);
}

function row(ctx, t, selected) {
  const answer = t.status === "failed" ? "✕ " + short(firstLine(t.error), 80) : t.status === "running" ? "running…" : t.status === "paused" ? "" : short(t.content ?? "", 80);
  return h(
    "tr",
    {
      class: "anb-history-row" + (t.index === selected ? " anb-history-selected" : "") + " anb-row-" + t.status,
      tabindex: "0",
      "aria-selected": t.index === selected ? "true" : "false",
      "data-turn": t.index,
      "data-loaded": t.loaded ? "true" : "false", // held as its row only until it is shown
      "data-fkey": "turn-" + t.index,
      "data-anchor": "turn-" + t.index,
      onclick: () => ctx.select(t.index),
      onkeydown: (ev) => {
        if (ev.key === "Enter" || ev.key === " ") {
          ev.preventDefault();
          ctx.select(t.index);
        }
      },
    },
    h("td", {}, String(t.index + 1)),
    h("td", { class: "anb-cell-text" }, short(t.message, 80)),
    h("td", { class: "anb-cell-text" + (t.status === "failed" ? " anb-bad" : "") }, pauseBadge(t), answer),
    toolsCell(t),
    h("td", { class: "anb-num" }, (t.usage.estimated ? "≈" : "") + (t.usage.input + t.usage.output)),
    h("td", { class: "anb-num anb-state-tokens", title: "tokens of the <session_state> block in this turn's prompt" + (t.tokensExact === false ? " (estimated)" : "") }, t.stateTokens === null ? "–" : (t.tokensExact ? "" : "≈") + t.stateTokens),
    h("td", { class: "anb-num" }, ms(t.durationMs)),
  );
}

/** The row above the held rows: how many turns are not listed yet, and a button to list more. */
function earlier(store) {
  const count = store.listedFrom;
  const asking = store.asked.has("rows" + count);
  return h(
    "tr",
    { class: "anb-history-earlier", "data-anchor": "earlier" },
    h(
      "td",
      { colspan: String(COLUMNS.length) },
      h(
        "button",
        { type: "button", class: "anb-more", "data-fkey": "history-earlier", disabled: asking, onclick: () => store.needRows() },
        asking ? "loading earlier turns…" : "show earlier turns (" + count + " not listed)",
      ),
    ),
  );
}

export default {
  id: "history",
  label: "History",
  count: (ctx) => (ctx.store.turns.length ? " (" + ctx.store.turns.length + ")" : ""),
  inputs: (ctx) => [ctx.store.version.list, ctx.turn ? ctx.turn.index : -1],
  // Scrolled up to the top of the table: list the turns before it.
  onScrollTop: (ctx) => ctx.store.needRows(),
  panel(ctx) {
    const store = ctx.store;
    const turns = store.turns;
    if (!turns.length) return empty("No turns yet.");
    const selected = ctx.turn ? ctx.turn.index : null;
    const rows = turns.slice(store.listedFrom).map((t) => row(ctx, t, selected));
    return h(
      "table",
      { class: "anb-history" },
      h("thead", {}, h("tr", {}, COLUMNS.map((c) => h("th", { title: c === "state block" ? "tokens of the <session_state> block" : null }, c)))),
      h("tbody", {}, store.listedFrom > 0 ? earlier(store) : null, rows),
    );
  },
};
