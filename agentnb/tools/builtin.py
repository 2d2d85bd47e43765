"""Built-in tools: Agno's ``update_session_state`` (``enable_agentic_state=True``)."""

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


__all__ = ["AGENTIC_TOOL", "UPDATE_SESSION_STATE_DESCRIPTION", "update_session_state_tool"]
