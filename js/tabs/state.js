// State: what the turn changed (as the kernel summarised it: agentnb/diff.py), then the state
// as a tree whose children are built only when a node is opened. Nothing here works out a
// change: the marks come from the turn's change summary.

import { disclosure, empty, h } from "../dom.js";
import { changeSign, changeText, changeTitle, pathLabel } from "../format.js";
import { decodePointer, encodePointer, hasOwn } from "../patch.js";

const CHILD_CHUNK = 100; // children of a tree node rendered per "show more"
const STRING_CUT = 240; // characters of a long string shown before "show all"
const AUTO_OPEN_MAX = 100; // containers on the way to a change open by themselves up to this size
const CHANGE_ROWS = 20; // changes listed before "show all"

/** Where the summary's changes sit in the tree: the mark of each changed path, the containers
 * on the way to one, and removed paths under the container that held them. */
function placeChanges(changes) {
  const marks = new Map();
  const within = new Set();
  const removedUnder = new Map();
  for (const change of changes.paths) {
    marks.set(change.path, change);
    const tokens = decodePointer(change.path);
    for (let i = 0; i < tokens.length; i++) within.add(encodePointer(tokens.slice(0, i)));
    if (change.how !== "removed") continue;
    const parent = encodePointer(tokens.slice(0, -1));
    if (!removedUnder.has(parent)) removedUnder.set(parent, []);
    removedUnder.get(parent).push({ key: tokens[tokens.length - 1], change });
  }
  return { marks, within, removedUnder };
}

function badge(change) {
  if (!change) return null;
  return h("span", { class: "anb-badge anb-badge-" + change.how, title: changeTitle(change) }, changeSign(change.how) + " " + change.authors.join(", "));
}

function leafText(view, value, pointer) {
  if (typeof value !== "string") return h("span", { class: "anb-value anb-value-" + (value === null ? "null" : typeof value) }, JSON.stringify(value));
  const quoted = JSON.stringify(value);
  if (quoted.length <= STRING_CUT || view.full.has(pointer)) return h("span", { class: "anb-value anb-value-string" }, quoted);
  const more = h("button", { type: "button", class: "anb-more", "data-fkey": "full" + pointer }, "show all (" + value.length + " chars)");
  const span = h("span", { class: "anb-value anb-value-string" }, quoted.slice(0, STRING_CUT) + "…", " ", more);
  more.addEventListener("click", () => {
    view.full.add(pointer);
    span.replaceWith(leafText(view, value, pointer));
  });
  return span;
}

function treeNode(view, key, value, pointer, placed) {
  const change = placed.marks.get(pointer);
  const markClass = change ? " anb-mark-" + change.how : placed.within.has(pointer) ? " anb-mark-within" : "";
  const keyNode = h("span", { class: "anb-key" }, key);
  if (value === null || typeof value !== "object") {
    const was = change && change.how === "changed" ? h("span", { class: "anb-was", title: "before the turn" }, "was " + change.old) : null;
    return h("div", { class: "anb-node anb-leaf" + markClass, "data-path": pointer }, keyNode, ": ", leafText(view, value, pointer), badge(change), was);
  }
  const isArray = Array.isArray(value);
  const size = isArray ? value.length : Object.keys(value).length;
  return disclosure(view, pointer, {
    attrs: { class: "anb-node anb-branch" + markClass, "data-path": pointer },
    open: placed.within.has(pointer) && size <= AUTO_OPEN_MAX,
    summary: h("summary", {}, keyNode, h("span", { class: "anb-size" }, isArray ? " [" + size + "]" : " {" + size + "}"), badge(change)),
    fill: () => childList(view, value, pointer, placed),
  });
}

function childList(view, value, pointer, placed) {
  const list = h("div", { class: "anb-children" });
  const keys = Array.isArray(value) ? value.map((_, i) => String(i)) : Object.keys(value);
  let shown = 0;
  const moreRow = h("div", { class: "anb-more-row" });
  const addChunk = () => {
    const to = Math.min(keys.length, Math.max(view.shown.get(pointer) || 0, shown + CHILD_CHUNK));
    for (const key of keys.slice(shown, to)) list.insertBefore(treeNode(view, key, value[key], pointer + "/" + key.replace(/~/g, "~0").replace(/\//g, "~1"), placed), moreRow);
    shown = to;
    view.shown.set(pointer, to);
    moreRow.replaceChildren();
    if (to < keys.length) {
      const left = keys.length - to;
      moreRow.appendChild(h("button", { type: "button", class: "anb-more", "data-fkey": "more" + pointer, onclick: addChunk }, "show " + Math.min(CHILD_CHUNK, left) + " more of " + left + " (" + keys.length + " in all)"));
    } else {
      moreRow.remove();
    }
  };
  list.appendChild(moreRow);
  addChunk();
  // Paths removed in the turn are gone from the state: shown as ghost rows with their old value.
  for (const { key, change } of placed.removedUnder.get(pointer) || []) {
    if (Array.isArray(value) ? Number(key) < value.length : hasOwn(value, key)) continue;
    list.appendChild(
      h("div", { class: "anb-node anb-leaf anb-mark-removed", "data-path": change.path }, h("span", { class: "anb-key" }, key), ": ", h("span", { class: "anb-value" }, changeText(change)), badge(change)),
    );
  }
  return list;
}

function changeRow(change) {
  return h(
    "div",
    { class: "anb-change anb-change-" + change.how, role: "listitem", "data-path": change.path },
    h("span", { class: "anb-badge anb-badge-" + change.how }, changeSign(change.how)),
    h("span", { class: "anb-change-path" }, pathLabel(change.path)),
    h("span", { class: "anb-change-values", title: changeTitle(change) }, changeText(change)),
    h("span", { class: "anb-change-by" }, change.authors.join(", ")),
  );
}

function changeList(ctx, changes) {
  const { view, turn } = ctx;
  const paths = changes.paths;
  if (!paths.length) return null;
  const key = "changes:" + turn.index;
  const all = view.full.has(key);
  const rows = all ? paths : paths.slice(0, CHANGE_ROWS);
  const list = h("div", { class: "anb-changes", role: "list", "aria-label": "changes in this turn" }, rows.map(changeRow));
  if (rows.length < paths.length) {
    list.appendChild(h("button", { type: "button", class: "anb-more", "data-fkey": "more-" + key, onclick: () => ctx.update(() => view.full.add(key)) }, "show all " + paths.length + " changes"));
  }
  if (changes.more) list.appendChild(h("div", { class: "anb-empty" }, "… and " + changes.more + " more changed path(s), not listed"));
  return list;
}

function head(turn, changes) {
  const keys = changes.keys;
  return h(
    "div",
    { class: "anb-state-head" },
    h("span", {}, turn ? (turn.status === "running" ? "live state of turn " : "state after turn ") + (turn.index + 1) : "initial state"),
    keys.length ? h("span", { class: "anb-label" }, " · changed in this turn: ") : turn ? h("span", { class: "anb-label" }, " · no changes in this turn") : null,
    keys.map((c) => h("span", { class: "anb-chip anb-badge-" + c.how, title: changeTitle(c), "data-key": c.key }, c.key)),
  );
}

export default {
  id: "state",
  label: "State",
  count: (ctx) => (ctx.turn && ctx.turn.changes.keys.length ? " (" + ctx.turn.changes.keys.length + " changed)" : ""),
  inputs: (ctx) => (ctx.turn ? [ctx.turn.v.state, ctx.turn.state !== undefined] : [ctx.store.version.epoch]),
  panel(ctx) {
    const { store, turn } = ctx;
    const state = turn ? turn.state : store.baseState;
    if (state === undefined) {
      if (turn) store.needTurn(turn.index);
      return empty("Loading the state…");
    }
    const changes = turn ? turn.changes : { keys: [], paths: [], more: 0 };
    const placed = placeChanges(changes);
    const tree = h("div", { class: "anb-tree", role: "tree" }, childList(ctx.view, state, "", placed));
    return h("div", {}, head(turn, changes), turn ? changeList(ctx, changes) : null, tree);
  },
};
