"""Every exception agentnb raises. Messages name the thing, the problem and the fix."""

from __future__ import annotations

from typing import Any


class AgentnbError(Exception):
    """Base class for all agentnb errors."""

    result: Any = None
    """The RunResult of the run this error ended, when a run raised it (what it did so far)."""


class ConfigurationError(AgentnbError, ValueError):
    """An agent, tool or state was configured with an invalid value."""


class StateSchemaError(ConfigurationError):
    """A state schema is malformed (a type that is not a type, a missing type, a bad handler)."""


class StateKeyError(AgentnbError, KeyError, ValueError):
    """A key outside the state schema was written (a ValueError, as in Haystack, and a KeyError)."""

    def __str__(self) -> str:  # KeyError would repr() the message
        return str(self.args[0]) if self.args else ""


class StateTypeError(AgentnbError, TypeError):
    """A value does not fit the type declared for its key in the state schema."""


class StateEditError(AgentnbError, ValueError):
    """An edit of the state names a path that does not exist or cannot hold a value."""


class ToolDefinitionError(ConfigurationError):
    """A function or Toolkit cannot be turned into a tool."""


class ToolConfigTypeError(ToolDefinitionError, TypeError):
    """A tool option has the wrong type (a list where a dict goes): a TypeError, as in Haystack."""


class ToolInvocationError(AgentnbError):
    """``Tool.invoke(**kwargs)`` failed; the message names the tool and the arguments."""


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


class OutputValidationError(AgentRunError):
    """No answer matched the run's ``output_type`` within ``output_retries``. ``.attempts`` has
    every answer checked and what was wrong with it, in order."""

    def __init__(self, message: str, attempts: Any = (), result: Any = None) -> None:
        super().__init__(message, result)
        self.attempts = tuple(attempts)


class ModelRetry(Exception):  # noqa: N818  (pydantic-ai's name, which users know)
    """Raised by an output validator: the output is not good enough, and why; the model is asked
    again with this text (it counts against ``output_retries``)."""


class SessionError(AgentnbError):
    """A session could not be saved or loaded."""


class SessionFormatError(SessionError, ValueError):
    """A session file is corrupt, truncated, empty, not JSON or of an unknown format version.
    The message names the file and what is wrong; the file is left as it is."""


class SessionModuleError(SessionFormatError):
    """One module of a session holds a state that cannot be loaded. Nothing of the session was
    loaded: every module named in the load keeps its state."""

    def __init__(self, message: str, *, where: str, module: str, problem: str) -> None:
        super().__init__(message)
        self.where = where
        """Where the session is stored (``SessionBase.describe``)."""
        self.module = module
        """The module whose state cannot be loaded."""
        self.problem = problem
        """What is wrong with it."""


class SessionEncodeError(SessionError, TypeError):
    """A state value cannot be stored as JSON; the message names its key path and type."""


class SessionNotFoundError(SessionError, ValueError):
    """``load_session_state(..., allow_not_exist=False)`` found no saved session."""


class ContextProviderError(AgentnbError):
    """A context provider failed or returned something that is not a ContextBlock."""


class OutputFormatError(AgentnbError, ValueError):
    """A model's reply does not parse in the agent's output format (JSON or paragraphs).
    ``.raw`` keeps the reply's text."""

    def __init__(self, message: str, raw: str | None = None) -> None:
        super().__init__(message)
        self.raw = raw


class ModelAuthenticationError(ModelError):
    """The model server refused the credentials (or none were given)."""


class ModelConnectionError(ModelError):
    """The model server could not be reached, or did not answer in time."""


class ModelNotFoundError(ModelError):
    """The server does not know the model (or the endpoint) asked for."""


class ModelRateLimitError(ModelError):
    """The server kept refusing with 429 after the client's own retries."""


class ContextLengthError(ModelError):
    """The request is longer than the model's context window."""


class ModelResponseError(ModelError):
    """A model server's answer is malformed (not JSON, a field of the wrong type, a stream cut
    short); the message says what it sent wrong."""


class SessionWriteError(SessionError):
    """A session could not be written (disk full, read-only, database locked); the message names
    the file and the cause."""


class LocalModelError(ModelError):
    """The embedded llama.cpp server could not be started or stopped answering."""


class ReplayDriftError(ModelError):
    """A request under strict replay differs from the recorded one; the message holds a diff."""


class MissingExtraError(ConfigurationError, ImportError):
    """A feature needs an optional extra that is not installed; the message names the extra."""


class ReplayExhaustedError(ModelError):
    """A replayed agent made more model calls than the recording holds."""


class ReplayDriftWarning(UserWarning):
    """Lax replay answered a request that differs from the recording."""


class MCPServerError(AgentnbError):
    """Base class: an MCP server could not be used."""


class MCPStartError(MCPServerError):
    """The server's command did not start, or the server did not answer the handshake."""


class MCPDisconnectedError(MCPServerError):
    """The server went away (its process exited, its connection dropped); restarted on next use."""


class MCPTimeoutError(MCPServerError):
    """A request to the server took longer than its timeout; the request was cancelled."""


class MCPToolError(MCPServerError):
    """The server answered a tool call with an error (``isError``) or refused the request."""


class DelegationError(AgentnbError):
    """A delegation (agent as tool, team member, handoff) could not run: an unknown member, an
    agent delegating to itself, a member run that failed."""


class TeamDefinitionError(ConfigurationError):
    """A team or handoff is defined wrongly: a member named twice, a cycle of teams, a handoff
    to an agent that is not defined."""


class RunAbortError(AgentnbError):
    """A bug in the developer's code found during a run, inside a tool call (a handoff's
    ``input_filter`` that raised or returned the wrong thing). Unlike a tool's error, which the
    model reads, it ends the run — and every run above it — and is raised to the developer."""


class HandoffFilterError(RunAbortError, TypeError):
    """A handoff's ``input_filter`` raised, or returned something that is not a list of messages."""


class EvalError(AgentnbError):
    """Base class: an evaluation could not be set up, run or read."""


class EvalCaseError(EvalError, ValueError):
    """A case (or a file or DataFrame of cases) is malformed; the message names the case and the fix."""


class EvalCheckError(EvalError, ValueError):
    """A check is malformed, or cannot apply to a case (no expected value to compare with)."""


class EvalBudgetError(EvalError):
    """An evaluation would cost more than ``max_cost`` (or its cost cannot be known); nothing was called."""


class EvalStoreError(EvalError):
    """An evaluation's folder cannot be read or written; the message names the file."""


class EvalAssertionError(EvalError, AssertionError):
    """``run.assert_passed`` / ``comparison.assert_no_regressions`` found the run below the bar."""


class DecisionError(AgentnbError, ValueError):
    """A decision about a paused run's pending item cannot be taken: it was decided already, the
    item's kind does not take it (an external call is answered, not approved), or the edited
    arguments do not fit the tool's schema."""


class ContinueRunError(AgentnbError):
    """A run cannot be continued: the agent has no paused turn, or an item is still undecided."""


class PartError(ConfigurationError):
    """An image or file cannot be a message part: a type agentnb cannot convert, bytes of an
    unknown kind with no media type, a missing file, or something over the API's size limits.
    The message names what was given and what is accepted."""


class PartSizeError(PartError):
    """A part, or the parts of one message, are larger than the API accepts; the message gives
    the size and the limit."""


class MissingBlobError(AgentnbError, LookupError):
    """The bytes of an image or file a message refers to by hash are not where they were looked
    for; the message names the hash and the place."""
