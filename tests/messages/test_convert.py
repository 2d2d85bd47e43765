"""What a notebook holds, as message parts: figures, PIL images, arrays, bytes, paths, URLs and
frames, through ``Image`` / ``File`` / ``to_parts``; and what is refused, with what is accepted."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

import pytest

from agentnb.errors import PartError
from agentnb.messages import File, FilePart, Image, ImagePart, Message, TextPart, to_parts
from agentnb.messages.png import encode_png

PDF = b"%PDF-1.4\n%%EOF\n"


@pytest.fixture
def plt():
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    yield plt
    plt.close("all")


def test_a_figure_is_rendered_to_png_at_its_dpi(plt) -> None:
    fig, ax = plt.subplots(figsize=(4, 3), dpi=50)
    ax.plot([1, 3, 2])
    part = Image(fig, detail="high")
    assert (part.media_type, part.width, part.height, part.detail) == ("image/png", 200, 150, "high")
    assert part.name == "figure"
    fig.set_dpi(100)
    assert (Image(fig).width, Image(fig).height) == (400, 300)
    assert Image(ax).sha256 == Image(fig).sha256  # axes: their figure
    fig.set_label("sales")
    assert to_parts(["see", fig])[1].name == "sales"


def test_a_pil_image_is_saved_as_png_whatever_its_mode() -> None:
    pil = pytest.importorskip("PIL.Image")
    rgb = pil.new("RGB", (30, 20), (255, 0, 0))
    part = Image(rgb, name="red")
    assert (part.media_type, part.width, part.height, part.name) == ("image/png", 30, 20, "red")
    assert pil.open(io.BytesIO(part.data)).getpixel((0, 0)) == (255, 0, 0)
    cmyk = pil.new("CMYK", (5, 5))
    assert pil.open(io.BytesIO(Image(cmyk).data)).mode == "RGB"


def test_an_array_is_a_png_with_or_without_pil(monkeypatch) -> None:
    np = pytest.importorskip("numpy")
    array = np.zeros((2, 3, 4), dtype=np.uint8)
    array[1, 2] = (10, 20, 30, 255)
    with_pil = Image(array)
    monkeypatch.setitem(sys.modules, "PIL", None)  # as if PIL were not installed
    without = Image(array)
    assert without.data == encode_png(array.tobytes(), 3, 2, 4)
    assert (without.width, without.height) == (with_pil.width, with_pil.height) == (3, 2)


def test_both_pngs_of_an_array_hold_the_same_pixels() -> None:
    np = pytest.importorskip("numpy")
    pil = pytest.importorskip("PIL.Image")
    array = (np.arange(4 * 5 * 3) % 256).astype(np.uint8).reshape(4, 5, 3)
    ours = pil.open(io.BytesIO(encode_png(array.tobytes(), 5, 4, 3)))
    theirs = pil.open(io.BytesIO(Image(array).data))
    assert ours.tobytes() == theirs.tobytes() == array.tobytes()


@pytest.mark.parametrize(
    ("shape", "dtype", "message"),
    [((4, 4), "uint8", r"got shape \(4, 4\) of uint8"), ((4, 4, 3), "float64", r"astype\('uint8'\)")],
)
def test_an_array_that_is_no_image_is_a_clear_error(shape, dtype, message) -> None:
    np = pytest.importorskip("numpy")
    with pytest.raises(PartError, match=message):
        Image(np.zeros(shape, dtype=dtype))


def test_bytes_are_an_image_or_a_pdf_by_their_magic_number() -> None:
    png = encode_png(b"\x00" * 12, 2, 2, 3)
    image, pdf = to_parts([png, PDF])
    assert isinstance(image, ImagePart) and image.media_type == "image/png"
    assert isinstance(pdf, FilePart) and pdf.media_type == "application/pdf"
    with pytest.raises(PartError, match=r"bytes of no known kind.*File\(data, media_type='text/csv'\)"):
        to_parts([b"a,b\n1,2\n"])
    assert File(b"a,b\n", media_type="text/csv", name="t.csv").media_type == "text/csv"


def test_paths_are_images_pdfs_or_text_files_by_suffix(tmp_path: Path) -> None:
    (tmp_path / "chart.png").write_bytes(encode_png(b"\x00" * 12, 2, 2, 3))
    (tmp_path / "report.pdf").write_bytes(PDF)
    (tmp_path / "notes.md").write_text("# Notes\n")
    image, pdf, notes = to_parts([tmp_path / "chart.png", tmp_path / "report.pdf", tmp_path / "notes.md"])
    assert isinstance(image, ImagePart) and image.name == "chart.png"
    assert (pdf.media_type, pdf.name) == ("application/pdf", "report.pdf")
    assert (notes.media_type, notes.data) == ("text/markdown", b"# Notes\n")
    with pytest.raises(PartError, match=r"cannot attach .*missing\.pdf.*no such file"):
        to_parts([tmp_path / "missing.pdf"])
    (tmp_path / "archive.zip").write_bytes(b"PK")
    with pytest.raises(PartError, match=r"suffix '\.zip' is no image"):
        to_parts([tmp_path / "archive.zip"])
    with pytest.raises(PartError, match="it is a folder"):
        File(tmp_path)


def test_a_url_is_an_image_when_wrapped_and_text_when_plain() -> None:
    wrapped, plain = to_parts([Image("https://example.com/a.png", detail="low"), "https://example.com/a.png"])
    assert wrapped == ImagePart(url="https://example.com/a.png", detail="low")
    assert plain == TextPart("https://example.com/a.png")


def test_a_frame_is_a_compact_text_table_with_its_shape_and_the_rows_left_out() -> None:
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame({"month": [f"m{i}" for i in range(50)], "sales": range(50)})
    (part,) = to_parts([frame])
    assert isinstance(part, TextPart)
    lines = part.text.splitlines()
    assert lines[0] == "DataFrame: 50 rows x 2 columns"
    assert "m19" in part.text and "m20" not in part.text
    assert lines[-1] == "(30 more rows not shown)"
    (small,) = to_parts([frame.head(3)])
    assert "more rows" not in small.text
    assert File(frame.head(2)).data == frame.head(2).to_csv().encode()


def test_anything_else_is_refused_naming_what_is_accepted() -> None:
    with pytest.raises(
        PartError, match=r"cannot send a builtins\.dict to a model; a message takes a str \(text\)"
    ):
        to_parts(["text", {"a": 1}])
    with pytest.raises(PartError, match="Image\\(\\) cannot make an image of a builtins.int"):
        Image(3)
    with pytest.raises(PartError, match="detail is one of"):
        Image(b"", detail="max")  # type: ignore[arg-type]


def test_message_user_converts_a_list() -> None:
    message = Message.user(["look", encode_png(b"\x00" * 3, 1, 1, 3)])
    assert message.text == "look" and message.attachments[0].width == 1


def test_importing_agentnb_imports_no_image_or_table_library() -> None:
    code = (
        "import sys, agentnb, agentnb.messages\n"
        "print(sorted(m for m in ('PIL', 'matplotlib', 'numpy', 'pandas') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
