"""System prompt assembly: Agno's order and strings, templates, provenance."""

from __future__ import annotations

from agentnb import Agent, ScriptedModel
from agentnb.run.prompt import PromptOptions, render_system_prompt, resolve_template


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

    agent = Agent(
        model=ScriptedModel(["ok"]), dependencies={"robot_name": broken}, instructions="Name: {robot_name}"
    )
    try:
        agent.run("hi")
    except Exception as exc:  # AgentRunError, with the turn kept
        assert "no name today" in str(exc)
    else:
        raise AssertionError("the run should fail")
    assert agent.history[-1].status == "failed" and "no name today" in agent.history[-1].error
    assert agent.dependencies["robot_name"] is broken  # the agent's definition is untouched


def test_hidden_keys_stay_in_state_for_tools_but_out_of_the_prompt():
    seen = {}

    def check_key(session_state) -> str:
        """Look at the key."""
        seen["api_key"] = session_state["api_key"]
        return "ok"

    from agentnb import tool_call

    agent = Agent(
        "shop",
        ScriptedModel([tool_call("check_key"), "Done."]),
        instructions="Items: {items}. Key: {api_key}.",
        session_state={"items": ["milk"], "api_key": "sk-secret", "secret_token": "t0k", "budget": 3},
        add_session_state_to_context=True,
        hide_state_keys=["api_key", "secret_*"],
        tools=[check_key],
    )
    turn = agent.run("go").turn
    system = turn.system_prompt
    assert system == (
        "Items: ['milk']. Key: {api_key}.\n\n\n<session_state>\n{'items': ['milk'], 'budget': 3}\n</session_state>"
    )
    assert "sk-secret" not in str(agent.model.requests) and "t0k" not in str(agent.model.requests)
    assert seen == {"api_key": "sk-secret"}  # the tool still reads it
    assert turn.prompt.hidden_keys == ("api_key", "secret_token")
    assert turn.prompt.notes == (
        "{api_key}: left as written, state key 'api_key' is hidden from the model (hide_state_keys)",
    )


def test_a_hidden_key_does_not_fill_the_user_message_and_dependencies_still_do():
    agent = Agent(
        "shop",
        instructions="Region {region}.",
        session_state={"region": "state-region"},
        dependencies={"region": "from-dependencies"},
        hide_state_keys="region",
    )
    obs = agent.observe("Ship to {region}")
    assert obs.system_prompt == "Region from-dependencies."
    assert obs.user_prompt == "Ship to from-dependencies"
    assert obs.template_map.filled == (("region", "dependencies"),)


def test_hide_state_keys_can_change_and_bad_values_say_what_to_pass():
    agent = Agent("shop", instructions="{a} {b}", session_state={"a": 1, "b": 2})
    agent.hide_state_keys = ["b"]
    assert agent.observe("x").system_prompt == "1 {b}"
    assert agent.prompt.hide_state_keys == ("b",)
    import pytest

    from agentnb.errors import ConfigurationError

    with pytest.raises(ConfigurationError, match="each entry is a state key name or a glob pattern"):
        Agent("bad", hide_state_keys=["ok", ""])
    with pytest.raises(
        ConfigurationError, match="must be a list of state key names or glob patterns, got int"
    ):
        agent.hide_state_keys = 3


def test_the_template_map_lists_filled_unresolved_unused_and_hidden_keys():
    agent = Agent(
        "shop",
        instructions="List {items}; budget {budget}; note {missing}.",
        session_state={"items": [], "budget": 5, "notes": "x", "greeting": "hi", "token": "t"},
        hide_state_keys=["token"],
    )
    obs = agent.observe("{greeting}!")
    tmap = obs.template_map
    assert tmap.filled == (("items", "session_state"), ("budget", "session_state"))
    assert tmap.unresolved == ("missing",)
    assert tmap.unused_keys == ("notes",)  # greeting filled the user message
    assert tmap.hidden_keys == ("token",)
    assert str(tmap) == (
        "{items} ← session_state.items\n{budget} ← session_state.budget\n{missing} unresolved (left as written)\n"
        "state keys used by no placeholder or block: notes\nstate keys hidden from the model: token"
    )


def test_with_the_state_block_every_visible_key_is_used():
    agent = Agent(
        "shop", session_state={"a": 1, "b": 2}, add_session_state_to_context=True, hide_state_keys=["b"]
    )
    obs = agent.observe("x")
    assert (obs.unused_keys, obs.hidden_keys) == ((), ("b",))
    turn = (
        Agent("shop", ScriptedModel(["ok"]), instructions="{a}", session_state={"a": 1, "c": 3}).run("x").turn
    )
    assert turn.prompt.unused_keys == ("c",)
