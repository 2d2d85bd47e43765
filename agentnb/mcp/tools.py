"""``MCPTools``: an MCP server's tools as an agentnb Toolkit.

``Agent(tools=[MCPTools("python -m mcp_server_time")])`` lists the server's tools (starting the
server if this process has not yet) and offers them to the model with the server's own JSON
schemas. A call goes through agentnb's usual path (argument validation against that schema, the
hook chain, events, records) and then to the server; a server error, a crash or a timeout is
raised as one line, which agentnb turns into that call's error result.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, ClassVar

import mcp_types as types

from ..errors import ConfigurationError, MCPToolError, ToolDefinitionError
from ..state.modules import registered_state
from ..tools import Tool, Toolkit
from .connection import DEFAULT_CONNECT_TIMEOUT, DEFAULT_TIMEOUT, Connection, ServerStatus, connection_for
from .content import content_text, flat, tool_result_value
from .spec import ServerSpec


@dataclasses.dataclass
class MCPTool(Tool):
    """A tool served by an MCP server; calling it sends ``tools/call`` to that server."""

    server: str = ""
    """The name of the server it came from."""
    remote_name: str = ""
    """Its name on the server (``name`` may carry a prefix or have ``-`` made ``_``)."""

    outside_process: ClassVar[bool] = True
    """Its answers come from outside this process: a notebook's recording can stand in for them."""

    @property
    def source(self) -> str:
        """Where it came from, for labels: ``mcp:<server>``."""
        return f"mcp:{self.server}"


class MCPTools(Toolkit):
    """The tools of one MCP server: a command run over stdio, or a streamable HTTP URL.

    ``MCPTools("python -m mcp_server_time")``, ``MCPTools(["npx", "-y", "pkg"], env={...})`` or
    ``MCPTools(url="http://127.0.0.1:8000/mcp")``. ``include_tools`` / ``exclude_tools`` pick
    tools by name; ``prefix="time"`` names them ``time_<tool>`` (for several servers with
    like-named tools); ``timeout`` bounds each call, in seconds. ``add_instructions=True``
    puts ``instructions`` (by default the server's own) into the system prompt. One server
    process (or connection) per command or URL serves every MCPTools and agent in this process;
    its name is the first one given.
    """

    def __init__(
        self,
        command: str | Sequence[str] | None = None,
        *,
        url: str | None = None,
        env: Mapping[str, str] | None = None,
        cwd: str | os.PathLike[str] | None = None,
        name: str | None = None,
        include_tools: Iterable[str] | None = None,
        exclude_tools: Iterable[str] | None = None,
        prefix: str | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        connect_timeout: float = DEFAULT_CONNECT_TIMEOUT,
        instructions: str | None = None,
        add_instructions: bool = False,
        listing: Sequence[Mapping[str, Any]] | None = None,
    ) -> None:
        spec = ServerSpec.build(command, url=url, env=env, cwd=cwd)
        if name is not None and (not isinstance(name, str) or not name.strip()):
            raise ConfigurationError(f"name must be a non-empty string, got {name!r}")
        if prefix is not None and (not isinstance(prefix, str) or not re.fullmatch(r"[A-Za-z_]\w*", prefix)):
            raise ConfigurationError(
                f"prefix must be letters, digits and underscores (e.g. 'time'), got {prefix!r}"
            )
        _check_seconds("timeout", timeout)
        _check_seconds("connect_timeout", connect_timeout)
        self.connection: Connection = connection_for(spec, name)
        super().__init__(
            name=name or self.connection.name, instructions=instructions, add_instructions=add_instructions
        )
        self.prefix = prefix
        self.timeout = float(timeout)
        self.connect_timeout = float(connect_timeout)
        self._include = _names("include_tools", include_tools)
        self._exclude = _names("exclude_tools", exclude_tools) or []
        self._made: dict[str, tuple[Any, MCPTool]] = {}
        self._listing = [types.Tool.model_validate(dict(t)) for t in listing] if listing is not None else None

    @property
    def tools(self) -> list[Tool]:
        """The server's tools after include/exclude. They come from ``listing`` when one was
        given and the server is not running (so a recorded notebook replays without it);
        otherwise the server is started and asked."""
        if self._listing is not None and self.connection.status().state != "running":
            listing = self._listing
        else:
            self.connection.ensure(self.connect_timeout)
            listing = list(self.connection.tools)
        self._check_filters(listing)
        out: list[Tool] = []
        taken: dict[str, str] = {}
        for remote in listing:
            local = self._local_name(remote.name)
            if not self._wanted(remote.name, local):
                continue
            if local in taken:
                raise ToolDefinitionError(
                    f"MCP server {self.name!r}: tools {taken[local]!r} and {remote.name!r} both become {local!r}; "
                    f"exclude one with exclude_tools=[...]"
                )
            taken[local] = remote.name
            out.append(self._tool(remote, local))
        if self.add_instructions and out:
            # Once for the server, not once per tool: the prompt lists every tool's instructions.
            out[0].instructions = self.instructions or self.connection.instructions
        return out

    def _tool(self, remote: types.Tool, local: str) -> MCPTool:
        # The same Tool object while the server's definition is unchanged: agents compare by identity.
        key = (remote.description, json.dumps(remote.input_schema, sort_keys=True, default=str))
        cached = self._made.get(remote.name)
        if cached is not None and cached[0] == key and cached[1].name == local:
            return cached[1]
        made = MCPTool(
            name=local,
            description=remote.description or remote.title or None,
            parameters=_parameters(remote.input_schema),
            function=self._caller(remote.name),
            server=self.name,
            remote_name=remote.name,
        )
        self._made[remote.name] = (key, made)
        return made

    def _caller(self, remote_name: str) -> Any:
        toolkit = self

        def call_mcp_tool(**arguments: Any) -> Any:
            return toolkit.call(remote_name, arguments)

        call_mcp_tool.__name__ = remote_name if remote_name.isidentifier() else "call_mcp_tool"
        call_mcp_tool.__doc__ = f"Call {remote_name!r} on MCP server {self.name!r}."
        return call_mcp_tool

    def call(self, tool_name: str, arguments: Mapping[str, Any] | None = None) -> Any:
        """Call a tool by its name on the server; its structured content (a dict) or its text.

        Raises MCPToolError when the server reports an error (``isError``), MCPTimeoutError past
        ``timeout``, MCPDisconnectedError when the server dies during the call."""
        what = f"the call to tool {tool_name!r}"
        result = self.connection.request(
            what,
            lambda session: session.call_tool(tool_name, dict(arguments or {})),
            timeout=self.timeout,
            connect_timeout=self.connect_timeout,
        )
        if result.is_error:
            detail = flat(content_text(result.content)) or "no details"
            raise MCPToolError(f"MCP server {self.name!r}: tool {tool_name!r} reported an error: {detail}")
        return tool_result_value(result)

    def listing(self) -> list[dict[str, Any]]:
        """The server's tool list as plain data (starting the server), to give ``listing=`` later."""
        self.connection.ensure(self.connect_timeout)
        return [t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in self.connection.tools]

    def status(self) -> ServerStatus:
        """The server's state, error and tools (without starting it)."""
        return self.connection.status()

    def close(self) -> None:
        """Stop the server for every agent that uses it; the next call starts it again."""
        self.connection.close()

    # -- filters ----------------------------------------------------------------------------

    def _local_name(self, remote_name: str) -> str:
        local = re.sub(r"\W", "_", remote_name)
        if not local or local[0].isdigit():
            local = f"_{local}"
        return f"{self.prefix}_{local}" if self.prefix else local

    def _wanted(self, remote_name: str, local: str) -> bool:
        if self._include is not None and remote_name not in self._include and local not in self._include:
            return False
        return remote_name not in self._exclude and local not in self._exclude

    def _check_filters(self, listing: list[types.Tool]) -> None:
        known = {t.name for t in listing} | {self._local_name(t.name) for t in listing}
        for option, names in (("include_tools", self._include or []), ("exclude_tools", self._exclude)):
            unknown = [n for n in names if n not in known]
            if unknown:
                raise ToolDefinitionError(
                    f"{option} names {unknown}, which MCP server {self.name!r} does not have; "
                    f"its tools are {sorted(t.name for t in listing)}"
                )

    # -- display and sessions: neither starts the server -------------------------------------

    def state_dict(self) -> dict[str, Any]:
        names = [made.name for _, made in self._made.values()]
        return {
            "name": self.name,
            "server": self.connection.spec.target,
            "tools": names,
            "registered": registered_state(self),
        }

    def __repr__(self) -> str:
        status = self.connection.status()
        shown = f", tools={list(status.tools)}" if status.tools else ""
        return f"MCPTools({status.target!r}, name={self.name!r}, state={status.state!r}{shown})"


def _parameters(schema: Mapping[str, Any] | None) -> dict[str, Any]:
    """The server's input schema as the tool's parameters (a JSON object schema)."""
    params = dict(schema or {})
    params.setdefault("type", "object")
    params.setdefault("properties", {})
    return params


def _names(option: str, names: Iterable[str] | None) -> list[str] | None:
    if names is None:
        return None
    if isinstance(names, str) or not all(isinstance(n, str) for n in names):
        raise ConfigurationError(f"{option} must be a list of tool names, got {names!r}")
    return list(names)


def _check_seconds(option: str, value: Any) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
        raise ConfigurationError(f"{option} must be a number of seconds > 0, got {value!r}")
