"""Typed output while it streams, offline: how the answer so far is read (``run/partial.py``) —
numbers held back until whole, strings shown as they grow, a code fence, a union's envelope, a
JSON-schema dict, a long answer parsed at growing steps — and which runs give deltas at all."""

from __future__ import annotations

import json
from dataclasses import dataclass

from pydantic import BaseModel

from agentnb import Agent, ScriptedModel, tool_call
from agentnb.events import OutputDelta
from agentnb.models.base import ArgumentsDelta, ModelResponse
from agentnb.run.output import OutputSpec
from agentnb.run.partial import STEP, PartialOutput


class Invoice(BaseModel):
    vendor: str
    total: float


@dataclass
class Refund:
    order: str
    amount: float


def fed(spec: OutputSpec, pieces: list[str], mode: str = "native") -> list[OutputDelta]:
    partial = PartialOutput(spec, mode, "r1")
    out = []
    for piece in pieces:
        delta = partial.feed(piece, 0)
        if delta is not None:
            out.append(delta)
    end = partial.end(ModelResponse(content="".join(pieces)), 0)
    return out + ([end] if end is not None else [])


def test_a_number_at_the_end_waits_until_something_follows_it_a_string_does_not():
    pieces = ['{"vendor": "A1', "2", '3", "total": 12', "50", ".5", "}"]
    deltas = fed(OutputSpec(Invoice), pieces)
    assert [d.data for d in deltas] == [
        {"vendor": "A1"},
        {"vendor": "A12"},
        {"vendor": "A123"},  # "total": 12... may still grow: not shown
        {"vendor": "A123", "total": 1250.5},
    ]
    assert [d.validated for d in deltas] == [False, False, False, True]
    assert deltas[-1].complete and deltas[-1].output == Invoice(vendor="A123", total=1250.5)


def test_a_fenced_answer_and_a_unions_envelope_are_read_through():
    fenced = fed(OutputSpec(Invoice), ["```json\n", '{"vendor": "AC', 'ME", "total": 3}\n```'])
    assert [d.data for d in fenced] == [{"vendor": "AC"}, {"vendor": "ACME", "total": 3}]
    assert fenced[-1].output == Invoice(vendor="ACME", total=3)
    union = OutputSpec(Invoice | Refund)
    pieces = ['{"response": {"order": "O-', '7", "amount": 2.5}}']
    deltas = fed(union, pieces)
    assert [d.data for d in deltas] == [{"order": "O-"}, {"order": "O-7", "amount": 2.5}]
    assert deltas[-1].output == Refund(order="O-7", amount=2.5)  # the member it validates as


def test_a_json_schema_dict_has_no_partial_validation_the_whole_answer_is_checked():
    schema = {
        "title": "Point",
        "type": "object",
        "properties": {"x": {"type": "integer"}, "y": {"type": "integer"}},
        "required": ["x", "y"],
    }
    deltas = fed(OutputSpec(schema), ['{"x": 1, ', '"y": 2', "}"])
    assert [(d.data, d.validated) for d in deltas] == [({"x": 1}, False), ({"x": 1, "y": 2}, True)]


def test_a_long_answer_is_parsed_at_growing_steps_and_whole_at_the_end():
    text = json.dumps({"vendor": "x" * 20_000, "total": 1})
    deltas = fed(OutputSpec(Invoice), list(text))  # one character a piece
    assert len(deltas) < 200 < len(text)
    growth = [
        len(b.data.get("vendor", "")) - len(a.data.get("vendor", "")) for a, b in zip(deltas, deltas[1:-1])
    ]
    assert max(growth) <= STEP
    assert deltas[-1].complete and deltas[-1].output == Invoice(vendor="x" * 20_000, total=1)


def test_only_the_first_output_call_of_an_answer_is_followed():
    spec = OutputSpec(Invoice)
    partial = PartialOutput(spec, "tool", "r1")
    assert partial.feed(ArgumentsDelta(0, "final_result", '{"vendor": "A'), 0) is None  # one piece behind
    first = partial.feed(ArgumentsDelta(0, "final_result", '{"vendor": "AB'), 0)
    assert first is not None and first.data == {"vendor": "A"} and first.tool == "final_result"
    assert partial.feed(ArgumentsDelta(1, "final_result", '{"vendor": "B"'), 0) is None
    assert partial.feed("some text", 0) is None  # tool mode: text is not the output
    second = partial.feed(ArgumentsDelta(0, "final_result", '{"vendor": "ABC"'), 0)
    assert second is not None and second.data == {"vendor": "AB"}


def run_events(agent: Agent, message: str = "go") -> list[OutputDelta]:
    return [e for e in agent.iter_run(message) if isinstance(e, OutputDelta)]


def test_scripted_models_stream_both_modes_and_a_text_answer_to_a_union_with_str_gives_none():
    answer = {"vendor": "ACME GmbH", "total": 12.5}
    native = Agent("n", ScriptedModel([json.dumps(answer)], native_output=True), output_type=Invoice)
    tool = Agent("t", ScriptedModel([tool_call("final_result", **answer)]), output_type=Invoice)
    for agent, mode in ((native, "native"), (tool, "tool")):
        deltas = run_events(agent)
        assert len(deltas) >= 3 and {d.mode for d in deltas} == {mode}
        assert deltas[-1].output == agent.history[-1].output == Invoice(**answer)
    either = Agent("e", ScriptedModel(["just words"]), output_type=Invoice | str)
    assert run_events(either) == [] and either.history[-1].output == "just words"


def test_an_answer_in_one_piece_gives_no_delta():
    answer = json.dumps({"vendor": "ACME", "total": 1})
    agent = Agent("x", ScriptedModel([answer], stream=False, native_output=True), output_type=Invoice)
    assert run_events(agent) == [] and agent.history[-1].output == Invoice(vendor="ACME", total=1)


def test_prompted_mode_gives_no_deltas():
    answer = json.dumps({"vendor": "ACME", "total": 1})
    agent = Agent("x", ScriptedModel([answer]), output_type=Invoice, output_mode="prompted")
    assert run_events(agent) == [] and agent.history[-1].output == Invoice(vendor="ACME", total=1)
