"""The leader's delegate tools: ``delegate_task_to_member(member_id, task)`` (coordinate and route
modes) and ``delegate_task_to_members(task)`` (broadcast mode), Agno's names, schemas and wording.

Each call opens a delegation site (``agentnb.delegation``) that runs the member turns; the tool
only says which members get which message, through the team it is built for.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol

from ..agent import Agent
from ..delegation.site import Assignment, Delegation, DelegationSite, site_of
from ..delegation.tools import check_failed
from ..errors import DelegationError
from ..tools import Tool
from ..tools.tool import DELEGATION


class Delegating(Protocol):
    """What a delegate tool needs of its team."""

    @property
    def members(self) -> Sequence[Agent]: ...

    def member(self, key: str) -> Agent: ...

    def delegation(self, member_key: Callable[[Any], str | None]) -> Delegation: ...

    def assignment(self, site: DelegationSite, member: Agent, task: str, tool: str) -> Assignment: ...


def member_tool(team: Delegating) -> Tool:
    """``delegate_task_to_member``: one member, by id, gets the task."""

    def delegate_task_to_member(member_id: str, task: str, _site: DelegationSite | None = None) -> str:
        site = site_of(_site, "delegate_task_to_member")
        member = team.member(member_id)
        (record,) = site.run_members([team.assignment(site, member, task, "delegate_task_to_member")])
        check_failed(record)
        return record.content or ""

    def member_of_call(tool_call: Any) -> str | None:
        # The member a call goes to (None: unknown, so it never runs beside another).
        try:
            member = team.member(tool_call.parsed_arguments()["member_id"])
        except (ValueError, KeyError, TypeError, DelegationError):
            return None
        return f"agent:{id(member)}"

    return Tool(
        name="delegate_task_to_member",
        description=(
            "Use this function to delegate a task to the selected team member. You must provide a clear "
            "and concise description of the task the member should achieve AND the expected output."
        ),
        parameters={
            "type": "object",
            "properties": {
                "member_id": {
                    "type": "string",
                    "description": (
                        "The ID of the member to delegate the task to. "
                        "Use only the ID of the member, for example `web-researcher`."
                    ),
                },
                "task": {
                    "type": "string",
                    "description": "A clear and concise description of the task the member should achieve.",
                },
            },
            "required": ["member_id", "task"],
        },
        function=delegate_task_to_member,
        injected={"_site": DELEGATION},
        delegation=team.delegation(member_of_call),
    )


def broadcast_tool(team: Delegating) -> Tool:
    """``delegate_task_to_members``: every member gets the task at once; their answers, labelled."""

    def delegate_task_to_members(task: str, _site: DelegationSite | None = None) -> str:
        site = site_of(_site, "delegate_task_to_members")
        records = site.run_members(
            [team.assignment(site, m, task, "delegate_task_to_members") for m in team.members]
        )
        parts = []
        for record in records:
            answer = (
                record.content
                if record.status == "ok"
                else f"Error: member {record.agent!r} failed: {record.error}"
            )
            parts.append(f"Agent {record.agent}: {answer}")
        return "\n\n".join(parts)

    return Tool(
        name="delegate_task_to_members",
        description="Use this function to delegate a task to all the member agents and return a response.",
        parameters={
            "type": "object",
            "properties": {
                "task": {
                    "type": "string",
                    "description": "A clear and concise description of the task to send to all the member agents.",
                }
            },
            "required": ["task"],
        },
        function=delegate_task_to_members,
        injected={"_site": DELEGATION},
        delegation=team.delegation(lambda call: None),
    )
