"""A saved notebook grows by the thumbnails of the images it shows, never by the images: ten
``%%chat`` turns each sending one 1 MB image, run by ``jupyter nbconvert --execute`` (widget state
saved too), against the same ten turns with text only."""

from __future__ import annotations

import base64
import re
from pathlib import Path

import pytest

pytest.importorskip("anywidget")
pytest.importorskip("PIL.Image")

from test_inspector_static import nbconvert_execute  # noqa: E402

SETUP = """import io, random
from PIL import Image as PILImage
from agentnb import ScriptedModel
rng = random.Random(11)
photo = PILImage.frombytes("RGB", (600, 580), rng.randbytes(600 * 580 * 3))  # noise: about 1 MB as PNG
out = io.BytesIO()
photo.save(out, format="PNG")
png = out.getvalue()
model = ScriptedModel([f"answer {i}" for i in range(10)])"""

TURNS = 10


def cells(attach: bool) -> list[str]:
    chat = "%%chat bot --attach png\nWhat is in it?" if attach else "%%chat bot\nWhat is in it?"
    return ["%load_ext agentnb", SETUP, "%%agent bot --model model --no-session\nLook closely."] + [
        chat
    ] * TURNS


def test_ten_turns_of_a_1mb_image_grow_the_notebook_by_a_thumbnail_per_place_shown(tmp_path: Path) -> None:
    (tmp_path / "text").mkdir()
    (tmp_path / "image").mkdir()
    nbconvert_execute(tmp_path / "text", cells(attach=False))
    nbconvert_execute(tmp_path / "image", cells(attach=True))
    text = (tmp_path / "text" / "out.ipynb").read_bytes()
    image = (tmp_path / "image" / "out.ipynb").read_bytes()
    source = (tmp_path / "image" / "out.ipynb").read_text()
    thumbnails = [
        base64.b64decode(b) for b in re.findall(r"data:image/jpeg;base64,([A-Za-z0-9+/=]+)", source)
    ]
    # Shown: each turn's record (10), and the inspector's static view of the last turn (1).
    assert len(thumbnails) == TURNS + 1
    thumbnail = max(len(t) for t in thumbnails)
    growth = len(image) - len(text)
    space: dict[str, object] = {}
    exec(SETUP, space)  # the image the notebook sent, made again
    size = len(space["png"])  # type: ignore[arg-type]
    assert 1_000_000 <= size <= 1_100_000
    print(
        f"\n{size:,} B image × {TURNS} turns: notebook {len(text):,} B (text only) → {len(image):,} B "
        f"(+{growth:,} B, {growth / TURNS:,.0f} B a turn); a thumbnail {thumbnail:,} B "
        f"({thumbnail * 4 // 3:,} B as base64)"
    )
    # Each thumbnail is written once as base64 (4/3 of its bytes), plus the lines naming the image;
    # the widget state nbconvert saves carries the last turn's once more, inside its snapshot.
    assert growth < (TURNS + 3) * (thumbnail * 4 // 3 + 600)
    assert growth < size / 10  # far below one copy of the image
