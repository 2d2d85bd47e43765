"""Tools from Python functions, Toolkits, argument validation and the tool-hook chain."""

from __future__ import annotations

from .builtin import AGENTIC_TOOL, ASK_USER_TOOL, ask_user_tool, update_session_state_tool
from .chain import ChainOutcome, run_chain
from .hooks import HOOK_PARAM_NAMES, check_hook, hook_name
from .result import ToolResult, result_parts, result_text
from .schema import INJECT_MARKER, INJECTED_PARAMS
from .tool import Tool, create_tool_from_function, tool
from .toolkit import Toolkit, collect_tools

__all__ = [
    "AGENTIC_TOOL",
    "ASK_USER_TOOL",
    "HOOK_PARAM_NAMES",
    "INJECTED_PARAMS",
    "INJECT_MARKER",
    "ChainOutcome",
    "Tool",
    "ToolResult",
    "Toolkit",
    "ask_user_tool",
    "check_hook",
    "collect_tools",
    "create_tool_from_function",
    "hook_name",
    "result_parts",
    "result_text",
    "run_chain",
    "tool",
    "update_session_state_tool",
]
