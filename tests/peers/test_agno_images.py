"""Agno's image and file input tests, ported.

Peer files (agno-agi/agno): libs/agno/tests/unit/utils/test_openai.py (``images_to_message``,
``_format_file_for_message``: how ``Image`` / ``File`` become Chat Completions content parts) and
libs/agno/tests/integration/agent/test_multimodal.py (``test_agent_image_input``: the run's
user message keeps its images). Agno's ``Image(content=...)`` / ``Image(filepath=...)`` /
``Image(url=...)`` are ``Image(bytes)`` / ``Image(path)`` / ``Image(url)``; ``File(filepath=...)``
is ``File(path)``. Each case runs through the real ``openai`` client against the scripted server
on 127.0.0.1 and asserts on the parts it received. Where Agno skips an image it cannot read
(logging an error), agentnb refuses it with an error naming it: marked as deliberate.
"""

from __future__ import annotations

import base64
from pathlib import Path

import pytest
from openai_server import OpenAIServer, Reply

from agentnb import Agent, File, Image
from agentnb.errors import PartError
from agentnb.models import OpenAIChat, OpenAIResponses

# Agno's dummy image: a PNG header (a 1x1 IHDR) and bytes after it.
DUMMY_PNG = (
    b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89"
    + bytes(range(20))
)
GIF_URI = "data:image/gif;base64,R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7"


def sent_images(server: OpenAIServer, items: list) -> list[dict]:
    """The content parts after the text, as Chat Completions received them."""
    server.add(Reply(text="ok"))
    Agent("a", model=OpenAIChat("gpt-4o", base_url=server.url, max_retries=0)).run(["Describe.", *items])
    assert server.problems == []
    return server.requests[-1].body["messages"][-1]["content"][1:]


def decoded(url: str) -> bytes:
    return base64.b64decode(url.split(",")[1])


# test_images_to_message_bytes
def test_images_to_message_bytes(server) -> None:
    (image,) = sent_images(server, [Image(DUMMY_PNG)])
    assert image["type"] == "image_url"
    assert image["image_url"]["url"].startswith("data:image/png;base64,")
    assert decoded(image["image_url"]["url"]) == DUMMY_PNG


# test_images_to_message_filepath_formats (the .png case)
def test_images_to_message_filepath_png(server, tmp_path: Path) -> None:
    (tmp_path / "test_image.png").write_bytes(DUMMY_PNG)
    (image,) = sent_images(server, [Image(tmp_path / "test_image.png")])
    assert image["image_url"]["url"].startswith("data:image/png;base64,")
    assert decoded(image["image_url"]["url"]) == DUMMY_PNG


# test_images_to_message_filepath_formats (the .jpeg and .webp cases: PNG bytes so named)
@pytest.mark.xfail(
    strict=True, reason="deliberate: bytes whose kind differs from their file name are refused"
)
@pytest.mark.parametrize(("suffix", "mime"), [(".jpeg", "image/jpeg"), (".webp", "image/webp")])
def test_images_to_message_filepath_formats(server, tmp_path: Path, suffix: str, mime: str) -> None:
    path = tmp_path / f"test_image{suffix}"
    path.write_bytes(DUMMY_PNG)
    (image,) = sent_images(server, [Image(path)])
    assert image["image_url"]["url"].startswith(f"data:{mime};base64,")


def test_a_png_named_jpeg_is_refused_saying_what_it_is(tmp_path: Path) -> None:
    path = tmp_path / "test_image.jpeg"
    path.write_bytes(DUMMY_PNG)
    with pytest.raises(PartError, match="bytes that look like image/png, said to be image/jpeg"):
        Image(path)


# test_images_to_message_filepath_not_found / _is_dir / _url_invalid_prefix / _mixed
@pytest.mark.xfail(strict=True, reason="deliberate: an image that cannot be read is an error, not skipped")
@pytest.mark.parametrize("bad", ["missing.png", "a_directory", "ftp://example.com/image.png"])
def test_images_to_message_skips_what_it_cannot_read(server, tmp_path: Path, bad: str) -> None:
    (tmp_path / "a_directory").mkdir()
    target = bad if bad.startswith("ftp") else tmp_path / bad
    assert sent_images(server, [Image(DUMMY_PNG), Image(target)]) == sent_images(server, [Image(DUMMY_PNG)])


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        ("missing.png", "no such file"),
        ("a_directory", "it is a folder"),
        ("ftp://example.com/image.png", "must start with http:// or https://"),
    ],
)
def test_an_image_that_cannot_be_read_is_an_error_naming_it(tmp_path: Path, bad: str, message: str) -> None:
    (tmp_path / "a_directory").mkdir()
    with pytest.raises(PartError, match=message):
        Image(bad if bad.startswith("ftp") else tmp_path / bad)


# test_images_to_message_url_data_uri
def test_images_to_message_url_data_uri(server) -> None:
    (image,) = sent_images(server, [Image(GIF_URI)])
    assert image["image_url"]["url"] == GIF_URI


# test_images_to_message_url_http
def test_images_to_message_url_http(server) -> None:
    (image,) = sent_images(server, [Image("https://example.com/image.jpg")])
    assert image["image_url"]["url"] == "https://example.com/image.jpg"


# test_images_to_message_with_detail
@pytest.mark.parametrize("detail", ["low", "high", "auto"])
def test_images_to_message_with_detail(server, detail: str) -> None:
    (image,) = sent_images(server, [Image(DUMMY_PNG, detail=detail)])
    assert image["image_url"]["detail"] == detail


@pytest.mark.xfail(
    strict=True, reason="deliberate: detail is always sent (auto unless given); None is no detail"
)
def test_images_to_message_without_detail(server) -> None:
    (image,) = sent_images(server, [Image(DUMMY_PNG, detail=None)])  # type: ignore[arg-type]
    assert "detail" not in image["image_url"]


# test_images_to_message_mixed (its valid images)
def test_images_to_message_mixed(server, tmp_path: Path) -> None:
    (tmp_path / "test_image.png").write_bytes(DUMMY_PNG)
    images = sent_images(
        server,
        [Image(DUMMY_PNG), Image(tmp_path / "test_image.png"), Image("https://example.com/image.webp")],
    )
    assert images[0]["image_url"]["url"].startswith("data:image/png;base64,")
    assert images[1]["image_url"]["url"].startswith("data:image/png;base64,")
    assert images[2]["image_url"]["url"] == "https://example.com/image.webp"


# test_format_file_path_inline: a text file (Agno sends it as a Chat Completions file part)
@pytest.mark.xfail(
    strict=True, reason="deliberate: Chat Completions' file input takes PDFs; a text file goes as text"
)
def test_format_file_path_inline(server, tmp_path: Path) -> None:
    (tmp_path / "test.txt").write_bytes(b"HELLO")
    (file,) = sent_images(server, [File(tmp_path / "test.txt")])
    assert file["type"] == "file" and file["file"]["filename"] == "test.txt"


def test_a_text_file_goes_to_chat_as_text_and_to_responses_as_a_file(server, tmp_path: Path) -> None:
    (tmp_path / "test.txt").write_bytes(b"HELLO")
    (text,) = sent_images(server, [File(tmp_path / "test.txt")])
    assert text["type"] == "text" and "HELLO" in text["text"] and "test.txt" in text["text"]
    server.add(Reply(text="ok"))
    Agent("a", model=OpenAIResponses("gpt-4o", base_url=server.url, max_retries=0)).run(
        ["?", File(tmp_path / "test.txt")]
    )
    file = server.requests[-1].body["input"][-1]["content"][1]
    assert file["type"] == "input_file" and file["filename"] == "test.txt"
    assert file["file_data"] == "data:text/plain;base64," + base64.b64encode(b"HELLO").decode()
    assert server.problems == []


# test_format_file_raw_bytes / _no_filename: raw bytes are taken for a PDF
@pytest.mark.xfail(
    strict=True, reason="deliberate: bytes of no known kind need a media type; they are not taken for a PDF"
)
def test_format_file_raw_bytes(server) -> None:
    (file,) = sent_images(server, [File(b"RAWBYTES", name="file")])
    assert file["file"]["file_data"].startswith("data:application/pdf;base64,")


def test_raw_bytes_need_a_media_type() -> None:
    with pytest.raises(PartError, match="give media_type="):
        File(b"RAWBYTES", name="file")
    assert File(b"%PDF-1.4 RAWBYTES").media_type == "application/pdf"


# integration/agent/test_multimodal.py::test_agent_image_input: the run keeps the user message's image
def test_agent_image_input(server, tmp_path: Path) -> None:
    path = tmp_path / "golden_gate.png"
    path.write_bytes(DUMMY_PNG)
    server.add(Reply(text="The Golden Gate Bridge."))
    agent = Agent("a", model=OpenAIChat("gpt-4o-mini", base_url=server.url, max_retries=0))
    response = agent.run(["Tell me about this image and give me the latest news about it.", Image(path)])
    assert response.content is not None
    messages = agent.history[-1].messages
    assert [m.role for m in messages] == ["user", "assistant"]
    assert (
        messages[0].attachments[0].data == DUMMY_PNG and messages[0].attachments[0].name == "golden_gate.png"
    )
