"""OpenAI Responses API through the official ``openai`` client (imported lazily).

The agent's history is kept in the Chat Completions format everywhere else; here it is
converted on the way out: the system prompt becomes a ``developer`` input item, assistant tool
calls become ``function_call`` items and tool results ``function_call_output`` items, and
function tools take the flat Responses shape. Answers are converted back the same way.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ..errors import ModelError, ModelResponseError
from ..messages import ToolCall
from .attachments import outgoing, responses_content
from .base import REASONING_KEY, ArgumentsDelta, ModelRequest, ModelResponse
from .bounded_json import kind, load_json, show
from .openai_base import OpenAIBase, merge_options
from .openai_transport import RawAnswer
from .openai_wire import event_error, tool_call_from, usage_from

ENCRYPTED_REASONING = "reasoning.encrypted_content"
"""What ``include`` asks for when responses are not stored (``store=False``): the reasoning
items' encrypted content, which the next request of the turn sends back."""


def responses_input(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Chat-format messages as Responses input items."""
    items: list[dict[str, Any]] = []
    for message in messages:
        role = message.get("role")
        content = message.get("content")
        if role in ("system", "developer"):
            items.append({"role": "developer", "content": responses_content(content, "developer") or ""})
        elif role == "user":
            items.append({"role": "user", "content": responses_content(content, "user") or ""})
        elif role == "assistant":
            # The reasoning that led to this message goes back before it (only within its turn).
            items.extend(dict(item) for item in message.get(REASONING_KEY) or ())
            if content:
                items.append({"role": "assistant", "content": responses_content(content, "assistant")})
            for call in message.get("tool_calls") or ():
                function = call.get("function") or {}
                items.append(
                    {
                        "type": "function_call",
                        "call_id": call.get("id"),
                        "name": function.get("name"),
                        "arguments": function.get("arguments") or "",
                    }
                )
        elif role == "tool":
            items.append(
                {
                    "type": "function_call_output",
                    "call_id": message.get("tool_call_id"),
                    # Images and files go in the output list, as input items.
                    "output": responses_content(content, "tool") or "",
                }
            )
        else:
            raise ModelError(f"cannot send a message with role {role!r} to the Responses API")
    return items


def responses_tools(tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Chat-format function tools in the flat Responses shape."""
    out = []
    for tool in tools:
        function = tool.get("function", tool)
        item: dict[str, Any] = {"type": "function", "name": function["name"]}
        if function.get("description"):
            item["description"] = function["description"]
        item["parameters"] = function.get("parameters") or {"type": "object", "properties": {}}
        if "strict" in function:
            item["strict"] = function["strict"]
        out.append(item)
    return out


def responses_options(options: dict[str, Any]) -> dict[str, Any]:
    """Chat-style request options renamed for the Responses API."""
    out = dict(options)
    if "max_tokens" in out:
        out["max_output_tokens"] = out.pop("max_tokens")
    choice = out.get("tool_choice")
    if isinstance(choice, dict) and isinstance(choice.get("function"), dict):
        out["tool_choice"] = {"type": "function", "name": choice["function"]["name"]}
    return out


class OpenAIResponses(OpenAIBase):
    """A model behind the Responses API: ``OpenAIResponses("gpt-5-mini", ...)``."""

    prefix = "openai-responses"

    def native_output(self, name: str, schema: dict[str, Any], strict: bool) -> dict[str, Any] | None:
        return {"text": {"format": {"type": "json_schema", "name": name, "schema": schema, "strict": strict}}}

    def wire_body(self, request: ModelRequest) -> dict[str, Any]:
        body: dict[str, Any] = {"model": self.id, "input": responses_input(request.messages)}
        if request.tools:
            body["tools"] = responses_tools(request.tools)
        body.update(self._settings())
        if self.max_tokens is not None:
            body["max_output_tokens"] = self.max_tokens
        merge_options(body, responses_options(request.options))
        if body.get("store") is False:
            # Nothing is kept on the server: reasoning comes back encrypted, to be sent back.
            include = body.get("include")
            include = list(include) if isinstance(include, (list, tuple)) else []
            if ENCRYPTED_REASONING not in include:
                body["include"] = [*include, ENCRYPTED_REASONING]
        if self.streaming:
            body["stream"] = True
        return body

    def stream(self, request: ModelRequest) -> Iterator[str | ArgumentsDelta | ModelResponse]:
        body = outgoing(self.wire_body(request), request.parts)
        client = self.client()
        opener = lambda: RawAnswer(client, "/responses", body)  # noqa: E731
        yield from self._answer(opener, request, responses_stream, responses_response)


def responses_stream(
    events: Iterator[tuple[str, str]], request: ModelRequest
) -> Iterator[str | ArgumentsDelta | ModelResponse]:
    """Text deltas as they come (and the arguments of the calls of ``request.stream_arguments``'
    tools as they grow), then the completed response; a stream that ends without one (empty, or
    cut) is an error."""
    watched = request.stream_arguments
    calls: dict[Any, list[Any]] = {}  # output index -> [which call of the answer, name, arguments so far]
    for name, data in events:
        event = load_json(data, "a stream event")
        if not isinstance(event, dict):
            raise ModelResponseError(
                f"sent a stream event that is {kind(event)}, not an object: {show(event)}"
            )
        what = event.get("type", name)
        if what == "response.output_text.delta":
            delta = event.get("delta")
            if not isinstance(delta, str):
                raise ModelResponseError(f"sent a text delta that is {kind(delta)} ({show(delta)}), not text")
            if delta:
                yield delta
        elif watched and what == "response.output_item.added":
            item, at = event.get("item"), event.get("output_index")
            if isinstance(item, dict) and item.get("type") == "function_call" and isinstance(at, int):
                tool = item.get("name")
                calls[at] = [len(calls), tool if isinstance(tool, str) else None, ""]
        elif watched and what == "response.function_call_arguments.delta":
            at, delta = event.get("output_index"), event.get("delta")
            call = calls.get(at) if isinstance(at, int) else None
            if call is not None and call[1] in watched and isinstance(delta, str) and delta:
                call[2] += delta
                yield ArgumentsDelta(call[0], call[1], call[2])
        elif what in ("response.completed", "response.incomplete"):
            yield responses_response(event.get("response"), request)
            return
        elif what == "response.failed":
            response = event.get("response")
            error = response.get("error") if isinstance(response, dict) else None
            message = error.get("message") if isinstance(error, dict) else error
            raise ModelResponseError(f"reported that the response failed: {show(message or response, 200)}")
        else:
            error = event_error(str(what), event)
            if error is not None:
                raise error
    raise ModelResponseError("ended the stream without a completed response (empty or cut short)")


def responses_response(raw: Any, request: ModelRequest | None = None) -> ModelResponse:
    """A ModelResponse from a Responses API response body (also used by replay); a
    ModelResponseError says what is malformed."""
    if not isinstance(raw, dict):
        raise ModelResponseError(f"sent a response that is {kind(raw)}, not an object: {show(raw)}")
    if raw.get("error") and raw.get("status") in (None, "failed"):
        error = raw["error"]
        raise ModelResponseError(
            f"answered with an error: {show(error.get('message') if isinstance(error, dict) else error, 200)}"
        )
    texts: list[str] = []
    calls: list[ToolCall] = []
    output = raw.get("output")
    if output is not None and not isinstance(output, list):
        raise ModelResponseError(f"sent output that is {kind(output)}, not a list: {show(output)}")
    for item in output or ():
        if not isinstance(item, dict):
            raise ModelResponseError(f"sent an output item that is {kind(item)}: {show(item)}")
        if item.get("type") == "message":
            texts += _message_texts(item.get("content"))
        elif item.get("type") == "function_call":
            calls.append(
                tool_call_from(
                    item.get("call_id") or item.get("id"), item.get("name"), item.get("arguments"), len(calls)
                )
            )
            if item.get("arguments") is not None and not isinstance(item["arguments"], str):
                item["arguments"] = calls[-1].arguments  # the record keeps text, as the protocol has it
    content = "".join(texts) or None
    if raw.get("status") == "incomplete":
        details = raw.get("incomplete_details")
        reason = details.get("reason", "") if isinstance(details, dict) else ""
        finish = {"max_output_tokens": "length", "content_filter": "content_filter"}.get(reason, "incomplete")
    else:
        finish = "tool_calls" if calls else "stop"
    return ModelResponse(
        content=content,
        tool_calls=tuple(calls),
        finish_reason=finish,
        usage=usage_from(raw.get("usage"), request, content),
        raw=raw,
    )


def _message_texts(content: Any) -> list[str]:
    if content is None:
        return []
    if not isinstance(content, list):
        raise ModelResponseError(
            f"sent message content that is {kind(content)}, not a list of parts: {show(content)}"
        )
    texts = []
    for part in content:
        if isinstance(part, dict) and part.get("type") == "output_text":
            text = part.get("text")
            if not isinstance(text, str):
                raise ModelResponseError(f"sent output text that is {kind(text)} ({show(text)}), not text")
            texts.append(text)
    return texts
