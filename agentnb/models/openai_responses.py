"""OpenAI Responses API through the official ``openai`` client (imported lazily).

The agent's history is kept in the Chat Completions format everywhere else; here it is
converted on the way out: the system prompt becomes a ``developer`` input item, assistant tool
calls become ``function_call`` items and tool results ``function_call_output`` items, and
function tools take the flat Responses shape. Answers are converted back the same way.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ..errors import ModelError
from ..messages import ToolCall
from .base import ModelRequest, ModelResponse
from .openai_chat import OpenAIBase, usage_from


def responses_input(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Chat-format messages as Responses input items."""
    items: list[dict[str, Any]] = []
    for message in messages:
        role = message.get("role")
        content = message.get("content")
        if role in ("system", "developer"):
            items.append({"role": "developer", "content": content or ""})
        elif role == "user":
            items.append({"role": "user", "content": content or ""})
        elif role == "assistant":
            if content:
                items.append({"role": "assistant", "content": content})
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
            items.append({"type": "function_call_output", "call_id": message.get("tool_call_id"), "output": content or ""})
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

    def payload(self, request: ModelRequest) -> dict[str, Any]:
        body: dict[str, Any] = {"model": self.id, "input": responses_input(request.messages)}
        if request.tools:
            body["tools"] = responses_tools(request.tools)
        body.update(self._settings())
        if self.max_tokens is not None:
            body["max_output_tokens"] = self.max_tokens
        body.update(responses_options(request.options))
        if self.streaming:
            body["stream"] = True
        return body

    def stream(self, request: ModelRequest) -> Iterator[str | ModelResponse]:
        body = self.payload(request)
        try:
            client = self.client()
            if not body.get("stream"):
                response = responses_response(client.responses.create(**body).to_dict(mode="json"), request)
                if response.content:
                    yield response.content
                yield response
                return
            final: dict[str, Any] | None = None
            for event in client.responses.create(**body):
                kind = getattr(event, "type", "")
                if kind == "response.output_text.delta" and event.delta:
                    yield event.delta
                elif kind in ("response.completed", "response.incomplete"):
                    final = event.response.to_dict(mode="json")
                elif kind == "response.failed":
                    error = getattr(event.response, "error", None)
                    raise ModelError(f"{self.label}: the response failed: {getattr(error, 'message', error)}")
                elif kind == "error":
                    raise ModelError(f"{self.label}: the server sent an error event: {getattr(event, 'message', event)}")
            if final is None:
                raise ModelError(f"{self.label}: the stream from {self.server()} ended without a completed response")
            yield responses_response(final, request)
        except ModelError:
            raise
        except Exception as exc:
            translated = self.translate_error(exc)
            if translated is exc:
                raise
            raise translated from exc


def responses_response(raw: dict[str, Any], request: ModelRequest | None = None) -> ModelResponse:
    """A ModelResponse from a Responses API response body (also used by replay)."""
    texts: list[str] = []
    calls: list[ToolCall] = []
    for item in raw.get("output") or ():
        if item.get("type") == "message":
            for part in item.get("content") or ():
                if part.get("type") == "output_text":
                    texts.append(part.get("text") or "")
        elif item.get("type") == "function_call":
            calls.append(
                ToolCall(
                    id=item.get("call_id") or item.get("id") or f"call_{len(calls)}",
                    name=item.get("name") or "",
                    arguments=item.get("arguments") or "",
                )
            )
    content = "".join(texts) or None
    if raw.get("status") == "incomplete":
        finish = "length" if (raw.get("incomplete_details") or {}).get("reason") == "max_output_tokens" else "incomplete"
    else:
        finish = "tool_calls" if calls else "stop"
    return ModelResponse(
        content=content,
        tool_calls=tuple(calls),
        finish_reason=finish,
        usage=usage_from(raw.get("usage"), request, content),
        raw=raw,
    )
