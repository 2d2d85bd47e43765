// Context: blocks injected into the user message by passive providers, and the retrievals the
// model asked for through retrieve_context.

import { disclosure, empty, h } from "../dom.js";
import { ms, short } from "../format.js";
import { loading } from "./parts.js";
import { toolKey } from "./tools.js";

const BLOCK_CUT = 600; // characters of a context block shown before "show all"

function blockText(view, text, key) {
  const s = String(text ?? "");
  if (s.length <= BLOCK_CUT || view.full.has(key)) return h("td", { class: "anb-ctx-text" }, s);
  const more = h("button", { type: "button", class: "anb-more", "data-fkey": "full" + key }, "show all (" + s.length + " chars)");
  const cell = h("td", { class: "anb-ctx-text" }, s.slice(0, BLOCK_CUT) + "…", " ", more);
  more.addEventListener("click", () => {
    view.full.add(key);
    cell.replaceWith(blockText(view, s, key));
  });
  return cell;
}

function scoreText(score) {
  return score === null || score === undefined ? "—" : String(Math.round(score * 1000) / 1000);
}

function blocksTable(view, r, key) {
  return h(
    "table",
    { class: "anb-ctx-blocks" },
    h("thead", {}, h("tr", {}, ["label", "score", "source", "text"].map((c) => h("th", {}, c)))),
    h(
      "tbody",
      {},
      r.blocks.map((b, j) =>
        h(
          "tr",
          { class: "anb-ctx-block", title: b.metadata && Object.keys(b.metadata).length ? "metadata: " + JSON.stringify(b.metadata) : null },
          h("td", { class: "anb-ctx-label" }, "(" + r.label + ")"),
          h("td", { class: "anb-num" }, scoreText(b.score)),
          h("td", { class: "anb-ctx-source" }, b.source ?? ""),
          blockText(view, b.text, key + ":" + j),
        ),
      ),
    ),
  );
}

function retrievalView(ctx, r, i) {
  const { view, turn } = ctx;
  const key = "ctx:" + turn.index + ":" + i;
  const found = r.blocks.length;
  const summary = h(
    "summary",
    { class: "anb-ctx-summary" },
    h("span", { class: "anb-ctx-label" }, r.label),
    h("span", { class: "anb-ctx-provider" }, r.provider),
    h("span", { class: "anb-ctx-query", title: "query: " + r.query }, JSON.stringify(short(r.query, 80))),
    h("span", { class: "anb-ctx-count" + (found ? "" : " anb-ctx-none") }, found + " block(s)" + (r.top_k ? ", top " + r.top_k : ", all")),
    h("span", { class: "anb-tool-time" }, ms(r.duration_ms)),
  );
  const fill = () => {
    const body = h("div", { class: "anb-ctx-body" });
    if (r.via === "tool" && r.toolId) {
      const show = () =>
        ctx.update(() => {
          const at = turn.tools.findIndex((t) => t.id === r.toolId);
          if (at >= 0) view.open.add(toolKey(turn, turn.tools, at));
          view.tab = "tools";
        });
      body.appendChild(h("div", { class: "anb-ctx-call" }, "asked by the model through a tool call ", h("button", { type: "button", class: "anb-more", "data-fkey": "ctx-call-" + i, onclick: show }, "show call " + r.toolId)));
    }
    body.appendChild(found ? blocksTable(view, r, key) : empty("The provider returned no block for this query."));
    return body;
  };
  return disclosure(view, key, { attrs: { class: "anb-ctx anb-ctx-" + r.via, "data-label": r.label }, open: true, summary, fill });
}

export default {
  id: "context",
  label: "Context",
  needsTurn: true,
  count: (ctx) => (ctx.turn && ctx.turn.contextCount ? " (" + ctx.turn.contextBlocks + ")" : ctx.turn ? " (none)" : ""),
  // Greyed, not hidden: tabs keep their places while the user steps through turns.
  idle: (ctx) => (ctx.turn && ctx.turn.contextCount ? null : "no context retrieved in this turn"),
  inputs: (ctx) => [ctx.turn.loaded, ctx.turn.v.context],
  panel(ctx) {
    const turn = ctx.turn;
    if (!turn.loaded) return loading(ctx);
    if (!turn.context.length) {
      return empty("No context in this turn. Passive providers (context_providers=[...], or %%agent --context) put blocks into the user message; active ones let the model call retrieve_context.");
    }
    const indexed = turn.context.map((r, i) => [r, i]);
    const passive = indexed.filter(([r]) => r.via === "passive");
    const asked = indexed.filter(([r]) => r.via !== "passive");
    const out = h("div", { class: "anb-context" });
    if (passive.length) {
      out.appendChild(h("div", { class: "anb-label" }, "injected into the user message (CONTEXT field)"));
      out.appendChild(h("div", {}, passive.map(([r, i]) => retrievalView(ctx, r, i))));
      // The field as the model read it: "[Context]" then one "(LABEL) text" line per block.
      const lines = passive.flatMap(([r]) => r.blocks.map((b) => ("(" + r.label + ") " + b.text).trimEnd()));
      if (lines.length) {
        out.appendChild(
          disclosure(ctx.view, "ctx-field:" + turn.index, {
            attrs: { class: "anb-message-row" },
            summary: h("summary", {}, "CONTEXT field as sent"),
            fill: () => h("pre", { class: "anb-pre" }, ["[Context]", ...lines].join("\n")),
          }),
        );
      }
    }
    if (asked.length) {
      out.appendChild(h("div", { class: "anb-label" }, "retrieved by the model (" + asked.length + " call(s))"));
      out.appendChild(h("div", {}, asked.map(([r, i]) => retrievalView(ctx, r, i))));
    }
    return out;
  },
};
