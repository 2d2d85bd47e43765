"""A run's answers to its output type, one after another: each checked, recorded as an
``OutputChecked`` event, and either accepted, sent back for another attempt, or the end of the
run when the attempts are spent (``output``)."""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Callable, Sequence
from typing import Any, Literal

from ..errors import OutputValidationError
from ..events import OutputChecked, StateCause, ToolCallFinished, ToolCallStarted
from ..messages import Message
from ..state.state import State
from ..state.tracking import StateTracker
from .output import TEXT_LIMIT, Checked, OutputSpec


@dataclasses.dataclass(frozen=True)
class Answered:
    """What the run does with one answer checked against its output type."""

    verdict: Literal["accepted", "retry", "failed"]
    """accepted: the run ends with it; retry: the model is asked again; failed: no attempts left."""
    events: tuple[Any, ...] = ()
    """What to emit, in order (the output tool's calls, then the check)."""
    messages: tuple[Any, ...] = ()
    """What to add to the conversation (the output tool's results, or the retry request)."""
    checked: Checked | None = None
    """The accepted output."""
    text: str | None = None
    """The answer's raw text (the output tool's arguments in tool mode)."""
    error: BaseException | None = None
    """Why the run fails (``OutputValidationError``)."""


class Attempts:
    """A run's answers to its output type, one after another."""

    def __init__(
        self,
        spec: OutputSpec,
        mode: str,
        run_id: str,
        ctx: Any,
        on_check: Callable[[OutputChecked], None] | None = None,
        earlier: Sequence[OutputChecked] = (),
    ) -> None:
        self.spec, self.mode, self.run_id, self.ctx = spec, mode, run_id, ctx
        self.on_check = on_check
        """Called with each check (a recording compares its verdict): raising fails the run."""
        self.signature = spec.signature(mode)
        """What the answers are checked against (recorded with each attempt)."""
        self.tools = spec.tools() if mode == "tool" else []
        self.tool_names = {t.name for t in self.tools}
        self.checks: list[Any] = list(earlier)
        """Every ``OutputChecked`` so far (those before a pause: ``earlier``)."""

    def from_text(self, content: str | None, call: int) -> Answered:
        """A final answer in text (native, prompted; tool mode when the model wrote instead)."""
        try:
            checked = self.spec.check_text(content, self.ctx)
        except Exception as exc:  # an output validator that raised (not ModelRetry): the run fails
            return Answered("failed", error=exc)
        if self.spec.text:
            how = "Answer again."
        elif self.spec.text_allowed:
            how = f"Answer again, in text or by calling {self.spec.tool_name}."
        elif self.mode == "tool":
            how = f"Call {self.spec.tool_name} with your answer."
        else:
            how = "Answer again with only the JSON that matches the schema."
        return self._answered(checked, content or "", call, None, (), how)

    def from_calls(self, calls: Sequence[Any], call: int) -> Answered:
        """Calls of the output tools: the first is the answer, any others are not taken."""
        first = calls[0]
        try:
            checked = self.spec.check_call(first.name, first.arguments, self.ctx)
        except Exception as exc:  # an output validator that raised (not ModelRetry): the run fails
            return Answered("failed", error=exc)
        events: list[Any] = []
        messages: list[Any] = []
        for n, tool_call in enumerate(calls):
            if n == 0:
                result = (
                    "Final result accepted."
                    if checked.ok
                    else "Error: " + checked.retry_text(f"Call {first.name} again with a corrected answer.")
                )
            else:
                result = "Not taken: one final result is taken per answer (the first)."
            events.append(
                ToolCallStarted(
                    run_id=self.run_id,
                    call=call,
                    tool_call_id=tool_call.id,
                    name=tool_call.name,
                    arguments=tool_call.arguments,
                )
            )
            error = None if n else (None if checked.ok else result[len("Error: ") :])
            events.append(
                ToolCallFinished(
                    run_id=self.run_id,
                    call=call,
                    tool_call_id=tool_call.id,
                    name=tool_call.name,
                    arguments=tool_call.arguments,
                    result=result,
                    error=error,
                    error_kind=None if error is None else "invalid_output",
                    answered_by="output",
                )
            )
            messages.append(Message.tool(tool_call, result))
        answered = self._answered(checked, first.arguments, call, first.id, (), "")
        return dataclasses.replace(answered, events=(*events, *answered.events), messages=tuple(messages))

    def _answered(
        self,
        checked: Checked,
        text: str,
        call: int,
        tool_call_id: str | None,
        extra: tuple[Any, ...],
        how: str,
    ) -> Answered:
        event = OutputChecked(
            run_id=self.run_id,
            call=call,
            attempt=len(self.checks) + 1,
            mode=self.mode,
            ok=checked.ok,
            errors=checked.errors,
            output=checked.data if checked.ok else None,
            text=text[:TEXT_LIMIT],
            tool_call_id=tool_call_id,
            output_type=self.signature.output_type,
            fingerprint=self.signature.fingerprint,
            validators=self.signature.validators,
        )
        self.checks.append(event)
        if self.on_check is not None:
            try:
                self.on_check(event)
            except Exception as exc:  # the recording's verdict on this answer differs (strict replay)
                return Answered("failed", (*extra, event), error=exc)
        if checked.ok:
            return Answered("accepted", (*extra, event), checked=checked, text=text)
        failed = sum(1 for c in self.checks if not c.ok)
        if failed > self.spec.retries:
            lines = "; ".join(
                f"attempt {c.attempt}: "
                + ", ".join(f"{e['path'] or '(answer)'} {e['message']}" for e in c.errors)
                for c in self.checks
            )
            error = OutputValidationError(
                f"no answer matched the output type {self.spec.name} in {len(self.checks)} attempt(s) "
                f"(output_retries={self.spec.retries}): {lines}. Look at each attempt in "
                "error.attempts (or the inspector), then fix the instructions or raise output_retries",
                self.checks,
            )
            return Answered("failed", (*extra, event), error=error)
        retry = () if tool_call_id is not None else (Message.user(checked.retry_text(how)),)
        return Answered("retry", (*extra, event), retry)

    def to_state(self, answered: Answered, state: State, tracker: StateTracker) -> None:
        """``output_to_state``: the accepted output into the state as JSON data, recorded as a
        change whose cause is the output."""
        key = self.spec.to_state
        if key is None or answered.checked is None:
            return
        state.set(key, copy.deepcopy(answered.checked.data))
        tracker.checkpoint(StateCause(kind="output", name=f"output_type:{self.spec.name}"))


__all__ = ["Answered", "Attempts"]
