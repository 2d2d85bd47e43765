// Checks: an evaluation case's verdicts (agentnb.evals) — each check, pass / fail / error, its
// reason and its evidence. Only an inspector opened on a case (run.inspect(case_id), or the
// results grid) has them; elsewhere the tab stays greyed out.

import { disclosure, empty, h } from "../dom.js";
import { WIRE } from "../wire.js";

const MARK = { pass: "✓", fail: "✗", error: "!" };

/** The case's checks from the trait: {case, repeat, verdicts: [...]}, or null. */
export function readChecks(model) {
  const raw = model && typeof model.get === "function" ? model.get(WIRE.TRAIT_CHECKS) : "";
  if (!raw) return null;
  try {
    const data = JSON.parse(raw);
    return data && Array.isArray(data.verdicts) ? data : null;
  } catch {
    return null;
  }
}

/** One row per verdict, as shown: mark, check, status, reason, evidence as indented JSON. */
export function checkRows(data) {
  return data.verdicts.map((v) => {
    const status = v.status === "pass" || v.status === "fail" ? v.status : "error";
    return {
      check: String(v.check ?? ""),
      status,
      mark: MARK[status],
      reason: String(v.reason ?? ""),
      evidence: v.evidence === null || v.evidence === undefined ? "" : JSON.stringify(v.evidence, null, 2),
    };
  });
}

/** "passed/total" for the tab's label. */
export function checkCount(data) {
  const rows = checkRows(data);
  return rows.filter((r) => r.status === "pass").length + "/" + rows.length;
}

function rowView(ctx, r, i) {
  const head = h(
    "summary",
    { class: "anb-check-summary anb-check-" + r.status },
    h("span", { class: "anb-check-mark", "aria-label": r.status }, r.mark),
    " ",
    h("span", { class: "anb-check-name" }, r.check),
    " ",
    h("span", { class: "anb-check-reason" }, r.reason),
  );
  if (!r.evidence) return h("div", { class: "anb-check-row", "data-check": r.check, "data-status": r.status }, head);
  return disclosure(ctx.view, "check:" + i, {
    attrs: { class: "anb-check-row", "data-check": r.check, "data-status": r.status },
    summary: head,
    fill: () => h("pre", { class: "anb-pre anb-check-evidence" }, r.evidence),
  });
}

export default {
  id: "checks",
  label: "Checks",
  count: (ctx) => {
    const data = readChecks(ctx.store.model);
    return data ? " (" + checkCount(data) + ")" : "";
  },
  needsTurn: false,
  idle: (ctx) => (readChecks(ctx.store.model) ? null : "an evaluation case's checks: open a case with run.inspect(case_id)"),
  inputs: (ctx) => [ctx.store.model.get(WIRE.TRAIT_CHECKS) || ""],
  panel(ctx) {
    const data = readChecks(ctx.store.model);
    if (!data) return empty("No checks here: this tab shows an evaluation case's verdicts (run.inspect(case_id), or a row of the results grid).");
    const title = "case " + data.case + (data.repeat ? " · repeat " + (data.repeat + 1) : "") + (data.status && data.status !== "ok" ? " · did not finish: " + (data.error || "") : "");
    return h("div", { class: "anb-checks" }, h("div", { class: "anb-label" }, title), checkRows(data).map((r, i) => rowView(ctx, r, i)));
  },
};
