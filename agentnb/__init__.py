"""agentnb: build LLM agents in a notebook and see inside them.

The names here are what a user imports. The rest has a module of its own: events in
``agentnb.events``, errors in ``agentnb.errors``, context providers in ``agentnb.context``,
formatters in ``agentnb.formatters``, state diffs in ``agentnb.state.diff``, sessions in
``agentnb.sessions``, model families in ``agentnb.models``.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from .util.version import __version__ as __version__

if TYPE_CHECKING:
    from .agent import Agent
    from .context import DocumentContext
    from .delegation.tools import handoff
    from .errors import ModelRetry
    from .events import ContextBlock
    from .messages import ChatMessage, File, Image, Message, ToolCall
    from .model_spec import set_default_model
    from .models import LocalModel, OpenAIChat, OpenAIResponses, ReplayModel, ScriptedModel, tool_call
    from .run.run_result import RunResult
    from .sessions import JSONSession, SQLiteSession
    from .state import State, merge_lists, replace_values
    from .state.modules import StateModule
    from .team import Team
    from .tools import Tool, Toolkit, ToolResult, tool
    from .tools.run_context import RunContext

_LAZY = {
    "Agent": "agent",
    "ChatMessage": "messages",
    "ContextBlock": "events",
    "DocumentContext": "context",
    "File": "messages",
    "Image": "messages",
    "JSONSession": "sessions",
    "LocalModel": "models",
    "Message": "messages",
    "ModelRetry": "errors",
    "OpenAIChat": "models",
    "OpenAIResponses": "models",
    "ReplayModel": "models",
    "RunContext": "tools.run_context",
    "RunResult": "run.run_result",
    "SQLiteSession": "sessions",
    "ScriptedModel": "models",
    "State": "state",
    "StateModule": "state.modules",
    "Team": "team",
    "Tool": "tools",
    "ToolCall": "messages",
    "ToolResult": "tools",
    "Toolkit": "tools",
    "handoff": "delegation.tools",
    "merge_lists": "state",
    "replace_values": "state",
    "set_default_model": "model_spec",
    "tool": "tools",
    "tool_call": "models",
}
"""Where each name is defined. Every one loads on first use, so that ``import agentnb`` (and so
importing any of its modules: the Jupyter server extension, the pytest plugin) costs nothing
until an agent is made."""


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value  # found once: later reads do not come here
    return value


def __dir__() -> list[str]:
    # The names not loaded yet too: tab completion on `agentnb.` offers every public name.
    return sorted(set(globals()) | set(__all__))


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
