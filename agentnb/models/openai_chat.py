"""OpenAI Chat Completions through the official ``openai`` client (imported lazily).

Streaming is on by default: text deltas are yielded as they arrive and tool-call deltas are
assembled per index, so parallel tool calls come out whole. What the OpenAI-protocol models
share (the client, the deadline, errors, credentials) is ``OpenAIBase`` (``openai_base.py``).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from typing import Any

from ..errors import ModelResponseError
from ..messages import ToolCall
from .attachments import outgoing
from .base import ArgumentsDelta, ModelRequest, ModelResponse, chat_messages
from .bounded_json import kind, load_json, show
from .openai_base import OpenAIBase, merge_options
from .openai_transport import RawAnswer
from .openai_wire import add_call_delta, as_list, call_order, event_error, tool_call_from, usage_from


class OpenAIChat(OpenAIBase):
    """A model behind the Chat Completions API: ``OpenAIChat("gpt-5-mini", base_url=...)``."""

    prefix = "openai"

    def native_output(self, name: str, schema: dict[str, Any], strict: bool) -> dict[str, Any] | None:
        return {
            "response_format": {
                "type": "json_schema",
                "json_schema": {"name": name, "schema": schema, "strict": strict},
            }
        }

    def wire_body(self, request: ModelRequest) -> dict[str, Any]:
        body: dict[str, Any] = {"model": self.id, "messages": chat_messages(request.messages)}
        if request.tools:
            body["tools"] = request.tools
        body.update(self._settings())
        if self.max_tokens is not None:
            # OpenAI's own API has renamed the field; compatible servers still read the old one.
            body["max_completion_tokens" if self.resolved_base_url() is None else "max_tokens"] = (
                self.max_tokens
            )
        merge_options(body, request.options)
        if self.streaming:
            body["stream"] = True
            body["stream_options"] = {"include_usage": True}
        return body

    def stream(self, request: ModelRequest) -> Iterator[str | ArgumentsDelta | ModelResponse]:
        body = outgoing(self.wire_body(request), request.parts, chat=True)
        client = self.client()
        opener = lambda: RawAnswer(client, "/chat/completions", body)  # noqa: E731
        yield from self._answer(opener, request, chat_stream, chat_response)


# -- reading Chat Completions answers ------------------------------------------------------------


def chat_stream(
    events: Iterator[tuple[str, str]], request: ModelRequest
) -> Iterator[str | ArgumentsDelta | ModelResponse]:
    """Text deltas as they come (and the arguments of the calls of ``request.stream_arguments``'
    tools as they grow), then the whole completion assembled from the stream's chunks.
    An empty stream, or one that ends before a ``finish_reason``, is an error, not an answer."""
    text: list[str] = []
    calls: dict[int, dict[str, Any]] = {}
    finish: str | None = None
    usage: dict[str, Any] | None = None
    head: dict[str, Any] = {}
    watched = request.stream_arguments
    for event, data in events:
        chunk = load_json(data, "a stream event")
        error = event_error(event, chunk)
        if error is not None:
            raise error
        if not isinstance(chunk, dict):
            raise ModelResponseError(
                f"sent a stream event that is {kind(chunk)}, not an object: {show(chunk)}"
            )
        if not head:
            head = {k: chunk[k] for k in ("id", "created", "model") if k in chunk}
        if isinstance(chunk.get("usage"), dict):
            usage = chunk["usage"]
        for choice in as_list(chunk.get("choices"), "choices"):
            if not isinstance(choice, dict):
                raise ModelResponseError(f"sent a choice that is {kind(choice)}: {show(choice)}")
            if choice.get("index", 0) != 0:
                continue
            delta = choice.get("delta") or {}
            if not isinstance(delta, dict):
                raise ModelResponseError(f"sent a delta that is {kind(delta)}, not an object: {show(delta)}")
            content = delta.get("content")
            if content is not None and not isinstance(content, str):
                raise ModelResponseError(
                    f"sent content {show(content)} ({kind(content)}) in a stream delta; content is text"
                )
            if content:
                text.append(content)
                yield content
            for position, part in enumerate(as_list(delta.get("tool_calls"), "tool_calls")):
                call = add_call_delta(calls, position, part)
                function = call["function"]
                if (
                    watched
                    and "problem" not in call
                    and function["name"] in watched
                    and (part.get("function") or {}).get("arguments")
                ):
                    yield ArgumentsDelta(part.get("index", position), function["name"], function["arguments"])
            finish = _finish_reason(choice.get("finish_reason")) or finish
    if finish is None:
        if not text and not calls:
            raise ModelResponseError("ended the stream without any answer (an empty stream)")
        raise ModelResponseError("cut the stream before the answer was complete (no finish_reason came)")
    message: dict[str, Any] = {"role": "assistant", "content": "".join(text) if text else None}
    if calls:
        message["tool_calls"] = [calls[i] for i in sorted(calls, key=call_order)]
    raw: dict[str, Any] = {
        **head,
        "object": "chat.completion",
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
    }
    if usage is not None:
        raw["usage"] = usage
    yield chat_response(raw, request)


def chat_response(raw: Any, request: ModelRequest | None = None) -> ModelResponse:
    """A ModelResponse from a Chat Completions response body (also used by replay); a
    ModelResponseError says what is malformed."""
    if not isinstance(raw, dict):
        raise ModelResponseError(f"sent {kind(raw)} where a completion object belongs: {show(raw)}")
    error = event_error("", raw)
    if error is not None:
        raise ModelResponseError(str(error).replace("in the stream", "instead of an answer"))
    choices = raw.get("choices")
    if not isinstance(choices, list) or not choices:
        raise ModelResponseError(f"sent an answer without choices (choices is {show(choices)})")
    choice = choices[0]
    if not isinstance(choice, dict):
        raise ModelResponseError(f"sent a choice that is {kind(choice)}: {show(choice)}")
    message = choice.get("message")
    if not isinstance(message, dict):
        raise ModelResponseError(f"sent a message that is {kind(message)}, not an object: {show(message)}")
    content = _content_text(message.get("content"))
    calls = tuple(_tool_call(c, i) for i, c in enumerate(as_list(message.get("tool_calls"), "tool_calls")))
    return ModelResponse(
        content=content,
        tool_calls=calls,
        finish_reason=_finish_reason(choice.get("finish_reason")),
        usage=usage_from(raw.get("usage"), request, content),
        raw=raw,
    )


def _content_text(content: Any) -> str | None:
    """Text content; a list of text parts (as some servers send) is joined."""
    if content is None or isinstance(content, str):
        return content or None
    if isinstance(content, list) and all(
        isinstance(p, dict) and isinstance(p.get("text"), str) for p in content
    ):
        return "".join(p["text"] for p in content) or None
    raise ModelResponseError(f"sent content {show(content)} ({kind(content)}); content is text")


def _finish_reason(value: Any) -> str | None:
    if value is None or isinstance(value, str):
        return value or None
    raise ModelResponseError(f"sent a finish_reason that is {kind(value)} ({show(value)}), not a string")


def _tool_call(call: Any, position: int) -> ToolCall:
    if not isinstance(call, dict):
        raise ModelResponseError(f"sent a tool call that is {kind(call)}: {show(call)}")
    function = call.get("function")
    if not isinstance(function, dict):
        what = (
            "no function" if function is None else f"a function that is {kind(function)} ({show(function)})"
        )
        problem = (
            f"the server sent a tool call with {what}; a tool call holds its name and arguments in a "
            "function object"
        )
        return tool_call_from(call.get("id"), None, None, position, problem)
    name = function.get("bad_name", function.get("name"))
    arguments = function.get("arguments")
    made = tool_call_from(call.get("id"), name, arguments, position, call.get("problem"))
    if arguments is not None and not isinstance(arguments, str):
        function["arguments"] = made.arguments  # the record keeps text, as the protocol has it
    if call.get("note") and made.problem is None:  # a stream's arguments sent as an object
        return replace(made, note=call["note"])
    return made
