"""What a notebook holds, as message parts: ``Image(...)``, ``File(...)`` and ``to_parts([...])``.

``agent.run(["What changed in March?", fig])`` sends the text and the figure: a plain string is
text; a matplotlib figure (or axes) is rendered to PNG at its dpi; a PIL image is saved as PNG;
an ``HxWx3`` / ``HxWx4`` ``uint8`` numpy array becomes a PNG (through PIL when it is installed,
else the standard library); bytes are an image or PDF by their magic number; a ``Path`` is an
image, a PDF or a text file by its suffix; a pandas DataFrame is a compact text table. An
``http(s)`` URL is an image when wrapped in ``Image(url)`` (sent as the URL, never fetched).

matplotlib, PIL, numpy and pandas are never imported here: an object is recognised by its
type's module, and only a conversion that needs a library imports it.
"""

from __future__ import annotations

import io
import mimetypes
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ..errors import PartError
from .media import IMAGE_TYPES, TEXT_SUFFIXES, sniff
from .parts import DETAILS, Detail, FilePart, ImagePart, Part, TextPart
from .png import encode_png
from .tables import frame_text, is_frame

ACCEPTED = (
    "a str (text), Image(...) / File(...), a matplotlib Figure or Axes, a PIL image, an HxWx3 or "
    "HxWx4 uint8 numpy array, bytes of a PNG, JPEG, GIF, WEBP or PDF, a pathlib.Path to an image, "
    "a PDF or a text file, a pandas DataFrame, or a TextPart / ImagePart / FilePart"
)
"""What ``to_parts`` takes, as its errors say."""

IMAGE_SUFFIXES = {
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".gif": "image/gif",
    ".webp": "image/webp",
}
"""Image files a path may name, by suffix."""


def _module(obj: Any) -> str:
    return type(obj).__module__ or ""


def _is_figure(obj: Any) -> bool:
    return _module(obj).startswith("matplotlib.") and hasattr(obj, "savefig")


def _is_axes(obj: Any) -> bool:
    return _module(obj).startswith("matplotlib.") and _is_figure(getattr(obj, "figure", None))


def _is_pil(obj: Any) -> bool:
    return _module(obj).startswith("PIL.") and hasattr(obj, "save") and hasattr(obj, "mode")


def _is_array(obj: Any) -> bool:
    return _module(obj) == "numpy" and type(obj).__name__ == "ndarray"


def _figure_png(figure: Any) -> bytes:
    buffer = io.BytesIO()
    # No "Software: Matplotlib version ..." text: the same pixels are the same bytes (so the
    # same hash, and a recording replays) whichever matplotlib drew them.
    figure.savefig(buffer, format="png", dpi=figure.dpi, metadata={"Software": None})
    return buffer.getvalue()


def _pil_png(image: Any) -> bytes:
    if image.mode not in ("1", "L", "LA", "I", "P", "RGB", "RGBA"):  # what PNG holds (CMYK does not)
        image = image.convert("RGBA" if "A" in image.mode else "RGB")
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return buffer.getvalue()


def _array_png(array: Any) -> bytes:
    shape, dtype = tuple(array.shape), str(array.dtype)
    if len(shape) != 3 or shape[2] not in (3, 4) or dtype != "uint8":
        hint = " (scale a float image: (array * 255).astype('uint8'))" if dtype.startswith("float") else ""
        raise PartError(
            f"an array image is HxWx3 (RGB) or HxWx4 (RGBA) of uint8; got shape {shape} of {dtype}{hint}"
        )
    try:
        from PIL import Image as PILImage
    except ImportError:
        height, width, channels = shape
        return encode_png(array.tobytes(order="C"), width, height, channels)
    return _pil_png(PILImage.fromarray(array))


def _path(value: Any) -> Path:
    path = Path(value).expanduser()
    if not path.is_file():
        where = "it is a folder" if path.is_dir() else "no such file"
        raise PartError(
            f"cannot attach {str(path)!r}: {where}; give the path of an image, a PDF or a text file"
        )
    return path


def Image(obj: Any, *, detail: Detail = "auto", name: str | None = None) -> ImagePart:  # noqa: N802  (a helper named as the part it makes, as pydantic-ai's ImageUrl)
    """An image part from a matplotlib Figure or Axes (PNG at the figure's dpi), a PIL image
    (PNG), an ``HxWx3`` / ``HxWx4`` uint8 array (PNG), bytes (PNG, JPEG, GIF or WEBP), a path,
    an ``http(s)`` URL (sent as the URL, never fetched) or an ImagePart. ``detail``: how closely
    the model looks (auto, low, high); ``name``: how people and tool results name it."""
    if detail not in DETAILS:
        raise PartError(f"an image's detail is one of {', '.join(DETAILS)}; got {detail!r}")
    if isinstance(obj, ImagePart):
        return ImagePart(obj.data, obj.url, obj.media_type, detail, name or obj.name, obj.width, obj.height)
    if isinstance(obj, str) and (
        obj.startswith("data:") or "://" in obj
    ):  # a URL (ImagePart checks its scheme)
        return ImagePart(url=obj, detail=detail, name=name)
    if isinstance(obj, (bytes, bytearray, memoryview)):
        return ImagePart(bytes(obj), detail=detail, name=name)
    if isinstance(obj, (str, Path)):
        path = _path(obj)
        media_type = IMAGE_SUFFIXES.get(path.suffix.lower())
        return ImagePart(path.read_bytes(), media_type=media_type, detail=detail, name=name or path.name)
    if _is_axes(obj):
        obj = obj.figure
    if _is_figure(obj):
        label = obj.get_label() if hasattr(obj, "get_label") else ""
        return ImagePart(_figure_png(obj), detail=detail, name=name or label or "figure")
    if _is_pil(obj):
        return ImagePart(
            _pil_png(obj), detail=detail, name=name or Path(getattr(obj, "filename", "") or "").name or None
        )
    if _is_array(obj):
        return ImagePart(_array_png(obj), detail=detail, name=name)
    raise PartError(
        f"Image() cannot make an image of a {type(obj).__module__}.{type(obj).__qualname__}; it takes a "
        "matplotlib Figure or Axes, a PIL image, an HxWx3/4 uint8 array, bytes, a path or an http(s) URL"
    )


def _file_media_type(path: Path) -> str | None:
    suffix = path.suffix.lower()
    if suffix == ".pdf":
        return "application/pdf"
    return TEXT_SUFFIXES.get(suffix) or mimetypes.guess_type(path.name)[0]


def File(obj: Any, *, name: str | None = None, media_type: str | None = None) -> FilePart:  # noqa: N802  (a helper named as the part it makes)
    """A file part (the API's file input) from a path (a PDF or a text file, typed by its
    suffix), bytes (a PDF by its magic number, else give ``media_type``), a pandas DataFrame (as
    CSV) or a FilePart. ``name``: the file name the API is given."""
    if isinstance(obj, FilePart):
        return FilePart(obj.data, media_type or obj.media_type, name or obj.name)
    if isinstance(obj, (bytes, bytearray, memoryview)):
        return FilePart(bytes(obj), media_type, name)
    if isinstance(obj, (str, Path)):
        path = _path(obj)
        return FilePart(path.read_bytes(), media_type or _file_media_type(path), name or path.name)
    if is_frame(obj):
        return FilePart(obj.to_csv().encode("utf-8"), media_type or "text/csv", name or "frame.csv")
    raise PartError(
        f"File() cannot make a file of a {type(obj).__module__}.{type(obj).__qualname__}; it takes a "
        "path, bytes (with media_type= unless a PDF), a pandas DataFrame or a FilePart"
    )


def to_part(item: Any) -> Part:
    """One item of a message given as a list, as a part (see the module's text)."""
    if isinstance(item, (TextPart, ImagePart, FilePart)):
        return item
    if isinstance(item, str):
        return TextPart(item)
    if isinstance(item, (bytes, bytearray, memoryview)):
        found = sniff(bytes(item[:16]))
        if found in IMAGE_TYPES:
            return ImagePart(bytes(item), media_type=found)
        if found is not None:
            return FilePart(bytes(item), found)
        raise PartError(
            "bytes of no known kind (not a PNG, JPEG, GIF, WEBP or PDF); say what they are: "
            "Image(data) for an image, File(data, media_type='text/csv') for a file"
        )
    if isinstance(item, Path):
        suffix = item.suffix.lower()
        if suffix in IMAGE_SUFFIXES:
            return Image(item)
        if suffix == ".pdf" or suffix in TEXT_SUFFIXES:
            return File(item)
        _path(item)  # a missing file says so before its suffix does
        raise PartError(
            f"cannot attach {str(item)!r}: its suffix {suffix or '(none)'!r} is no image "
            f"({', '.join(IMAGE_SUFFIXES)}), PDF or text file ({', '.join(TEXT_SUFFIXES)}); "
            "use File(path, media_type=...)"
        )
    if is_frame(item):
        return TextPart(frame_text(item))
    if _is_figure(item) or _is_axes(item) or _is_pil(item) or _is_array(item):
        return Image(item)
    raise PartError(
        f"cannot send a {type(item).__module__}.{type(item).__qualname__} to a model; a message takes {ACCEPTED}"
    )


def to_parts(items: Iterable[Any]) -> tuple[Part, ...]:
    """A message given as a list, as parts in order (see the module's text); PartError naming
    what is accepted for an item that is none of them."""
    if isinstance(items, (str, bytes)):
        items = [items]
    return tuple(to_part(item) for item in items)


__all__ = ["ACCEPTED", "File", "Image", "to_part", "to_parts"]
