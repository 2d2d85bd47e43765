"""A small shop agent the evaluation tests share (tools, hooks, a scripted model that follows the message)."""

from __future__ import annotations

from typing import Any

from agentnb import Agent, ScriptedModel, tool_call


def add_item(item: str, session_state: dict) -> str:
    """Add an item to the shopping list."""
    if item == "boom":
        raise ValueError("the shelf fell over")
    session_state.setdefault("items", []).append(item)
    return f"added {item}"


def guard(function_name: str, function_call: Any, arguments: dict) -> Any:
    """Refuses sweets without calling the tool."""
    if arguments.get("item") == "candy":
        return "no sweets"
    return function_call(**arguments)


def follow(request: Any) -> Any:
    """Add the item the user names, then say so (``fail`` ends with no tool call)."""
    message = request.last_user_message or ""
    if request.tool_results():
        return f"Done: {request.tool_results()[-1]['content']}"
    if message == "fail":
        return "I will not."
    return tool_call("add_item", item=message)


def shop(model: Any = None, **options: Any) -> Agent:
    """The shop agent (a scripted model following the message unless ``model`` is given)."""
    return Agent(
        "shop",
        model=model or ScriptedModel(follow),
        tools=[add_item],
        tool_hooks=[guard],
        session_state={"items": [], "budget": 10},
        instructions="You keep a shopping list.",
        **options,
    )


def describe_parts(request: Any) -> str:
    """Say what the user's message holds: its text, and each image's pixel size and hash (a
    scripted model that answers from the parts it was sent, picklable for worker processes)."""
    said = []
    for part in request.last_user_parts:
        if part.kind == "text":
            said.append(part.text)
        elif part.kind == "image":
            said.append(f"a {part.width}x{part.height} image {part.sha256[:8]}")
        else:
            said.append(f"a file {part.label} of {part.size} bytes")
    return "; ".join(said)
