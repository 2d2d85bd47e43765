"""An agent's definition as data: what it was made from, and how it is configured now.

``AgentDefinition`` is the one way to build an agent again: ``agent.fork()`` builds the fork from
it, a team's fork rebuilds its members from theirs, and an evaluation ships it (pickled) to each
worker, which builds a fresh agent per case. It holds the constructor's arguments as given (never
a session), the options set on the agent since, and the state it was defined with.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

from .tools import collect_tools

CONFIGURED = (
    "tool_hooks",
    "max_tool_iterations",
    "max_delegation_depth",
    "dependencies",
    "add_dependencies_to_context",
    "add_history_to_context",
    "num_history_runs",
    "model_options",
    "enable_agentic_state",
    "overwrite_db_session_state",
    "output_type",
    "output_mode",
    "output_retries",
    "output_tool_name",
    "output_validators",
    "output_to_state",
)
"""Options an agent keeps as attributes that may be set after it was made (besides its prompt
options and tools)."""

_NOT_OPTIONS = ("self", "__class__", "name", "session", "db", "fresh")
"""Constructor arguments that are not part of a definition (the session is where it is saved)."""


@dataclass
class AgentDefinition:
    """An agent as data: enough to build it again, here or in another process."""

    cls: type
    """The agent's class (``Agent``, ``Team`` or a subclass)."""
    name: str
    """Its name."""
    options: dict[str, Any]
    """The constructor's keyword arguments as given (the model among them; never a session)."""
    settings: dict[str, Any] = field(default_factory=dict)
    """Options set on the agent after it was made (the prompt options, hooks, model options,
    tools): empty for a definition as made."""
    initial_state: dict[str, Any] | None = None
    """The state it was defined with (what ``reset()`` goes back to); None: what ``options`` give."""
    built_tools: list[Any] | None = field(default=None, repr=False)
    """Its tools as built (schemas and all), shared by the agents built in this process; never
    pickled: another process builds them from ``options``."""

    def __getstate__(self) -> dict[str, Any]:
        return {**vars(self), "built_tools": None}

    @classmethod
    def made(cls, agent_class: type, arguments: dict[str, Any]) -> AgentDefinition:
        """A definition from a constructor's arguments (``locals()`` of ``__init__``)."""
        options = {k: v for k, v in arguments.items() if k not in _NOT_OPTIONS}
        return cls(agent_class, arguments.get("name") or "agent", options)

    @classmethod
    def of(cls, agent: Any, *, configured: bool = False) -> AgentDefinition:
        """``agent``'s definition as it was made, with its name and initial state now; with
        ``configured``, also the options set on it since (what an evaluation's fresh agents must
        share with it)."""
        made = agent._made
        definition = cls(
            made.cls, agent.name, dict(made.options), initial_state=copy.deepcopy(dict(agent._initial_state))
        )
        if not configured:
            return definition
        settings: dict[str, Any] = {name: copy.copy(getattr(agent, name)) for name in CONFIGURED}
        settings["prompt"] = copy.copy(agent.prompt)
        own = list(agent._tools)
        if [t.name for t in own] != [t.name for t in collect_tools(made.options.get("tools") or [])]:
            settings["_tools"] = own
        definition.settings = settings
        definition.built_tools = own
        return definition

    def with_options(self, **options: Any) -> AgentDefinition:
        """This definition with some constructor arguments replaced."""
        return AgentDefinition(
            self.cls,
            self.name,
            {**self.options, **options},
            dict(self.settings),
            self.initial_state,
            self.built_tools,
        )

    def without(self, *names: str) -> AgentDefinition:
        """This definition without some constructor arguments (they take their defaults)."""
        kept = {k: v for k, v in self.options.items() if k not in names}
        return AgentDefinition(
            self.cls, self.name, kept, dict(self.settings), self.initial_state, self.built_tools
        )

    def build(self, name: str | None = None, **options: Any) -> Any:
        """A new agent from this definition (``options`` replace constructor arguments, e.g.
        ``model=`` or ``session_state=``): the settings applied, the initial state kept, no turns."""
        arguments = {**self.options, **options}
        shared_tools = self.built_tools is not None and "_tools" not in self.settings
        if shared_tools and "tools" not in options:
            arguments["tools"] = None  # building a tool's schema costs more than a turn
        agent = self.cls(name or self.name, **arguments)
        for setting, value in self.settings.items():
            setattr(agent, setting, copy.copy(value))
        if shared_tools and "tools" not in options:
            agent._tools = list(self.built_tools or [])
        if self.initial_state is not None and "session_state" not in options:
            agent._initial_state = copy.deepcopy(self.initial_state)
        return agent


__all__ = ["CONFIGURED", "AgentDefinition"]
