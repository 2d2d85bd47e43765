"""agentnb: build LLM agents in a notebook and see inside them.

The names here are what a user imports. The rest has a module of its own: events in
``agentnb.events``, errors in ``agentnb.errors``, context providers in ``agentnb.context``,
formatters in ``agentnb.formatters``, state diffs in ``agentnb.state.diff``, sessions in
``agentnb.sessions``, model families in ``agentnb.models``.
"""

from __future__ import annotations

from typing import Any

from .agent import Agent
from .delegation.tools import handoff
from .errors import ModelRetry
from .messages import ChatMessage, File, Image, Message, ToolCall
from .model_spec import set_default_model
from .models import ScriptedModel, tool_call
from .run.run_result import RunResult
from .state import State, merge_lists, replace_values
from .state.modules import StateModule
from .tools import Tool, Toolkit, ToolResult, tool
from .tools.run_context import RunContext
from .util.version import __version__ as __version__

_LAZY = {
    "OpenAIChat": "models",
    "OpenAIResponses": "models",
    "LocalModel": "models",
    "ReplayModel": "models",
    "JSONSession": "sessions",
    "SQLiteSession": "sessions",
    "ContextBlock": "events",
    "DocumentContext": "context",
    "Team": "team",
}


def __getattr__(name: str) -> Any:
    # Model families, sessions and context providers load on first use, so that
    # `import agentnb` stays light.
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(f"{__name__}.{module}"), name)


def load_ipython_extension(ipython: Any) -> None:
    """``%load_ext agentnb``: registers the magics (imports the IPython layer lazily)."""
    from .ipython import load_ipython_extension as load

    load(ipython)


__all__ = [
    "Agent",
    "ChatMessage",
    "ContextBlock",
    "DocumentContext",
    "File",
    "Image",
    "JSONSession",
    "LocalModel",
    "Message",
    "ModelRetry",
    "OpenAIChat",
    "OpenAIResponses",
    "ReplayModel",
    "RunContext",
    "RunResult",
    "SQLiteSession",
    "ScriptedModel",
    "State",
    "StateModule",
    "Team",
    "Tool",
    "ToolCall",
    "ToolResult",
    "Toolkit",
    "load_ipython_extension",
    "merge_lists",
    "replace_values",
    "set_default_model",
    "handoff",
    "tool",
    "tool_call",
]
