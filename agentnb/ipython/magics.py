"""The magics: ``%%tool``, ``%%agent``, ``%%chat`` and ``%agentnb``, one class per concern.

Each magic parses its options, checks them against the user namespace, then hands over to a core
object (Tool, Agent, agent.run / observe / fork / reset). Anything wrong with the input is a
one-line ``UsageError`` that says what is wrong and how to fix it.
"""

from __future__ import annotations

import html
from typing import Any

from IPython.display import Markdown, display

from .. import slots
from . import eval_view
from .agent_magic import AgentMagics
from .agentnb_magic import AgentnbMagics
from .chat_magic import ChatMagics
from .tool_magic import ToolMagics
from .workspace import Workspace


def show_markdown(text: str) -> None:
    """An answer as markdown in the notebook (``print_response(markdown=True)``). Its HTML is
    escaped first: headings and lists render, nothing from the model becomes live HTML."""
    display(Markdown(html.escape(text, quote=False)))


def register_magics(shell: Any) -> Workspace:
    """Register the magics on ``shell`` with a fresh workspace; returns the workspace."""
    slots.markdown_display.fill(show_markdown)
    eval_view.install(shell)
    workspace = Workspace(shell)
    for cls in (ToolMagics, AgentMagics, ChatMagics, AgentnbMagics):
        shell.register_magics(cls(shell, workspace))
    return workspace


__all__ = ["AgentMagics", "AgentnbMagics", "ChatMagics", "ToolMagics", "Workspace", "register_magics"]
