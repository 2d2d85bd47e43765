"""Agno's tools from functions, the @tool decorator and Toolkit, ported to agentnb.

Peer files (agno-agi/agno, libs/agno/tests/unit/): tools/test_functions.py (Function /
@tool cases), tools/test_toolkit.py, agent/test_agentic_state_schema.py. Where Agno reads a
Function's schema (``func.parameters``), the port reads the agentnb Tool's ``parameters``; where
Agno checks ``toolkit.functions`` for which tools a Toolkit offers, the port also checks what the
model is offered.
"""

from __future__ import annotations

from typing import Any

import pytest

from agentnb import Agent, RunContext, ScriptedModel, Tool, Toolkit, tool, tool_call
from agentnb.errors import ToolDefinitionError


def example_func(a: int, b: int) -> int:
    """Example function for testing."""
    return a + b


def another_func(x: str) -> str:
    """Another example function for testing."""
    return x.upper()


def third_func(y: float) -> float:
    """Third example function for testing."""
    return y * 2


def _offered(tools: list[Any]) -> list[str]:
    """The tool names the model is offered."""
    model = ScriptedModel(["ok"])
    Agent(model=model, tools=tools).run("hi")
    return [t["function"]["name"] for t in model.requests[0].tools]


def _call(tools: list[Any], name: str, **arguments: Any) -> str:
    """What the model gets back when it calls ``name``."""
    model = ScriptedModel([tool_call(name, **arguments), "ok"])
    Agent(model=model, tools=tools).run("go")
    return model.requests[1].messages[-1]["content"]


# tools/test_functions.py::test_decorator_instantiation
def test_decorator_instantiation() -> None:
    @tool
    def test_func(param1: str, param2: int = 42) -> str:
        """Test function with parameters."""
        return f"{param1}-{param2}"

    assert isinstance(test_func, Tool)
    assert test_func.name == "test_func"
    assert test_func.description == "Test function with parameters."
    assert test_func.parameters["properties"]["param1"]["type"] == "string"
    assert test_func.parameters["properties"]["param2"]["type"] == "integer"
    assert test_func.parameters["required"] == ["param1"]


# tools/test_functions.py::test_function_from_callable
def test_function_from_callable() -> None:
    def test_func(param1: str, param2: int = 42) -> str:
        """Test function with parameters.

        Args:
            param1: First parameter
            param2: Second parameter with default value
        """
        return f"{param1}-{param2}"

    made = Tool.from_function(test_func)
    assert made.name == "test_func"
    assert made.description == "Test function with parameters."
    props = made.parameters["properties"]
    assert (props["param1"]["type"], props["param1"]["description"]) == ("string", "First parameter")
    assert (props["param2"]["type"], props["param2"]["description"]) == (
        "integer",
        "Second parameter with default value",
    )
    assert made.parameters["required"] == ["param1"]


# tools/test_functions.py::test_tool_decorator_basic
def test_tool_decorator_basic() -> None:
    @tool
    def basic_func() -> str:
        """Basic test function."""
        return "test"

    assert basic_func.name == "basic_func"
    assert basic_func.description == "Basic test function."
    assert basic_func.parameters == {"type": "object", "properties": {}, "required": []}


# tools/test_functions.py::test_tool_decorator_with_config (name and description)
def test_tool_decorator_with_name_and_description() -> None:
    @tool(name="custom_name", description="Custom description")
    def configured_func() -> str:
        """Original docstring."""
        return "test"

    assert (configured_func.name, configured_func.description) == ("custom_name", "Custom description")
    assert _offered([configured_func]) == ["custom_name"]


# tools/test_functions.py::test_tool_decorator_with_config (instructions / add_instructions)
def test_tool_decorator_with_instructions() -> None:
    @tool(name="custom_name", instructions="Custom instructions", add_instructions=True)
    def configured_func() -> str:
        """Original docstring."""
        return "test"

    model = ScriptedModel(["ok"])
    Agent(model=model, tools=[configured_func]).run("hi")
    assert model.requests[0].messages[0]["content"] == "Custom instructions"


# tools/test_functions.py::test_tool_decorator_async
def test_tool_decorator_async() -> None:
    @tool
    async def async_func() -> str:
        """Async test function."""
        return "test"

    assert (async_func.name, async_func.description) == ("async_func", "Async test function.")
    assert _call([async_func], "async_func") == "test"


# tools/test_functions.py::test_tool_decorator_invalid_config
def test_tool_decorator_invalid_config() -> None:
    with pytest.raises(ValueError, match="Invalid tool configuration arguments"):

        @tool(invalid_arg=True)  # type: ignore[call-overload]
        def invalid_func() -> None:
            pass


# tools/test_functions.py::test_tool_decorator_with_agent_team_params
def test_tool_decorator_with_agent_team_params() -> None:
    @tool
    def agent_team_func(agent: Any, team: Any, param1: str) -> str:
        """Function with agent and team parameters."""
        return param1

    assert agent_team_func.parameters["properties"] == {"param1": {"type": "string"}}


# tools/test_functions.py::test_tool_decorator_with_agent_team_type_annotations
def test_tool_decorator_with_agent_type_annotation() -> None:
    @tool
    def func_with_agent_type(my_agent: Agent, query: str) -> str:
        """Function with Agent type but non-standard parameter name."""
        return query

    assert func_with_agent_type.parameters["properties"] == {"query": {"type": "string"}}


# tools/test_functions.py::test_tool_decorator_with_complex_types
def test_tool_decorator_with_complex_types() -> None:
    @tool
    def complex_types_func(param1: list[str], param2: dict[str, int], param3: bool | None = None) -> str:
        """Function with complex parameter types."""
        return "test"

    props = complex_types_func.parameters["properties"]
    assert props["param1"] == {"type": "array", "items": {"type": "string"}}
    assert props["param2"]["type"] == "object"
    assert props["param3"]["type"] == "boolean"
    assert complex_types_func.parameters["required"] == ["param1", "param2"]


# tools/test_functions.py::test_param_description_without_docstring_type
def test_param_description_without_docstring_type() -> None:
    def my_tool(currency_code: str, amount: float) -> dict:
        """Convert currency.

        Args:
            currency_code: The ISO currency code.
            amount: The amount to convert.
        """
        return {}

    props = Tool.from_function(my_tool).parameters["properties"]
    assert props["currency_code"]["description"] == "The ISO currency code."
    assert props["amount"]["description"] == "The amount to convert."


# tools/test_functions.py::test_param_description_with_docstring_type
def test_param_description_with_docstring_type() -> None:
    def my_tool(currency_code: str, amount: float) -> dict:
        """Convert currency.

        Args:
            currency_code (str): The ISO currency code.
            amount (float): The amount to convert.
        """
        return {}

    props = Tool.from_function(my_tool).parameters["properties"]
    assert props["currency_code"]["description"] == "(str) The ISO currency code."
    assert props["amount"]["description"] == "(float) The amount to convert."


# tools/test_functions.py::test_user_input_with_run_context_execution (run_context hidden and injected)
def test_run_context_is_hidden_and_injected() -> None:
    def send_email(run_context: RunContext, subject: str, body: str, to_address: str) -> str:
        """Send an email."""
        run_context.session_state["sent"] = run_context.session_state.get("sent", 0) + 1
        return f"Sent to {to_address}"

    assert list(Tool.from_function(send_email).parameters["properties"]) == ["subject", "body", "to_address"]
    model = ScriptedModel([tool_call("send_email", subject="Hi", body="Hello", to_address="a@b.com"), "ok"])
    result = Agent(model=model, tools=[send_email], session_state={"sent": 0}).run("go")
    assert model.requests[1].messages[-1]["content"] == "Sent to a@b.com"
    assert result.state == {"sent": 1}


# agent/test_agentic_state_schema.py::TestAgenticStateToolSchema (all five cases, on the tool the model gets)
def test_update_session_state_tool_schema() -> None:
    model = ScriptedModel(["ok"])
    Agent(name="Test", model=model, enable_agentic_state=True).run("hi")
    (spec,) = [
        t["function"] for t in model.requests[0].tools if t["function"]["name"] == "update_session_state"
    ]
    assert "session_state_updates" in spec["parameters"]["properties"]
    assert spec["parameters"]["required"] == ["session_state_updates"]
    assert "run_context" not in spec["parameters"]["properties"]
    assert spec["parameters"]["properties"]["session_state_updates"].get("additionalProperties") is not False
    assert len(spec["description"]) > 10


# tools/test_toolkit.py::test_toolkit_initialization
def test_toolkit_initialization() -> None:
    toolkit = Toolkit(name="empty_toolkit")
    assert toolkit.name == "empty_toolkit"
    assert toolkit.tools == []
    assert toolkit.instructions is None and toolkit.add_instructions is False
    assert len(toolkit.functions) == 0


# tools/test_toolkit.py::test_toolkit_with_tools_initialization
@pytest.mark.xfail(
    strict=True,
    reason="deliberate: Toolkit.tools holds the Tools the toolkit offers, as Agent.tools does (Agno: the callables given; both have Toolkit.functions)",
)
def test_toolkit_with_tools_initialization() -> None:
    toolkit = Toolkit(name="basic_toolkit", tools=[example_func])
    assert toolkit.tools == [example_func]
    assert list(toolkit.functions) == ["example_func"]


# agentnb's side of the difference above: Toolkit.tools are Tools (name, schema, the function
# given), the same objects as Toolkit.functions and what an agent offers
def test_toolkit_tools_are_the_tools_it_offers() -> None:
    toolkit = Toolkit(name="basic_toolkit", tools=[example_func])
    (made,) = toolkit.tools
    assert isinstance(made, Tool) and made.function is example_func
    assert toolkit.functions == {"example_func": made}
    assert Agent(model=ScriptedModel([]), tools=[toolkit]).tools == (made,)


# tools/test_toolkit.py::test_tool_registration
def test_tool_registration() -> None:
    toolkit = Toolkit(name="manual_toolkit")
    toolkit.register(example_func)
    assert list(toolkit.functions) == ["example_func"]
    toolkit.register(another_func)
    assert list(toolkit.functions) == ["example_func", "another_func"]


# tools/test_toolkit.py::test_custom_function_name
def test_custom_function_name() -> None:
    toolkit = Toolkit(name="custom_name_toolkit")
    toolkit.register(example_func, name="custom_add")
    assert _offered([toolkit]) == ["custom_add"]
    assert _call([toolkit], "custom_add", a=1, b=2) == "3"


# tools/test_toolkit.py::test_toolkit_with_instructions
def test_toolkit_with_instructions() -> None:
    toolkit = Toolkit(
        name="t", tools=[example_func], instructions="These are test instructions", add_instructions=True
    )
    assert (toolkit.instructions, toolkit.add_instructions) == ("These are test instructions", True)
    model = ScriptedModel(["ok"])
    Agent(model=model, tools=[toolkit]).run("hi")
    assert model.requests[0].messages[0]["content"] == "These are test instructions"


# tools/test_toolkit.py::test_include_tools
def test_include_tools() -> None:
    toolkit = Toolkit(
        name="t", tools=[example_func, another_func, third_func], include_tools=["example_func", "third_func"]
    )
    assert _offered([toolkit]) == ["example_func", "third_func"]


# tools/test_toolkit.py::test_exclude_tools
def test_exclude_tools() -> None:
    toolkit = Toolkit(
        name="t", tools=[example_func, another_func, third_func], exclude_tools=["another_func"]
    )
    assert _offered([toolkit]) == ["example_func", "third_func"]


# tools/test_toolkit.py::test_invalid_include_tools
def test_invalid_include_tools() -> None:
    with pytest.raises(ValueError, match="non_existent_func"):
        Toolkit(name="invalid_include", tools=[example_func], include_tools=["non_existent_func"])


# tools/test_toolkit.py::test_invalid_exclude_tools
def test_invalid_exclude_tools() -> None:
    with pytest.raises(ValueError, match="non_existent_func"):
        Toolkit(name="invalid_exclude", tools=[example_func], exclude_tools=["non_existent_func"])


# tools/test_toolkit.py::test_include_and_exclude_tools_interaction
def test_include_and_exclude_tools_interaction() -> None:
    toolkit = Toolkit(
        name="t",
        tools=[example_func, another_func, third_func],
        include_tools=["example_func", "another_func"],
        exclude_tools=["another_func"],
    )
    assert _offered([toolkit]) == ["example_func"]


# tools/test_toolkit.py::test_duplicate_tool_registration
def test_duplicate_tool_registration() -> None:
    toolkit = Toolkit(name="duplicate_toolkit")
    toolkit.register(example_func)
    toolkit.register(example_func)
    assert _offered([toolkit]) == ["example_func"]


# tools/test_toolkit.py::test_invalid_tool_name
def test_tool_name_with_a_hyphen() -> None:
    toolkit = Toolkit(name="invalid_name_toolkit")
    toolkit.register(example_func, name="invalid-name")
    assert _offered([toolkit]) == ["invalid-name"]


# tools/test_toolkit.py::test_auto_register_false
def test_auto_register_false() -> None:
    toolkit = Toolkit(name="no_auto_toolkit", tools=[example_func, another_func], auto_register=False)
    assert _offered([toolkit]) == []


# tools/test_toolkit.py::test_toolkit_with_none_instructions
def test_toolkit_with_none_instructions() -> None:
    toolkit = Toolkit(name="t", tools=[example_func], instructions=None, add_instructions=True)
    assert toolkit.instructions is None and toolkit.add_instructions is True
    model = ScriptedModel(["ok"])
    Agent(model=model, tools=[toolkit]).run("hi")
    assert model.requests[0].messages[0]["role"] == "user"


# tools/test_toolkit.py::test_default_tools_not_shared_between_instances
def test_default_tools_not_shared_between_instances() -> None:
    first, second = Toolkit(name="first"), Toolkit(name="second")
    assert first.tools is not second.tools
    assert first.tools == [] and second.tools == []


# tools/test_toolkit.py::test_subclass_mutating_self_tools_does_not_leak
def test_subclass_mutating_self_tools() -> None:
    class MutatingToolkit(Toolkit):
        def __init__(self, name: str) -> None:
            super().__init__(name=name)
            self.tools.append(self.extra_tool)

        def extra_tool(self) -> str:
            return "ok"

    first, second = MutatingToolkit(name="first"), MutatingToolkit(name="second")
    assert len(first.tools) == 1 and len(second.tools) == 1
    assert Toolkit(name="plain").tools == []


# tools/test_toolkit.py::test_explicit_tools_argument_preserved
@pytest.mark.xfail(
    strict=True,
    reason="deliberate: Toolkit.tools holds the Tools the toolkit offers, not the functions given (see test_toolkit_tools_are_the_tools_it_offers)",
)
def test_explicit_tools_argument_preserved() -> None:
    toolkit = Toolkit(name="explicit", tools=[example_func])
    assert example_func in toolkit.tools


class _Multiplier(Toolkit):
    def __init__(self) -> None:
        self.multiplier = 2
        self.base = 10
        self.value = 42
        super().__init__(
            name="test_toolkit",
            tools=[self.multiply, self.add_to_base, self.get_value, self.update_state, self.regular_method],
        )

    @tool()
    def multiply(self, x: int) -> int:
        """Multiply x by the multiplier."""
        return x * self.multiplier

    @tool()
    def add_to_base(self, x: int, y: int = 5) -> int:
        """Add x and y to the base value."""
        return self.base + x + y

    @tool()
    def get_value(self) -> int:
        """Get the stored value."""
        return self.value

    @tool()
    def update_state(self, key: str, value: str, run_context: RunContext) -> str:
        """Update session state via run_context."""
        run_context.session_state[key] = value
        return f"Set {key}={value}"

    def regular_method(self, x: int) -> int:
        """A regular method registered as tool."""
        return x * 3


# tools/test_toolkit.py::TestToolDecoratorOnClassMethods::test_tool_decorator_basic_registration
def test_tool_decorated_methods_are_registered() -> None:
    assert sorted(_offered([_Multiplier()])) == [
        "add_to_base",
        "get_value",
        "multiply",
        "regular_method",
        "update_state",
    ]


# tools/test_toolkit.py::TestToolDecoratorOnClassMethods::test_tool_decorator_self_binding
def test_tool_decorator_self_binding() -> None:
    assert _call([_Multiplier()], "get_value") == "42"


# tools/test_toolkit.py::TestToolDecoratorOnClassMethods::test_tool_decorator_with_parameters
def test_tool_decorator_with_parameters() -> None:
    toolkit = _Multiplier()
    (add_to_base,) = [t for t in toolkit.tools if t.name == "add_to_base"]
    assert list(add_to_base.parameters["properties"]) == ["x", "y"]
    assert _call([toolkit], "add_to_base", x=3, y=2) == "15"


# tools/test_toolkit.py::TestToolDecoratorOnClassMethods::test_tool_decorator_with_run_context
def test_tool_decorator_with_run_context() -> None:
    toolkit = _Multiplier()
    (update_state,) = [t for t in toolkit.tools if t.name == "update_state"]
    assert list(update_state.parameters["properties"]) == ["key", "value"]
    assert _call([toolkit], "update_state", key="k", value="v") == "Set k=v"


# tools/test_toolkit.py::TestToolDecoratorOnClassMethods::test_tool_decorator_mixed_with_regular_methods
def test_tool_decorator_mixed_with_regular_methods() -> None:
    toolkit = _Multiplier()
    assert _call([toolkit], "regular_method", x=2) == "6"
    assert _call([toolkit], "multiply", x=2) == "4"


# tools/test_toolkit.py::test_toolkit_repr
def test_toolkit_repr() -> None:
    text = repr(Toolkit(name="multi_func_toolkit", tools=[example_func, another_func, third_func]))
    assert "<Toolkit" in text and "name=multi_func_toolkit" in text and "functions=" in text
    for name in ("example_func", "another_func", "third_func"):
        assert name in text


# tools/test_toolkit.py::test_non_callable_tool_registration (Agno raises AttributeError; agentnb
# its own ToolDefinitionError, a ValueError that says what is wrong)
def test_a_non_callable_tool_is_rejected() -> None:
    with pytest.raises(ToolDefinitionError):
        Toolkit(name="non_callable_toolkit").register("not_a_function")  # type: ignore[arg-type]
