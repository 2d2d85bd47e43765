// The pictures of the images a view shows (agentnb/ipython/images.py): asked for by hash when
// shown, a thumbnail first and the original on a click, each kept once per view.
//
// Safety: a picture is drawn only from bytes the kernel sent as a message buffer, only when the
// kernel said it is a PNG, JPEG, GIF or WEBP and its first bytes say the same; it becomes a blob:
// URL of that type made here. Anything else (an SVG, a PDF, bytes claiming a type they are not)
// is never put into an <img>: the view shows the kernel's sentence, or the part's name and size.
// No DOM here: thumbs.js draws the entries.

import { decodeMessage } from "./message.js";
import { NOT_CONNECTED } from "./store.js";
import { WIRE } from "./wire.js";

/** The only image types ever drawn (agentnb/messages/media.py IMAGE_TYPES). */
export const DRAWN = ["image/png", "image/jpeg", "image/gif", "image/webp"];

function asBytes(value) {
  if (value instanceof ArrayBuffer) return new Uint8Array(value);
  if (ArrayBuffer.isView(value)) return new Uint8Array(value.buffer, value.byteOffset, value.byteLength);
  return null;
}

/** The image type ``value``'s first bytes say (as agentnb.messages.media.sniff reads them), or
 * null for anything else. */
export function sniffImage(value) {
  const b = asBytes(value);
  if (!b || b.length < 12) return null;
  const at = (i, ...xs) => xs.every((x, j) => b[i + j] === x);
  if (at(0, 0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a)) return "image/png";
  if (at(0, 0xff, 0xd8, 0xff)) return "image/jpeg";
  if (at(0, 0x47, 0x49, 0x46, 0x38) && (b[4] === 0x37 || b[4] === 0x39) && b[5] === 0x61) return "image/gif";
  if (at(0, 0x52, 0x49, 0x46, 0x46) && at(8, 0x57, 0x45, 0x42, 0x50)) return "image/webp";
  return null;
}

/** Whether a part described as ``part`` may be asked for as a picture: an image held as bytes
 * (by hash) of a drawn type. A file, an image by URL, or any other type is shown by name only. */
export function drawable(part) {
  return Boolean(part && part.type === "image" && typeof part.sha256 === "string" && DRAWN.includes(part.media_type));
}

const keyOf = (sha, full) => sha + (full ? ":full" : ":thumb");

/** One picture asked for: ``status`` is loading, ok (``url`` set), later (asked again when its
 * turn ends), none (``text`` says why), offline, or forgotten (let go of: ``forget``). */
function entryOf(sha, full, turn) {
  return { sha, full, turn, status: "loading", url: null, mediaType: null, width: null, height: null, size: null, text: "", listeners: new Set() };
}

export class Images {
  constructor(model, store, { createURL = (blob) => URL.createObjectURL(blob), revokeURL = (url) => URL.revokeObjectURL(url) } = {}) {
    this.model = model;
    this.store = store;
    this.createURL = createURL;
    this.revokeURL = revokeURL;
    this.entries = new Map();
    this.onMessage = (msg, buffers) => this.take(msg, buffers);
    model.on("msg:custom", this.onMessage);
    this.unsubscribe = store.subscribe(() => this.retry());
  }

  /** The entry of image ``sha`` (its original with ``full``), asked for the first time it is
   * wanted; ``turn`` says where the kernel looks first. */
  want(sha, { turn = null, full = false } = {}) {
    const key = keyOf(sha, full);
    let entry = this.entries.get(key);
    if (!entry) {
      entry = entryOf(sha, full, turn);
      this.entries.set(key, entry);
      this.ask(entry);
    } else if (entry.status === "offline" && !this.store.offline) {
      this.ask(entry); // the kernel is back: ask again
    }
    return entry;
  }

  ask(entry) {
    entry.status = "loading";
    entry.text = "";
    if (this.store.offline === NOT_CONNECTED) return this.offline(entry);
    const msg = { [WIRE.KIND]: WIRE.NEED_IMAGE, [WIRE.SHA256]: entry.sha };
    if (entry.full) msg[WIRE.FULL] = true;
    if (entry.turn !== null && entry.turn !== undefined) msg[WIRE.TURN_INDEX] = entry.turn;
    this.store.ask("i" + keyOf(entry.sha, entry.full)); // an unanswered request is said after a while
    if (!this.store.send(msg)) this.offline(entry);
  }

  offline(entry) {
    entry.status = "offline";
    entry.text = "not loaded: " + (this.store.offline || NOT_CONNECTED);
  }

  /** A reply from the kernel (any other message is not ours). */
  take(msg, buffers) {
    if (!msg || msg[WIRE.KIND] !== WIRE.IMAGE) return false;
    const body = decodeMessage(msg, buffers);
    const full = Boolean(body[WIRE.FULL]);
    const key = keyOf(body[WIRE.SHA256], full);
    this.store.asked.delete("i" + key);
    const entry = this.entries.get(key);
    if (!entry || entry.status === "ok") return false;
    for (const [name, field] of [["width", WIRE.WIDTH], ["height", WIRE.HEIGHT], ["size", WIRE.SIZE]]) if (Number.isInteger(body[field])) entry[name] = body[field];
    const picture = buffers && buffers[1];
    const type = body[WIRE.MEDIA_TYPE];
    if (body[WIRE.LATER]) {
      entry.status = "later";
      entry.text = String(body[WIRE.TEXT] || "");
    } else if (picture && DRAWN.includes(type) && sniffImage(picture) === type) {
      entry.status = "ok";
      entry.mediaType = type;
      entry.url = this.createURL(new Blob([asBytes(picture)], { type }));
    } else {
      entry.status = "none";
      entry.text = String(body[WIRE.TEXT] || (picture ? "not drawn: its bytes are not the image type they claim" : "no picture"));
    }
    this.notify(entry);
    return true;
  }

  /** Ask again for the pictures of turns that were running when asked and have ended since, and
   * for those a kernel that could not be reached (or went silent) left without an answer. */
  retry() {
    const online = !this.store.offline;
    for (const entry of this.entries.values()) {
      const turn = entry.status === "later" ? this.store.turns[entry.turn] : null;
      const again =
        (online && entry.status === "offline") ||
        (online && entry.status === "loading" && !this.store.asked.has("i" + keyOf(entry.sha, entry.full))) || // dropped when the kernel went silent
        (turn && turn.status !== "running");
      if (!again) continue;
      this.ask(entry);
      this.notify(entry);
    }
  }

  /** Call ``fn(entry)`` whenever ``entry`` changes, until it returns false (its node left the
   * page) or the returned function is called. */
  watch(entry, fn) {
    entry.listeners.add(fn);
    return () => entry.listeners.delete(fn);
  }

  /** Let go of ``entry`` (an original shown in a dialog now closed): its URL is revoked, and it
   * is asked for again if wanted again. */
  forget(entry) {
    if (this.entries.get(keyOf(entry.sha, entry.full)) !== entry) return;
    this.entries.delete(keyOf(entry.sha, entry.full));
    this.store.asked.delete("i" + keyOf(entry.sha, entry.full));
    if (entry.url) this.revokeURL(entry.url);
    entry.url = null;
    entry.status = "forgotten";
    entry.listeners.clear();
  }

  notify(entry) {
    for (const fn of [...entry.listeners]) if (fn(entry) === false) entry.listeners.delete(fn);
  }

  dispose() {
    this.model.off("msg:custom", this.onMessage);
    this.unsubscribe();
    for (const entry of this.entries.values()) {
      if (entry.url) this.revokeURL(entry.url);
      entry.listeners.clear();
    }
    this.entries.clear();
  }
}
