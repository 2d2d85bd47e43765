"""Message parts: text, images and files in a message; their hash, size and pixel size; their
stored form (a hash, never the bytes) and their wire form (a reference)."""

from __future__ import annotations

import base64
import hashlib
import json
import struct
import zlib

import pytest

from agentnb.errors import MissingBlobError, PartError, PartSizeError
from agentnb.messages import (
    MAX_IMAGE_BYTES,
    BlobStore,
    FilePart,
    ImagePart,
    MemoryBlobs,
    Message,
    TextPart,
)
from agentnb.messages.media import image_size, sniff
from agentnb.messages.png import encode_png
from agentnb.messages.wire import BLOB_SCHEME, inline

PDF = b"%PDF-1.4\n1 0 obj<<>>endobj\ntrailer<<>>\n%%EOF\n"


def png(width: int = 3, height: int = 2, channels: int = 3) -> bytes:
    return encode_png(bytes((i * 7) % 256 for i in range(width * height * channels)), width, height, channels)


def test_the_png_writer_writes_a_png_that_zlib_and_the_header_read_back() -> None:
    pixels = bytes(range(2 * 3 * 4))
    data = encode_png(pixels, 3, 2, 4)
    assert sniff(data) == "image/png"
    assert image_size(data, "image/png") == (3, 2)
    # The IDAT chunk holds each row behind a 0 filter byte.
    idat = data.index(b"IDAT")
    (length,) = struct.unpack(">I", data[idat - 4 : idat])
    raw = zlib.decompress(data[idat + 4 : idat + 4 + length])
    assert raw == b"\x00" + pixels[:12] + b"\x00" + pixels[12:]
    with pytest.raises(ValueError, match="not 2 rows"):
        encode_png(pixels[:-1], 3, 2, 4)


def test_pil_reads_the_png_writer_s_images_pixel_for_pixel() -> None:
    pil = pytest.importorskip("PIL.Image")
    import io

    pixels = bytes((i * 13) % 256 for i in range(5 * 4 * 3))
    image = pil.open(io.BytesIO(encode_png(pixels, 5, 4, 3)))
    assert image.size == (5, 4) and image.mode == "RGB"
    assert image.tobytes() == pixels


def test_an_image_knows_its_hash_size_media_type_and_pixel_size() -> None:
    data = png(640, 480)
    part = ImagePart(data, name="fig")
    assert part.sha256 == hashlib.sha256(data).hexdigest()
    assert part.size == len(data)
    assert (part.media_type, part.width, part.height) == ("image/png", 640, 480)
    assert part.sha256 is part.sha256  # computed once
    assert part.label == "fig"
    assert ImagePart(data).label == f"image-{part.sha256[:8]}.png"


@pytest.mark.parametrize(
    ("head", "media_type"),
    [
        (b"\xff\xd8\xff\xe0\x00\x10JFIF", "image/jpeg"),
        (b"GIF89a\x10\x00\x20\x00", "image/gif"),
        (b"RIFF\x00\x00\x00\x00WEBPVP8 ", "image/webp"),
        (PDF, "application/pdf"),
        (b"hello", None),
    ],
)
def test_media_types_are_sniffed_from_magic_numbers(head: bytes, media_type: str | None) -> None:
    assert sniff(head) == media_type


def test_gif_and_jpeg_headers_give_the_pixel_size() -> None:
    gif = b"GIF89a" + struct.pack("<HH", 300, 200) + b"\x00" * 10
    assert ImagePart(gif).media_type == "image/gif"
    assert (ImagePart(gif).width, ImagePart(gif).height) == (300, 200)
    # SOI, an APP0 segment of 16 bytes, then a baseline SOF0 of 1200x900.
    jpeg = b"\xff\xd8" + b"\xff\xe0" + struct.pack(">H", 16) + b"JFIF\x00" + b"\x00" * 9
    jpeg += b"\xff\xc0" + struct.pack(">HBHH", 17, 8, 900, 1200) + b"\x03" + b"\x00" * 9
    assert image_size(jpeg, "image/jpeg") == (1200, 900)


def test_an_image_given_by_url_has_no_bytes_and_is_never_fetched() -> None:
    part = ImagePart(url="https://example.com/chart.png", detail="low")
    assert part.data is None and part.sha256 is None and part.size is None
    assert part.to_dict() == {
        "$agentnb": "part",
        "type": "image",
        "url": "https://example.com/chart.png",
        "detail": "low",
    }


def test_a_data_url_given_as_an_image_url_is_decoded_into_bytes() -> None:
    data = png()
    part = ImagePart(url="data:image/png;base64," + base64.b64encode(data).decode())
    assert part.data == data and part.url is None and part.media_type == "image/png"


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({}, "exactly one"),
        ({"data": b"\x89PNG\r\n\x1a\n", "url": "https://x/y.png"}, "exactly one"),
        ({"url": "ftp://x/y.png"}, "http:// or https://"),
        ({"data": b"not an image"}, "no known image kind"),
        ({"data": PDF}, "look like application/pdf.*FilePart"),
        (
            {"data": b"\x89PNG\r\n\x1a\n" + b"\x00" * 20, "media_type": "image/jpeg"},
            "look like image/png, said to be image/jpeg",
        ),
        ({"data": b"\x89PNG\r\n\x1a\n", "detail": "medium"}, "detail is one of auto, low, high"),
        ({"data": "text"}, "must be bytes"),
    ],
)
def test_a_malformed_image_is_a_clear_error(kwargs: dict, message: str) -> None:
    with pytest.raises(PartError, match=message):
        ImagePart(**kwargs)


def test_a_file_needs_a_media_type_unless_its_bytes_say_it() -> None:
    assert FilePart(PDF, name="report.pdf").media_type == "application/pdf"
    assert FilePart(b"a,b\n1,2\n", "text/csv").label.startswith("file-")
    with pytest.raises(PartError, match="give media_type="):
        FilePart(b"a,b\n1,2\n", name="data.csv")
    with pytest.raises(PartError, match="is an image.*ImagePart"):
        FilePart(png())


def test_sizes_over_the_api_limits_are_clear_errors_naming_size_and_limit() -> None:
    big = b"\x89PNG\r\n\x1a\n" + bytes(MAX_IMAGE_BYTES)
    with pytest.raises(
        PartSizeError, match=r"is 20\.0 MB; the OpenAI API takes an image of at most 20\.0 MB"
    ):
        ImagePart(big, name="huge")
    nineteen = b"\x89PNG\r\n\x1a\n" + bytes(19 * 1024 * 1024)
    parts = [ImagePart(nineteen, name=f"p{i}") for i in range(3)]
    with pytest.raises(PartSizeError, match=r"images of one message come to 57\.0 MB.*at most 50\.0 MB"):
        Message.user(["three big images", *parts])
    assert Message.user(["two fit", *parts[:2]]).attachments == tuple(parts[:2])
    files = [FilePart(PDF + bytes(17 * 1024 * 1024), name=f"f{i}.pdf") for i in range(2)]
    with pytest.raises(PartSizeError, match=r"files of one message come to 34\.0 MB.*at most 32\.0 MB"):
        Message.user(files)


def test_a_message_of_parts_keeps_its_order_and_joins_its_text() -> None:
    image = ImagePart(png(), name="fig")
    message = Message.user(["What changed?", image, TextPart("In March.")])
    assert message.content == (TextPart("What changed?"), image, TextPart("In March."))
    assert message.text == "What changed?\nIn March."
    assert message.attachments == (image,)
    assert Message.user("plain").parts == (TextPart("plain"),)
    assert Message.user("plain").content == "plain"


def test_a_message_refuses_content_that_is_no_part() -> None:
    with pytest.raises(
        PartError, match="a message part is a TextPart, ImagePart or FilePart; got int.*to_parts"
    ):
        Message(role="user", content=("text", 3))  # type: ignore[arg-type]
    with pytest.raises(PartError, match="a str or a list of parts"):
        Message(role="user", content=b"bytes")  # type: ignore[arg-type]


def test_a_text_message_s_wire_and_stored_forms_are_unchanged() -> None:
    message = Message.user("hello")
    assert message.to_openai() == {"role": "user", "content": "hello"}
    assert message.to_dict() == {"role": "user", "content": "hello"}
    assert Message.from_dict(message.to_dict()) == message


def test_the_wire_form_refers_to_bytes_by_hash_and_describes_the_part() -> None:
    data = png(64, 32)
    image = ImagePart(data, detail="high", name="fig")
    file = FilePart(PDF, name="report.pdf")
    wire = Message.user(["look", image, file, ImagePart(url="https://e.com/a.png")]).to_openai()
    sha = image.sha256
    assert wire["content"] == [
        {"type": "text", "text": "look"},
        {
            "type": "image_url",
            "image_url": {"url": f"{BLOB_SCHEME}{sha}", "detail": "high"},
            "part": {
                "type": "image",
                "sha256": sha,
                "media_type": "image/png",
                "size": len(data),
                "name": "fig",
                "detail": "high",
                "width": 64,
                "height": 32,
            },
        },
        {
            "type": "file",
            "file": {"filename": "report.pdf", "file_data": f"{BLOB_SCHEME}{file.sha256}"},
            "part": {
                "type": "file",
                "sha256": file.sha256,
                "media_type": "application/pdf",
                "size": len(PDF),
                "name": "report.pdf",
            },
        },
        {"type": "image_url", "image_url": {"url": "https://e.com/a.png", "detail": "auto"}},
    ]
    sent = inline(wire, {sha: image, file.sha256: file})
    assert sent["content"][1] == {
        "type": "image_url",
        "image_url": {"url": "data:image/png;base64," + base64.b64encode(data).decode(), "detail": "high"},
    }
    assert (
        sent["content"][2]["file"]["file_data"]
        == "data:application/pdf;base64," + base64.b64encode(PDF).decode()
    )
    assert "part" not in json.dumps(sent)
    with pytest.raises(MissingBlobError, match=sha):
        inline(wire, {file.sha256: file})


def test_a_wire_message_of_parts_parses_back_from_data_urls_and_known_references() -> None:
    image = ImagePart(png(), detail="low", name="fig")
    wire = Message.user(["look", image]).to_openai()
    assert Message.from_openai(wire, {image.sha256: image}).content == (TextPart("look"), image)
    sent = inline(wire, {image.sha256: image})
    parsed = Message.from_openai(sent)
    assert parsed.content[1].data == image.data and parsed.content[1].detail == "low"
    with pytest.raises(MissingBlobError, match=f"blob {image.sha256}.*not among the parts"):
        Message.from_openai(wire)


def test_a_stored_part_holds_its_hash_and_the_bytes_go_to_the_store() -> None:
    blobs = MemoryBlobs("test store")
    assert isinstance(blobs, BlobStore)
    data = png(10, 20)
    image = ImagePart(data, name="fig")
    stored = Message.user(["look", image, FilePart(PDF, name="r.pdf")]).to_dict(blobs)
    assert stored["content"][1] == {
        "$agentnb": "part",
        "type": "image",
        "sha256": image.sha256,
        "media_type": "image/png",
        "size": len(data),
        "detail": "auto",
        "name": "fig",
        "width": 10,
        "height": 20,
    }
    text = json.dumps(stored)
    assert base64.b64encode(data).decode()[:40] not in text and len(text) < 800
    assert len(blobs) == 2 and blobs.get(image.sha256) == data
    back = Message.from_dict(stored, blobs)
    assert back == Message.user(["look", image, FilePart(PDF, name="r.pdf")])


def test_the_same_image_in_ten_messages_is_stored_once() -> None:
    blobs = MemoryBlobs()
    image = ImagePart(png(), name="fig")
    for turn in range(10):
        Message.user([f"turn {turn}", image]).to_dict(blobs)
    assert len(blobs) == 1


def test_a_missing_blob_is_a_clear_error_naming_the_hash_and_the_store() -> None:
    image = ImagePart(png(), name="fig")
    stored = Message.user(["look", image]).to_dict(MemoryBlobs("the first store"))
    with pytest.raises(MissingBlobError, match=f"no blob {image.sha256} in the other store"):
        Message.from_dict(stored, MemoryBlobs("the other store"))


def test_a_blob_whose_bytes_do_not_match_its_hash_is_refused() -> None:
    class Corrupt(MemoryBlobs):
        def get(self, sha256: str) -> bytes:
            return super().get(sha256)[:-1]

    blobs = Corrupt("a disk")
    stored = Message.user(["look", ImagePart(png())]).to_dict(blobs)
    with pytest.raises(MissingBlobError, match="does not hold the bytes its name says"):
        Message.from_dict(stored, blobs)


def test_without_a_store_parts_round_trip_in_this_process() -> None:
    image = ImagePart(png(7, 7))
    stored = Message.user(["look", image]).to_dict()
    assert Message.from_dict(json.loads(json.dumps(stored))).content[1] == image


def test_a_tool_message_may_carry_parts() -> None:
    from agentnb.messages import ToolCall

    call = ToolCall(id="c1", name="plot", arguments="{}")
    image = ImagePart(png(), name="chart")
    message = Message.tool(call, [TextPart("the chart"), image])
    assert message.to_openai()["content"][1]["part"]["name"] == "chart"
    assert message.to_openai()["tool_call_id"] == "c1"
    assert Message.tool(call, "plain").content == "plain"
