"""What pauses a run for a person: a tool that requires approval (decided by code, per call), the
agent's ``approval`` rule for every tool, a tool whose result a person supplies (``external``,
``ask_user``), and breakpoints (``break_before``) before a tool call or a model call.

The model never decides: whether a call waits is computed from the tool, its arguments and the
run's context before the call runs."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ..errors import ConfigurationError
from ..events import PendingCall, PendingKind
from ..messages import ToolCall
from ..tools import ASK_USER_TOOL, Tool
from ..tools.run_context import RunContext
from ..util.fastinit import fast_init
from ..util.text import one_line

MODEL_BREAK = "model"
"""``break_before`` entry: stop before each model call."""
TOOL_BREAK = "tool"
"""``break_before`` entry: stop before each tool call (``tool:NAME``: before each call of NAME)."""


def check_breakpoints(points: Iterable[str] | str | None) -> frozenset[str]:
    """``break_before`` entries, checked: ``"model"``, ``"tool"`` or ``"tool:NAME"``."""
    if points is None:
        return frozenset()
    if isinstance(points, str):
        points = [points]
    checked = []
    for point in points:
        if not isinstance(point, str) or not (
            point in (MODEL_BREAK, TOOL_BREAK) or (point.startswith("tool:") and len(point) > 5)
        ):
            raise ConfigurationError(
                f"break_before takes 'model', 'tool' or 'tool:NAME' (e.g. 'tool:charge'); got {point!r}"
            )
        checked.append(point)
    return frozenset(checked)


def check_approval(approval: Any) -> Callable[..., Any] | None:
    """``Agent(approval=fn)``: a function (tool_name, arguments, run_context) -> bool, or None."""
    if approval is not None and not callable(approval):
        raise ConfigurationError(
            f"approval must be a function (tool_name, arguments, run_context) -> bool; got {approval!r}"
        )
    return approval


def pending_id(path: tuple[str, ...], turn: int, key: str) -> str:
    """A short id for a pending item: the same in every process, and when a notebook replays its
    recording (from the agent's path, the turn's number and the model's call id)."""
    return hashlib.sha1(f"{'/'.join(path)}#{turn}:{key}".encode()).hexdigest()[:6]


@fast_init(read_often=True)
@dataclass(frozen=True)
class Gate:
    """The rules that stop a run before a call, for one run."""

    approval: Callable[..., Any] | None = None
    """The agent's rule for every tool: ``fn(tool_name, arguments, run_context)``; truthy (or a
    str: the reason) means a person approves the call first."""
    breakpoints: frozenset[str] = frozenset()
    """``break_before`` entries (``model``, ``tool``, ``tool:NAME``)."""
    path: tuple[str, ...] = ()
    """The run's agent path (named on each pending item)."""

    @property
    def before_model(self) -> bool:
        """Whether the run stops before each model call."""
        return MODEL_BREAK in self.breakpoints

    def model_item(self, ctx: RunContext, call: int, request: dict[str, Any]) -> PendingCall:
        """The breakpoint before model call ``call`` with the request about to go."""
        run_id = ctx.run_id
        return PendingCall(
            id=pending_id(self.path, ctx.turn, f"model:{call}"),
            kind="breakpoint",
            tool=None,
            reason=f"break_before model (model call {call + 1})",
            path=self.path,
            run_id=run_id,
            call=call,
            request=request,
        )

    def may_stop(self, tool: Tool) -> bool:
        """Whether a call of ``tool`` may wait (checked before its arguments are)."""
        if tool.external or tool.requires_approval or self.approval is not None:
            return True
        points = self.breakpoints  # (most runs have none: no name is built for them)
        return bool(points) and (TOOL_BREAK in points or f"tool:{tool.name}" in points)

    def tool_item(
        self, tool: Tool, arguments: Mapping[str, Any], tool_call: ToolCall, call: int, ctx: RunContext
    ) -> PendingCall | None:
        """The pending item a call waits on, or None when it runs now. Checked after its
        arguments fit the tool's schema: a call that cannot run goes back to the model as an error."""
        found = self._why(tool, arguments, ctx)
        if found is None:
            return None
        kind, reason = found
        return PendingCall(
            id=pending_id(self.path, ctx.turn, tool_call.id),
            kind=kind,
            tool=tool.name,
            arguments=dict(arguments),
            reason=reason,
            path=self.path,
            run_id=ctx.run_id,
            call=call,
            tool_call_id=tool_call.id,
            parameters=tool.parameters,
        )

    def _why(
        self, tool: Tool, arguments: Mapping[str, Any], ctx: RunContext
    ) -> tuple[PendingKind, str] | None:
        if tool.external:
            if tool.name == ASK_USER_TOOL:
                return "question", str(arguments.get("question", ""))
            return "external", f"{tool.name} runs outside: a person supplies its result"
        if TOOL_BREAK in self.breakpoints or f"tool:{tool.name}" in self.breakpoints:
            return "breakpoint", f"break_before tool:{tool.name}"
        rule = tool.requires_approval
        if rule is True:
            return "approval", f"{tool.name} requires approval"
        if callable(rule):
            reason = _asked(rule, (dict(arguments), ctx), f"{tool.name}'s requires_approval")
            if reason is not None:
                return "approval", reason
        if self.approval is not None:
            reason = _asked(self.approval, (tool.name, dict(arguments), ctx), "the agent's approval rule")
            if reason is not None:
                return "approval", reason
        return None


def _asked(rule: Callable[..., Any], arguments: tuple[Any, ...], who: str) -> str | None:
    """The reason a rule gives for a person to approve (None: no approval needed). A rule that
    raises asks for one: the call waits rather than run unchecked."""
    try:
        verdict = rule(*arguments)
    except Exception as exc:
        return f"{who} raised {type(exc).__name__}: {one_line(exc)}; a person decides instead"
    if isinstance(verdict, str):
        return verdict or None
    return f"{who} asked for approval" if verdict else None


__all__ = ["MODEL_BREAK", "TOOL_BREAK", "Gate", "check_approval", "check_breakpoints", "pending_id"]
