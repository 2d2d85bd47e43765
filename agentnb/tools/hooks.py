"""Tool hooks (Agno's ``tool_hooks``): what a hook may receive, and the check of a hook when it
is given (``chain`` runs them).

A hook receives, by the names in its own signature, any of ``HOOK_PARAM_NAMES``; it passes the
call on by calling ``function_call(**arguments)``, answers for the tool by returning without
calling it, or raises (an error result for the model).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from ..errors import ToolDefinitionError

HOOK_PARAM_NAMES = {
    "function_name": "name",
    "name": "name",
    "function_call": "next",
    "function": "next",
    "func": "next",
    "arguments": "arguments",
    "args": "arguments",
    "run_context": "run_context",
    "agent": "agent",
    "session_state": "session_state",
    "dependencies": "dependencies",
    "team": "team",
}
"""What a tool hook may receive, by the names in its signature (Agno's ``_build_hook_args``)."""

HOOK_RESULT_LIMIT = 2000
"""Characters of a hook's return value kept in its HookStep."""


def hook_name(hook: Callable[..., Any]) -> str:
    return getattr(hook, "__name__", None) or type(hook).__name__


def check_hook(hook: Any) -> None:
    """Reject a hook that cannot be called or asks for a parameter agentnb cannot give."""
    if not callable(hook):
        raise ToolDefinitionError(f"tool_hooks must be functions; got {hook!r}")
    params = inspect.signature(hook).parameters
    unknown = [
        p.name
        for p in params.values()
        if p.name not in HOOK_PARAM_NAMES
        and p.default is inspect.Parameter.empty
        and p.kind not in (inspect.Parameter.VAR_KEYWORD, inspect.Parameter.VAR_POSITIONAL)
    ]
    if unknown:
        raise ToolDefinitionError(
            f"tool hook {hook_name(hook)!r} asks for {unknown}; a hook can receive: "
            + ", ".join(sorted(HOOK_PARAM_NAMES))
        )


__all__ = ["HOOK_PARAM_NAMES", "check_hook", "hook_name"]
