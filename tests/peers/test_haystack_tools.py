"""Haystack's ``Tool`` and ``create_tool_from_function`` / ``@tool``, ported to agentnb.

Peer files (deepset-ai/haystack): test/tools/test_tool.py, test/tools/test_from_function.py.
Haystack's ``create_tool_from_function(fn)`` is ``agentnb.tools.create_tool_from_function``, which
applies Haystack's rules. Cases where those rules and Agno's agree use ``Tool.from_function`` /
``@tool``, which apply Agno's (seed 001: an untyped parameter is a string; ``Optional[X]`` is shown
as ``X``); the cases where they differ (an untyped parameter, ``Optional[X]``) use
``create_tool_from_function``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, Literal

import jsonschema
import pytest
from pydantic import BaseModel

from agentnb import Agent, ScriptedModel, State, Tool, tool, tool_call
from agentnb.errors import ToolDefinitionError
from agentnb.tools import create_tool_from_function


def get_weather_report(city: str) -> str:
    return f"Weather report for {city}: 20°C, sunny"


PARAMETERS = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}


def _weather(**kwargs: Any) -> Tool:
    return Tool(
        name="weather",
        description="Get weather report",
        parameters=PARAMETERS,
        function=get_weather_report,
        **kwargs,
    )


# test_tool.py::TestTool::test_init
def test_init() -> None:
    made = _weather()
    assert (made.name, made.description, made.parameters, made.function) == (
        "weather",
        "Get weather report",
        PARAMETERS,
        get_weather_report,
    )
    assert made.inputs_from_state is None
    assert made.outputs_to_state is None


# test_tool.py::TestTool::test_init_invalid_parameters
def test_init_invalid_parameters() -> None:
    with pytest.raises(ValueError):
        Tool(
            name="irrelevant",
            description="irrelevant",
            parameters={"type": "invalid", "properties": {"city": {"type": "string"}}},
            function=get_weather_report,
        )


# test_tool.py::TestTool::test_init_invalid_output_structure
@pytest.mark.parametrize(
    "outputs_to_state",
    [
        pytest.param({"documents": {"source": get_weather_report}}, id="source-not-a-string"),
        pytest.param({"documents": {"handler": "some_string", "source": "docs"}}, id="handler-not-callable"),
    ],
)
def test_init_invalid_output_structure(outputs_to_state: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        Tool(
            name="irrelevant",
            description="irrelevant",
            parameters={"type": "object", "properties": {"city": {"type": "string"}}},
            function=get_weather_report,
            outputs_to_state=outputs_to_state,
        )


# test_tool.py::TestTool::test_init_invalid_output_structure_config_not_dict
def test_init_invalid_output_structure_config_not_dict() -> None:
    with pytest.raises(TypeError):
        Tool(
            name="irrelevant",
            description="irrelevant",
            parameters={"type": "object", "properties": {"city": {"type": "string"}}},
            function=get_weather_report,
            outputs_to_state={"documents": ["some_value"]},
        )  # type: ignore[dict-item]


# test_tool.py::TestTool::test_tool_spec
def test_tool_spec() -> None:
    assert _weather().tool_spec == {
        "name": "weather",
        "description": "Get weather report",
        "parameters": PARAMETERS,
    }


# test_tool.py::TestTool::test_invoke
def test_invoke() -> None:
    assert _weather().invoke(city="Berlin") == "Weather report for Berlin: 20°C, sunny"


# test_tool.py::TestTool::test_invoke_fail
def test_invoke_fail() -> None:
    with pytest.raises(Exception, match=r"Failed to invoke Tool `weather` with parameters \{\}"):
        _weather().invoke()


# test_tool.py::TestTool::test_inputs_from_state_validation_with_invalid_parameter
def test_inputs_from_state_validation_with_invalid_parameter() -> None:
    with pytest.raises(ValueError, match="unknown parameter 'nonexistent'"):
        _weather(inputs_from_state={"state_key": "nonexistent"})


# test_tool.py::TestTool::test_inputs_from_state_validation_with_non_string_value
def test_inputs_from_state_validation_with_non_string_value() -> None:
    with pytest.raises(TypeError, match="inputs_from_state values must be str, not dict"):
        _weather(inputs_from_state={"state_key": {"source": "city"}})  # type: ignore[dict-item]


# test_tool.py::TestTool::test_inputs_from_state_validation_with_valid_parameter
def test_inputs_from_state_validation_with_valid_parameter() -> None:
    assert _weather(inputs_from_state={"location": "city"}).inputs_from_state == {"location": "city"}


# test_tool.py::TestTool::test_outputs_to_state_no_validation_when_get_valid_outputs_returns_none
def test_outputs_to_state_source_is_not_checked_against_outputs() -> None:
    assert _weather(outputs_to_state={"result": {"source": "nonexistent"}}).outputs_to_state == {
        "result": {"source": "nonexistent"}
    }


# test_tool.py::test_check_duplicate_tool_names
def test_duplicate_tool_names() -> None:
    other = Tool(
        name="weather",
        description="A different description",
        parameters=PARAMETERS,
        function=get_weather_report,
    )
    with pytest.raises(ValueError, match="weather"):
        Agent(model=ScriptedModel([]), tools=[_weather(), other])
    renamed = Tool(
        name="weather2", description="Get weather report", parameters=PARAMETERS, function=get_weather_report
    )
    assert [t.name for t in Agent(model=ScriptedModel([]), tools=[_weather(), renamed]).tools] == [
        "weather",
        "weather2",
    ]


def function_with_docstring(city: str) -> str:
    """Get weather report for a city."""
    return f"Weather report for {city}: 20°C, sunny"


# test_from_function.py::test_from_function_description_from_docstring
def test_from_function_description_from_docstring() -> None:
    made = Tool.from_function(function_with_docstring)
    assert (made.name, made.description) == ("function_with_docstring", "Get weather report for a city.")
    assert made.parameters == PARAMETERS
    assert made.function is function_with_docstring


# test_from_function.py::test_from_function_with_empty_description
def test_from_function_with_empty_description() -> None:
    made = Tool.from_function(function_with_docstring, description="")
    assert made.description == ""
    assert made.parameters == PARAMETERS


# test_from_function.py::test_from_function_with_custom_description
def test_from_function_with_custom_description() -> None:
    assert (
        Tool.from_function(function_with_docstring, description="custom description").description
        == "custom description"
    )


# test_from_function.py::test_from_function_with_custom_name
def test_from_function_with_custom_name() -> None:
    made = Tool.from_function(function_with_docstring, name="custom_name")
    assert (made.name, made.description, made.parameters) == (
        "custom_name",
        "Get weather report for a city.",
        PARAMETERS,
    )


# test_from_function.py::test_from_function_annotated
def test_from_function_annotated() -> None:
    def function_with_annotations(
        city: Annotated[str, "the city for which to get the weather"] = "Munich",
        unit: Annotated[Literal["Celsius", "Fahrenheit"], "the unit for the temperature"] = "Celsius",
        nullable_param: Annotated[str | None, "a nullable parameter"] = None,
    ) -> str:
        """A simple function to get the current weather for a location."""
        return f"Weather report for {city}: 20 {unit}, sunny"

    made = create_tool_from_function(function_with_annotations)
    assert made.description == "A simple function to get the current weather for a location."
    assert made.parameters == {
        "type": "object",
        "properties": {
            "city": {
                "type": "string",
                "description": "the city for which to get the weather",
                "default": "Munich",
            },
            "unit": {
                "type": "string",
                "enum": ["Celsius", "Fahrenheit"],
                "description": "the unit for the temperature",
                "default": "Celsius",
            },
            "nullable_param": {
                "anyOf": [{"type": "string"}, {"type": "null"}],
                "description": "a nullable parameter",
                "default": None,
            },
        },
    }


# test_from_function.py::test_from_function_missing_type_hint
def test_from_function_missing_type_hint() -> None:
    def function_missing_type_hint(city) -> str:  # type: ignore[no-untyped-def]
        return f"Weather report for {city}: 20°C, sunny"

    with pytest.raises(ValueError):
        create_tool_from_function(function_missing_type_hint)


# test_from_function.py::test_from_function_schema_generation_error (Haystack's SchemaGenerationError;
# agentnb's ToolDefinitionError says which hint could not be resolved)
def test_from_function_schema_generation_error() -> None:
    def function_with_invalid_type_hint(city: invalid) -> str:  # type: ignore[name-defined] # noqa: F821
        return f"Weather report for {city}: 20°C, sunny"

    with pytest.raises(ToolDefinitionError, match="invalid"):
        Tool.from_function(function_with_invalid_type_hint)


# test_from_function.py::test_from_function_with_callable_params_skipped
def test_from_function_with_callable_params_skipped() -> None:
    def function_with_callback(query: str, callback: Callable[[str], None] | None = None) -> str:
        """A function with a callable parameter."""
        return query

    assert list(Tool.from_function(function_with_callback).parameters["properties"]) == ["query"]


# test_from_function.py::test_from_function_state_param_excluded_from_schema
def test_from_function_state_param_excluded_from_schema() -> None:
    def function_with_state(city: str, state: State) -> str:
        """Get weather for a city, with access to agent state."""
        return f"Weather in {city}: sunny"

    assert Tool.from_function(function_with_state).parameters == PARAMETERS


# test_from_function.py::test_tool_decorator_state_param_excluded_from_schema
def test_tool_decorator_state_param_excluded_from_schema() -> None:
    @tool
    def function_with_state(city: str, state: State) -> str:
        """Get weather for a city, with access to agent state."""
        return f"Weather in {city}: sunny"

    assert list(function_with_state.parameters["properties"]) == ["city"]


# test_from_function.py::test_from_function_optional_state_param_excluded_from_schema
def test_from_function_optional_state_param_excluded_from_schema() -> None:
    def function_with_optional_state(city: str, state: State | None = None) -> str:
        """Get weather for a city, optionally using agent state."""
        return f"Weather in {city}: sunny"

    assert list(Tool.from_function(function_with_optional_state).parameters["properties"]) == ["city"]


# test_from_function.py::test_tool_decorator
def test_tool_decorator() -> None:
    @tool
    def get_weather(city: str) -> str:
        """Get weather report for a city."""
        return f"Weather report for {city}: 20°C, sunny"

    assert (get_weather.name, get_weather.description) == ("get_weather", "Get weather report for a city.")
    assert get_weather.parameters == PARAMETERS
    assert get_weather.function("Berlin") == "Weather report for Berlin: 20°C, sunny"


# test_from_function.py::test_tool_decorator_with_annotated_params
def test_tool_decorator_with_annotated_params() -> None:
    @tool
    def get_weather(
        city: Annotated[str, "The target city"] = "Berlin",
        output_format: Annotated[Literal["short", "long"], "Output format"] = "short",
    ) -> str:
        """Get weather report for a city."""
        return f"Weather report for {city} ({output_format} format): 20°C, sunny"

    assert get_weather.parameters == {
        "type": "object",
        "properties": {
            "city": {"type": "string", "description": "The target city", "default": "Berlin"},
            "output_format": {
                "type": "string",
                "enum": ["short", "long"],
                "description": "Output format",
                "default": "short",
            },
        },
    }
    assert get_weather.function("Berlin", "short") == "Weather report for Berlin (short format): 20°C, sunny"


# test_from_function.py::test_tool_decorator_with_parameters
def test_tool_decorator_with_parameters() -> None:
    @tool(name="fetch_weather", description="A tool to check the weather.")
    def get_weather(city: Annotated[str, "The target city"] = "Berlin") -> str:
        """Get weather report for a city."""
        return f"Weather report for {city}: 20°C, sunny"

    assert (get_weather.name, get_weather.description) == ("fetch_weather", "A tool to check the weather.")


# test_from_function.py::test_tool_decorator_with_inputs_and_outputs
def test_tool_decorator_with_inputs_and_outputs() -> None:
    @tool(
        inputs_from_state={"output_format": "output_format"},
        outputs_to_state={"output": {"source": "output"}},
    )
    def get_weather(
        city: Annotated[str, "The target city"] = "Berlin",
        output_format: Annotated[Literal["short", "long"], "Output format"] = "short",
    ) -> str:
        """Get weather report for a city."""
        return f"Weather report for {city} ({output_format} format): 20°C, sunny"

    assert get_weather.inputs_from_state == {"output_format": "output_format"}
    assert get_weather.outputs_to_state == {"output": {"source": "output"}}
    assert get_weather.parameters == {
        "type": "object",
        "properties": {"city": {"type": "string", "description": "The target city", "default": "Berlin"}},
    }


# test_from_function.py::test_from_function_with_parameter_named_properties
def test_from_function_with_parameter_named_properties() -> None:
    def set_properties(
        entity_id: Annotated[str, "the entity to update"],
        properties: Annotated[dict, "the properties to set"],
    ) -> str:
        """Set properties on an entity."""
        return f"Set {properties} on {entity_id}"

    assert Tool.from_function(set_properties).parameters == {
        "type": "object",
        "properties": {
            "entity_id": {"type": "string", "description": "the entity to update"},
            "properties": {
                "type": "object",
                "additionalProperties": True,
                "description": "the properties to set",
            },
        },
        "required": ["entity_id", "properties"],
    }


class title(BaseModel):  # noqa: N801 - the name a $defs entry gets, as in Haystack's case
    text: str


class Report(BaseModel):
    heading: title
    body: str


def make_report(report: Report) -> str:
    """Create a report."""
    return "ok"


# test_from_function.py::test_from_function_with_nested_model_named_title
def test_from_function_with_nested_model_named_title() -> None:
    made = Tool.from_function(make_report)
    assert "title" in made.parameters["$defs"]
    jsonschema.Draft202012Validator(made.parameters).validate(
        {"report": {"heading": {"text": "hi"}, "body": "b"}}
    )


# test_from_function.py::test_from_function_with_default_containing_title_key
def test_from_function_with_default_containing_title_key() -> None:
    def render(options: Annotated[dict, "rendering options"] = {"title": "Untitled", "width": 80}) -> str:  # noqa: B006
        """Render a report."""
        return ""

    assert Tool.from_function(render).parameters["properties"]["options"]["default"] == {
        "title": "Untitled",
        "width": 80,
    }


# Differential (haystack-ai 3.4.0): a schema assigned to a built tool is the one that applies —
# Haystack keeps no compiled copy of it, so the tool spec and the argument checks both follow.
def test_parameters_reassigned_after_build_apply() -> None:
    made = _weather()
    made.parameters = {
        "type": "object",
        "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
        "required": ["city", "days"],
    }
    assert made.tool_spec["parameters"]["required"] == ["city", "days"]
    agent = Agent(
        "w",
        ScriptedModel(
            [tool_call("weather", city="Oslo"), "no days", tool_call("weather", city="Oslo", days=2), "ok"]
        ),
        tools=[made],
    )
    first = agent.run("weather?").tool_calls[0]
    assert first.error_kind == "invalid_arguments" and "days" in first.error
    # The model is sent the new schema too.
    assert agent.history[-1].model_calls[0].request["tools"][0]["function"]["parameters"] == made.parameters


def test_parameters_reassigned_on_a_function_tool_apply_and_keep_its_conversion() -> None:
    def forecast(city: str, days: int = 1) -> str:
        """Forecast."""
        return f"{city}:{days}:{type(days).__name__}"

    made = create_tool_from_function(forecast)
    made.parameters = {**made.parameters, "required": ["city", "days"]}
    agent = Agent(
        "f",
        ScriptedModel(
            [tool_call("forecast", city="Oslo"), "no", tool_call("forecast", city="Oslo", days=3), "ok"]
        ),
        tools=[made],
    )
    assert "days" in agent.run("a").tool_calls[0].error
    assert agent.run("b").tool_calls[0].result == "Oslo:3:int"


def test_an_invalid_schema_assigned_fails_at_once_and_keeps_the_old() -> None:
    made = _weather()
    with pytest.raises(ValueError):
        made.parameters = {"type": "invalid"}
    assert made.parameters == PARAMETERS
