"""MCP servers in the magics: ``%%agent --mcp`` toolkits, whose tool lists are kept beside the
notebook's recording so a recorded notebook replays without starting the servers."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from IPython.core.error import UsageError

from ..errors import AgentnbError
from ..util.extras import install_line
from ..util.text import one_line


def listing_file(folder: Any, agent: str) -> Path | None:
    """``<recording folder>/<agent>.mcp.json``; None for a session that is not a folder."""
    save_dir = getattr(folder, "save_dir", None) or (folder if isinstance(folder, (str, Path)) else None)
    if save_dir is None or str(save_dir).endswith((".db", ".sqlite", ".sqlite3")):
        return None
    return Path(save_dir) / f"{agent}.mcp.json"


def read_listings(path: Path | None) -> dict[str, list[dict[str, Any]]]:
    """The tool lists recorded for each server (by the text given to --mcp); {} when none."""
    if path is None or not path.exists():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise UsageError(
            f"%%agent: {path} is not a readable MCP tool list ({one_line(exc)}); delete it to list the tools again"
        ) from None
    return data if isinstance(data, dict) else {}


def toolkits(specs: list[str], listings: dict[str, list[dict[str, Any]]]) -> list[Any]:
    """One MCPTools per ``--mcp`` value: a URL (streamable HTTP) or a command (stdio)."""
    try:
        from ..mcp import MCPTools
    except ImportError as exc:
        raise UsageError(
            f"%%agent: --mcp needs the MCP SDK: {install_line('mcp')} ({one_line(exc)})"
        ) from None
    out = []
    for spec in specs:
        try:
            if spec.startswith(("http://", "https://")):
                out.append(MCPTools(url=spec, listing=listings.get(spec)))
            else:
                out.append(MCPTools(spec, listing=listings.get(spec)))
        except AgentnbError as exc:
            raise UsageError(f"%%agent: --mcp {spec}: {one_line(exc)}") from None
    return out


def save_listings(
    path: Path | None, specs: list[str], kits: list[Any], listings: dict[str, list[dict[str, Any]]]
) -> None:
    """Keep the tool list of every server that was asked for it this time (it is running)."""
    if path is None:
        return
    fresh = {spec: kit.listing() for spec, kit in zip(specs, kits) if spec not in listings}
    if fresh:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({**listings, **fresh}, indent=1, sort_keys=True) + "\n", encoding="utf-8")


def servers_text() -> str:
    """``%agentnb mcp``: every MCP server of this kernel, its state and tools."""
    try:
        from ..mcp import servers
    except ImportError:
        return f"no MCP servers (the MCP SDK is not installed: {install_line('mcp')})"
    found = servers()
    if not found:
        return "no MCP servers yet; give an agent one with %%agent NAME --mcp COMMAND_OR_URL"
    lines = []
    for status in found:
        tools = ", ".join(status.tools) or "-"
        error = f" ({status.error})" if status.error else ""
        lines.append(
            f"{status.name}: {status.state}{error}; {status.transport} {status.target}; tools: {tools}"
        )
    return "\n".join(lines)


__all__ = ["listing_file", "read_listings", "save_listings", "servers_text", "toolkits"]
