"""Team: a leader agent whose tools delegate to member agents (Agno's ``Team``).

A Team is configuration over agents: the leader is an ``Agent`` whose system prompt opens with a
``<team_members>`` block and whose tools are ``delegate_task_to_member(member_id, task)`` (or
``delegate_task_to_members(task)`` in broadcast mode). Each delegation is a child run
(``agentnb.delegation``); members run on a copy of the team's state by default. Agno's names and
defaults are kept so Agno team code ports by changing imports (``tasks`` mode is not supported).
"""

from __future__ import annotations

import copy
import weakref
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from ..agent import Agent
from ..delegation.site import Assignment, Delegation, DelegationSite, user_attachments
from ..delegation.tools import member_id, task_sections
from ..errors import DelegationError, TeamDefinitionError
from ..models.tokens import count_sections, counter_for
from ..tools import Tool
from ..tools.run_context import RunContext
from .blocks import HOW_TO_RESPOND, history_block, interactions_block, user_message
from .delegates import broadcast_tool, member_tool
from .options import team_mode


class Team(Agent):
    """A leader agent and its members (agents or teams). ``mode``: ``coordinate`` (the leader
    delegates and answers), ``route`` (the chosen member's answer is the team's) or ``broadcast``
    (every member gets the task at once)."""

    tree_words = ("team", "member")

    def __init__(
        self,
        *positional: Any,
        name: str | None = None,
        members: Sequence[Any] | None = None,
        model: Any = None,
        mode: str | None = None,
        respond_directly: bool | None = None,
        delegate_to_all_members: bool | None = None,
        share_member_interactions: bool = False,
        add_team_history_to_members: bool = False,
        num_team_history_runs: int = 3,
        add_member_tools_to_context: bool = False,
        determine_input_for_members: bool = True,
        member_state: str = "copy",
        **agent_options: Any,
    ) -> None:
        # Team("name", [members], model) as agentnb's Agent; Team([members], name=...) as Agno's.
        for value in positional:
            if isinstance(value, str) and name is None:
                name = value
            elif isinstance(value, (list, tuple)) and members is None:
                members = value
            elif model is None and not isinstance(value, (str, list, tuple)):
                model = value
            else:
                raise TeamDefinitionError(
                    f"Team() got {value!r} twice or in the wrong place: Team(name, members=[...], model=...)"
                )
        self.members: list[Agent] = list(members or [])
        _check_members(name or "team", self.members)
        self._mode = team_mode(name or "team", mode, respond_directly, delegate_to_all_members)
        self.share_member_interactions = bool(share_member_interactions)
        """Members see the earlier delegations of this run (``<member_interaction_context>``)."""
        self.add_team_history_to_members = bool(add_team_history_to_members)
        """Members see the team's last runs (``<team_history_context>``)."""
        self.num_team_history_runs = int(num_team_history_runs)
        self.add_member_tools_to_context = bool(add_member_tools_to_context)
        self.determine_input_for_members = bool(determine_input_for_members)
        """False: members get the user's message as it is, not the leader's task (Agno)."""
        self.member_state = member_state
        """How the team's state reaches members: copy (Agno), live or none."""
        self._interactions: dict[str, list[tuple[str, str, str]]] = {}
        self._delegate_tools: dict[bool, Tool] = {}
        super().__init__(name or "team", model, **agent_options)
        self._made.options.update(
            members=self.members,
            mode=mode,
            respond_directly=respond_directly,
            delegate_to_all_members=delegate_to_all_members,
            share_member_interactions=share_member_interactions,
            add_team_history_to_members=add_team_history_to_members,
            num_team_history_runs=num_team_history_runs,
            add_member_tools_to_context=add_member_tools_to_context,
            determine_input_for_members=determine_input_for_members,
            member_state=member_state,
        )
        self._made.options.pop("agent_options", None)
        self._made.options.update(agent_options)

    # -- members ------------------------------------------------------------------------------

    @property
    def mode(self) -> str:
        """coordinate, route or broadcast: as given, or as Agno's flags say (``respond_directly``:
        route, ``delegate_to_all_members``: broadcast); the flags read and write it."""
        return self._mode

    @mode.setter
    def mode(self, value: str) -> None:
        self._mode = team_mode(self.name, value, None, None)

    @property
    def respond_directly(self) -> bool:
        """The member's answer is the team's (route mode)."""
        return self.mode == "route"

    @respond_directly.setter
    def respond_directly(self, value: bool) -> None:
        self.mode = "route" if value else "coordinate" if self.mode == "route" else self.mode

    @property
    def delegate_to_all_members(self) -> bool:
        """Every member gets each task at once (broadcast mode)."""
        return self.mode == "broadcast"

    @delegate_to_all_members.setter
    def delegate_to_all_members(self, value: bool) -> None:
        self.mode = "broadcast" if value else "coordinate" if self.mode == "broadcast" else self.mode

    def member(self, key: str) -> Agent:
        """The member with this id or name (``team.member("researcher")``)."""
        for member in self.members:
            if key in (member.name, member_id(member.name)):
                return member
        raise DelegationError(
            f"team {self.name!r} has no member {key!r}; "
            f"members: {', '.join(member_id(m.name) for m in self.members) or '(none)'}"
        )

    def find(self, path: str | Sequence[str]) -> Agent:
        """A member at any depth: ``team.find("sub/researcher")``."""
        parts = path.split("/") if isinstance(path, str) else list(path)
        agent: Agent = self
        for part in parts:
            if not isinstance(agent, Team):
                raise DelegationError(f"{agent.name!r} is an agent, not a team; it has no member {part!r}")
            agent = agent.member(part)
        return agent

    def observe_member(self, path: str | Sequence[str], task: str) -> Any:
        """What the member at ``path`` (``"researcher"``, ``"sub/researcher"``) would receive if
        the team delegated ``task`` to it now — its prompt rendered from its view of the team's
        current state, the task with the blocks the team adds — without calling any model."""
        parts = path.split("/") if isinstance(path, str) else list(path)
        team: Team = self
        view = copy.deepcopy(dict(self.state.data))
        for i, part in enumerate(parts):
            member = team.member(part)
            private = copy.deepcopy(dict(member.state.data))
            schema = member.state.schema if member.state.has_schema else None
            given = (
                {k: v for k, v in view.items() if schema is None or k in schema}
                if team.member_state != "none"
                else {}
            )
            view = {**private, **given}
            if i < len(parts) - 1:
                if not isinstance(member, Team):
                    raise DelegationError(
                        f"{member.name!r} is an agent, not a team; it has no member {parts[i + 1]!r}"
                    )
                team = member
        blocks = (
            [("add_team_history_to_members", team._history_block(""))]
            if team.add_team_history_to_members
            else []
        )
        text, sections = task_sections(task, blocks, "task (delegate_task_to_member)")
        with member._running():
            own = thaw_copy(member.state.data)
            member.state.replace_data(view)
            try:
                observation = member.observe(text)
            finally:
                member.state.replace_data(own)
                member.state.frozen(consume=True)
        observation.user_sections = sections
        if observation.tokens is not None:  # what the team adds, counted as in a run (tokens.py)
            observation.tokens = replace(
                observation.tokens, user_sections=count_sections(counter_for(member.model), sections)
            )
        return observation

    def all_tools(self) -> list[Tool]:
        tools = super().all_tools()
        taken = {t.name for t in tools}
        # Built once per kind: a tool's schema is compiled when it is made.
        broadcast = self.delegate_to_all_members
        tool = self._delegate_tools.get(broadcast)
        if tool is None:
            tool = self._delegate_tools[broadcast] = broadcast_tool(self) if broadcast else member_tool(self)
        return tools if tool.name in taken else [*tools, tool]

    def leading_sections(self, ctx: RunContext) -> list[tuple[str, str]]:
        """The ``<team_members>`` block and how to respond in this mode."""
        return [
            ("team_members", f"<team_members>\n{self._members_block(0)}</team_members>\n\n"),
            ("team_mode", f"<how_to_respond>\n{HOW_TO_RESPOND[self.mode]}\n</how_to_respond>\n\n"),
        ]

    def _members_block(self, indent: int) -> str:
        pad, text = " " * indent, ""
        for member in self.members:
            if isinstance(member, Team):
                text += f'{pad}<member id="{member_id(member.name)}" name="{member.name}" type="team">\n'
                if member.prompt.description:
                    text += f"{pad}  Description: {member.prompt.description}\n"
                text += member._members_block(indent + 2)
            else:
                text += f'{pad}<member id="{member_id(member.name)}" name="{member.name}">\n'
                if member.prompt.role:
                    text += f"{pad}  Role: {member.prompt.role}\n"
                if member.prompt.description:
                    text += f"{pad}  Description: {member.prompt.description}\n"
                names = [t.name for t in member.all_tools()]
                if self.add_member_tools_to_context and names:
                    text += f"{pad}  Tools: {', '.join(names)}\n"
            text += f"{pad}</member>\n"
        return text

    # -- delegate tools -------------------------------------------------------------------------

    def delegation(self, member_key: Callable[[Any], str | None]) -> Delegation:
        """How a delegate tool's members run: the team's state mode, Agno's ``respond_directly``."""
        return Delegation(
            kind="team",
            state=self.member_state,  # type: ignore[arg-type]  # a str, checked by Delegation
            memory=None,
            respond_directly=self.respond_directly,
            member_key=member_key,
            on_answer=self._remember,
        )

    def assignment(self, site: DelegationSite, member: Agent, task: str, tool: str) -> Assignment:
        """The member's message: the interaction and history blocks (by Agno's options), then the task."""
        source = f"task ({tool})"
        if not self.determine_input_for_members:
            task, source = (
                user_message(site.ctx.messages),
                "user message (determine_input_for_members=False)",
            )
        blocks: list[tuple[str, str]] = []
        if self.share_member_interactions:
            blocks.append(
                (
                    "share_member_interactions",
                    interactions_block(self._interactions.get(site.parent.run_id, [])),
                )
            )
        if self.add_team_history_to_members:
            # A member team is given its own history, an agent the team's (Agno).
            history = (
                member._history_block("")
                if isinstance(member, Team)
                else self._history_block(site.parent.run_id)
            )
            blocks.append(("add_team_history_to_members", history))
        text, sections = task_sections(task, blocks, source)
        return Assignment(member, text, sections, label=task, attachments=user_attachments(site.ctx.messages))

    def _remember(self, ctx: RunContext, assignment: Assignment, record: Any) -> None:
        answer = record.content if record.status == "ok" else f"(failed: {record.error})"
        self._interactions.setdefault(ctx.run_id, []).append(
            (assignment.member.name, assignment.label, answer or "")
        )

    def _history_block(self, running: str) -> str:
        """The team's last finished turns other than ``running``, as members see them."""
        if not self.num_team_history_runs:
            return ""
        done = [t for t in self.history if t.run_id != running and t.status == "ok"]
        return history_block(done[-self.num_team_history_runs :])

    # -- the whole tree: sessions, recordings, reset, fork -------------------------------------

    def delegates(self) -> list[Agent]:
        """The members, then the agents the leader's own tools and handoffs delegate to."""
        return [*self.members, *super().delegates()]

    def replace_delegates(self, swap: Mapping[int, Any]) -> None:
        super().replace_delegates(swap)
        self.members = [swap.get(id(m), m) for m in self.members]

    def detach_session(self) -> None:
        super().detach_session()
        for member in self.members:
            member.detach_session()

    def reset(self) -> None:
        """The team and every member back to their definitions: no turns, no conversation."""
        super().reset()
        for member in self.members:
            member.reset()
        self._interactions.clear()

    def _forked(self, name: str, turn: int | None) -> Team:
        """A new team with forked members, as the tree is now or as it was at the end of the
        team's turn ``turn``: each member keeps the runs it made up to there. (``fork`` records
        it, when this team is recorded, as one tree: the members with it.)"""
        upto = self.history[: turn if turn is not None else len(self.history)]
        ran = {r.run_id for t in upto for r in t.walk()}
        members = []
        for member in self.members:
            kept = sum(1 for t in member.history if t.run_id in ran)
            members.append(
                member._forked(member.name, kept)
                if kept
                else member._forked(member.name, None)
                if turn is None
                else _fresh(member)
            )
        forked = self.definition.build(name, members=members)
        forked.model = self.model
        forked._parent = weakref.ref(self)
        forked.restore(self.snapshot() if turn is None else self.snapshot_at(turn))
        forked.forked_at = len(forked.history)
        return forked

    def __repr__(self) -> str:
        members = ", ".join(m.name for m in self.members)
        return (
            f"Team({self.name!r}, mode={self.mode}, members=[{members}], model={self.model.label}, "
            f"turns={len(self.history)})"
        )


def thaw_copy(data: Mapping[str, Any]) -> dict[str, Any]:
    """A plain deep copy of a state's data."""
    return copy.deepcopy(dict(data))


def _fresh(member: Agent) -> Agent:
    """A member as defined, with no runs (a fork from before its first run)."""
    fresh = member._forked(member.name, None)
    fresh.reset()
    return fresh


def _check_members(name: str, members: Sequence[Any], seen: tuple[str, ...] = ()) -> None:
    """Members are agents with distinct names, and no team contains itself."""
    ids: dict[str, str] = {}
    for member in members:
        if not isinstance(member, Agent):
            raise TeamDefinitionError(
                f"team {name!r}: members must be agents or teams; got {type(member).__name__}: {member!r}"
            )
        key = member_id(member.name)
        if key in ids:
            raise TeamDefinitionError(
                f"team {name!r}: member {member.name!r} is named twice; give each member its own name"
            )
        ids[key] = member.name
        if member.name == name or member.name in seen:
            raise TeamDefinitionError(
                f"team {name!r}: {' ▸ '.join((*seen, name, member.name))} is a cycle; a team cannot contain itself"
            )
        if isinstance(member, Team):
            _check_members(member.name, member.members, (*seen, name))


__all__ = ["Team"]
