"""Toolkits (groups of tools, Agno's ``Toolkit``) and flattening what an agent is given into Tools."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable
from typing import Any

from ..errors import ToolDefinitionError
from ..state.modules import load_registered, register_state, registered_state
from .tool import Tool


class Toolkit:
    """A group of tools: pass ``tools=[...]``, or subclass it and ``self.register(self.method)``.

    ``tools`` is the list of Tools it offers, in order; ``functions`` the same by name.
    ``include_tools`` / ``exclude_tools`` pick by name (a name the toolkit does not have is an
    error); ``auto_register=False`` leaves ``tools=[...]`` unregistered."""

    def __init__(
        self,
        name: str | None = None,
        tools: Iterable[Callable[..., Any]] = (),
        instructions: str | None = None,
        add_instructions: bool = False,
        include_tools: Iterable[str] | None = None,
        exclude_tools: Iterable[str] | None = None,
        auto_register: bool = True,
        **_: Any,
    ) -> None:
        self.name = name or type(self).__name__
        self.instructions = instructions
        self.add_instructions = add_instructions
        self.include_tools = list(include_tools) if include_tools is not None else None
        self.exclude_tools = list(exclude_tools) if exclude_tools is not None else None
        self._tools: list[Any] = []
        self._seen: list[str] = []
        given = list(tools or ())
        if auto_register:
            for fn in given:
                self.register(fn)
        if given:
            self.check_filters([getattr(fn, "__name__", "") for fn in given])

    @property
    def tools(self) -> list[Any]:
        """The Tools it offers, in order (a subclass may append functions to this list)."""
        return self._tools

    @property
    def functions(self) -> dict[str, Tool]:
        """The Tools it offers, by name (Agno's ``Toolkit.functions``)."""
        return {t.name: t for t in collect_tools(self.tools)}

    def register(self, function: Callable[..., Any], name: str | None = None) -> Tool | None:
        """Add a function, bound method or Tool as a tool of this toolkit (None when
        ``include_tools`` / ``exclude_tools`` leave it out)."""
        made = Tool.from_function(function)
        if name is not None and name != made.name:
            made = dataclasses.replace(made, name=name)
        self._seen.append(made.name)
        if self.include_tools is not None and made.name not in self.include_tools:
            return None
        if made.name in (self.exclude_tools or ()):
            return None
        if self.add_instructions and self.instructions and made.instructions is None:
            made = dataclasses.replace(made, instructions=self.instructions)
        names = [getattr(t, "name", getattr(t, "__name__", None)) for t in self._tools]
        if made.name in names:
            self._tools[names.index(made.name)] = made
        else:
            self._tools.append(made)
        return made

    def check_filters(self, names: Iterable[str] | None = None) -> None:
        """Raise when ``include_tools`` / ``exclude_tools`` name a tool that is not in ``names``
        (by default: every name registered so far)."""
        available = set(self._seen if names is None else names)
        for option, label in ((self.include_tools, "Included"), (self.exclude_tools, "Excluded")):
            missing = [n for n in option or () if n not in available]
            if missing:
                raise ToolDefinitionError(
                    f"{label} tool(s) not present in the toolkit {self.name!r}: {', '.join(missing)}"
                )

    def register_state(
        self, attr_name: str, custom_to_json: Any = None, custom_from_json: Any = None
    ) -> None:
        """Save ``self.<attr_name>`` in sessions (AgentScope's ``register_state``)."""
        register_state(self, attr_name, custom_to_json, custom_from_json)

    def state_dict(self) -> dict[str, Any]:
        """The toolkit's registered attributes (its tools come from code, not from the file)."""
        return {"name": self.name, "tools": list(self.functions), "registered": registered_state(self)}

    def load_state_dict(self, state_dict: dict[str, Any], strict: bool = True) -> None:
        load_registered(self, dict(state_dict.get("registered") or {}), strict)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} name={self.name} functions={list(self.functions)}>"


def collect_tools(items: Iterable[Any] | None) -> list[Tool]:
    """Flatten functions, Tools, Toolkits and lists of them into Tools, rejecting duplicates."""
    out: dict[str, Tool] = {}
    for item in items or ():
        if isinstance(item, Toolkit):
            if item.include_tools or item.exclude_tools:
                item.check_filters()
            made = collect_tools(item.tools)
        elif isinstance(item, (list, tuple)):
            made = collect_tools(item)
        elif isinstance(item, Tool):
            made = [item]
        elif callable(item):
            made = [Tool.from_function(item)]
        else:
            raise ToolDefinitionError(
                f"tools=[...] accepts functions, Tool and Toolkit objects; got {item!r}"
            )
        for t in made:
            if t.name in out and out[t.name] is not t:
                raise ToolDefinitionError(
                    f"two tools are named {t.name!r}; rename one (Tool.from_function(fn, name=...))"
                )
            out[t.name] = t
    return list(out.values())


__all__ = ["Toolkit", "collect_tools"]
