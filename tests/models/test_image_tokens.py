"""Image tokens estimated by OpenAI's published tile rule, checked against the examples OpenAI
publishes with it, and wire contents estimated part by part."""

from __future__ import annotations

import pytest

from agentnb.messages import FilePart, ImagePart, Message
from agentnb.messages.png import encode_png
from agentnb.models.tokens import content_tokens, image_tokens


@pytest.mark.parametrize(
    ("width", "height", "detail", "tokens"),
    [
        (1024, 1024, "high", 765),  # OpenAI's example: 768x768, four tiles
        (2048, 4096, "high", 1105),  # OpenAI's example: 1024x2048, then 768x1536, six tiles
        (4096, 8192, "high", 1105),  # fitted into 2048x2048 first
        (4096, 8192, "low", 85),  # low: 85 whatever the size
        (500, 500, "high", 255),  # one tile, not scaled up
        (513, 500, "high", 425),  # two tiles
        (513, 513, "auto", 765),  # auto counts as high: four tiles
    ],
)
def test_the_tile_rule(width: int, height: int, detail: str, tokens: int) -> None:
    assert image_tokens(width, height, detail) == tokens


def test_an_image_of_unknown_size_counts_as_1024_square() -> None:
    assert image_tokens(None, None, "high") == 765
    wire = Message.user(["look", ImagePart(url="https://e.com/a.png", detail="low")]).to_openai()
    assert content_tokens(wire["content"]) == 1 + 85


def test_a_wire_content_list_is_estimated_part_by_part() -> None:
    image = ImagePart(encode_png(bytes(600 * 3) * 10, 600, 10, 3))  # two tiles wide
    notes = FilePart(b"x" * 400, "text/plain", "notes.txt")
    pdf = FilePart(b"%PDF-1.4\n" + b"x" * 4000, name="r.pdf")
    content = Message.user(["12345678", image, notes, pdf]).to_openai()["content"]
    assert content_tokens(content) == 2 + (85 + 2 * 170) + 100 + 0  # a PDF is left to the server
    assert content_tokens("12345678") == 2 and content_tokens(None) == 0
