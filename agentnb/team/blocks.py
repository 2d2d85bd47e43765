"""The text a team adds to prompts: how the leader responds in each mode, and the context blocks
a member's task may open with (Agno's wording)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

HOW_TO_RESPOND = {
    "coordinate": (
        "You lead a team in coordinate mode. When a request needs a member's expertise, hand each part to the "
        "member best suited with `delegate_task_to_member`, giving a clear, self-contained task; then combine "
        "their answers into your reply. Answer simple requests yourself."
    ),
    "route": (
        "You lead a team in route mode. Send the request to the single member best suited with "
        "`delegate_task_to_member`; that member's answer goes to the user as it is."
    ),
    "broadcast": (
        "You lead a team in broadcast mode. Send the request to every member at once with "
        "`delegate_task_to_members`; then combine their answers into your reply."
    ),
}
"""The leader's instructions for each mode (``<how_to_respond>``)."""


def user_message(messages: Sequence[Any]) -> str:
    """The user's message of the run delegating."""
    return next((m.text for m in reversed(messages) if m.role == "user"), "")


def interactions_block(interactions: Iterable[tuple[str, str, str]]) -> str:
    """``<member_interaction_context>``: this run's earlier delegations, (member, task, answer)."""
    items = list(interactions)
    if not items:
        return ""
    text = "<member_interaction_context>\nSee below interactions with other team members.\n"
    for member, task, answer in items:
        text += f"Member: {member}\nTask: {task}\nResponse: {answer}\n\n"
    return text + "</member_interaction_context>"


def history_block(turns: Sequence[Any]) -> str:
    """``<team_history_context>``: the team's last finished turns, as members see them."""
    if not turns:
        return ""
    lines = ["<team_history_context>"]
    for i, turn in enumerate(turns, 1):
        lines += [f"[run-{i}]", f"input: {turn.message}", f"response: {turn.content}", ""]
    lines.append("</team_history_context>")
    return "\n".join(lines)
