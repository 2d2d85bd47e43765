"""agentnb: build LLM agents in a notebook and see inside them."""

from __future__ import annotations

from typing import Any

from .agent import Agent, Observation, RunResult, RunStream
from .errors import (
    AgentnbError,
    AgentRunError,
    ConfigurationError,
    ContextProviderError,
    OutputFormatError,
    MaxToolIterationsError,
    ModelError,
    ScriptedModelExhaustedError,
    StateKeyError,
    StateSchemaError,
    StateTypeError,
    ToolArgumentsError,
    ToolDefinitionError,
)
from .events import (
    ContextRetrieved,
    Event,
    HookStep,
    ModelRequested,
    ModelResponded,
    Placeholder,
    PromptRendered,
    PromptSection,
    RunFailed,
    RunFinished,
    RunStarted,
    StateCause,
    StateChanged,
    TextDelta,
    ToolCallFinished,
    ToolCallStarted,
    Usage,
)
from .history import History, TurnRecord
from .messages import ChatMessage, Message, ToolCall
from .models import Model, ModelRequest, ModelResponse, ScriptedModel, set_default_model, tool_call
from .run_context import RunContext
from .state import State, merge_lists, replace_values
from .tools import Tool, Toolkit, tool

__version__ = "0.1.0"


_CONTEXT_NAMES = ("ContextBlock", "ContextProvider", "ContextQuery", "ConversationMemory", "DataFrameContext", "DocumentContext")
_FORMATTER_NAMES = ("JsonFormatter", "MessageFormatter", "ParagraphFormatter", "ParsedOutput")


def __getattr__(name: str) -> Any:
    # Model families, sessions, context providers, formatters and the pydantic event adapter
    # load on first use, so that `import agentnb` stays light.
    if name in ("OpenAIChat", "OpenAIResponses", "LocalModel", "ReplayModel"):
        from . import models

        return getattr(models, name)
    if name in ("JSONSession", "SQLiteSession", "SessionBase"):
        from . import sessions

        return getattr(sessions, name)
    if name in _CONTEXT_NAMES:
        from . import context

        return getattr(context, name)
    if name in _FORMATTER_NAMES:
        from . import formatters

        return getattr(formatters, name)
    if name == "EVENT_ADAPTER":
        from . import events

        return events.EVENT_ADAPTER
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def load_ipython_extension(ipython: Any) -> None:
    """``%load_ext agentnb``: registers the magics (imports the IPython layer lazily)."""
    from .ipython import load_ipython_extension as load

    load(ipython)


__all__ = [
    "set_default_model",
    "ReplayModel",
    "OpenAIResponses",
    "OpenAIChat",
    "LocalModel",
    "Agent",
    "AgentRunError",
    "AgentnbError",
    "ChatMessage",
    "ConfigurationError",
    "ContextBlock",
    "ContextProvider",
    "ContextProviderError",
    "ContextQuery",
    "ContextRetrieved",
    "ConversationMemory",
    "DataFrameContext",
    "DocumentContext",
    "EVENT_ADAPTER",
    "Event",
    "History",
    "JsonFormatter",
    "MessageFormatter",
    "OutputFormatError",
    "ParagraphFormatter",
    "ParsedOutput",
    "HookStep",
    "MaxToolIterationsError",
    "Message",
    "Model",
    "ModelError",
    "ModelRequest",
    "ModelRequested",
    "ModelResponded",
    "ModelResponse",
    "Observation",
    "Placeholder",
    "PromptRendered",
    "PromptSection",
    "RunContext",
    "RunFailed",
    "RunFinished",
    "RunResult",
    "RunStarted",
    "RunStream",
    "SQLiteSession",
    "SessionBase",
    "JSONSession",
    "ScriptedModel",
    "ScriptedModelExhaustedError",
    "State",
    "StateCause",
    "StateChanged",
    "StateKeyError",
    "StateSchemaError",
    "StateTypeError",
    "TextDelta",
    "Tool",
    "ToolArgumentsError",
    "ToolCall",
    "ToolCallFinished",
    "ToolCallStarted",
    "ToolDefinitionError",
    "Toolkit",
    "TurnRecord",
    "Usage",
    "load_ipython_extension",
    "merge_lists",
    "replace_values",
    "tool",
    "tool_call",
]
