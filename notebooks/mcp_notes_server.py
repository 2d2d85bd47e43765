"""A small MCP server for notebooks/06_mcp.ipynb: a few notes as resources and a search tool.

``python mcp_notes_server.py`` speaks MCP over stdin/stdout (the notebook starts it with
``--mcp``); it is built with the official SDK's server class.
"""

from __future__ import annotations

from mcp.server.mcpserver import MCPServer

NOTES = {
    "notes://kettle": "The kettle is in the left cupboard, above the mugs.",
    "notes://office": "The office opens at nine on weekdays and at ten on Saturdays.",
    "notes://wifi": "The guest wifi password is written on the fridge door.",
}

app = MCPServer("notes", instructions="House notes: where things are and when places open.")


def _register(uri: str, text: str) -> None:
    @app.resource(uri, name=uri.removeprefix("notes://"), mime_type="text/plain")
    def read() -> str:
        return text


for _uri, _text in NOTES.items():
    _register(_uri, _text)


@app.tool()
def search_notes(query: str) -> str:
    """Find the house notes that mention any word of the query."""
    words = {w.strip("?.,!").lower() for w in query.split()}
    found = [text for text in NOTES.values() if words & {w.strip(".,").lower() for w in text.split()}]
    return "\n".join(found) or "no note matches"


if __name__ == "__main__":
    app.run("stdio")
