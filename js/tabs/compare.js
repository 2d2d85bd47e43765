// Compare: two turns side by side — a fork beside its parent, or two turns of one agent — as the
// kernel compared them (agentnb/history/compare.py): why they differ, the system prompt by section with
// token counts, the requests, tool calls, state and answers. Nothing is diffed here.

import { append, disclosure, empty, h } from "../dom.js";
import { tokenCount } from "../format.js";
import { WIRE } from "../wire.js";

const MARK = { same: "=", changed: "~", removed: "−", added: "+" };
const SIDE = { removed: "only left", added: "only right" };

function lines(rows) {
  return h(
    "table",
    { class: "anb-cmp-lines" },
    h(
      "tbody",
      {},
      rows.map((row) =>
        row.how === "fold"
          ? h("tr", { class: "anb-cmp-fold" }, h("td", { colspan: "2" }, "⋯ " + row.count + (row.cut ? " more row(s) not shown" : " equal line(s)")))
          : h("tr", { class: "anb-cmp-" + row.how }, h("td", { class: "anb-cmp-left" }, row.left ?? ""), h("td", { class: "anb-cmp-right" }, row.right ?? "")),
      ),
    ),
  );
}

function sideCount(tokens, n) {
  return tokens ? tokenCount(tokens, n) + " tok" : "";
}

/** An agent and a turn for one side; picking either compares again. */
function picker(ctx, which, side, agents, pick) {
  const agentBox = h("select", { class: "anb-cmp-agent", "aria-label": which + " agent", "data-fkey": "cmp-agent-" + which });
  for (const a of agents) agentBox.appendChild(h("option", { value: a.name, selected: a.name === side.agent }, a.name + (a.parent ? " (fork of " + a.parent + ")" : "")));
  const turns = (agents.find((a) => a.name === side.agent) || { turns: 0 }).turns;
  const turnBox = h("select", { class: "anb-cmp-turn", "aria-label": which + " turn", "data-fkey": "cmp-turn-" + which });
  for (let i = 0; i < turns; i++) turnBox.appendChild(h("option", { value: String(i), selected: i === side.turn }, "turn " + (i + 1)));
  agentBox.addEventListener("change", () => {
    const count = (agents.find((a) => a.name === agentBox.value) || { turns: 1 }).turns;
    pick({ agent: agentBox.value, turn: Math.min(side.turn, count - 1) });
  });
  turnBox.addEventListener("change", () => pick({ agent: side.agent, turn: Number(turnBox.value) }));
  return h("span", { class: "anb-cmp-side", "data-side": which }, agentBox, turnBox);
}

function bullets(cls, label, items) {
  if (!items.length) return null;
  return h("div", { class: cls }, h("span", { class: "anb-label" }, label), h("ul", {}, items.map((x) => h("li", {}, x))));
}

function body(ctx, c) {
  const { view } = ctx;
  const [ta, tb] = c.tokens;
  const out = h("div", { class: "anb-cmp-body" });
  append(out, [
    c.same ? h("div", { class: "anb-cmp-why" }, "The two turns sent and did the same.") : bullets("anb-cmp-why", "why", c.causes.length ? c.causes : ["nothing differs in what was sent"]),
    bullets("anb-cmp-effects", "what came of it", c.effects),
  ]);
  const head = h("tr", {}, h("th", {}, ""), h("th", {}, c.left), h("th", {}, c.right));
  const table = h("table", { class: "anb-cmp-table" }, h("thead", {}, head));
  const rows = h("tbody", {});
  rows.appendChild(h("tr", { class: "anb-cmp-tokens" }, h("td", {}, "prompt tokens"), h("td", {}, ta ? tokenCount(ta, ta.total) : "–"), h("td", {}, tb ? tokenCount(tb, tb.total) : "–")));
  for (const s of c.sections) {
    rows.appendChild(
      h("tr", { class: "anb-cmp-section anb-cmp-" + s.how, "data-source": s.source }, h("td", {}, MARK[s.how] + " " + s.source + (SIDE[s.how] ? " (" + SIDE[s.how] + ")" : "")), h("td", {}, sideCount(ta, s.left_tokens)), h("td", {}, sideCount(tb, s.right_tokens))),
    );
    if (s.how !== "same") rows.appendChild(h("tr", { class: "anb-cmp-text" }, h("td", {}, ""), h("td", { colspan: "2" }, lines(s.rows))));
  }
  table.appendChild(rows);
  out.appendChild(h("div", { class: "anb-label" }, "system prompt, by section"));
  out.appendChild(table);
  out.appendChild(h("div", { class: "anb-label" }, "requests"));
  for (const r of c.requests) {
    const what = r.how === "changed" ? "differs in " + r.parts.join(", ") : r.how === "same" ? "the same" : SIDE[r.how];
    out.appendChild(
      disclosure(view, "cmp-request:" + c.left + ":" + c.right + ":" + r.call, {
        attrs: { class: "anb-cmp-request anb-cmp-" + r.how, "data-call": r.call },
        summary: h("summary", {}, MARK[r.how] + " call " + r.call + ": " + what),
        fill: () => lines(r.rows),
      }),
    );
  }
  if (c.tool_calls.length) {
    out.appendChild(h("div", { class: "anb-label" }, "tool calls"));
    out.appendChild(
      h("table", { class: "anb-cmp-table anb-cmp-calls" }, h("tbody", {}, c.tool_calls.map((t) => h("tr", { class: "anb-cmp-" + t.how }, h("td", {}, MARK[t.how] + " " + t.number), h("td", {}, t.left ?? "–"), h("td", {}, t.right ?? "–"))))),
    );
  }
  out.appendChild(h("div", { class: "anb-label" }, "state after the turn"));
  out.appendChild(
    h(
      "table",
      { class: "anb-cmp-table anb-cmp-state" },
      h(
        "tbody",
        {},
        c.state.map((k) =>
          h(
            "tr",
            { class: "anb-cmp-" + k.how, "data-key": k.key },
            h("td", {}, MARK[k.how] + " " + k.key, k.hidden ? h("span", { class: "anb-badge anb-badge-hidden", title: "kept out of the prompt (hide_state_keys)" }, "hidden from the model") : null),
            h("td", {}, k.left ?? "–"),
            h("td", {}, k.right ?? "–", k.paths.length ? h("div", { class: "anb-label" }, "differs at " + k.paths.join(", ")) : null),
          ),
        ),
      ),
    ),
  );
  // The answers in the same three columns as the table above: each under its side's heading.
  out.appendChild(h("div", { class: "anb-label" }, "answers"));
  out.appendChild(
    h(
      "table",
      { class: "anb-cmp-table anb-cmp-answers" },
      h("thead", {}, h("tr", {}, h("th", {}, ""), h("th", {}, c.left), h("th", {}, c.right))),
      h("tbody", {}, h("tr", {}, h("td", {}, "answer"), h("td", { class: "anb-cmp-left" }, c.answers[0] ?? ""), h("td", { class: "anb-cmp-right" }, c.answers[1] ?? ""))),
    ),
  );
  return out;
}

export default {
  id: "compare",
  label: "Compare",
  needsTurn: true,
  inputs: (ctx) => [ctx.store.version.compare, ctx.store.version.list],
  panel(ctx) {
    const { store, view, turn } = ctx;
    // Until sides are picked, the default pair follows the selected turn (and new turns).
    const want = JSON.stringify(view.compareSides || ["default", turn.index, store.turns.length]);
    if (view.compareAsked !== want && turn.status !== "running") {
      view.compareAsked = want;
      const sides = view.compareSides;
      store.compare(sides && sides.left, sides && sides.right, turn.index);
    }
    const reply = store.comparison;
    if (!reply) return empty(store.comparePending ? "Comparing…" : "Nothing to compare yet.");
    const [left, right, agents] = [reply[WIRE.LEFT], reply[WIRE.RIGHT], reply.agents];
    const pick = (which) => (side) => ctx.update(() => (view.compareSides = which === "left" ? { left: side, right } : { left, right: side }));
    const bar = h(
      "div",
      { class: "anb-cmp-bar" },
      picker(ctx, "left", left, agents, pick("left")),
      h("span", { class: "anb-label" }, "↔"),
      picker(ctx, "right", right, agents, pick("right")),
      store.comparePending ? h("span", { class: "anb-label" }, "comparing…") : null,
    );
    return h("div", { class: "anb-compare" }, bar, body(ctx, reply.comparison));
  },
};
