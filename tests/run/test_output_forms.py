"""More forms of typed output: a union with ``str``, validators on plain text, OpenAI's
``response_format`` envelope, a run's ``output_schema=``, pydantic-ai's validator signature, a
validator that crashes, a function given as the type, and error paths as the model sees them."""

from __future__ import annotations

import pytest
from pydantic import BaseModel

from agentnb import Agent, ModelRetry, ScriptedModel, tool_call
from agentnb.errors import AgentRunError, ConfigurationError
from agentnb.tools.run_context import RunContext


class Invoice(BaseModel):
    """An invoice as printed."""

    vendor: str
    total: float


def test_a_validator_that_raises_fails_the_run_cleanly_naming_it():
    agent = Agent("x", ScriptedModel([tool_call("final_result", vendor="A", total=1)]), output_type=Invoice)

    @agent.output_validator
    def lookup_vendor(output: Invoice) -> Invoice:
        raise KeyError(output.vendor)

    with pytest.raises(
        AgentRunError, match=r"output validator \S*lookup_vendor raised KeyError: .A.; an output"
    ):
        agent.run("go")
    assert agent.history[-1].status == "failed"  # never left running


def test_validators_check_a_plain_text_answer_and_may_ask_again():
    agent = Agent("x", ScriptedModel(["no", "Yes, done."]))

    @agent.output_validator
    def polite(text: str) -> str:
        if not text.startswith("Yes"):
            raise ModelRetry("start with Yes")
        return text

    result = agent.run("go")
    assert result.output == "Yes, done." and [a.ok for a in result.turn.attempts] == [False, True]
    assert agent.history[-1].messages[2].content.endswith("Answer again.")


def test_a_union_with_str_answers_in_text_or_through_the_tool():
    model = ScriptedModel(["just words", tool_call("final_result", vendor="A", total=2)])
    agent = Agent("x", model, output_type=Invoice | str)
    assert agent.run("one").output == "just words"
    assert agent.run("two").output == Invoice(vendor="A", total=2)
    assert [t["function"]["name"] for t in model.requests[0].tools] == ["final_result"]


def test_openais_response_format_envelope_is_taken_as_its_schema():
    envelope = {
        "type": "json_schema",
        "json_schema": {
            "name": "Total",
            "schema": {"type": "object", "properties": {"n": {"type": "integer"}}},
        },
    }
    model = ScriptedModel(['{"n": 3}'], native_output=True)
    result = Agent("x", model, output_type=envelope).run("go")
    assert result.output == {"n": 3}
    assert model.requests[0].options["response_format"]["json_schema"]["name"] == "Total"
    with pytest.raises(ConfigurationError, match="response_format without a schema"):
        Agent("x", ScriptedModel([]), output_type={"type": "json_schema", "json_schema": {}})


def test_a_runs_output_schema_is_its_output_type_never_a_state_keyword():
    agent = Agent("x", ScriptedModel([tool_call("final_result", vendor="A", total=1)]))
    assert agent.run("go", output_schema=Invoice).output == Invoice(vendor="A", total=1)
    assert "output_schema" not in agent.session_state
    with pytest.raises(ConfigurationError, match="output_type and output_schema are the same option"):
        agent.run("go", output_type=Invoice, output_schema=Invoice)


def test_pydantic_ais_validator_order_is_told_by_the_annotation():
    seen = []

    def context_first(ctx: RunContext, output: Invoice) -> Invoice:
        seen.append((type(ctx).__name__, type(output).__name__))
        return output

    def context_last(output, ctx):
        seen.append((type(output).__name__, type(ctx).__name__))

    model = ScriptedModel([tool_call("final_result", vendor="A", total=1)])
    Agent("x", model, output_type=Invoice, output_validators=[context_first, context_last]).run("go")
    assert seen == [("RunContext", "Invoice"), ("Invoice", "RunContext")]


def test_a_function_is_not_an_output_type():
    def parse(text: str) -> Invoice: ...

    with pytest.raises(ConfigurationError, match="is a function; give a type"):
        Agent("x", ScriptedModel([]), output_type=parse)


def test_errors_of_a_wrapped_type_point_under_response_and_tools_carry_the_docstring():
    model = ScriptedModel(
        [tool_call("final_result", response=["x"]), tool_call("final_result", response=[1])]
    )
    result = Agent("x", model, output_type=list[int]).run("go")
    assert result.turn.attempts[0].errors[0]["path"] == "/response/0"
    invoice = ScriptedModel([tool_call("final_result", vendor="A", total=1)])
    Agent("x", invoice, output_type=Invoice).run("go")
    assert invoice.requests[0].tools[0]["function"]["description"].endswith("An invoice as printed.")
