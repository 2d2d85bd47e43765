"""The tools that delegate: an agent as a tool (``Agent.as_tool``) and a handoff
(``transfer_to_<name>``). Both are tools whose call starts a child run (``agentnb.delegation``)."""

from __future__ import annotations

import copy
import hashlib
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import ConfigurationError, DelegationError, TeamDefinitionError
from ..events import PromptSection
from ..messages import Message
from ..run.prompt import PLACEHOLDER
from ..tools import Tool
from ..tools.tool import DELEGATION
from .handover import IGNORED, handoff_assignment, is_first_handoff
from .site import Assignment, Delegation, DelegationSite, site_of

_UNSAFE = re.compile(r"[^A-Za-z0-9_-]+")
MAX_TOOL_NAME = 64
"""The longest tool name the OpenAI API accepts (``^[a-zA-Z0-9_-]{1,64}$``)."""
_DIGEST = 8


def tool_name(name: str) -> str:
    """A name the model can call (letters, digits, ``_`` and ``-``, at most ``MAX_TOOL_NAME``)."""
    return fit_name(_callable(name))


def fit_name(name: str) -> str:
    """``name`` when it fits in ``MAX_TOOL_NAME`` characters; else its start and 8 hex digits of
    its SHA-256: the same name always gives the same tool name, and two long names that begin
    alike still differ."""
    if len(name) <= MAX_TOOL_NAME:
        return name
    digest = hashlib.sha256(name.encode("utf-8")).hexdigest()[:_DIGEST]
    return f"{name[: MAX_TOOL_NAME - _DIGEST - 1]}_{digest}"


def check_tool_name(name: str, option: str) -> str:
    """A tool name given explicitly (``option`` says where), refused when the API would refuse it."""
    if isinstance(name, str) and name and not _UNSAFE.search(name) and len(name) <= MAX_TOOL_NAME:
        return name
    shown = (
        f"{name[:60]!r}… ({len(name)} characters)" if isinstance(name, str) and len(name) > 60 else repr(name)
    )
    raise ConfigurationError(
        f"the tool name {shown} ({option}) cannot be used: a tool name is 1 to {MAX_TOOL_NAME} letters, "
        "digits, underscores and hyphens (the OpenAI API refuses anything else); give a shorter name"
    )


def _callable(name: str) -> str:
    return _UNSAFE.sub("_", name).strip("_") or "agent"


def member_id(name: str) -> str:
    """A member's id as the leader writes it (Agno: the name made URL-safe)."""
    return _UNSAFE.sub("-", name.strip().lower()).strip("-") or "member"


def task_sections(
    task: str, blocks: Sequence[tuple[str, str]], source: str
) -> tuple[str, tuple[PromptSection, ...]]:
    """The member's message: each (source, block) then the task, each part a section
    labelled with the option that produced it."""
    text, sections = "", []
    for block_source, block in blocks:
        if block:
            piece = f"{block}\n\n"
            sections.append(
                PromptSection(source=block_source, text=block, start=len(text), end=len(text) + len(block))
            )
            text += piece
    sections.append(PromptSection(source=source, text=task, start=len(text), end=len(text) + len(task)))
    return text + task, tuple(sections)


def check_failed(record: Any) -> None:
    """A member run that ended without an answer fails the delegate call (the child run stays
    in the record, adopted by the parent)."""
    if record.status != "ok":
        raise DelegationError(f"member {record.agent!r} failed: {record.error}")


def agent_tool(
    member: Any,
    name: str | None = None,
    description: str | None = None,
    *,
    state: str = "none",
    inputs_from_state: Mapping[str, str] | None = None,
    outputs_to_state: Mapping[str, Mapping[str, Any]] | None = None,
    memory: str = "per-call",
    requires_approval: bool | Callable[..., Any] = False,
) -> Tool:
    """``member`` as a tool with one parameter, ``task``: the parent keeps control and gets the
    member's answer as the result (see ``Agent.as_tool``)."""
    if not (hasattr(member, "_new_turn") and hasattr(member, "prompt")):
        raise ConfigurationError(f"as_tool needs an agent to wrap; got {type(member).__name__}: {member!r}")
    name = (
        check_tool_name(_callable(name), "as_tool(name=...)") if name is not None else tool_name(member.name)
    )
    delegation = Delegation(
        kind="as_tool",
        state=state,  # type: ignore[arg-type]  # a str, checked by Delegation
        inputs_from_state=dict(inputs_from_state or {}),
        outputs_to_state={k: dict(v) for k, v in (outputs_to_state or {}).items()},
        memory=memory,  # type: ignore[arg-type]  # a str, checked by Delegation
        member_key=lambda tool_call: f"agent:{id(member)}",  # one agent runs one call at a time
    )
    if state != "none" and (inputs_from_state or outputs_to_state):
        raise ConfigurationError(
            f"{name}: inputs_from_state / outputs_to_state map keys only with state='none' "
            f"(state={state!r} passes the whole state)"
        )

    variables = prompt_variables(member, delegation.inputs_from_state.values() if state == "none" else ())

    properties: dict[str, Any] = {
        "task": {
            "type": "string",
            "description": f"The task for {member.name}, with everything it needs to know.",
        }
    }
    properties.update({v: {"type": "string"} for v in variables})
    tool = Tool(
        name=name,
        description=description
        or member.prompt.description
        or member.prompt.role
        or f"Ask the agent {member.name!r} to do a task; it answers with text.",
        parameters={"type": "object", "properties": properties, "required": ["task", *variables]},
        function=_runs(member, name),
        injected={"_site": DELEGATION},
        delegation=delegation,
        member=member,
        requires_approval=requires_approval,
    )
    return tool


def _runs(member: Any, name: str) -> Callable[..., str]:
    """The function of the tool ``name`` that runs ``member`` (``agent_tool``)."""

    def run(task: str, _site: DelegationSite | None = None, **values: Any) -> str:
        text, sections = task_sections(task, (), f"task (as_tool {name})")
        (record,) = site_of(_site, f"the tool {name!r}").run_members(
            [Assignment(member, text, sections, label=task, state_values=values)]
        )
        check_failed(record)
        return record.content or ""

    return run


def with_member(tool: Tool, member: Any) -> Tool:
    """``tool`` (an agent as a tool: ``as_tool``) running ``member`` instead of its own agent,
    with the same name, schema and options (an evaluation runs each case on fresh copies of the
    agents a tool delegates to). Its delegation is shared: a call's key names the agent ``member``
    stands in for, which one tool of a run never mixes with another agent."""
    if tool.delegation is None or getattr(tool.delegation, "kind", None) != "as_tool":
        raise ConfigurationError(f"with_member takes an agent as a tool (as_tool); {tool.name!r} is not one")
    rebound = copy.copy(tool)
    rebound.function = _runs(member, tool.name)
    rebound.member = member
    return rebound


def prompt_variables(member: Any, mapped: Iterable[str]) -> list[str]:
    """``{placeholders}`` of the member's instructions that nothing fills: not its state, not a
    mapped key (Haystack's AgentTool asks the caller for each, as a string parameter)."""
    instructions = member.prompt.instructions
    texts = (
        [instructions]
        if isinstance(instructions, str)
        else list(instructions)
        if isinstance(instructions, (list, tuple))
        else []
    )
    taken = {*member.state.data, *mapped, *member.dependencies, "task"}
    found = [m.group(1) for text in texts if isinstance(text, str) for m in PLACEHOLDER.finditer(text)]
    return [v for v in dict.fromkeys(found) if v not in taken]


@dataclass(frozen=True)
class Handoff:
    """A handoff to ``agent`` (OpenAI's ``handoff(agent, input_filter=...)``)."""

    agent: Any
    """The agent that takes over."""
    input_filter: Callable[[list[Message]], Sequence[Message]] | None = None
    """Given the conversation before the user's message, returns what the new agent receives
    (default: all of it, as OpenAI)."""
    tool_name_override: str | None = None
    """The tool's name (default ``transfer_to_<name>``)."""
    tool_description_override: str | None = None
    """The tool's description."""

    @property
    def tool_name(self) -> str:
        """What the model calls to hand off."""
        return self.tool_name_override or fit_name(f"transfer_to_{_callable(self.agent.name).lower()}")


def handoff(
    agent: Any,
    *,
    input_filter: Callable[[list[Message]], Sequence[Message]] | None = None,
    tool_name_override: str | None = None,
    tool_description_override: str | None = None,
) -> Handoff:
    """A handoff with options (OpenAI's ``handoff()``); ``Agent(handoffs=[agent])`` takes plain agents too."""
    if input_filter is not None and not callable(input_filter):
        raise ConfigurationError(
            f"input_filter must be a function (messages) -> messages; got {input_filter!r}"
        )
    if tool_name_override is not None:
        check_tool_name(tool_name_override, "handoff(tool_name_override=...)")
    return Handoff(agent, input_filter, tool_name_override, tool_description_override)


def as_handoff(item: Any) -> Handoff:
    """A handoff from an agent or a Handoff."""
    if isinstance(item, Handoff):
        return item
    if hasattr(item, "_new_turn") and hasattr(item, "name"):
        return Handoff(item)
    raise ConfigurationError(
        f"handoffs=[...] takes agents or handoff(agent, ...); got {type(item).__name__}: {item!r}"
    )


def check_handoffs(owner: str, specs: Sequence[Handoff]) -> None:
    """Two handoffs may not derive one tool name (OpenAI refuses it the same way)."""
    seen: dict[str, Handoff] = {}
    for spec in specs:
        other = seen.get(spec.tool_name)
        if other is not None:
            raise TeamDefinitionError(
                f"agent {owner!r}: handoffs to {other.agent.name!r} and {spec.agent.name!r} both make the tool "
                f"`{spec.tool_name}`; give one handoff(agent, tool_name_override=...)"
            )
        seen[spec.tool_name] = spec


def handoff_tool(owner: Any, spec: Handoff) -> Tool:
    """``transfer_to_<name>``: the target answers the user's message for the rest of the turn,
    and stays in charge of ``owner`` for the next turns (until handed back or reset)."""
    target = spec.agent

    def transfer(_site: DelegationSite | None = None) -> str:
        site = site_of(_site, f"the handoff {spec.tool_name!r}")
        handoffs = {h.tool_name for h in owner.handoffs}
        if not is_first_handoff(site.ctx.messages, site.tool_call_id, handoffs):
            return IGNORED  # OpenAI's rule: the first handoff of a response is taken, alone
        if target.name in site.parent.path:  # handing back to an agent that is running
            target.in_charge = None
            target._handed_back = True  # the handoff that is running must not take over again
            return f"Control goes back to {target.name} from the next message."
        assignment = handoff_assignment(site, target, spec.tool_name, spec.input_filter, handoffs)
        (record,) = site.run_members([assignment])
        check_failed(record)
        return record.content or ""

    def taken_over(ctx: Any, assignment: Assignment, record: Any) -> None:
        if getattr(owner, "_handed_back", False):
            owner._handed_back = False
        elif record.status == "ok":
            owner.in_charge = target

    description = f"Handoff to the {target.name} agent to handle the request. " + (
        target.prompt.description or target.prompt.role or ""
    )
    return Tool(
        name=spec.tool_name,
        description=spec.tool_description_override or description.strip(),
        parameters={"type": "object", "properties": {}},
        function=transfer,
        injected={"_site": DELEGATION},
        delegation=Delegation(
            kind="handoff", state="live", memory="member", respond_directly=True, on_answer=taken_over
        ),
        member=target,
    )


__all__ = [
    "MAX_TOOL_NAME",
    "Handoff",
    "agent_tool",
    "as_handoff",
    "check_handoffs",
    "handoff",
    "prompt_variables",
    "handoff_tool",
    "member_id",
    "task_sections",
    "fit_name",
    "tool_name",
    "with_member",
]
