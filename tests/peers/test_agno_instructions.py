"""Agno's instructions, system message, dependencies and datetime options, ported to agentnb.

Peer files (agno-agi/agno, libs/agno/tests/): integration/agent/test_instructions.py,
integration/agent/test_dependencies.py, unit/agent/test_dependencies_merge.py,
unit/agent/test_datetime_format.py. Cases marked "differential" pin what agno 3.1.10's
``get_system_message`` (libs/agno/agno/agent/_messages.py) produces, run side by side with the
same options: Agno has no unit test of its own for that formatting.
"""

from __future__ import annotations

import asyncio
import re

from agentnb import Agent, RunContext, ScriptedModel, Toolkit


def _system(agent: Agent, message: str = "hi", **run_kwargs: object) -> tuple[str, str]:
    """Run one turn on a scripted model; the system and user messages the model received."""
    model = agent.model
    assert isinstance(model, ScriptedModel)
    agent.run(message, **run_kwargs)  # type: ignore[arg-type]
    messages = model.requests[-1].messages
    return messages[0]["content"], messages[-1]["content"]


def _agent(**options: object) -> Agent:
    return Agent(model=ScriptedModel(["ok"] * 3), **options)  # type: ignore[arg-type]


# integration/agent/test_instructions.py::test_callable_instructions
def test_callable_instructions_taking_agent_and_team() -> None:
    seen = {}

    def instructions(agent: Agent, team: object) -> str:
        seen["args"] = (agent, team)
        return "You are a helpful assistant."

    agent = _agent(instructions=instructions)
    assert _system(agent)[0] == "You are a helpful assistant."
    assert seen["args"] == (agent, None)


# integration/agent/test_instructions.py::test_async_callable_instructions
def test_async_callable_instructions() -> None:
    async def instructions(agent: Agent) -> str:
        return "You are a helpful assistant."

    model = ScriptedModel(["ok"])
    agent = Agent(model=model, instructions=instructions)
    asyncio.run(agent.arun("Hello"))
    assert model.requests[0].messages[0] == {"role": "system", "content": "You are a helpful assistant."}


# integration/agent/test_instructions.py::test_callable_system_message
def test_callable_system_message() -> None:
    def system_message(agent: Agent, team: object) -> str:
        return f"You are {agent.name}, a helpful assistant."

    agent = _agent(name="Friday", system_message=system_message)
    assert _system(agent)[0] == "You are Friday, a helpful assistant."


# integration/agent/test_instructions.py::test_async_callable_system_message
def test_async_callable_system_message() -> None:
    async def system_message(agent: Agent) -> str:
        return "You are a helpful assistant with {x}."

    model = ScriptedModel(["ok"])
    agent = Agent(model=model, system_message=system_message, session_state={"x": 1})
    asyncio.run(agent.arun("Hello"))
    assert model.requests[0].messages[0]["content"] == "You are a helpful assistant with 1."


# integration/agent/test_dependencies.py::test_dependencies
def test_dependencies_fill_system_and_user_message() -> None:
    agent = _agent(
        dependencies={"robot_name": "Anna"},
        instructions="If you are asked to write a story about a robot, always name the robot {robot_name}",
    )
    system, user = _system(agent, "Tell me a 5 second short story about a robot named {robot_name}")
    assert system == "If you are asked to write a story about a robot, always name the robot Anna"
    assert user == "Tell me a 5 second short story about a robot named Anna"


# integration/agent/test_dependencies.py::test_dependencies_function
def test_dependencies_function_is_called() -> None:
    def get_robot_name() -> str:
        return "Anna"

    agent = _agent(
        dependencies={"robot_name": get_robot_name}, instructions="Always name the robot {robot_name}"
    )
    system, user = _system(agent, "A robot named {robot_name}")
    assert (system, user) == ("Always name the robot Anna", "A robot named Anna")


# integration/agent/test_dependencies.py::test_dependencies_async
def test_dependencies_async() -> None:
    model = ScriptedModel(["ok"])
    agent = Agent(
        model=model, dependencies={"robot_name": "Anna"}, instructions="Always name the robot {robot_name}"
    )
    asyncio.run(agent.arun("A robot named {robot_name}"))
    assert [m["content"] for m in model.requests[0].messages] == [
        "Always name the robot Anna",
        "A robot named Anna",
    ]


# integration/agent/test_dependencies.py::test_dependencies_function_async
def test_dependencies_async_function_is_awaited() -> None:
    async def get_robot_name() -> str:
        return "Anna"

    model = ScriptedModel(["ok"])
    agent = Agent(
        model=model,
        dependencies={"robot_name": get_robot_name},
        instructions="Always name the robot {robot_name}",
    )
    asyncio.run(agent.arun("A robot named {robot_name}"))
    assert [m["content"] for m in model.requests[0].messages] == [
        "Always name the robot Anna",
        "A robot named Anna",
    ]


# integration/agent/test_dependencies.py::test_dependencies_on_run
def test_dependencies_on_run() -> None:
    agent = _agent(instructions="Always name the robot {robot_name}")
    system, user = _system(agent, "A robot named {robot_name}", dependencies={"robot_name": "Anna"})
    assert (system, user) == ("Always name the robot Anna", "A robot named Anna")


# integration/agent/test_dependencies.py::test_dependencies_mixed
def test_dependencies_on_run_override_the_agents() -> None:
    agent = _agent(dependencies={"robot_name": "Johnny"}, instructions="Always name the robot {robot_name}")
    system, user = _system(agent, "A robot named {robot_name}", dependencies={"robot_name": "Anna"})
    assert (system, user) == ("Always name the robot Anna", "A robot named Anna")


# integration/agent/test_dependencies.py::test_dependencies_resolve_in_context_false
def test_dependencies_resolve_in_context_false() -> None:
    agent = _agent(
        dependencies={"robot_name": "Johnny"},
        instructions="Always name the robot {robot_name}",
        resolve_in_context=False,
    )
    system, user = _system(agent, "A robot named {robot_name}")
    assert (system, user) == ("Always name the robot {robot_name}", "A robot named {robot_name}")


# integration/agent/test_dependencies.py::test_add_dependencies_to_context
def test_add_dependencies_to_context() -> None:
    agent = _agent(dependencies={"robot_name": "Johnny"}, add_dependencies_to_context=True, markdown=True)
    _, user = _system(agent, "Tell me a story.")
    assert (
        user
        == 'Tell me a story.\n\n<additional context>\n{\n  "robot_name": "Johnny"\n}\n</additional context>'
    )


# integration/agent/test_dependencies.py::test_dependencies_function_with_run_context
def test_dependencies_function_with_run_context() -> None:
    def get_robot_name(run_context: RunContext) -> str:
        return f"Anna-{run_context.run_id[:8]}"

    model = ScriptedModel(["ok"])
    agent = Agent(
        model=model,
        dependencies={"robot_name": get_robot_name},
        instructions="Always name the robot {robot_name}",
    )
    result = agent.run("A robot named {robot_name}")
    assert result.turn is not None
    name = f"Anna-{result.turn.run_id[:8]}"
    assert [m["content"] for m in model.requests[0].messages] == [
        f"Always name the robot {name}",
        f"A robot named {name}",
    ]


# unit/agent/test_dependencies_merge.py::TestRunDependenciesMerge::test_agent_template_var_survives_callsite_runtime_keys
def test_agent_dependency_survives_call_site_keys() -> None:
    agent = _agent(dependencies={"x": "RESOLVED"}, instructions="X={x}")
    assert "X=RESOLVED" in _system(agent, dependencies={"channel": "C123"})[0]


# unit/agent/test_dependencies_merge.py::TestRunDependenciesMerge::test_callsite_key_also_available_for_substitution
def test_call_site_dependency_available_for_substitution() -> None:
    agent = _agent(dependencies={"x": "RESOLVED"}, instructions="X={x} Z={z}")
    assert "X=RESOLVED Z=1" in _system(agent, dependencies={"z": "1"})[0]


# unit/agent/test_dependencies_merge.py::TestRunDependenciesMerge::test_callsite_key_overrides_agent_key_on_conflict
def test_call_site_dependency_overrides_the_agents() -> None:
    agent = _agent(dependencies={"x": "agent"}, instructions="X={x}")
    assert "X=call" in _system(agent, dependencies={"x": "call"})[0]


# unit/agent/test_dependencies_merge.py::TestRunDependenciesMerge::test_resolver_callable_merges_with_callsite
def test_resolver_callable_merges_with_call_site() -> None:
    def resolve_x() -> str:
        return "RESOLVED"

    agent = _agent(dependencies={"x": resolve_x}, instructions="X={x} Z={z}")
    assert "X=RESOLVED Z=1" in _system(agent, dependencies={"z": "1"})[0]


# unit/agent/test_dependencies_merge.py::TestArunDependenciesMerge::test_callsite_key_overrides_agent_key_on_conflict
def test_call_site_dependency_overrides_the_agents_async() -> None:
    model = ScriptedModel(["ok"])
    agent = Agent(model=model, dependencies={"x": "agent"}, instructions="X={x}")
    asyncio.run(agent.arun("hi", dependencies={"x": "call"}))
    assert model.requests[0].messages[0]["content"] == "X=call"


# unit/agent/test_datetime_format.py::test_default_datetime_format_is_none / test_custom_datetime_format_stored
def test_datetime_format_stored() -> None:
    assert Agent(model=ScriptedModel([])).datetime_format is None
    assert (
        Agent(model=ScriptedModel([]), datetime_format="%Y-%m-%d %H:%M:%S").datetime_format
        == "%Y-%m-%d %H:%M:%S"
    )


# unit/agent/test_datetime_format.py::test_default_format_includes_full_datetime
def test_default_format_includes_full_datetime() -> None:
    system, _ = _system(_agent(add_datetime_to_context=True))
    assert re.fullmatch(
        r"<additional_information>\n- The current time is \d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}(\.\d{6})?\.\n</additional_information>",
        system,
    )


# unit/agent/test_datetime_format.py::test_custom_date_only_format
def test_custom_date_only_format() -> None:
    system, _ = _system(_agent(add_datetime_to_context=True, datetime_format="%Y-%m-%d"))
    assert re.search(r"The current time is \d{4}-\d{2}-\d{2}\.", system)


# unit/agent/test_datetime_format.py::test_custom_format_slash_style
def test_custom_format_slash_style() -> None:
    system, _ = _system(_agent(add_datetime_to_context=True, datetime_format="%d/%m/%Y %H:%M"))
    assert re.search(r"The current time is \d{2}/\d{2}/\d{4} \d{2}:\d{2}\.", system)


# unit/agent/test_datetime_format.py::test_no_datetime_when_disabled
def test_no_datetime_when_disabled() -> None:
    model = ScriptedModel(["ok"])
    Agent(model=model, description="Helper", add_datetime_to_context=False).run("hi")
    assert "current time" not in model.requests[0].messages[0]["content"]


# differential: get_system_message, a list of instructions then another section
def test_instruction_list_is_stripped_and_followed_by_a_blank_line() -> None:
    system, _ = _system(_agent(instructions=["a", " b ", "c"], markdown=True))
    assert system == (
        "- a\n- b\n- c\n\n<additional_information>\n- Use markdown to format your answers.\n</additional_information>"
    )


# differential: get_system_message -> render_instructions, a multi-line instruction among short ones
def test_multi_line_instruction_is_kept_as_a_block() -> None:
    system, _ = _system(_agent(instructions=["one line", "multi\nline", "x"]))
    assert system == "- one line\n\nmulti\nline\n\n- x"


# differential: get_system_message, a single instruction string
def test_single_instruction_is_followed_by_a_blank_line() -> None:
    system, _ = _system(_agent(instructions="single", markdown=True))
    assert (
        system
        == "single\n\n<additional_information>\n- Use markdown to format your answers.\n</additional_information>"
    )


# differential: get_system_message, use_instruction_tags with a list and with one instruction
def test_instruction_tags() -> None:
    assert (
        _system(_agent(instructions=["a", "b"], use_instruction_tags=True))[0]
        == "<instructions>\n- a\n- b\n</instructions>"
    )
    assert (
        _system(_agent(instructions="a", use_instruction_tags=True))[0]
        == "<instructions>\na\n</instructions>"
    )


# differential: get_system_message, every section in Agno's order (the session_state block
# without Agno 3's current_session_id / current_run_id keys: seed 000 has none)
def test_sections_in_agnos_order() -> None:
    agent = _agent(
        description="D",
        role="R",
        instructions=["a", "b"],
        expected_output=" E ",
        additional_context="AC",
        add_name_to_context=True,
        name="N",
        markdown=True,
        session_state={"k": 1},
        add_session_state_to_context=True,
    )
    assert _system(agent)[0] == (
        "D\n\n<your_role>\nR\n</your_role>\n\n- a\n- b\n\n<additional_information>\n"
        "- Use markdown to format your answers.\n- Your name is: N.\n</additional_information>\n\n"
        "<expected_output>\nE\n</expected_output>\n\nAC\n\n<session_state>\n{'k': 1}\n</session_state>"
    )


# differential: get_system_message, system_message overrides everything, placeholders filled
def test_system_message_overrides_and_is_template_filled() -> None:
    agent = _agent(
        system_message="S {k} {unknown}",
        session_state={"k": 1},
        add_session_state_to_context=True,
        instructions="ignored",
    )
    assert _system(agent)[0] == "S 1 {unknown}"


# differential: get_system_message with resolve_in_context=False keeps placeholders, state block last
def test_resolve_in_context_false_keeps_placeholders() -> None:
    agent = _agent(
        instructions="I {a}",
        session_state={"a": 1},
        add_session_state_to_context=True,
        resolve_in_context=False,
    )
    assert _system(agent)[0] == "I {a}\n\n\n<session_state>\n{'a': 1}\n</session_state>"


class _TK(Toolkit):
    def __init__(self) -> None:
        super().__init__(name="tk", tools=[self.f1, self.f2], instructions="TK INSTR", add_instructions=True)

    def f1(self, x: int) -> int:
        """F1."""
        return x

    def f2(self, x: int) -> int:
        """F2."""
        return x


# differential: get_system_message 3.3.5, a Toolkit's instructions (two tools)
def test_toolkit_instructions_appear_once() -> None:
    assert _system(_agent(tools=[_TK()], instructions="I"))[0] == "I\n\nTK INSTR"


# differential: a placeholder-free literal JSON block in instructions survives, unknown names stay
def test_json_braces_and_unknown_placeholders_survive() -> None:
    agent = _agent(
        instructions='Hello {name} {missing} ```json {"a": {"b": 1}}```', session_state={"name": "Al"}
    )
    assert _system(agent)[0] == 'Hello Al {missing} ```json {"a": {"b": 1}}```'
