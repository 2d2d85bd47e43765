// State: what the turn changed (as the kernel summarised it: agentnb/state/diff.py), then the state
// as a tree whose children are built only when a node is opened, beside what the model saw of
// it (the <session_state> block, hidden keys, keys no placeholder used). Nothing here works out a
// change: the marks come from the turn's change summary.
//
// A large state is held in part (lazy.js): a node shows its full size, and opening it, paging on
// ("show more"), showing a long string whole or editing a node asks the kernel for what is not
// held yet (the store's needSubtree); the tree is drawn again when it arrives.
//
// On the newest turn the state can be edited by hand (JSON, checked by the kernel against the
// schema): the tree then shows the state with the edits, the edits are listed with an undo, and
// the kernel sends the next prompt re-rendered at once (shown beside the tree and in Preview).

import { disclosure, empty, h } from "../dom.js";
import { jsonEditor, notJSON } from "../editor.js";
import { changeSign, changeText, changeTitle, editText, pathLabel, tokenCount } from "../format.js";
import { Cut, isContainer, isWhole, sizeOf } from "../lazy.js";
import { decodePointer, encodePointer, hasOwn } from "../patch.js";
import { WIRE } from "../wire.js";
import { changedSources, promptOf, waiting } from "./parts.js";
import { isFloat, numberText } from "../floats.js";

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

/** What the model made of a top-level key: hidden from it, or used nowhere in the prompt. */
function seenBadge(placed, pointer) {
  const key = placed.seen.get(pointer);
  if (key === "hidden") return h("span", { class: "anb-badge anb-badge-hidden", title: "kept out of the prompt (hide_state_keys): tools and hooks see it, the model does not" }, "hidden from the model");
  if (key === "unused") return h("span", { class: "anb-badge anb-badge-unused", title: "no placeholder and no <session_state> block put it in front of the model" }, "not in the prompt");
  return null;
}

function leafText(ctx, value, pointer, float = false) {
  const { view } = ctx;
  const cut = value instanceof Cut;
  if (!cut && typeof value === "number") return h("span", { class: "anb-value anb-value-number" + (float ? " anb-value-float" : "") }, numberText(value, float));
  if (!cut && typeof value !== "string") return h("span", { class: "anb-value anb-value-" + (value === null ? "null" : typeof value) }, JSON.stringify(value));
  const quoted = JSON.stringify(cut ? value.head : value);
  const length = cut ? value.size : value.length;
  if (!cut && (quoted.length <= STRING_CUT || view.full.has(pointer))) return h("span", { class: "anb-value anb-value-string" }, quoted);
  if (cut && view.full.has(pointer)) {
    ctx.need(pointer, { whole: true }); // held as its head only: drawn again when it arrives
    return h("span", { class: "anb-value anb-value-string" }, quoted.slice(0, STRING_CUT) + "…", " ", h("span", { class: "anb-loading" }, "loading all " + length + " chars…"));
  }
  const more = h("button", { type: "button", class: "anb-more", "data-fkey": "full" + pointer }, "show all (" + length + " chars)");
  const span = h("span", { class: "anb-value anb-value-string" }, quoted.slice(0, STRING_CUT) + "…", " ", more);
  more.addEventListener("click", () => {
    view.full.add(pointer);
    span.replaceWith(leafText(ctx, value, pointer));
  });
  return span;
}

// -- editing ----------------------------------------------------------------------------

/** The inline editor of one path (editor.js): JSON text, apply / cancel, and why an edit was
 * refused. A value held in part is asked for whole first (its text is null until it arrives). */
function editor(ctx, pointer, { isNew = false, value, float = false } = {}) {
  const { store, view } = ctx;
  let waiting = false;
  if (!isNew && view.editText === null) {
    if (isWhole(value)) view.editText = editText(value, float);
    else waiting = true;
  }
  const error = view.editError || (store.editError && store.editError.path === view.editTarget ? store.editError.text : null);
  const keyBox = isNew ? h("input", { type: "text", class: "anb-edit-key", "aria-label": "new key", placeholder: "key", "data-fkey": "edit-key", value: view.editKey || "" }) : null;
  if (keyBox) keyBox.addEventListener("input", () => (view.editKey = keyBox.value));
  const apply = (text) => {
    const path = isNew ? (view.editKey ? encodePointer([view.editKey]) : null) : pointer;
    const problem = path ? notJSON(text) : "write the new key's name";
    ctx.update(() => {
      view.editError = problem;
      if (!problem) {
        view.editTarget = path;
        view.editSent = true;
        store.edit(path, text);
      }
    });
  };
  return jsonEditor({
    text: view.editText || "",
    waiting,
    applying: store.editPending,
    error,
    before: keyBox,
    attrs: { "data-path": pointer },
    onInput: (text) => (view.editText = text),
    onApply: apply,
    onCancel: () => ctx.update(() => closeEditor(view)),
  });
}

function closeEditor(view) {
  view.editPath = null; // where the editor is open: a path, "" for a new key, null for none
  view.editTarget = null; // the path the last apply sent
  view.editSent = false;
  view.editText = "";
  view.editKey = "";
  view.editError = null;
}

/** Once the kernel has answered an apply: close the editor, or keep it open with the refusal. */
function settleEditor(store, view) {
  if (!view.editSent || store.editPending) return;
  view.editSent = false;
  if (!(store.editError && store.editError.path === view.editTarget)) closeEditor(view);
}

function openEditor(ctx, pointer, value, float = false) {
  // What is edited is the whole value: one held in part is fetched first.
  if (value !== undefined && !isWhole(value)) ctx.need(pointer, { whole: true });
  ctx.update(() => {
    closeEditor(ctx.view);
    ctx.view.editPath = pointer;
    ctx.view.editText = value === undefined ? "" : isWhole(value) ? editText(value, float) : null;
    ctx.view.editKey = "";
    ctx.view.editError = null;
  });
}

function nodeButtons(ctx, pointer, value, float = false) {
  if (!ctx.editable || !ctx.view.editing) return null;
  const stop = (fn) => (ev) => {
    ev.preventDefault(); // inside a <summary>: do not toggle the node
    ev.stopPropagation();
    fn();
  };
  const label = pathLabel(pointer);
  return h(
    "span",
    { class: "anb-node-actions" },
    h("button", { type: "button", class: "anb-edit", title: "edit " + label, "aria-label": "edit " + label, "data-fkey": "edit" + pointer, onclick: stop(() => openEditor(ctx, pointer, value, float)) }, "✎"),
    h("button", { type: "button", class: "anb-remove", title: "remove " + label, "aria-label": "remove " + label, "data-fkey": "remove" + pointer, onclick: stop(() => ctx.store.remove(pointer)) }, "✕"),
  );
}

// -- the tree ---------------------------------------------------------------------------

function treeNode(ctx, key, value, pointer, placed, float = false) {
  const { view } = ctx;
  const change = placed.marks.get(pointer);
  const edit = placed.edited ? placed.edited.get(pointer) : undefined;
  const markClass = (change ? " anb-mark-" + change.how : placed.within.has(pointer) ? " anb-mark-within" : "") + (edit ? " anb-mark-edited" : "");
  const edited = edit ? h("span", { class: "anb-badge anb-badge-edited", title: "edited by hand: " + changeText(edit) + " (not sent to the model yet)" }, "✎ edited") : null;
  const keyNode = h("span", { class: "anb-key" }, key);
  let node;
  if (!isContainer(value)) {
    const was = change && change.how === "changed" ? h("span", { class: "anb-was", title: "before the turn" }, "was " + change.old) : null;
    node = h("div", { class: "anb-node anb-leaf" + markClass, "data-path": pointer }, keyNode, ": ", leafText(ctx, value, pointer, float), badge(change), edited, seenBadge(placed, pointer), was, nodeButtons(ctx, pointer, value, float));
  } else {
    const isArray = Array.isArray(value);
    const size = sizeOf(value);
    node = disclosure(view, pointer, {
      attrs: { class: "anb-node anb-branch" + markClass, "data-path": pointer },
      open: placed.within.has(pointer) && size <= AUTO_OPEN_MAX,
      summary: h("summary", {}, keyNode, h("span", { class: "anb-size" }, isArray ? " [" + size + "]" : " {" + size + "}"), badge(change), edited, seenBadge(placed, pointer), nodeButtons(ctx, pointer, value)),
      fill: () => childList(ctx, value, pointer, placed),
    });
  }
  if (ctx.editable && view.editPath === pointer) return h("div", { class: "anb-node-editing" }, node, editor(ctx, pointer, { value, float }));
  return node;
}

function childList(ctx, value, pointer, placed) {
  const { view } = ctx;
  const list = h("div", { class: "anb-children" });
  const keys = Array.isArray(value) ? value.map((_, i) => String(i)) : Object.keys(value);
  const total = sizeOf(value);
  let shown = 0;
  const moreRow = h("div", { class: "anb-more-row" });
  // ``wanted`` children shown (kept across redraws); those not held yet are asked for.
  const addChunk = (wanted) => {
    const to = Math.min(keys.length, wanted);
    for (const key of keys.slice(shown, to)) list.insertBefore(treeNode(ctx, key, value[key], pointer + "/" + key.replace(/~/g, "~0").replace(/\//g, "~1"), placed, isFloat(value, key)), moreRow);
    shown = to;
    view.shown.set(pointer, wanted);
    moreRow.replaceChildren();
    const left = total - shown;
    if (left <= 0) {
      moreRow.remove();
    } else if (wanted > shown) {
      ctx.need(pointer, { from: keys.length });
      moreRow.appendChild(h("span", { class: "anb-loading" }, "loading " + Math.min(wanted - shown, left) + " more of " + left + "…"));
    } else {
      moreRow.appendChild(h("button", { type: "button", class: "anb-more", "data-fkey": "more" + pointer, onclick: () => addChunk(shown + CHILD_CHUNK) }, "show " + Math.min(CHILD_CHUNK, left) + " more of " + left + " (" + total + " in all)"));
    }
  };
  list.appendChild(moreRow);
  addChunk(Math.max(view.shown.get(pointer) || 0, CHILD_CHUNK));
  // Paths removed in the turn are gone from the state: shown as ghost rows with their old value.
  for (const { key, change } of placed.removedUnder.get(pointer) || []) {
    if (Array.isArray(value) ? Number(key) < total : hasOwn(value, key)) continue;
    list.appendChild(
      h("div", { class: "anb-node anb-leaf anb-mark-removed", "data-path": change.path }, h("span", { class: "anb-key" }, key), ": ", h("span", { class: "anb-value" }, changeText(change)), badge(change)),
    );
  }
  return list;
}

// -- what the turn changed, and the edits since ----------------------------------------

function changeRow(change, cls = "anb-change") {
  return h(
    "div",
    { class: cls + " anb-change-" + change.how, role: "listitem", "data-path": change.path },
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
  const list = h("div", { class: "anb-changes", role: "list", "aria-label": "changes in this turn" }, rows.map((c) => changeRow(c)));
  if (rows.length < paths.length) {
    list.appendChild(h("button", { type: "button", class: "anb-more", "data-fkey": "more-" + key, onclick: () => ctx.update(() => view.full.add(key)) }, "show all " + paths.length + " changes"));
  }
  if (changes.more) list.appendChild(h("div", { class: "anb-empty" }, "… and " + changes.more + " more changed path(s), not listed"));
  return list;
}

function editsList(ctx) {
  const { store, turn } = ctx;
  const edits = store.live ? store.live.edits : [];
  const since = turn ? "since turn " + (turn.index + 1) : "before the first turn";
  const bar = h(
    "div",
    { class: "anb-edit-bar" },
    h("button", { type: "button", class: "anb-edit-toggle" + (ctx.view.editing ? " anb-pick-selected" : ""), "aria-pressed": ctx.view.editing ? "true" : "false", "data-fkey": "edit-toggle", onclick: () => ctx.update(() => (ctx.view.editing = !ctx.view.editing)) }, ctx.view.editing ? "✎ editing" : "✎ edit state"),
    ctx.view.editing ? h("button", { type: "button", class: "anb-add-key", "data-fkey": "add-key", onclick: () => openEditor(ctx, "", undefined) }, "+ key") : null,
    h("button", { type: "button", class: "anb-undo", "data-fkey": "undo", disabled: !edits.length, onclick: () => store.undo() }, "↶ undo" + (edits.length ? " (" + edits.length + ")" : "")),
    edits.length ? h("span", { class: "anb-label" }, edits.length + " edit(s) " + since + ": the next turn records them as the user's") : null,
  );
  const out = h("div", { class: "anb-edits" }, bar);
  if (ctx.view.editing && ctx.view.editPath === "") out.appendChild(editor(ctx, "", { isNew: true }));
  if (edits.length) out.appendChild(h("div", { class: "anb-changes anb-edit-list", role: "list", "aria-label": "edits " + since }, edits.map((e) => changeRow({ ...e, authors: ["user"] }, "anb-change anb-edit-row"))));
  return out;
}

function head(turn, changes, live) {
  const keys = changes.keys;
  const what = live ? (turn ? "state now: after turn " + (turn.index + 1) + " and " + live.edits.length + " edit(s)" : "state now, with " + live.edits.length + " edit(s)") : turn ? (turn.status === "running" ? "live state of turn " : "state after turn ") + (turn.index + 1) : "initial state";
  return h(
    "div",
    { class: "anb-state-head" },
    h("span", {}, what),
    keys.length ? h("span", { class: "anb-label" }, " · changed in this turn: ") : turn ? h("span", { class: "anb-label" }, " · no changes in this turn") : null,
    keys.map((c) => h("span", { class: "anb-chip anb-badge-" + c.how, title: changeTitle(c), "data-key": c.key }, c.key)),
  );
}

// -- what the model saw of it -------------------------------------------------------------

function modelView(ctx, prompt, { next, against }) {
  const { turn, store } = ctx;
  const title = next ? "what the model will see next" : turn ? "what the model saw in turn " + (turn.index + 1) : "what the model will see";
  const out = h("div", { class: "anb-model-view", "aria-label": title }, h("div", { class: "anb-label" }, title));
  if (!prompt) {
    out.appendChild(turn && !turn.loaded ? waiting(store, "the turn") : empty("No prompt rendered yet."));
    return out;
  }
  const tokens = prompt.tokens;
  const index = prompt.sections.findIndex((s) => s.source === "session_state");
  if (index >= 0) {
    const count = tokens ? tokenCount(tokens, prompt.sections.filter((s) => s.source === "session_state").reduce((n, s) => n + (tokens.sections[prompt.sections.indexOf(s)] || 0), 0)) : "";
    out.appendChild(h("div", { class: "anb-label" }, "the <session_state> block" + (count ? " · " + count + " tok" : "")));
    out.appendChild(h("pre", { class: "anb-pre anb-model-block" }, prompt.sections.filter((s) => s.source === "session_state").map((s) => s.text).join("")));
  } else {
    const filled = [...new Set(prompt.sections.flatMap((s) => s.placeholders || []).filter((p) => p.resolved && p.source === "session_state").map((p) => p.name))];
    out.appendChild(empty("No <session_state> block in this prompt." + (filled.length ? " The state reaches the model through placeholders: " + filled.map((n) => "{" + n + "}").join(", ") : "")));
  }
  if (prompt.hiddenKeys.length) out.appendChild(h("div", { class: "anb-model-hidden" }, h("span", { class: "anb-label" }, "hidden from the model: "), prompt.hiddenKeys.join(", ")));
  if (prompt.unusedKeys.length) out.appendChild(h("div", { class: "anb-model-unused" }, h("span", { class: "anb-label" }, "in no placeholder or block: "), prompt.unusedKeys.join(", ")));
  if (next) {
    const changed = [...changedSources(prompt, against)];
    out.appendChild(
      h(
        "div",
        { class: "anb-model-changed" },
        changed.length ? "the next system prompt changes in: " + changed.join(", ") : "the next system prompt is the same as turn " + store.turns.length + "'s",
        " ",
        h("button", { type: "button", class: "anb-open-preview", "data-fkey": "open-preview", onclick: () => ctx.update(() => (ctx.view.tab = "preview")) }, "see the whole request in Preview"),
      ),
    );
  }
  return out;
}

/** The prompt the side column shows: the next one (a preview after edits) or the turn's own. */
function shownPrompt(ctx) {
  const { store, turn, editable, view } = ctx;
  const preview = store.preview;
  if (editable && store.live) {
    if (preview && preview[WIRE.EDITS]) return { prompt: promptOf(preview), next: true };
    if (!store.previewPending && !view.askedNext) {
      view.askedNext = true; // a view that started with edits pending asks once for the next prompt
      store.askPreview(turn ? turn.message : "");
    }
  }
  return { prompt: turn && turn.prompt ? turn.prompt : null, next: false };
}

export default {
  id: "state",
  label: "State",
  count: (ctx) => (ctx.turn && ctx.turn.changes.keys.length ? " (" + ctx.turn.changes.keys.length + " changed)" : ""),
  // A turn pinned in the past is redrawn only when it changes; the newest with edits pending also
  // when the next prompt or the turn its state is patched onto arrives.
  inputs: (ctx) => [
    ctx.turn ? [ctx.turn.v.state, ctx.turn.v.prompt, ctx.turn.state !== undefined] : ctx.store.version.epoch,
    ctx.store.version.live,
    ctx.store.version.subtrees,
    ctx.store.live && ctx.view.selected === null ? [ctx.store.version.preview, ctx.store.version.list] : null,
  ],
  panel(ctx) {
    const { store, turn, view } = ctx;
    // Edits go to the state as it is now: only while following the newest turn, not mid-run.
    // (Not a member's run picked in Runs: that is a record of the state it ran on.)
    ctx.editable = view.selected === null && (!turn || (turn.status !== "running" && !turn.runId));
    const live = ctx.editable ? store.live : null;
    settleEditor(store, view);
    const state = live ? store.liveState() : turn ? turn.state : store.baseState;
    const source = live ? { live: true } : turn ? (turn.runId ? { turn: turn.index, run: turn.runId } : { turn: turn.index }) : {};
    ctx.need = (pointer, part) => store.needSubtree(source, pointer, part);
    if (state === undefined) {
      if (turn && turn.state === undefined) store.needTurn(turn.index);
      return waiting(store, "the state");
    }
    const changes = turn ? turn.changes : { keys: [], paths: [], more: 0 };
    const placed = placeChanges(changes);
    // Values edited by hand since the turn: marked in the tree as the user's.
    placed.edited = new Map(live ? live.edits.map((e) => [e.path, e]) : []);
    const { prompt, next } = shownPrompt(ctx);
    placed.seen = new Map();
    if (prompt) {
      for (const key of prompt.unusedKeys) placed.seen.set(encodePointer([key]), "unused");
      for (const key of prompt.hiddenKeys) placed.seen.set(encodePointer([key]), "hidden");
    }
    const tree = h("div", { class: "anb-tree", role: "tree" }, childList(ctx, state, "", placed));
    const left = h("div", { class: "anb-state-main" }, turn ? changeList(ctx, changes) : null, ctx.editable ? editsList(ctx) : null, tree);
    const against = next && store.turns.length ? store.turns[store.turns.length - 1].prompt : null;
    return h("div", {}, head(turn, changes, live), h("div", { class: "anb-state-split" }, left, modelView(ctx, prompt, { next, against })));
  },
};
