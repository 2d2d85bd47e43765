"""Tools from Python functions, Toolkits, argument validation and the tool-hook chain."""

from __future__ import annotations

from .builtin import AGENTIC_TOOL, update_session_state_tool
from .hooks import HOOK_PARAM_NAMES, ChainOutcome, check_hook, hook_name, run_chain
from .schema import INJECTED_PARAMS
from .tool import Tool, Toolkit, collect_tools, result_text, tool

__all__ = [
    "AGENTIC_TOOL",
    "HOOK_PARAM_NAMES",
    "INJECTED_PARAMS",
    "ChainOutcome",
    "Tool",
    "Toolkit",
    "check_hook",
    "collect_tools",
    "hook_name",
    "result_text",
    "run_chain",
    "tool",
    "update_session_state_tool",
]
