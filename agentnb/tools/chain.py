"""The tool-hook chain: nested middleware around every tool call, the first hook outermost
(Agno's ``tool_hooks``; ``hooks`` says what a hook may receive)."""

from __future__ import annotations

import dataclasses
import inspect
import time
from collections.abc import Callable, Mapping
from typing import Any

from ..errors import RunAbortError
from ..events import HookStep
from ..util.text import shorten
from .hooks import HOOK_PARAM_NAMES, HOOK_RESULT_LIMIT, hook_name
from .result import result_text
from .run_context import RunContext, run_sync
from .tool import Tool


@dataclasses.dataclass
class ChainOutcome:
    """What running a tool through its hooks produced."""

    result: Any = None
    error: BaseException | None = None
    error_source: str | None = None
    """'tool' or the hook's name, for the innermost link that raised."""
    steps: list[HookStep] = dataclasses.field(default_factory=list)
    answered_by: str | None = None


def run_chain(
    tool: Tool,
    arguments: dict[str, Any],
    hooks: list[Callable[..., Any]],
    ctx: RunContext,
    on_link: Callable[[str, str], Any] | None = None,
    extra: Mapping[str, Any] | None = None,
) -> ChainOutcome:
    """Call ``tool`` through ``hooks`` (first = outermost), recording what each hook did.
    ``extra``: injectable values for the tool's function of this call only (a delegation's site).

    ``on_link(kind, name)`` is called with ('enter', name) before and ('exit', name) after each
    link's own code runs, so the caller can attribute state changes to the link that made them.
    """
    chain = _Chain(tool, hooks, ctx, on_link or (lambda what, link: None), extra)
    outcome = chain.outcome
    try:
        outcome.result = chain.link(0, dict(arguments))
    except RunAbortError:  # the developer's bug, not the model's to read: it ends the run
        raise
    except Exception as exc:  # a tool or hook failing is reported to the model, not raised
        outcome.error = exc
        outcome.error_source = chain.raised_at[0] if chain.raised_at else "tool"
    outcome.steps = [s for s in chain.steps if s is not None]
    return outcome


class _Chain:
    """The links of one call: hooks[0] … hooks[-1], then the tool."""

    def __init__(
        self,
        tool: Tool,
        hooks: list[Callable[..., Any]],
        ctx: RunContext,
        on_link: Callable[[str, str], Any],
        extra: Mapping[str, Any] | None = None,
    ) -> None:
        self.tool, self.hooks, self.ctx, self.on_link, self.extra = tool, hooks, ctx, on_link, extra
        self.outcome = ChainOutcome()
        self.steps: list[HookStep | None] = [None] * len(hooks)
        self.raised_at: list[str] = []
        self.last_error: BaseException | None = None
        """The exception the links inside the current one raised last (to tell one a hook lets
        through from one it raises itself)."""

    def link(self, index: int, args: dict[str, Any]) -> Any:
        return self._tool(args) if index == len(self.hooks) else self._hook(index, args)

    def _tool(self, args: dict[str, Any]) -> Any:
        self.on_link("enter", "tool")
        try:
            value = self.tool.call(args, self.ctx, self.extra)
        except BaseException as exc:
            self.raised_at.append("tool")
            self.last_error = exc
            raise
        finally:
            self.on_link("exit", "tool")
        self.outcome.answered_by = self.outcome.answered_by or "tool"
        return value

    def _hook(self, index: int, args: dict[str, Any]) -> Any:
        hook = self.hooks[index]
        name = hook_name(hook)
        called = False
        passed: dict[str, Any] | None = None

        def call_next(**kwargs: Any) -> Any:
            nonlocal called, passed
            called = True
            passed = dict(kwargs)
            self.on_link("exit", name)
            try:
                return self.link(index + 1, kwargs)
            finally:
                self.on_link("enter", name)

        received = dict(args)
        start = time.perf_counter()
        self.on_link("enter", name)
        try:
            value = run_sync(
                hook(**_hook_kwargs(hook, self.tool, args, _as_hook_expects(hook, call_next), self.ctx))
            )
            if inspect.isawaitable(value):  # an async hook that returned function_call(...) unawaited
                value = run_sync(value)
        except BaseException as exc:
            error = f"{type(exc).__name__}: {exc}"
            took = (time.perf_counter() - start) * 1000
            if called and exc is self.last_error:
                # Raised further in and let through: this hook passed the call on.
                self.steps[index] = HookStep(
                    name=name,
                    arguments=received,
                    outcome="passed",
                    duration_ms=took,
                    passed_arguments=passed,
                    passed_error=error,
                )
                raise
            if not self.raised_at:
                self.raised_at.append(name)
            self.last_error = exc
            self.steps[index] = HookStep(
                name=name,
                arguments=received,
                outcome="raised",
                error=error,
                duration_ms=took,
                passed_arguments=passed,
            )
            raise
        finally:
            self.on_link("exit", name)
        if not called and self.outcome.answered_by is None:
            self.outcome.answered_by = name
        self.steps[index] = HookStep(
            name=name,
            arguments=received,
            outcome="passed" if called else "answered",
            result=shorten(result_text(value), HOOK_RESULT_LIMIT),
            duration_ms=(time.perf_counter() - start) * 1000,
            passed_arguments=passed,
        )
        return value


def _as_hook_expects(hook: Callable[..., Any], call_next: Callable[..., Any]) -> Callable[..., Any]:
    """An async hook gets a ``function_call`` that returns an awaitable, as in Agno's async runs."""
    if not inspect.iscoroutinefunction(hook):
        return call_next

    async def function_call(**kwargs: Any) -> Any:
        return call_next(**kwargs)

    return function_call


def _hook_kwargs(
    hook: Callable[..., Any],
    tool: Tool,
    args: dict[str, Any],
    call_next: Callable[..., Any],
    ctx: RunContext,
) -> dict[str, Any]:
    values = {**ctx.injectable(), "name": tool.name, "next": call_next, "arguments": args}
    return {
        p: values[HOOK_PARAM_NAMES[p]] for p in inspect.signature(hook).parameters if p in HOOK_PARAM_NAMES
    }


__all__ = ["ChainOutcome", "run_chain"]
