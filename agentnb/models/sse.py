"""Server-sent events: the ``(event, data)`` pairs of a streamed answer, until ``[DONE]``."""

from __future__ import annotations

from collections.abc import Iterator

from ..errors import ModelResponseError

DONE = "[DONE]"
"""The data that ends an OpenAI-protocol stream."""


def sse_data(chunks: Iterator[bytes]) -> Iterator[tuple[str, str]]:
    """(event name, data) of each server-sent event until ``[DONE]`` or the end of the stream;
    a stream that ends inside an event was cut, which is an error."""
    buffer = b""
    name = ""
    data: list[str] = []
    for chunk in chunks:
        buffer += chunk
        *lines, buffer = buffer.split(b"\n")
        for raw in lines:
            line = _decode_line(raw)
            if not line:  # a blank line ends the event
                if data:
                    text = "\n".join(data)
                    if text.strip() == DONE:
                        return
                    yield name, text
                name, data = "", []
            elif not line.startswith(":"):  # ':' starts a comment (keep-alive)
                field, _, value = line.partition(":")
                if field == "data":
                    data.append(value[1:] if value.startswith(" ") else value)
                elif field == "event":
                    name = value.strip()
    rest = _decode_line(buffer)
    if rest.startswith("data:") and rest[5:].strip() == DONE:
        return
    if data or rest.strip():
        raise ModelResponseError(
            "cut the stream in the middle of an event (the connection closed before it ended)"
        )


def _decode_line(raw: bytes) -> str:
    try:
        return raw.rstrip(b"\r").decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ModelResponseError(f"sent a stream line that is not UTF-8 text (byte {exc.start})") from None


__all__ = ["DONE", "sse_data"]
