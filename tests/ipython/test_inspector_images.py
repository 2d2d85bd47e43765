"""The inspector's images on the wire: what the kernel sends when a view asks for an image by its
hash (a thumbnail, or the original), and the descriptions and small thumbnails its events and
snapshot carry — for a known hash, an unknown one, a file that is no image, a hostile hash string,
a huge image and an image of a turn still running; never an exception in the kernel."""

from __future__ import annotations

import base64
import io
import json
import random
import re
import struct
import zlib
from html.parser import HTMLParser
from typing import Any

import pytest

pytest.importorskip("anywidget")
Pillow = pytest.importorskip("PIL.Image")

from agentnb import Agent, ScriptedModel, tool_call  # noqa: E402
from agentnb.history.attachments import size_text  # noqa: E402
from agentnb.ipython import wire  # noqa: E402
from agentnb.ipython.inspector import Inspector  # noqa: E402
from agentnb.ipython.record import static_text, static_view  # noqa: E402
from agentnb.messages import File, Image, ImagePart  # noqa: E402
from agentnb.serverext import static_html  # noqa: E402

HOSTILE = '<img src=x onerror=alert(1)>"'


def picture(width: int, height: int, seed: int, fmt: str = "PNG") -> bytes:
    """A noise image of its own (a fresh hash each seed: held by no earlier test)."""
    rng = random.Random(seed)
    image = Pillow.frombytes("RGB", (width, height), rng.randbytes(width * height * 3))
    out = io.BytesIO()
    image.save(out, format=fmt)
    return out.getvalue()


def decoded(data: bytes) -> tuple[str, tuple[int, int]]:
    with Pillow.open(io.BytesIO(data)) as image:
        return image.format, image.size


class Replies:
    """What the inspector sends, each message as the browser gets it: its JSON body merged with its
    content, and the picture (a second buffer) when there is one."""

    def __init__(self, inspector: Inspector, monkeypatch: pytest.MonkeyPatch) -> None:
        self.inspector = inspector
        self.sent: list[tuple[dict[str, Any], bytes | None]] = []
        monkeypatch.setattr(inspector, "send", self.receive)

    def receive(self, content: dict[str, Any], buffers: list[bytes] | None = None) -> None:
        body, *rest = buffers or [b"{}"]
        assert len(rest) <= 1
        self.sent.append(({**json.loads(bytes(body)), **content}, bytes(rest[0]) if rest else None))

    def ask(self, sha: Any, **more: Any) -> tuple[dict[str, Any], bytes | None]:
        self.inspector._on_msg(self.inspector, {wire.KIND: wire.NEED_IMAGE, wire.SHA256: sha, **more}, [])
        reply, picture = self.sent[-1]
        assert reply[wire.KIND] == wire.IMAGE  # always an image reply: never an error message
        return reply, picture


FIGURE = picture(600, 400, seed=1)
CHART = picture(400, 300, seed=2)
PDF = b"%PDF-1.4\n1 0 obj <<>> endobj\ntrailer <<>>\n%%EOF\n"
SVG = b'<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"><script>alert(2)</script></svg>'


def chart() -> object:
    """A chart of the stock."""
    return Image(CHART, name="chart.png")


@pytest.fixture
def analyst(monkeypatch: pytest.MonkeyPatch) -> tuple[Agent, Inspector, Replies]:
    agent = Agent("analyst", model=ScriptedModel([[tool_call("chart")], "It fell."]), tools=[chart])
    inspector = Inspector.for_agent(agent)
    replies = Replies(inspector, monkeypatch)
    agent.run(
        [
            "What changed?",
            Image(FIGURE, name=HOSTILE),
            File(PDF, name="report.pdf"),
            File(SVG, media_type="image/svg+xml", name="logo.svg"),
        ]
    )
    return agent, inspector, replies


def sha_of(data: bytes) -> str:
    import hashlib

    return hashlib.sha256(data).hexdigest()


def test_a_known_image_comes_as_a_small_thumbnail_and_on_request_whole(analyst) -> None:
    _, _, replies = analyst
    reply, thumb = replies.ask(sha_of(FIGURE), **{wire.TURN_INDEX: 0})
    assert reply[wire.SHA256] == sha_of(FIGURE) and reply[wire.FULL] is False
    assert (reply[wire.MEDIA_TYPE], reply[wire.WIDTH], reply[wire.HEIGHT], reply[wire.SIZE]) == (
        "image/jpeg",
        600,
        400,
        len(FIGURE),
    )
    assert thumb is not None and decoded(thumb) == ("JPEG", (160, 107))
    assert len(thumb) < len(FIGURE) / 20
    reply, whole = replies.ask(sha_of(FIGURE), **{wire.FULL: True})
    assert whole == FIGURE and reply[wire.MEDIA_TYPE] == "image/png" and reply[wire.FULL] is True
    # The tool's chart is found without a turn named (every turn is looked through).
    reply, thumb = replies.ask(sha_of(CHART))
    assert thumb is not None and decoded(thumb) == ("JPEG", (160, 120)) and reply[wire.WIDTH] == 400


def test_an_unknown_hash_says_the_blob_is_missing_and_the_kernel_goes_on(analyst) -> None:
    _, _, replies = analyst
    missing = "0" * 64
    reply, picture_sent = replies.ask(missing, **{wire.TURN_INDEX: 0})
    assert picture_sent is None and wire.MEDIA_TYPE not in reply
    assert reply[wire.TEXT].startswith(f"missing blob {missing}: this kernel holds no bytes for it")
    assert not [m for m, _ in replies.sent if m[wire.KIND] == wire.ERROR]
    _, thumb = replies.ask(sha_of(FIGURE))  # and it answers the next one
    assert thumb is not None


def test_a_file_that_is_no_image_is_never_sent_as_a_picture(analyst) -> None:
    _, _, replies = analyst
    for data, what in ((PDF, "application/pdf"), (SVG, "bytes of no known image kind")):
        for full in (False, True):
            reply, picture_sent = replies.ask(sha_of(data), **{wire.FULL: full})
            assert picture_sent is None and wire.MEDIA_TYPE not in reply
            assert reply[wire.TEXT] == f"not an image ({what}): shown as a file, never drawn"


@pytest.mark.parametrize(
    "hostile",
    [
        "../../etc/passwd",
        "<script>alert(1)</script>",
        "A" * 64,  # upper case: not how a hash is written
        "0" * 65,
        "0" * 63 + "\n",
        "",
        None,
        42,
        {"$ne": ""},
        ["0" * 64],
        "x" * 10_000,
    ],
)
def test_a_hostile_hash_string_is_refused_before_any_lookup(analyst, hostile: Any, monkeypatch) -> None:
    _, _, replies = analyst
    looked: list[Any] = []
    monkeypatch.setattr("agentnb.ipython.images.find_bytes", lambda *args: looked.append(args))
    reply, picture_sent = replies.ask(hostile)
    assert picture_sent is None and not looked
    assert reply[wire.TEXT].endswith("is not an image's hash (a SHA-256: 64 hex digits)")
    assert len(reply[wire.SHA256]) <= 80 and isinstance(reply[wire.SHA256], str)


def test_a_huge_image_gets_its_size_in_words_and_a_large_one_a_thumbnail(monkeypatch) -> None:
    header = struct.pack(">IIBBBBB", 30000, 30000, 8, 2, 0, 0, 0)
    crc = zlib.crc32(b"IHDR" + header)
    huge = b"\x89PNG\r\n\x1a\n" + struct.pack(">I", 13) + b"IHDR" + header + struct.pack(">I", crc)
    large = picture(3000, 2000, seed=3, fmt="JPEG")  # about 5 MB of noise
    model = ScriptedModel(["seen"])
    agent = Agent("viewer", model=model)
    inspector = Inspector.for_agent(agent)
    replies = Replies(inspector, monkeypatch)
    agent.run(["Look", ImagePart(huge), ImagePart(large)])
    reply, picture_sent = replies.ask(sha_of(huge), **{wire.TURN_INDEX: 0})
    assert picture_sent is None
    assert (reply[wire.WIDTH], reply[wire.HEIGHT]) == (30000, 30000)
    assert reply[wire.TEXT] == "30000×30000 pixels: too large to scale here"
    reply, thumb = replies.ask(sha_of(large), **{wire.TURN_INDEX: 0})
    assert thumb is not None and decoded(thumb) == ("JPEG", (160, 107)) and reply[wire.SIZE] == len(large)


def test_an_image_of_a_running_turn_comes_later(monkeypatch) -> None:
    figure = picture(64, 48, seed=4)
    seen: list[dict[str, Any]] = []

    def peek() -> str:
        """Look at what the view would get now."""
        reply, _ = replies.ask(sha_of(figure), **{wire.TURN_INDEX: 0})
        seen.append(reply)
        return "peeked"

    agent = Agent("live", model=ScriptedModel([[tool_call("peek")], "done"]), tools=[peek])
    inspector = Inspector.for_agent(agent)
    replies = Replies(inspector, monkeypatch)
    agent.run(["Look", Image(figure)])
    assert seen[0][wire.LATER] is True and seen[0][wire.TEXT] == "shown when the turn ends"
    reply, thumb = replies.ask(sha_of(figure), **{wire.TURN_INDEX: 0})
    assert wire.LATER not in reply and thumb is not None


def test_the_events_describe_the_parts_and_the_snapshot_carries_small_static_thumbnails(analyst) -> None:
    _, inspector, _ = analyst
    snapshot = json.loads(inspector.snapshot())
    requested = [e for e in snapshot[wire.EVENTS] if e["kind"] == "model_requested"]
    assert [p["name"] for p in requested[0]["user_parts"]] == [HOSTILE, "report.pdf", "logo.svg"]
    assert all("user_parts" not in e for e in requested[1:])  # the user's, once
    assert all("data" not in p and "url" not in p for p in requested[0]["user_parts"])  # no bytes
    (finished,) = [e for e in snapshot[wire.EVENTS] if e["kind"] == "tool_call_finished"]
    assert [(a["name"], a["sha256"]) for a in finished["attachments"]] == [("chart.png", sha_of(CHART))]
    statics = snapshot[wire.STATIC_IMAGES]
    assert [s["line"].split(" · ")[0] for s in statics] == [f"image {HOSTILE}", "image chart.png"]
    for item in statics:
        match = re.fullmatch(r"data:image/jpeg;base64,([A-Za-z0-9+/=]+)", item["url"])
        assert match and max(decoded(base64.b64decode(match.group(1)))[1]) == 80
    assert len(json.dumps(statics)) < 12_000  # two thumbnails, not the images (FIGURE alone is 700 KB)


class Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.found: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag, attrs):
        self.found.append((tag, dict(attrs)))


def test_the_static_views_name_every_part_and_draw_only_the_thumbnails(analyst) -> None:
    agent, _, _ = analyst
    lines = static_text(agent).splitlines()
    assert lines[3:6] == [
        f"  + image {HOSTILE} · image/png · 600×400 · {size_text(len(FIGURE))}",
        f"  + file report.pdf · application/pdf · {len(PDF)} B",
        f"  + file logo.svg · image/svg+xml · {len(SVG)} B",
    ]
    assert lines[7].startswith("     + image chart.png · image/png · 400×300 · ")
    for html_text in (
        static_view(agent),
        static_html(
            static_text(agent), json.loads(Inspector.for_agent(agent).snapshot())[wire.STATIC_IMAGES]
        ),
    ):
        parser = Tags()
        parser.feed(html_text)
        srcs = [attrs["src"] for tag, attrs in parser.found if tag == "img"]
        assert len(srcs) == 2 and all(s and s.startswith("data:image/jpeg;base64,") for s in srcs)
        assert {tag for tag, _ in parser.found} <= {"div", "pre", "figure", "img", "figcaption"}
        assert "<svg" not in html_text and "<script" not in html_text
