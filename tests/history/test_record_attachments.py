"""A turn's images and files in its record: one line each, and small thumbnails (never the image,
never anything but a raster image drawn, every name escaped)."""

from __future__ import annotations

import base64
import io
import re
import struct
import sys
import zlib
from html.parser import HTMLParser

import pytest

from agentnb import Agent, ScriptedModel, tool_call
from agentnb.history import thumbnails
from agentnb.history.attachments import figure_html, part_line, size_text, static_figures
from agentnb.history.render import turn_html, turn_text
from agentnb.messages import File, Image, ImagePart

Pillow = pytest.importorskip("PIL.Image")

SHA = "ab" * 32
HOSTILE = '<img src=x onerror=alert(1)>"'

# The same table as js/test/images.test.js: both sides write the same line.
LINES = [
    (
        {"type": "image", "sha256": SHA, "media_type": "image/png", "size": 23493, "name": "figure", "width": 600, "height": 400},
        "image figure · image/png · 600×400 · 22.9 KB",
    ),
    (
        {"type": "file", "sha256": SHA, "media_type": "application/pdf", "size": 48, "name": "report.pdf"},
        "file report.pdf · application/pdf · 48 B",
    ),
    ({"type": "image", "sha256": SHA, "media_type": "image/jpeg", "size": 1280}, f"image {SHA[:12]} · image/jpeg · 1.3 KB"),
    ({"type": "image", "url": "https://example.com/a.png"}, "image https://example.com/a.png (by URL)"),
    (
        {"type": "file", "sha256": SHA, "media_type": "text/csv", "size": 1048576 * 5 + 52429, "name": "<b>x</b>.csv"},
        "file <b>x</b>.csv · text/csv · 5.1 MB",
    ),
]  # fmt: skip


def picture(width: int, height: int, mode: str = "RGB", fmt: str = "PNG", noise: bool = False) -> bytes:
    """An image file made by Pillow: a gradient, or noise (which compresses badly)."""
    if noise:
        import random

        rng = random.Random(7)
        image = Pillow.frombytes(mode, (width, height), rng.randbytes(width * height * len(mode)))
    else:
        image = Pillow.linear_gradient("L").resize((width, height)).convert(mode)
    out = io.BytesIO()
    image.save(out, format=fmt)
    return out.getvalue()


def decoded(data: bytes) -> tuple[str, tuple[int, int]]:
    with Pillow.open(io.BytesIO(data)) as image:
        return image.format, image.size


def test_a_part_reads_as_one_line_with_its_size_rounded_half_up() -> None:
    for part, line in LINES:
        assert part_line(part) == line
    sizes = {0: "0 B", 1023: "1023 B", 1024: "1.0 KB", 1075: "1.0 KB", 1076: "1.1 KB", 1280: "1.3 KB"}
    sizes |= {1048575: "1024.0 KB", 1048576: "1.0 MB", 20971520: "20.0 MB"}
    assert {size: size_text(size) for size in sizes} == sizes


def test_a_thumbnail_is_small_a_jpeg_unless_transparent_and_made_once() -> None:
    large = picture(1200, 800)
    small = thumbnails.thumbnail(large)
    assert small.media_type == "image/jpeg" and (small.width, small.height) == (1200, 800)
    assert decoded(small.data or b"") == ("JPEG", (160, 107))
    assert thumbnails.thumbnail(large) is small  # kept by hash
    static = thumbnails.thumbnail(large, thumbnails.STATIC_PX, thumbnails.STATIC_ORIGINAL_BYTES)
    assert decoded(static.data or b"") == ("JPEG", (80, 53)) and len(static.data or b"") < 3000
    clear = Pillow.new("RGBA", (400, 400), (0, 0, 0, 0))
    out = io.BytesIO()
    clear.save(out, format="PNG")
    assert decoded(thumbnails.thumbnail(out.getvalue()).data or b"") == ("PNG", (160, 160))
    opaque = picture(400, 300, mode="RGBA")  # an alpha channel that hides nothing (a figure's)
    assert thumbnails.thumbnail(opaque).media_type == "image/jpeg"


def test_no_picture_for_what_is_not_a_raster_image_nor_for_a_bomb_and_no_exception() -> None:
    for data in (
        b"%PDF-1.4\n%%EOF\n",
        b'<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"/>',
        b"GIF8",
    ):
        made = thumbnails.thumbnail(data)
        assert made.data is None and made.note.startswith("not an image"), made
    # A PNG header that claims 30000×30000 pixels: refused from the header, never decoded.
    header = (
        b"\x89PNG\r\n\x1a\n"
        + struct.pack(">I", 13)
        + b"IHDR"
        + struct.pack(">IIBBBBB", 30000, 30000, 8, 2, 0, 0, 0)
    )
    bomb = header + b"\x00" * 4 + struct.pack(">I", 8) + b"IDAT" + zlib.compress(b"\x00" * 64)[:8]
    made = thumbnails.thumbnail(bomb)
    assert (made.data, made.width, made.height) == (None, 30000, 30000)
    assert "too large" in made.note
    damaged = picture(300, 200)[:200]  # cut short
    made = thumbnails.thumbnail(damaged)
    assert made.data is None and made.note.startswith("no thumbnail:"), made


def test_without_pillow_a_small_image_is_its_own_thumbnail_and_a_large_one_says_so(monkeypatch) -> None:
    small, large = picture(40, 30), picture(900, 600, noise=True)
    monkeypatch.setitem(sys.modules, "PIL.Image", None)  # import PIL.Image fails
    made = thumbnails.thumbnail(small)
    assert made.data == small and made.media_type == "image/png"
    made = thumbnails.thumbnail(large)
    assert made.data is None and (made.width, made.height) == (900, 600)
    assert "Pillow is not installed" in made.note


class Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.found: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag, attrs):
        self.found.append((tag, dict(attrs)))


def tags(html_text: str) -> list[tuple[str, dict[str, str | None]]]:
    parser = Tags()
    parser.feed(html_text)
    return parser.found


def chart() -> object:
    """A chart of the stock."""
    return Image(picture(400, 300), name=HOSTILE)


def test_a_records_images_are_small_thumbnails_and_its_names_text() -> None:
    figure = picture(800, 600, noise=True)  # 1.4 MB: noise compresses badly
    agent = Agent("analyst", model=ScriptedModel([[tool_call("chart")], "It fell."]), tools=[chart])
    svg = File(
        b'<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>',
        media_type="image/svg+xml",
        name="logo.svg",
    )
    agent.run(["What changed?", Image(figure, name=HOSTILE), svg])
    turn = agent.history[-1]
    lines = turn_text(turn).splitlines()
    assert f"  + image {HOSTILE} · image/png · 800×600 · {size_text(len(figure))}" in lines
    assert f"  + file logo.svg · image/svg+xml · {size_text(len(svg.data))}" in lines
    assert any(line.startswith(f"     + image {HOSTILE} · image/png · 400×300 · ") for line in lines)
    html_text = turn_html(turn)
    images = [attrs for tag, attrs in tags(html_text) if tag == "img"]
    assert len(images) == 2  # the figure and the chart; the SVG is named, never drawn
    for attrs in images:
        match = re.fullmatch(r"data:image/jpeg;base64,([A-Za-z0-9+/=]+)", attrs["src"] or "")
        assert match, attrs["src"]
        assert max(decoded(base64.b64decode(match.group(1)))[1]) == 80
        assert attrs["alt"] is not None and HOSTILE in attrs["alt"]  # as text in an attribute
    assert "<svg" not in html_text and "onerror=alert" not in html_text.replace("onerror=alert(1)&gt;", "")
    assert len(html_text) < len(figure) / 50  # the record holds thumbnails, not the image


def test_a_static_figure_draws_only_a_raster_data_url() -> None:
    line = "image <b>x</b>"
    for url in (
        "javascript:alert(1)",
        "data:image/svg+xml;base64,PHN2Zz4=",
        "data:text/html;base64,PHNjcmlwdD4=",
        'data:image/png;base64,AAAA" onerror="alert(1)',
        "https://example.com/a.png",
        "data:image/png;base64," + "A" * 300_000,
    ):
        assert "<img" not in figure_html("image", line, url)
    drawn = figure_html("image", line, "data:image/png;base64,iVBORw0KGgo=")
    assert [t for t, _ in tags(drawn)] == ["figure", "img", "figcaption"]
    assert "&lt;b&gt;x&lt;/b&gt;" in drawn
    many = static_figures(
        [{"line": f"image {i}", "url": "data:image/jpeg;base64,/9j/"} for i in range(20)] + ["x", None]
    )
    assert many.count("<img") == 8
    assert (
        static_figures("not a list") == "" and static_figures([{"url": "data:image/jpeg;base64,/9j/"}]) == ""
    )


def test_an_image_given_by_url_is_named_never_fetched() -> None:
    agent = Agent("viewer", model=ScriptedModel(["seen"]))
    agent.run(["Look", ImagePart(url="https://example.com/a.png")])
    html_text = turn_html(agent.history[-1])
    assert "image https://example.com/a.png (by URL)" in turn_text(agent.history[-1])
    assert not [a for t, a in tags(html_text) if t == "img"]
