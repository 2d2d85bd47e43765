"""What can go wrong with an MCP server. Every message is one line that names the server."""

from __future__ import annotations

from ..errors import AgentnbError


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
