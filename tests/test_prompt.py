"""System prompt assembly: Agno's order and strings, templates, provenance."""

from __future__ import annotations

from agentnb import Agent, ScriptedModel
from agentnb.prompt import PromptOptions, render_system_prompt, resolve_template


def test_agno_order_and_strings():
    agent = Agent(
        name="shop",
        description="You are a shop assistant.",
        instructions=["Be brief.", "Use the list: {items}"],
        markdown=True,
        add_name_to_context=True,
        expected_output="A list.",
        additional_context="Opening hours: 9-5.",
        session_state={"items": ["milk"]},
        add_session_state_to_context=True,
    )
    obs = agent.observe("hi")
    assert obs.system_prompt == (
        "You are a shop assistant.\n"
        "- Be brief.\n"
        "- Use the list: ['milk']\n\n"
        "<additional_information>\n"
        "- Use markdown to format your answers.\n"
        "- Your name is: shop.\n"
        "</additional_information>\n\n"
        "<expected_output>\nA list.\n</expected_output>\n\n"
        "Opening hours: 9-5.\n\n"
        "<session_state>\n{'items': ['milk']}\n</session_state>"
    )
    assert [s.source for s in obs.sections] == [
        "description",
        "instructions",
        "markdown",
        "add_name_to_context",
        "expected_output",
        "additional_context",
        "session_state",
    ]
    for section in obs.sections:
        assert obs.system_prompt[section.start : section.end] == section.text
    assert obs.sections[-1].text == "\n<session_state>\n{'items': ['milk']}\n</session_state>"


def test_single_instruction_and_instruction_tags():
    assert Agent(instructions="Do X.").observe("q").system_prompt == "Do X."
    tagged = Agent(instructions=["A", "B"], use_instruction_tags=True).observe("q").system_prompt
    assert tagged == "<instructions>\n- A\n- B\n</instructions>"


def test_system_message_overrides_everything_and_is_not_stripped():
    agent = Agent(
        system_message="  Custom {who}  ",
        instructions="ignored",
        session_state={"who": "me"},
        add_session_state_to_context=True,
    )
    obs = agent.observe("q")
    assert obs.system_prompt == "  Custom me  "
    assert [s.source for s in obs.sections] == ["system_message"]
    assert any("system_message overrides" in n for n in obs.notes)


def test_templates_replace_known_keys_only_and_keep_dollars_and_braces():
    text = 'Hi {name}, cost $price {unknown} {{name}} {"json": {"a": 1}} ${name}'
    out, found = resolve_template(text, [("session_state", {"name": "Ann", "price": 3})])
    assert out == 'Hi Ann, cost $price {unknown} {{name}} {"json": {"a": 1}} $Ann'
    assert [(p.name, p.resolved, p.source) for p in found] == [
        ("name", True, "session_state"),
        ("unknown", False, None),
        ("name", True, "session_state"),
    ]
    assert out[found[0].start : found[0].end] == "Ann"
    assert out[found[1].start : found[1].end] == "{unknown}"


def test_state_wins_over_dependencies_and_placeholders_point_into_the_prompt():
    agent = Agent(
        instructions="User {user} in {city}; missing {nope}.",
        session_state={"user": "Ann"},
        dependencies={"user": "Bob", "city": "Oslo"},
    )
    obs = agent.observe("q")
    assert obs.system_prompt == "User Ann in Oslo; missing {nope}."
    placeholders = obs.sections[0].placeholders
    assert [(p.name, p.source, p.value) for p in placeholders] == [
        ("user", "session_state", "Ann"),
        ("city", "dependencies", "Oslo"),
        ("nope", None, None),
    ]
    for p in placeholders:
        assert obs.system_prompt[p.start : p.end] == (p.value or "{nope}")


def test_resolve_in_context_false_leaves_templates():
    agent = Agent(instructions="Hi {user}", session_state={"user": "Ann"}, resolve_in_context=False)
    assert agent.observe("q").system_prompt == "Hi {user}"


def test_callable_instructions_receive_state():
    def instructions(session_state):
        return [f"User is {session_state['user']}", "Be kind"]

    agent = Agent(instructions=instructions, session_state={"user": "Ann"})
    assert agent.observe("q").system_prompt == "- User is Ann\n- Be kind"


def test_empty_prompt_sends_no_system_message_and_observe_never_calls_the_model():
    model = ScriptedModel([])
    obs = Agent(model=model).observe("hello")
    system_prompt, user_prompt, messages = obs
    assert system_prompt == "" and user_prompt == "hello"
    assert messages == [{"role": "user", "content": "hello"}]
    assert obs.request == {"model": "scripted", "messages": messages}
    assert model.requests == []


def test_render_is_deterministic_for_no_options():
    rendered = render_system_prompt(PromptOptions())
    assert rendered.text == "" and rendered.sections == ()


def test_a_failing_callable_dependency_fails_the_turn_with_a_record():
    def broken() -> str:
        raise RuntimeError("no name today")

    agent = Agent(model=ScriptedModel(["ok"]), dependencies={"robot_name": broken}, instructions="Name: {robot_name}")
    try:
        agent.run("hi")
    except Exception as exc:  # AgentRunError, with the turn kept
        assert "no name today" in str(exc)
    else:
        raise AssertionError("the run should fail")
    assert agent.history[-1].status == "failed" and "no name today" in agent.history[-1].error
    assert agent.dependencies["robot_name"] is broken  # the agent's definition is untouched
