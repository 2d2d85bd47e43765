// Images and files where a message is shown (Prompt, Request, Tool calls, a card's request): an
// image as a thumbnail the kernel sends when it is shown (images.js), opened full size in a
// dialog on a click (Esc, the close button or a click beside it closes it); a file as its name,
// type and size, never fetched. Names and captions are text; a picture is only ever a blob: URL
// images.js made from bytes it checked.

import { clear, h } from "./dom.js";
import { partLine, pretty } from "./format.js";
import { drawable } from "./images.js";

/** What stands in the place of a picture not drawn (yet). */
function placeholder(entry) {
  if (entry.status === "loading") return "loading…";
  const size = entry.width && entry.height ? entry.width + "×" + entry.height + " · " : "";
  return size + (entry.text || "no picture");
}

/** Fill ``box`` with ``entry``'s picture, or with the sentence that stands for it. */
function draw(box, entry, alt, cls) {
  clear(box);
  box.setAttribute("data-status", entry.status);
  if (entry.status === "ok" && entry.url) {
    box.appendChild(h("img", { class: cls, src: entry.url, alt, draggable: "false" }));
  } else {
    box.appendChild(h("span", { class: "anb-thumb-note" + (entry.status === "none" ? " anb-bad" : "") }, placeholder(entry)));
  }
}

/** Keep ``box`` drawn from ``entry`` while it is in the page. */
function follow(images, entry, box, alt, cls) {
  draw(box, entry, alt, cls);
  images.watch(entry, (changed) => {
    if (!box.isConnected) return false;
    draw(box, changed, alt, cls);
    return true;
  });
}

/**
 * One image or file of a message. An image held as bytes shows its thumbnail (asked for now,
 * looked for first in turn ``turn``) above its line, and opens full size on a click; a file, an
 * image by URL (never loaded here) or one of a type not drawn shows its line only.
 */
export function partView(images, part, turn = null) {
  const line = partLine(part);
  const kind = part && part.type === "file" ? "file" : "image";
  if (!images || !drawable(part)) {
    return h("div", { class: "anb-part anb-part-" + kind + " anb-part-named", "data-kind": kind, "data-sha256": part && part.sha256 ? part.sha256 : null }, h("span", { class: "anb-part-line" }, line));
  }
  const box = h("span", { class: "anb-thumb-box" });
  const button = h("button", { type: "button", class: "anb-thumb", title: "open full size: " + line, "aria-label": "open full size: " + line, "data-fkey": "thumb-" + part.sha256 }, box);
  button.addEventListener("click", () => openFull(images, part, turn, button));
  follow(images, images.want(part.sha256, { turn }), box, line, "anb-thumb-img");
  return h("div", { class: "anb-part anb-part-image", "data-kind": "image", "data-sha256": part.sha256 }, button, h("span", { class: "anb-part-line" }, line));
}

/** A message's images and files in a row (null for none). */
export function partsRow(images, parts, turn = null) {
  if (!parts || !parts.length) return null;
  return h("div", { class: "anb-parts" }, parts.map((p) => partView(images, p, turn)));
}

/** The original of ``part`` in a dialog over the page, fetched now; closing it gives the focus
 * back to ``opener``. */
export function openFull(images, part, turn, opener) {
  const line = partLine(part);
  const body = h("div", { class: "anb-full-body" });
  const close = h("button", { type: "button", class: "anb-full-close", "aria-label": "close", title: "close (Esc)" }, "✕");
  const dialog = h("dialog", { class: "anb-full", "aria-label": line }, h("div", { class: "anb-full-head" }, h("span", { class: "anb-full-line" }, line), close), body);
  const host = (opener && opener.closest(".anb-root")) || document.body;
  host.appendChild(dialog);
  let closed = false;
  const entry = images.want(part.sha256, { turn, full: true });
  const done = () => {
    if (closed) return;
    closed = true;
    if (dialog.open) dialog.close();
    dialog.remove();
    images.forget(entry); // an original is kept only while it is shown
    if (opener && opener.isConnected) opener.focus();
  };
  close.addEventListener("click", done);
  // Esc closes it here, before the notebook takes the key for itself.
  dialog.addEventListener("keydown", (ev) => {
    if (ev.key !== "Escape") return;
    ev.preventDefault();
    ev.stopPropagation();
    done();
  });
  dialog.addEventListener("cancel", (ev) => {
    ev.preventDefault();
    done();
  });
  dialog.addEventListener("click", (ev) => {
    if (ev.target === dialog) done(); // a click on the backdrop, beside the picture
  });
  follow(images, entry, body, line, "anb-full-img");
  if (typeof dialog.showModal === "function") dialog.showModal();
  else dialog.setAttribute("open", "");
  close.focus();
  return dialog;
}

const TEXT_ITEMS = ["text", "input_text", "output_text"];

/** The description of a content item that is an image or a file (as agentnb/ipython/
 * compact_parts.py item_part reads it), or null. */
export function itemPart(item) {
  if (!item || typeof item !== "object") return null;
  if (item.part && typeof item.part === "object") return item.part;
  if (item.type === "image_url" || item.type === "input_image") {
    const url = item.image_url && typeof item.image_url === "object" ? item.image_url.url : item.image_url;
    if (typeof url === "string" && /^https?:\/\//.test(url)) return { type: "image", url };
  }
  return null;
}

const counted = (n, what) => (n ? n + " " + what + (n === 1 ? "" : "s") : null);

/** A message's content as its first line reads: its text, then "[1 image, 1 file]". */
export function contentHead(content) {
  if (!Array.isArray(content)) return content;
  const text = content.filter((i) => i && TEXT_ITEMS.includes(i.type)).map((i) => String(i.text ?? "")).join(" ");
  const parts = content.map(itemPart).filter(Boolean);
  const files = parts.filter((p) => p.type === "file").length;
  const named = [counted(parts.length - files, "image"), counted(files, "file")].filter(Boolean);
  return text + (named.length ? " [" + named.join(", ") + "]" : "");
}

/** A message's content: text as text, its images and files in rows where they stand, anything
 * else as JSON. */
export function contentView(images, content, turn = null) {
  if (typeof content === "string") return h("pre", { class: "anb-pre" }, content);
  if (!Array.isArray(content)) return h("pre", { class: "anb-pre" }, pretty(content));
  const out = [];
  let row = [];
  const flush = () => {
    if (row.length) out.push(partsRow(images, row, turn));
    row = [];
  };
  for (const item of content) {
    const part = itemPart(item);
    if (part) {
      row.push(part);
      continue;
    }
    flush();
    out.push(h("pre", { class: "anb-pre" }, item && TEXT_ITEMS.includes(item.type) ? String(item.text ?? "") : pretty(item)));
  }
  flush();
  return h("div", { class: "anb-content" }, out);
}
