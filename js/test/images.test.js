import assert from "node:assert/strict";
import test from "node:test";

import { partLine, sizeText } from "../format.js";
import { DRAWN, Images, drawable, sniffImage } from "../images.js";
import { METADATA_KEY, staticText, writeStatic } from "../saved.js";
import { NOT_CONNECTED, createStore } from "../store.js";
import { contentHead, itemPart } from "../thumbs.js";
import { WIRE } from "../wire.js";
import { Model, bytes, event, finished, snapshot, started, summary } from "./model.js";

const SHA = "ab".repeat(32);
const PNG = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52]);
const JPEG = new Uint8Array([0xff, 0xd8, 0xff, 0xe0, 0, 16, 0x4a, 0x46, 0x49, 0x46, 0, 1]);
const GIF = new TextEncoder().encode("GIF89a\x01\x00\x01\x00\x00\x00");
const WEBP = new TextEncoder().encode("RIFF\x10\x00\x00\x00WEBPVP8 ");
const SVG = new TextEncoder().encode('<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"></svg>');
const PDF = new TextEncoder().encode("%PDF-1.4\n%%EOF\n");

/** A kernel's "image" reply as it arrives: the content, the JSON body and the picture as buffers. */
function reply(model, body, picture) {
  const buffers = [bytes({ [WIRE.KIND]: WIRE.IMAGE, ...body })];
  if (picture) buffers.push(new DataView(picture.buffer, picture.byteOffset, picture.byteLength));
  model.emit("msg:custom", { [WIRE.KIND]: WIRE.IMAGE }, buffers);
}

function setup(status = "ok") {
  const model = new Model({ [WIRE.TRAIT_SNAPSHOT]: snapshot({ seq: 1, turns: [summary(0, { status })], turn: 0, events: [started("look")], state: {} }) });
  const store = createStore(model);
  const made = [];
  const revoked = [];
  const images = new Images(model, store, { createURL: (blob) => (made.push(blob), "blob:test/" + made.length), revokeURL: (url) => revoked.push(url) });
  return { model, store, images, made, revoked };
}

test("only PNG, JPEG, GIF and WEBP are recognised from their first bytes; SVG, PDF and short bytes are not", () => {
  assert.equal(sniffImage(PNG), "image/png");
  assert.equal(sniffImage(new DataView(JPEG.buffer)), "image/jpeg");
  assert.equal(sniffImage(GIF.buffer), "image/gif");
  assert.equal(sniffImage(WEBP), "image/webp");
  for (const other of [SVG, PDF, PNG.slice(0, 8), "not bytes", null]) assert.equal(sniffImage(other), null);
  assert.deepEqual(DRAWN, ["image/png", "image/jpeg", "image/gif", "image/webp"]);
  assert.equal(drawable({ type: "image", sha256: SHA, media_type: "image/png" }), true);
  for (const part of [{ type: "image", sha256: SHA, media_type: "image/svg+xml" }, { type: "file", sha256: SHA, media_type: "image/png" }, { type: "image", url: "https://x/y.png" }]) assert.equal(drawable(part), false);
});

test("a thumbnail is asked for once by hash, and drawn from the buffer as a blob of the checked type", () => {
  const { model, store, images, made } = setup();
  const seen = [];
  const entry = images.want(SHA, { turn: 0 });
  images.watch(entry, (e) => seen.push(e.status));
  assert.equal(images.want(SHA, { turn: 0 }), entry); // asked once
  assert.deepEqual(model.sent, [{ [WIRE.KIND]: WIRE.NEED_IMAGE, [WIRE.SHA256]: SHA, [WIRE.TURN_INDEX]: 0 }]);
  assert.ok(store.asked.has("i" + SHA + ":thumb"));
  reply(model, { [WIRE.SHA256]: SHA, [WIRE.FULL]: false, [WIRE.MEDIA_TYPE]: "image/png", [WIRE.WIDTH]: 600, [WIRE.HEIGHT]: 400, [WIRE.SIZE]: 23493 }, PNG);
  assert.equal(entry.status, "ok");
  assert.equal(entry.url, "blob:test/1");
  assert.equal(made[0].type, "image/png");
  assert.equal(made[0].size, PNG.length);
  assert.deepEqual([entry.width, entry.height, entry.size], [600, 400, 23493]);
  assert.deepEqual(seen, ["ok"]);
  assert.ok(!store.asked.has("i" + SHA + ":thumb"), "answered: nothing is overdue");
  const full = images.want(SHA, { full: true });
  assert.notEqual(full, entry);
  assert.deepEqual(model.sent[1], { [WIRE.KIND]: WIRE.NEED_IMAGE, [WIRE.SHA256]: SHA, [WIRE.FULL]: true });
});

test("an original is let go of when its dialog closes: its URL revoked, asked for again when opened again", () => {
  const { model, images, revoked } = setup();
  const full = images.want(SHA, { full: true });
  reply(model, { [WIRE.SHA256]: SHA, [WIRE.FULL]: true, [WIRE.MEDIA_TYPE]: "image/png" }, PNG);
  assert.equal(full.url, "blob:test/1");
  images.forget(full);
  assert.deepEqual(revoked, ["blob:test/1"]);
  assert.equal(full.status, "forgotten");
  const again = images.want(SHA, { full: true });
  assert.notEqual(again, full);
  assert.equal(model.sent.length, 2);
  reply(model, { [WIRE.SHA256]: SHA, [WIRE.FULL]: true, [WIRE.MEDIA_TYPE]: "image/png" }, PNG);
  assert.equal(again.url, "blob:test/2");
  assert.equal(full.url, null); // the old entry stays let go of
});

test("bytes that are not the image they claim, an SVG, or no picture are never drawn: the kernel's sentence is shown", () => {
  for (const [type, picture] of [["image/png", SVG], ["image/svg+xml", SVG], ["image/jpeg", PNG], ["text/html", PDF]]) {
    const { model, images, made } = setup();
    const entry = images.want(SHA);
    reply(model, { [WIRE.SHA256]: SHA, [WIRE.MEDIA_TYPE]: type }, picture);
    assert.equal(entry.status, "none", type);
    assert.equal(entry.url, null);
    assert.equal(made.length, 0);
    assert.match(entry.text, /not drawn/);
  }
  const { model, images } = setup();
  const entry = images.want(SHA);
  reply(model, { [WIRE.SHA256]: SHA, [WIRE.TEXT]: "missing blob " + SHA + ": this kernel holds no bytes for it" });
  assert.equal(entry.status, "none");
  assert.equal(entry.text, "missing blob " + SHA + ": this kernel holds no bytes for it");
});

test("an image of a running turn comes when the turn ends: asked again then", () => {
  const { model, images } = setup("running");
  const entry = images.want(SHA, { turn: 0 });
  reply(model, { [WIRE.SHA256]: SHA, [WIRE.LATER]: true, [WIRE.TEXT]: "shown when the turn ends" });
  assert.equal(entry.status, "later");
  assert.equal(model.sent.length, 1);
  model.receive(event(2, 0, finished("seen")));
  assert.equal(entry.status, "loading");
  assert.equal(model.sent.length, 2);
  reply(model, { [WIRE.SHA256]: SHA, [WIRE.MEDIA_TYPE]: "image/jpeg" }, JPEG);
  assert.equal(entry.status, "ok");
});

test("without a kernel nothing is sent and the image says why; a closed view revokes its URLs", () => {
  const { model, store, images, revoked } = setup();
  store.lost(NOT_CONNECTED);
  const entry = images.want(SHA);
  assert.equal(model.sent.length, 0);
  assert.equal(entry.status, "offline");
  assert.match(entry.text, /kernel is not connected/);
  const other = setup();
  other.images.want(SHA);
  reply(other.model, { [WIRE.SHA256]: SHA, [WIRE.MEDIA_TYPE]: "image/gif" }, GIF);
  other.images.dispose();
  assert.deepEqual(other.revoked, ["blob:test/1"]);
  assert.equal(other.model.listeners() > 0, true); // the store's own listeners remain
  assert.equal(revoked.length, 0);
  reply(other.model, { [WIRE.SHA256]: SHA, [WIRE.MEDIA_TYPE]: "image/gif" }, GIF); // after dispose: ignored
  assert.equal(other.made.length, 1);
});

// The same table as tests/history/test_record_attachments.py: both sides write the same line.
export const LINES = [
  [{ type: "image", sha256: SHA, media_type: "image/png", size: 23493, name: "figure", width: 600, height: 400 }, "image figure · image/png · 600×400 · 22.9 KB"],
  [{ type: "file", sha256: SHA, media_type: "application/pdf", size: 48, name: "report.pdf" }, "file report.pdf · application/pdf · 48 B"],
  [{ type: "image", sha256: SHA, media_type: "image/jpeg", size: 1280 }, "image " + SHA.slice(0, 12) + " · image/jpeg · 1.3 KB"],
  [{ type: "image", url: "https://example.com/a.png" }, "image https://example.com/a.png (by URL)"],
  [{ type: "file", sha256: SHA, media_type: "text/csv", size: 1048576 * 5 + 52429, name: "<b>x</b>.csv" }, "file <b>x</b>.csv · text/csv · 5.1 MB"],
];

test("a part's line and a size read as agentnb/history/attachments.py writes them (rounded half up)", () => {
  for (const [part, line] of LINES) assert.equal(partLine(part), line);
  const sizes = [[0, "0 B"], [1023, "1023 B"], [1024, "1.0 KB"], [1075, "1.0 KB"], [1076, "1.1 KB"], [1280, "1.3 KB"], [1048575, "1024.0 KB"], [1048576, "1.0 MB"], [20971520, "20.0 MB"]];
  for (const [size, text] of sizes) assert.equal(sizeText(size), text, String(size));
});

test("a message's images and files are found in both wire forms; its first line counts them", () => {
  const described = { type: "image", sha256: SHA, media_type: "image/png", size: 9, name: "fig" };
  const items = [
    { type: "text", text: "What changed?" },
    { type: "image_url", image_url: { url: "agentnb-blob:" + SHA, detail: "auto" }, part: described },
    { type: "input_image", image_url: "https://example.com/x.png" },
    { type: "file", file: { filename: "r.pdf", file_data: "agentnb-blob:" + SHA }, part: { type: "file", sha256: SHA, media_type: "application/pdf", size: 4, name: "r.pdf" } },
    { type: "image_url", image_url: { url: "javascript:alert(1)" } },
  ];
  assert.deepEqual(items.map(itemPart), [null, described, { type: "image", url: "https://example.com/x.png" }, items[3].part, null]);
  assert.equal(contentHead(items), "What changed? [2 images, 1 file]");
  assert.equal(contentHead("plain"), "plain");
  assert.equal(contentHead(null), null);
});

test("the static text names the user's and the tool's images; a save keeps their thumbnails", () => {
  const user = { type: "image", sha256: SHA, media_type: "image/png", size: 23493, name: "figure", width: 600, height: 400 };
  const chart = { type: "image", sha256: "cd".repeat(32), media_type: "image/png", size: 4379, name: "chart", width: 400, height: 300 };
  const events = [
    started("What changed?"),
    { kind: "model_requested", call: 0, messages: 2, tools: 1, user_parts: [user] },
    { kind: "tool_call_finished", name: "plot", arguments: "{}", result: "[image chart]", error: null, attachments: [chart] },
    finished("It fell."),
  ];
  const snap = snapshot({ seq: 3, turns: [summary(0, { message: "What changed?", content: "It fell." })], turn: 0, events, state: {} });
  snap[WIRE.STATIC_IMAGES] = [{ line: partLine(user), url: "data:image/jpeg;base64,AAAA" }];
  const model = new Model({ [WIRE.TRAIT_ID]: "m1", [WIRE.TRAIT_AGENT]: "analyst", [WIRE.TRAIT_MODEL]: { label: "scripted" }, [WIRE.TRAIT_SNAPSHOT]: snap });
  assert.deepEqual(staticText(model).split("\n").slice(2), [
    "user: What changed?",
    "  + image figure · image/png · 600×400 · 22.9 KB",
    "  1. plot({}) -> [image chart]",
    "     + image chart · image/png · 400×300 · 4.3 KB",
    "answer: It fell.",
  ]);
  const metadata = {};
  writeStatic({ getMetadata: (k) => metadata[k], setMetadata: (k, v) => (metadata[k] = v) }, model);
  assert.deepEqual(metadata[METADATA_KEY].inspectors.m1.images, [{ line: "image figure · image/png · 600×400 · 22.9 KB", url: "data:image/jpeg;base64,AAAA" }]);
});
