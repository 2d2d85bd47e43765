"""``MCPContext``: an MCP server's resources (or its search tool) as a context provider.

Seed 004 puts MCP beside RAG and memory: anything that returns ``ContextBlock``s. Passive, the
blocks matching the user's message go into the ``CONTEXT`` field of every turn; active, the
model looks them up itself with ``retrieve_context``. Each block's ``source`` is the resource's
URI (or ``mcp:<server>/<tool>`` for search results).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any, Literal

import mcp_types as types

from ..context import BM25, DEFAULT_TOP_K
from ..errors import ConfigurationError, MCPServerError
from ..events import ContextBlock
from .connection import DEFAULT_TIMEOUT, ServerStatus, list_all_resources
from .content import content_item_text, resource_contents_text
from .tools import MCPTools


class MCPContext:
    """Context from an MCP server: its text resources ranked against the query, or the results
    of one of its tools called with the query (``search_tool``).

    ``server`` is an ``MCPTools`` (sharing its server), a command (``"python -m pkg"`` or a
    list) or an ``http(s)://`` URL. ``resources`` is a list of URIs or ``"all"`` (the default
    when there is no ``search_tool``). With ``rank=False`` every resource is returned, in
    the server's order, instead of those sharing a word with the query.
    """

    def __init__(
        self,
        server: MCPTools | str | Sequence[str],
        *,
        resources: Sequence[str] | Literal["all"] | None = None,
        search_tool: str | None = None,
        label: str | None = None,
        passive: bool = True,
        active: bool = False,
        top_k: int = 3,
        rank: bool = True,
        timeout: float = DEFAULT_TIMEOUT,
        env: dict[str, str] | None = None,
        cwd: str | os.PathLike[str] | None = None,
    ) -> None:
        self.toolkit = _toolkit(server, timeout, env, cwd)
        if resources is None:
            resources = None if search_tool else "all"
        elif resources != "all" and (
            isinstance(resources, str) or not all(isinstance(uri, str) for uri in resources)
        ):
            raise ConfigurationError(f"resources must be a list of URIs or 'all', got {resources!r}")
        if search_tool is not None and (not isinstance(search_tool, str) or not search_tool):
            raise ConfigurationError(
                f"search_tool must be the name of one of the server's tools, got {search_tool!r}"
            )
        if not isinstance(top_k, int) or isinstance(top_k, bool) or top_k < 0:
            raise ConfigurationError(f"top_k must be a whole number >= 0 (0 = all), got {top_k!r}")
        self.resources: list[str] | Literal["all"] | None = (
            resources if resources in (None, "all") else list(resources)
        )
        self.search_tool = search_tool
        self.context_label = label or f"mcp:{self.toolkit.name}"
        if not isinstance(self.context_label, str) or not self.context_label.strip():
            raise ConfigurationError(f"label must be a non-empty string, got {label!r}")
        self.passive = bool(passive)
        self.active = bool(active)
        if not self.passive and not self.active:
            raise ConfigurationError(
                f"context provider {self.context_label!r} is neither passive nor active; "
                "set passive=True or active=True"
            )
        self.top_k = top_k
        self.rank = bool(rank)

    @property
    def server(self) -> str:
        """The server's name."""
        return self.toolkit.name

    def status(self) -> ServerStatus:
        """The server's state, error and tools (without starting it)."""
        return self.toolkit.status()

    def get_blocks(self, query: str, *, top_k: int = DEFAULT_TOP_K) -> list[ContextBlock]:
        """Blocks for ``query``: matching resources, then the search tool's results."""
        blocks: list[ContextBlock] = []
        if self.resources is not None:
            blocks.extend(self._resource_blocks(str(query), top_k))
        if self.search_tool is not None:
            blocks.extend(self._search_blocks(str(query), top_k))
        return blocks

    # -- resources --------------------------------------------------------------------------

    def resource_blocks(self) -> list[ContextBlock]:
        """Every chosen resource as one block (text, or a summary of binary content)."""
        conn = self.toolkit.connection
        listing: list[types.Resource] = conn.request(
            "listing resources",
            list_all_resources,
            timeout=self.toolkit.timeout,
            connect_timeout=self.toolkit.connect_timeout,
        )
        by_uri = {str(r.uri): r for r in listing}
        if self.resources == "all":
            uris = list(by_uri)
        else:
            uris = list(self.resources or ())
            unknown = [u for u in uris if u not in by_uri]
            if unknown:
                raise MCPServerError(
                    f"MCP server {self.server!r} has no resource(s) {unknown}; its resources are {sorted(by_uri)}"
                )
        blocks = []
        for uri in uris:
            read = self._read_resource(uri)
            text = "\n\n".join(resource_contents_text(c) for c in read.contents)
            meta = by_uri[uri]
            metadata = {"server": self.server, "name": meta.name}
            if meta.mime_type:
                metadata["mime_type"] = meta.mime_type
            blocks.append(ContextBlock(text=text, source=uri, metadata=metadata))
        return blocks

    def _read_resource(self, uri: str) -> types.ReadResourceResult:
        return self.toolkit.connection.request(
            f"reading resource {uri!r}",
            lambda session: session.read_resource(uri),
            timeout=self.toolkit.timeout,
            connect_timeout=self.toolkit.connect_timeout,
        )

    def _resource_blocks(self, query: str, top_k: int) -> list[ContextBlock]:
        blocks = self.resource_blocks()
        if not self.rank:
            return blocks[:top_k] if top_k else blocks
        index = BM25([b.text for b in blocks])
        return [
            ContextBlock(
                text=blocks[i].text,
                score=round(score, 4),
                source=blocks[i].source,
                metadata=blocks[i].metadata,
            )
            for i, score in index.top(query, top_k)
        ]

    # -- search tool ------------------------------------------------------------------------

    def _search_blocks(self, query: str, top_k: int) -> list[ContextBlock]:
        assert self.search_tool is not None
        self.toolkit.connection.ensure(self.toolkit.connect_timeout)
        remote = {t.name: t for t in self.toolkit.connection.tools}
        tool = remote.get(self.search_tool)
        if tool is None:
            raise MCPServerError(
                f"MCP server {self.server!r} has no tool {self.search_tool!r} for search_tool=; "
                f"its tools are {sorted(remote)}"
            )
        arguments: dict[str, Any] = {_query_parameter(tool): query}
        if "top_k" in (tool.input_schema or {}).get("properties", {}) and top_k:
            arguments["top_k"] = top_k
        result = self.toolkit.connection.request(
            f"the call to tool {self.search_tool!r}",
            lambda session: session.call_tool(tool.name, arguments),
            timeout=self.toolkit.timeout,
            connect_timeout=self.toolkit.connect_timeout,
        )
        if result.is_error:
            texts = " ".join(content_item_text(item) for item in result.content)
            raise MCPServerError(
                f"MCP server {self.server!r}: search tool {self.search_tool!r} reported an error: {texts}"
            )
        source = f"mcp:{self.server}/{self.search_tool}"
        blocks = []
        for item in result.content:
            text = content_item_text(item)
            if not text.strip():
                continue
            uri = None
            if isinstance(item, types.EmbeddedResource):
                uri = item.resource.uri
            elif isinstance(item, types.ResourceLink):
                uri = item.uri
            blocks.append(
                ContextBlock(text=text, source=str(uri) if uri else source, metadata={"server": self.server})
            )
        return blocks[:top_k] if top_k else blocks

    def __repr__(self) -> str:
        modes = "+".join(m for m, on in (("passive", self.passive), ("active", self.active)) if on)
        what = f"search_tool={self.search_tool!r}" if self.search_tool else f"resources={self.resources!r}"
        return f"MCPContext({self.context_label!r}, {modes}, {what})"


def _toolkit(server: Any, timeout: float, env: dict[str, str] | None, cwd: Any) -> MCPTools:
    if isinstance(server, MCPTools):
        return server
    if isinstance(server, str) and server.startswith(("http://", "https://")):
        return MCPTools(url=server, timeout=timeout, env=env, cwd=cwd)
    if isinstance(server, (str, list, tuple)):
        return MCPTools(server, timeout=timeout, env=env, cwd=cwd)
    raise ConfigurationError(
        f"MCPContext needs an MCPTools, a command or an http(s):// URL, got {type(server).__name__}: {server!r:.60}"
    )


def _query_parameter(tool: types.Tool) -> str:
    """The parameter the query goes into: ``query`` if the tool has one, else its first
    required string parameter."""
    schema = tool.input_schema or {}
    props: dict[str, Any] = schema.get("properties", {})
    if "query" in props:
        return "query"
    for name in [*schema.get("required", []), *props]:
        if props.get(name, {}).get("type") == "string":
            return name
    raise MCPServerError(
        f"tool {tool.name!r} has no string parameter to send the query in; its schema is {schema}"
    )
