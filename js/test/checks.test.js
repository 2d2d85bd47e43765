import assert from "node:assert/strict";
import test from "node:test";

import checks, { checkCount, checkRows, readChecks } from "../tabs/checks.js";
import { WIRE } from "../wire.js";
import { Model } from "./model.js";

const verdicts = {
  case: "T-2",
  repeat: 0,
  status: "ok",
  verdicts: [
    { check: "added", status: "fail", reason: "add_item executed, but not with answered by tool", evidence: [{ name: "add_item", answered_by: "no_sweets_hook" }] },
    { check: "budget", status: "pass", reason: "", evidence: null },
    { check: "odd", status: "weird", reason: "<img src=x onerror=alert(1)>" },
  ],
};

test("a case inspector's checks are read from their trait, and nothing else has them", () => {
  const model = new Model({ [WIRE.TRAIT_CHECKS]: JSON.stringify(verdicts) });
  assert.equal(readChecks(model).case, "T-2");
  assert.equal(readChecks(new Model({})), null);
  assert.equal(readChecks(new Model({ [WIRE.TRAIT_CHECKS]: "{not json" })), null);
  assert.equal(readChecks(new Model({ [WIRE.TRAIT_CHECKS]: '{"verdicts": 3}' })), null);
  const ctx = { store: { model } };
  assert.equal(checks.count(ctx), " (1/3)");
  assert.equal(checks.idle(ctx), null);
  assert.match(checks.idle({ store: { model: new Model({}) } }), /evaluation case/);
  assert.deepEqual(checks.inputs(ctx), [JSON.stringify(verdicts)]);
});

test("each verdict becomes a row with its mark, reason and evidence as text", () => {
  const rows = checkRows(verdicts);
  assert.deepEqual(rows.map((r) => [r.check, r.status, r.mark]), [["added", "fail", "✗"], ["budget", "pass", "✓"], ["odd", "error", "!"]]);
  assert.equal(rows[0].evidence, JSON.stringify(verdicts.verdicts[0].evidence, null, 2));
  assert.equal(rows[1].evidence, "");
  assert.equal(rows[2].reason, "<img src=x onerror=alert(1)>"); // text: the panel puts it in a text node
  assert.equal(checkCount(verdicts), "1/3");
});
