"""MCP (Model Context Protocol) servers as tools and as context, through the official ``mcp`` SDK.

- ``MCPTools("python -m mcp_server_time")`` or ``MCPTools(url="http://127.0.0.1:8000/mcp")``:
  the server's tools, for ``Agent(tools=[...])``;
- ``MCPContext(server, resources="all" | [uri, ...], search_tool=None)``: its resources (or a
  search tool) as a passive or active context provider;
- ``servers()``: every server this process used, its state and tools; ``close_all()`` stops
  them (done by itself at interpreter exit).

Needs the optional dependency: ``pip install "jupyter-agentnb[mcp]"``.
"""

from __future__ import annotations

from ..errors import MCPDisconnectedError, MCPServerError, MCPStartError, MCPTimeoutError, MCPToolError
from ..util.extras import require

require("mcp", "agentnb.mcp (MCP servers as tools and context)")  # before the modules that import mcp

from .connection import ServerStatus, close_all, servers  # noqa: E402
from .context import MCPContext  # noqa: E402
from .tools import MCPTool, MCPTools  # noqa: E402

__all__ = [
    "MCPContext",
    "MCPDisconnectedError",
    "MCPServerError",
    "MCPStartError",
    "MCPTimeoutError",
    "MCPTool",
    "MCPToolError",
    "MCPTools",
    "ServerStatus",
    "close_all",
    "servers",
]
