"""A tool call's end event (``ToolCallFinished``) as its run records it: its result, its error
bounded in size, a person's rejection; what a person decided about the call goes with it."""

from __future__ import annotations

import time
from typing import Any

from ..events import Decision, ToolCallFinished
from ..messages import Part, TextPart, ToolCall, describe

ERROR_LIMIT = 4000
"""Most characters of an error sent back to the model as a tool call's result."""


class Finish:
    """Builds the ToolCallFinished of one call: its result, or its error bounded in size."""

    def __init__(
        self,
        run_id: str,
        call: int,
        tool_call: ToolCall,
        decision: Decision | None = None,
        asked: str | None = None,
    ) -> None:
        self.started = time.perf_counter()
        self.base: dict[str, Any] = {
            "run_id": run_id,
            "call": call,
            "tool_call_id": tool_call.id,
            "name": tool_call.name,
            "arguments": tool_call.arguments,
        }
        self.edited_by: str | None = None
        """Who gave the arguments the call runs with, when not the model (a person's edit)."""
        self.parts: tuple[Part, ...] = ()
        """The result's parts, when it holds images or files (``with_parts``)."""
        if decision is not None:
            self.base["decision"] = decision.verdict
            if decision.verdict == "edited" and asked is not None:
                self.base["model_arguments"] = asked
                self.edited_by = decision.by

    def rejected(self, reason: str) -> ToolCallFinished:
        """A call a person rejected: it did not run; the model reads their reason."""
        return ToolCallFinished(
            **self.base,
            result=f"Rejected by the person: {reason}",
            error=reason,
            error_kind="rejected",
            answered_by="person",
            duration_ms=self._ms(),
        )

    def ok(self, result: str, hooks: tuple[Any, ...], **extra: Any) -> ToolCallFinished:
        return ToolCallFinished(**self.base, result=result, hooks=hooks, duration_ms=self._ms(), **extra)

    def with_parts(
        self, text: str, parts: tuple[Part, ...], hooks: tuple[Any, ...], **extra: Any
    ) -> ToolCallFinished:
        """A result that may hold images or files: kept in ``parts`` for the tool message, and
        described (hash, type, size, name; never the bytes) in the end event."""
        self.parts = parts
        if parts:
            extra["attachments"] = tuple(describe(p) for p in parts if not isinstance(p, TextPart))
        return self.ok(text, hooks, **extra)

    def failed(self, kind: str, error: str, **extra: Any) -> ToolCallFinished:
        if len(error) > ERROR_LIMIT:  # what goes back to the model stays bounded
            error = f"{error[: ERROR_LIMIT - 60]}… (the error is {len(error):,} characters; cut here)"
        return ToolCallFinished(
            **self.base,
            result=f"Error: {error}",
            error=error,
            error_kind=kind,
            duration_ms=self._ms(),
            **extra,
        )

    def _ms(self) -> float:
        return (time.perf_counter() - self.started) * 1000


__all__ = ["ERROR_LIMIT", "Finish"]
