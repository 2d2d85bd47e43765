"""Built-in tools: Agno's ``update_session_state`` (``enable_agentic_state=True``) and
``ask_user`` (``Agent(ask_user=True)``), the model's question to the person."""

from __future__ import annotations

import functools

from ..state.state import replace_values
from .run_context import RunContext
from .tool import Tool

AGENTIC_TOOL = "update_session_state"
"""The agentic-state tool's name (its changes are attributed to ``agentic:update_session_state``)."""

UPDATE_SESSION_STATE_DESCRIPTION = (
    "Update the shared session state. Provide any updates as a dictionary of key-value pairs.\n"
    "Example:\n"
    '    "session_state_updates": {"shopping_list": ["milk", "eggs", "bread"]}'
)


@functools.cache
def update_session_state_tool() -> Tool:
    """Agno's built-in ``update_session_state`` tool (``enable_agentic_state=True``)."""

    def update_session_state(run_context: RunContext, session_state_updates: dict) -> str:
        for key, value in session_state_updates.items():
            run_context.state.set(key, value, handler_override=replace_values)
        return f"Updated session state: {run_context.session_state}"

    return Tool(
        name=AGENTIC_TOOL,
        description=UPDATE_SESSION_STATE_DESCRIPTION,
        parameters={
            "type": "object",
            "properties": {
                "session_state_updates": {
                    "type": "object",
                    "description": "The updates to apply to the shared session state.",
                }
            },
            "required": ["session_state_updates"],
        },
        function=update_session_state,
    )


ASK_USER_TOOL = "ask_user"
"""The question tool's name: a call of it pauses the run until a person answers."""

ASK_USER_DESCRIPTION = (
    "Ask the user a question when you need information or a choice only they can give. "
    "Their answer comes back as this call's result."
)


@functools.cache
def ask_user_tool() -> Tool:
    """The built-in ``ask_user(question)`` tool (``Agent(ask_user=True)``): never run here; its
    call pauses the run, and the person's answer (``item.answer(...)``) is its result."""

    def ask_user(question: str) -> str:
        raise RuntimeError("ask_user is answered by a person while the run is paused; it never runs")

    return Tool(
        name=ASK_USER_TOOL,
        description=ASK_USER_DESCRIPTION,
        parameters={
            "type": "object",
            "properties": {"question": {"type": "string", "description": "The question, in full."}},
            "required": ["question"],
        },
        function=ask_user,
        external=True,
    )


__all__ = [
    "AGENTIC_TOOL",
    "ASK_USER_DESCRIPTION",
    "ASK_USER_TOOL",
    "UPDATE_SESSION_STATE_DESCRIPTION",
    "ask_user_tool",
    "update_session_state_tool",
]
