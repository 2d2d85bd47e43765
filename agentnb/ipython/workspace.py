"""The workspace: what the magics of one IPython shell share (agents, %%tool tools, defaults)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from IPython.core.error import UsageError
from IPython.core.magic import Magics

from ..agent import Agent
from ..tools import Tool, Toolkit


@dataclass
class Workspace:
    """Agents, ``%%tool`` registrations and defaults of one IPython shell."""

    shell: Any
    """The IPython shell."""
    agents: dict[str, Agent] = field(default_factory=dict)
    """Agents defined by %%agent, by name."""
    tools: dict[str, Tool | Toolkit] = field(default_factory=dict)
    """Tools and toolkits registered by %%tool, by name."""
    default_model: Any = None
    """The model used when %%agent has no --model (set by %agentnb defaults)."""
    session_dir: str | None = None
    """Where sessions go (set by %agentnb defaults); None = next to the notebook."""

    @property
    def ns(self) -> dict[str, Any]:
        """The user namespace."""
        return self.shell.user_ns

    def agent(self, name: str, what: str) -> Agent:
        """The agent bound to ``name``; a UsageError when there is none."""
        value = self.ns.get(name)
        if isinstance(value, Agent):
            return value
        if value is None and name in self.agents:
            return self.agents[name]
        known = ", ".join(sorted(self.agent_names())) or "none yet"
        if value is not None:
            raise UsageError(
                f"{what}: {name!r} is a {type(value).__name__}, not an agent; define one with "
                f"%%agent {name} (agents: {known})"
            )
        raise UsageError(
            f"{what}: there is no agent named {name!r}; define it with %%agent {name} (agents: {known})"
        )

    def session_folder(self, cell: str | None = None) -> tuple[str, str | None]:
        """Where this notebook's recordings go (``NOTEBOOK.agentnb/`` beside it, or the folder
        set by ``%agentnb defaults --session-dir``), and a notice when the notebook's location
        had to be guessed. ``cell``, the asking cell's source, tells the notebook apart from
        others in the same folder."""
        if self.session_dir is not None:
            return self.session_dir, None
        from ..sessions import find_notebook_path

        location = find_notebook_path(self.ns, cell=cell)
        return str(location.session_dir), location.notice

    def agent_names(self) -> list[str]:
        """Agents defined by %%agent and agents bound in the namespace."""
        names = dict.fromkeys(self.agents)
        names.update(
            dict.fromkeys(k for k, v in self.ns.items() if isinstance(v, Agent) and not k.startswith("_"))
        )
        return list(names)


class WorkspaceMagics(Magics):
    """A Magics class that shares its shell's workspace with the others."""

    def __init__(self, shell: Any, workspace: Workspace) -> None:
        super().__init__(shell)
        self.workspace = workspace


__all__ = ["Workspace", "WorkspaceMagics"]
