"""Every exception agentnb raises. Messages name the thing, the problem and the fix."""

from __future__ import annotations

from typing import Any


class AgentnbError(Exception):
    """Base class for all agentnb errors."""


class ConfigurationError(AgentnbError, ValueError):
    """An agent, tool or state was configured with an invalid value."""


class StateSchemaError(ConfigurationError):
    """A state schema is malformed (a type that is not a type, a missing type, a bad handler)."""


class StateKeyError(AgentnbError, KeyError):
    """A key outside the state schema was read or written."""

    def __str__(self) -> str:  # KeyError would repr() the message
        return str(self.args[0]) if self.args else ""


class StateTypeError(AgentnbError, TypeError):
    """A value does not fit the type declared for its key in the state schema."""


class ToolDefinitionError(ConfigurationError):
    """A function or Toolkit cannot be turned into a tool."""


class ToolArgumentsError(AgentnbError):
    """The arguments a model sent for a tool are malformed or do not fit its schema."""


class ModelError(AgentnbError):
    """A model could not answer a request (network, authentication, limits, bad response)."""


class ScriptedModelExhaustedError(ModelError):
    """A ScriptedModel was asked for more replies than it was given."""


class AgentRunError(AgentnbError):
    """A run ended without a final answer. ``.result`` keeps everything it did so far."""

    def __init__(self, message: str, result: Any = None) -> None:
        super().__init__(message)
        self.result = result


class MaxToolIterationsError(AgentRunError):
    """The model kept calling tools past ``max_tool_iterations``."""
