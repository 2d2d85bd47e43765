"""Typed output: every kind of output type, the three modes, retries with the errors, output
validators, the budget, and what the record and the state keep."""

from __future__ import annotations

import dataclasses
import enum
import json
from typing import Literal

import pytest
from pydantic import BaseModel
from typing_extensions import TypedDict  # pydantic needs this one before Python 3.12

from agentnb import Agent, ModelRetry, ScriptedModel, tool_call
from agentnb.errors import ConfigurationError, OutputValidationError
from agentnb.events import OutputChecked, StateChanged, ToolCallFinished
from agentnb.run.output import OutputSpec, strict_schema


class Invoice(BaseModel):
    vendor: str
    total: float


@dataclasses.dataclass
class Point:
    x: int
    y: int


class Movie(TypedDict):
    title: str
    year: int


class Colour(enum.Enum):
    RED = "red"
    BLUE = "blue"


class Refund(BaseModel):
    order: str
    amount: float


def lookup(order: str) -> str:
    """Look an order up."""
    return f"order {order}: 12.50 paid"


@pytest.mark.parametrize(
    ("output_type", "answer", "expected"),
    [
        (Invoice, {"vendor": "ACME", "total": 12.5}, Invoice(vendor="ACME", total=12.5)),
        (Point, {"x": 1, "y": 2}, Point(1, 2)),
        (Movie, {"title": "Alien", "year": 1979}, {"title": "Alien", "year": 1979}),
        (list[int], {"response": [1, 2, 3]}, [1, 2, 3]),
        (Literal["yes", "no"], {"response": "no"}, "no"),
        (Colour, {"response": "blue"}, Colour.BLUE),
        (
            {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]},
            {"n": 4},
            {"n": 4},
        ),
    ],
)
def test_each_kind_of_output_type_comes_back_typed_through_the_output_tool(output_type, answer, expected):
    model = ScriptedModel([tool_call("final_result", **answer)])
    result = Agent("x", model, output_type=output_type).run("go")
    assert result.output == expected and type(result.output) is type(expected)
    assert json.loads(result.content) == answer  # the raw answer: the tool's arguments
    (tool,) = model.requests[0].tools
    assert tool["function"]["name"] == "final_result"
    assert tool["function"]["parameters"]["type"] == "object"


def test_a_union_is_one_tool_per_member_and_the_model_picks_one():
    model = ScriptedModel([tool_call("final_result_Refund", order="A7", amount=3.0)])
    result = Agent("x", model, output_type=Invoice | Refund).run("go")
    assert result.output == Refund(order="A7", amount=3.0)
    assert [t["function"]["name"] for t in model.requests[0].tools] == [
        "final_result_Invoice",
        "final_result_Refund",
    ]


def test_a_failed_answer_goes_back_with_its_errors_and_the_second_attempt_passes():
    model = ScriptedModel(
        [
            tool_call("final_result", vendor="ACME", total="twelve"),
            tool_call("final_result", vendor="ACME", total=12),
        ]
    )
    agent = Agent("x", model, output_type=Invoice)
    result = agent.run("go")
    assert result.output == Invoice(vendor="ACME", total=12.0)
    sent_back = model.requests[1].messages[-1]
    assert (
        sent_back["role"] == "tool" and "/total" in sent_back["content"] and "number" in sent_back["content"]
    )
    checks = [e for e in result.turn.events if isinstance(e, OutputChecked)]
    assert [(c.attempt, c.ok) for c in checks] == [(1, False), (2, True)]
    assert checks[0].errors[0]["path"] == "/total" and checks[1].output == {"vendor": "ACME", "total": 12.0}


def test_when_the_retries_are_spent_the_run_fails_with_every_attempt_never_a_half_valid_output():
    model = ScriptedModel(
        ['{"vendor": "A"}', '{"total": 1}', '{"vendor": "never asked"}'], native_output=True
    )
    agent = Agent("x", model, output_type=Invoice, output_retries=1)
    with pytest.raises(OutputValidationError) as caught:
        agent.run("go")
    error = caught.value
    assert [a.attempt for a in error.attempts] == [1, 2] and not any(a.ok for a in error.attempts)
    assert "/total" in str(error) and "/vendor" in str(error) and "output_retries=1" in str(error)
    assert agent.history[-1].status == "failed" and agent.history[-1].output is None
    assert model.remaining == 1  # the third answer was never asked for
    assert error.result is None or error.result.output is None


def test_native_mode_asks_with_a_strict_schema_and_a_fenced_answer_is_read():
    model = ScriptedModel(['```json\n{"vendor": "A", "total": 3}\n```'], native_output=True)
    result = Agent("x", model, output_type=Invoice).run("go")
    assert result.output == Invoice(vendor="A", total=3.0)
    form = model.requests[0].options["response_format"]
    assert form["type"] == "json_schema" and form["json_schema"]["strict"] is True
    assert form["json_schema"]["schema"]["additionalProperties"] is False
    assert model.requests[0].tools == []


def test_a_type_that_cannot_be_strict_is_sent_not_strict_and_says_why():
    class Loose(BaseModel):
        name: str
        note: str = ""

    spec = OutputSpec(Loose)
    assert spec.strict_problems and "note may be left out" in spec.strict_problems[0]
    model = ScriptedModel(['{"name": "a"}'], native_output=True)
    result = Agent("x", model, output_type=Loose).run("go")
    assert result.output == Loose(name="a")
    assert model.requests[0].options["response_format"]["json_schema"]["strict"] is False
    _, problems = strict_schema({"type": "object", "additionalProperties": {"type": "integer"}})
    assert "free keys" in problems[0]


def test_prompted_mode_puts_the_schema_in_the_system_prompt_as_its_own_section():
    model = ScriptedModel(['{"x": 1, "y": 2}'])
    agent = Agent("x", model, output_type=Point, output_mode="prompted", instructions="Find the point.")
    result = agent.run("go")
    assert result.output == Point(1, 2)
    rendered = result.turn.prompt
    section = rendered.sections[-1]
    assert section.source == "output_type (Point)" and '"x"' in section.text
    assert model.requests[0].messages[0]["content"].startswith("Find the point.")
    assert "<output_format>" in agent.observe("go").system_prompt


def test_tool_mode_works_with_other_tools_in_the_same_turn_and_the_same_answer():
    model = ScriptedModel(
        [
            tool_call("lookup", order="A7"),
            [tool_call("lookup", order="B8"), tool_call("final_result", order="A7", amount=12.5)],
        ]
    )
    result = Agent("x", model, tools=[lookup], output_type=Refund).run("refund A7")
    assert result.output == Refund(order="A7", amount=12.5)
    names = [e.name for e in result.turn.events if isinstance(e, ToolCallFinished)]
    assert names == ["lookup", "lookup", "final_result"]  # the other call ran, then the answer
    assert {t["function"]["name"] for t in model.requests[1].tools} == {"lookup", "final_result"}


def test_a_model_that_writes_instead_of_calling_the_tool_is_asked_to_call_it():
    model = ScriptedModel(["It is 12.5 from ACME.", tool_call("final_result", vendor="ACME", total=12.5)])
    result = Agent("x", model, output_type=Invoice).run("go")
    assert result.output.total == 12.5
    assert "Call final_result with your answer" in model.requests[1].messages[-1]["content"]


def test_output_validators_may_change_the_output_or_ask_again():
    model = ScriptedModel(
        [
            tool_call("final_result", vendor="acme", total=-1),
            tool_call("final_result", vendor="acme", total=5),
        ]
    )
    agent = Agent("x", model, output_type=Invoice)
    seen = []

    @agent.output_validator
    def positive(output: Invoice, run_context) -> Invoice:
        seen.append(run_context.agent.name)
        if output.total <= 0:
            raise ModelRetry("the total must be positive")
        return output.model_copy(update={"vendor": output.vendor.upper()})

    result = agent.run("go")
    assert result.output == Invoice(vendor="ACME", total=5.0) and seen == ["x", "x"]
    assert "the total must be positive" in model.requests[1].messages[-1]["content"]


def test_output_to_state_is_a_state_change_whose_cause_is_the_output():
    model = ScriptedModel([tool_call("final_result", vendor="A", total=2)])
    agent = Agent("x", model, output_type=Invoice, output_to_state="invoice", session_state={"invoice": None})
    result = agent.run("go")
    assert agent.session_state["invoice"] == {"vendor": "A", "total": 2.0}
    (change,) = [e for e in result.turn.events if isinstance(e, StateChanged) and e.cause.kind == "output"]
    assert change.cause.name == "output_type:Invoice" and change.patch[0]["path"] == "/invoice"


def test_a_run_may_ask_for_its_own_type_and_plain_text_stays_text():
    model = ScriptedModel([tool_call("final_result", x=3, y=4), "just text"])
    agent = Agent("x", model)
    assert agent.run("go", output_type=Point).output == Point(3, 4)
    result = agent.run("go again")
    assert result.output is None and result.content == "just text"
    assert Agent("y", ScriptedModel(["hi"]), output_type=str).run("go").content == "hi"


def test_bad_output_options_are_short_clear_errors():
    with pytest.raises(ConfigurationError, match="output_mode must be one of"):
        Agent("x", ScriptedModel([]), output_type=Invoice, output_mode="json")
    with pytest.raises(ConfigurationError, match="output_retries must be a whole number"):
        Agent("x", ScriptedModel([]), output_type=Invoice, output_retries=-1)
    with pytest.raises(ConfigurationError, match="output_type and output_schema are the same option"):
        Agent("x", ScriptedModel([]), output_type=Invoice, output_schema=Invoice)
    with pytest.raises(ConfigurationError, match="has no JSON schema"):
        Agent("x", ScriptedModel([]), output_type=object())
    with pytest.raises(ConfigurationError, match="output_mode='native'"):
        Agent("x", ScriptedModel(["{}"]), output_type=Invoice, output_mode="native").run("go")
    with pytest.raises(ConfigurationError, match="not both"):
        Agent("x", ScriptedModel([]), output_type=Invoice, output_fields=["a"])


def test_the_aliases_of_agno_and_agentscope_are_the_same_option():
    for option in ("output_schema", "structured_model"):
        model = ScriptedModel([tool_call("final_result", x=1, y=1)])
        assert Agent("x", model, **{option: Point}).run("go").output == Point(1, 1)


@pytest.mark.parametrize(
    "arguments",
    ['{"vendor": ' * 10000, '{"vendor": "A", "total": ' + "9" * 5000 + "}", "[" * 10000 + "]" * 10000],
)
def test_hostile_answers_end_in_a_clear_error_not_a_crash(arguments):
    model = ScriptedModel([tool_call("final_result", raw_arguments=arguments)] * 2)
    with pytest.raises(OutputValidationError, match="no answer matched"):
        Agent("x", model, output_type=Invoice).run("go")


def test_an_evaluation_builds_its_fresh_agents_with_the_output_type_and_its_validators(tmp_path):
    from agentnb.evals import Case

    agent = Agent("x", ScriptedModel([tool_call("final_result", vendor="a", total=1)]), output_type=Invoice)

    @agent.output_validator
    def shout(output: Invoice) -> Invoice:
        return output.model_copy(update={"vendor": output.vendor.upper()})

    def typed(view) -> bool:
        (checked,) = [e for e in view.turns[-1].events if isinstance(e, OutputChecked)]
        return checked.output == {"vendor": "A", "total": 1.0}

    run = agent.evaluate([Case("go", id="c")], [typed], folder=tmp_path, display=False)
    assert run.rate() == 1.0


def test_agents_of_the_same_setting_share_one_spec_and_an_edited_schema_dict_is_a_new_one():
    first, second = (Agent(n, ScriptedModel([]), output_type=Invoice) for n in ("a", "b"))
    assert first._output_spec() is second._output_spec()  # built once: its schema and tools cost a turn
    other = Agent("c", ScriptedModel([]), output_type=Invoice, output_retries=3)
    assert other._output_spec() is not first._output_spec() and other._output_spec().retries == 3
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    before = Agent("d", ScriptedModel([tool_call("final_result", n="4")] * 2), output_type=schema)
    with pytest.raises(OutputValidationError, match="/n"):
        before.run("go")
    schema["properties"]["n"] = {"type": "string"}  # edited in place, as in a notebook cell
    after = Agent("e", ScriptedModel([tool_call("final_result", n="4")]), output_type=schema)
    assert after.run("go").output == {"n": "4"}
