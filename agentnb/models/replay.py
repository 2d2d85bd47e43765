"""ReplayModel: answer from a recording instead of the network.

Every turn record keeps each model call's request (``ModelRequested.request``, the payload as
sent) and answer (``ModelResponded``). ``ReplayModel.from_history(agent.history)`` (or
``from_history(agentnb.sessions.load_history(path))``) plays those answers back in order, so a
notebook recorded against a real model re-runs offline with the same content, tool calls and
token counts.

Each new request is rebuilt in the recorded wire format (Chat Completions or Responses, with the
recording model's own settings) and compared with the recorded one. In strict mode (the default)
a difference raises ``ReplayDriftError``: its first line names the turn and the call, the rest is
a unified diff. In lax mode (``strict=False``) the difference is warned about
(``ReplayDriftWarning``), kept in ``.drifts``, and the recorded answer is given anyway.

Limit: settings the recording model added on its own (temperature, ``tool_choice`` of the local
model, ...) cannot be told apart from the agent's ``model_options``; such a key that disappears
from ``model_options`` is therefore not reported as drift. Added or changed options are.
"""

from __future__ import annotations

import difflib
import json
import warnings
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from ..errors import ConfigurationError, ReplayDriftError, ReplayDriftWarning, ReplayExhaustedError
from ..events import ModelRequested, ModelResponded, Usage
from ..messages import ToolCall
from .base import Model, ModelRequest, ModelResponse, chat_messages, text_chunks
from .tokens import estimate_tokens

# The local model's forced-tool-call prefill (see local.py); rebuilt requests keep it.
PREFILL_MESSAGE = {"role": "assistant", "content": "<tool_call>\n"}


@dataclass(frozen=True)
class Recording:
    """One recorded model call."""

    request: dict[str, Any]
    """The payload exactly as it was sent."""
    response: ModelResponse
    """The answer, as the model returned it."""
    turn: int | None = None
    """The turn it belongs to (None for a bare recording)."""
    call: int | None = None
    """The call's index within its turn."""

    def where(self, position: int) -> str:
        if self.turn is None:
            return f"recording {position + 1}"
        return f"turn {self.turn}, call {self.call}"


class ReplayModel(Model):
    """Answers from recordings, in order. Labelled ``replay`` everywhere."""

    kind = "replay"

    def __init__(self, recordings: Iterable[Any] = (), *, strict: bool = True) -> None:
        self.recordings: list[Recording] = [_coerce(r, i) for i, r in enumerate(recordings)]
        self.strict = bool(strict)
        self.position = 0
        """Index of the next recording to answer with."""
        self.drifts: list[str] = []
        """Drift reports seen in lax mode."""
        self.origin = "explicit"

    @classmethod
    def from_history(cls, history: Any, *, strict: bool = True) -> ReplayModel:
        """Recordings from turn records (``agent.history``, a list of TurnRecords, or an Agent)."""
        turns = getattr(history, "history", history)
        recordings = []
        for turn in turns:
            requests = [e for e in turn.events if isinstance(e, ModelRequested)]
            answers = {e.call: e for e in turn.events if isinstance(e, ModelResponded)}
            for requested in requests:
                answer = answers.get(requested.call)
                if answer is None:
                    continue  # the call failed; there is nothing to play back
                recordings.append(
                    Recording(requested.request, response_from_event(answer), turn.index, requested.call)
                )
        return cls(recordings, strict=strict)

    @property
    def label(self) -> str:
        return "replay"

    @property
    def remaining(self) -> int:
        """Recorded calls not played back yet."""
        return len(self.recordings) - self.position

    def rewind(self) -> ReplayModel:
        """Start again from the first recording."""
        self.position = 0
        self.drifts.clear()
        return self

    def payload(self, request: ModelRequest) -> dict[str, Any]:
        if self.position < len(self.recordings):
            return rebuild_payload(self.recordings[self.position].request, request)
        return request.chat_payload(self.label)

    def stream(self, request: ModelRequest) -> Iterator[str | ModelResponse]:
        if self.position >= len(self.recordings):
            raise ReplayExhaustedError(
                f"replay: the recording holds {len(self.recordings)} model call(s) and all were "
                f"played back; this request is one more. Re-record the session, or rewind() the model."
                if self.recordings
                else "replay: there is no recording; use ReplayModel.from_history(agent.history) "
                "or ReplayModel.from_history(agentnb.sessions.load_history(path))"
            )
        recording = self.recordings[self.position]
        actual = rebuild_payload(recording.request, request)
        if actual != recording.request:
            advice = (
                "re-record the session, or pass strict=False to answer from the recording anyway"
                if self.strict
                else "answering from the recording anyway (strict=False)"
            )
            report = drift_report(recording.request, actual, recording.where(self.position), advice=advice)
            if self.strict:
                raise ReplayDriftError(report)
            warnings.warn(report, ReplayDriftWarning, stacklevel=2)
            self.drifts.append(report)
        self.position += 1
        response = recording.response
        yield from text_chunks(response.content)
        yield response

    def __repr__(self) -> str:
        mode = "strict" if self.strict else "lax"
        return f"<ReplayModel {self.position}/{len(self.recordings)} call(s) played, {mode}>"


def rebuild_payload(recorded: dict[str, Any], request: ModelRequest) -> dict[str, Any]:
    """``request`` in the recorded payload's wire format, keeping the recording model's settings."""
    if "input" in recorded and "messages" not in recorded:
        from .openai_responses import responses_input, responses_options, responses_tools

        parts: dict[str, Any] = {"input": responses_input(request.messages)}
        if request.tools:
            parts["tools"] = responses_tools(request.tools)
        options = responses_options(request.options)
        structural = ("input", "tools")
    else:
        messages = list(chat_messages(request.messages))
        recorded_messages = recorded.get("messages") or []
        if (
            recorded_messages
            and recorded_messages[-1] == PREFILL_MESSAGE
            and messages[-1:] != [PREFILL_MESSAGE]
        ):
            messages.append(dict(PREFILL_MESSAGE))
        parts = {"messages": messages}
        if request.tools:
            parts["tools"] = request.tools
        options = dict(request.options)
        structural = ("messages", "tools")
    parts.update(options)
    body: dict[str, Any] = {}
    for key, value in recorded.items():
        if key in parts:
            body[key] = parts.pop(key)
        elif key not in structural:
            body[key] = value
    body.update(parts)
    return body


def drift_report(
    recorded: dict[str, Any],
    actual: dict[str, Any],
    where: str,
    *,
    advice: str = "",
    limit: int | None = None,
) -> str:
    """One summary line naming the turn and call, then a unified diff of the two payloads
    (at most ``limit`` lines of it, when given)."""
    head = f"replay drift at {where}: the request differs from the recording ({_summary(recorded, actual)})"
    if advice:
        head += f"; {advice}"
    diff = list(
        difflib.unified_diff(
            _lines(recorded),
            _lines(actual),
            fromfile=f"recorded ({where})",
            tofile=f"this run ({where})",
            lineterm="",
            n=2,
        )
    )
    if limit is not None and len(diff) > limit:
        diff = diff[:limit] + [f"… {len(diff) - limit} more line(s) of diff"]
    return head + "\n" + "\n".join(diff)


def _summary(recorded: dict[str, Any], actual: dict[str, Any]) -> str:
    changed = []
    for key in list(recorded) + [k for k in actual if k not in recorded]:
        if recorded.get(key) == actual.get(key):
            continue
        old, new = recorded.get(key), actual.get(key)
        if isinstance(old, list) and isinstance(new, list) and key in ("messages", "input"):
            index = next((i for i, (a, b) in enumerate(zip(old, new)) if a != b), min(len(old), len(new)))
            item = (new[index] if index < len(new) else old[index]) if max(len(old), len(new)) > index else {}
            role = item.get("role") or item.get("type") if isinstance(item, dict) else None
            where = f"{key}[{index}]" + (f" ({role})" if role else "")
            changed.append(
                f"{where} changed"
                if len(old) == len(new)
                else f"{key} has {len(new)} item(s), the recording {len(old)}; first difference at {where}"
            )
        elif key not in recorded:
            changed.append(f"{key!r} added")
        elif key not in actual:
            changed.append(f"{key!r} removed")
        else:
            changed.append(f"{key!r} changed")
    return ", ".join(changed) or "different"


def _lines(payload: dict[str, Any]) -> list[str]:
    return json.dumps(payload, indent=2, ensure_ascii=False, default=str).splitlines()


def _coerce(item: Any, index: int) -> Recording:
    if isinstance(item, Recording):
        return item
    if (
        isinstance(item, (tuple, list))
        and len(item) == 2
        and isinstance(item[0], dict)
        and isinstance(item[1], dict)
    ):
        return Recording(item[0], response_from_raw(item[1], item[0]))
    raise ConfigurationError(
        f"recording {index + 1} must be a (request payload, response) pair of dicts, got {item!r}; "
        f"or build the model with ReplayModel.from_history(agent.history)"
    )


def response_from_event(event: ModelResponded) -> ModelResponse:
    """The answer a recorded ModelResponded event holds."""
    return ModelResponse(
        content=event.content,
        tool_calls=tuple(event.tool_calls),
        finish_reason=event.finish_reason,
        usage=event.usage,
        raw=event.response,
    )


def response_from_raw(raw: dict[str, Any], request: dict[str, Any] | None = None) -> ModelResponse:
    """A ModelResponse from a recorded raw response of any model family."""
    if "choices" in raw:
        from .openai_chat import chat_response

        return chat_response(raw)
    if "output" in raw:
        from .openai_responses import responses_response

        return responses_response(raw)
    # A scripted (offline) model's raw answer.
    calls = tuple(
        ToolCall(
            id=c.get("id") or f"call_{i}",
            name=c["function"]["name"],
            arguments=c["function"].get("arguments") or "",
        )
        for i, c in enumerate(raw.get("tool_calls") or ())
    )
    content = raw.get("content")
    usage = raw.get("usage")
    return ModelResponse(
        content=content,
        tool_calls=calls,
        finish_reason=raw.get("finish_reason") or ("tool_calls" if calls else "stop"),
        usage=Usage(**usage)
        if isinstance(usage, dict)
        else Usage(output_tokens=estimate_tokens(content), estimated=True),
        raw=raw,
    )
