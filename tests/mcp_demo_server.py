"""A small MCP server for the tests, built with the SDK's own server class.

``python mcp_demo_server.py stdio`` speaks MCP over stdin/stdout;
``python mcp_demo_server.py http [PORT]`` serves streamable HTTP on 127.0.0.1 (PORT 0 or none:
a free one) and prints the port on its first line of stdout once it listens.
"""

from __future__ import annotations

import os
import socket
import sys

import anyio
import mcp_types as types
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

NOTES = {
    "notes://alpha": "Alpha: the kettle is in the left cupboard.",
    "notes://beta": "Beta: the office opens at nine on weekdays.",
    "notes://gamma": "Gamma: the wifi password is on the fridge.",
}

app = MCPServer("demo", instructions="A demo server for agentnb's tests.")


@app.tool()
def add(a: int, b: int) -> int:
    """Add two whole numbers."""
    return a + b


@app.tool(name="word-count")
def word_count(text: str) -> str:
    """Count the words of a text."""
    return f"{len(text.split())} words"


@app.tool()
def pid() -> int:
    """The server's process id."""
    return os.getpid()


@app.tool()
def fail(reason: str) -> str:
    """Always fails, with the given reason."""
    raise ToolError(reason)


@app.tool()
def crash() -> str:
    """Ends the server process in the middle of the call."""
    sys.stderr.write("demo server: crashing on purpose\n")
    sys.stderr.flush()
    os._exit(3)


@app.tool()
async def hang(seconds: float = 60.0) -> str:
    """Sleeps, then answers."""
    await anyio.sleep(seconds)
    return "awake"


@app.tool()
def picture() -> list[types.ContentBlock]:
    """A caption and a tiny image."""
    return [
        types.TextContent(type="text", text="a red dot"),
        types.ImageContent(type="image", data="iVBORw0KGgo=", mime_type="image/png"),
    ]


@app.tool()
def search_notes(query: str) -> list[types.ContentBlock]:
    """Notes that mention a word of the query, as embedded resources."""
    words = {w.lower().strip("?.,") for w in query.split()}
    return [
        types.EmbeddedResource(
            type="resource",
            resource=types.TextResourceContents(uri=uri, text=text, mime_type="text/plain"),
        )
        for uri, text in NOTES.items()
        if words & {w.lower().strip(":.,") for w in text.split()}
    ]


def _note(uri: str):  # type: ignore[no-untyped-def]
    def read() -> str:
        return NOTES[uri]

    return read


for _uri in NOTES:
    app.resource(_uri, name=_uri.split("//")[1], mime_type="text/plain")(_note(_uri))


@app.resource("blobs://logo", name="logo", mime_type="image/png")
def logo() -> bytes:
    return b"\x89PNG\r\n\x1a\n" + bytes(24)


def serve_http(port: int) -> None:
    import uvicorn

    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    sock.listen()
    print(sock.getsockname()[1], flush=True)
    server = uvicorn.Server(uvicorn.Config(app.streamable_http_app(), log_level="critical"))
    anyio.run(lambda: server.serve(sockets=[sock]))


if __name__ == "__main__":
    if sys.argv[1:2] == ["stdio"]:
        print(f"demo server: pid {os.getpid()}", file=sys.stderr, flush=True)
        app.run("stdio")
    elif sys.argv[1:2] == ["http"]:
        serve_http(int(sys.argv[2]) if len(sys.argv) > 2 else 0)
    else:
        sys.exit("usage: mcp_demo_server.py stdio | http [PORT]")
