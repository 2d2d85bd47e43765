"""``history.outputs()`` and the typed-output columns of ``history.turns()``: one column per
top-level field, the attempts, failed turns, unions, non-object outputs, copies."""

from __future__ import annotations

from typing import Literal

import pandas as pd
import pytest
from pydantic import BaseModel

from agentnb import Agent, ScriptedModel, tool_call
from agentnb.errors import OutputValidationError
from agentnb.history.frames import TURN_COLUMNS


class Invoice(BaseModel):
    vendor: str
    total: float


class Refund(BaseModel):
    order: str
    total: float


def invoices() -> Agent:
    model = ScriptedModel(
        [
            tool_call("final_result", vendor="ACME", total=12.5),
            "plain words",  # the second turn asks for no type
            tool_call("final_result", vendor="Bolt", total="lots"),
            tool_call("final_result", vendor="Bolt", total=7),
        ]
    )
    agent = Agent("x", model)
    agent.run("first", output_type=Invoice)
    agent.run("no type")
    agent.run("second", output_type=Invoice)
    return agent


def test_outputs_has_a_column_per_field_indexed_by_turn_with_the_attempts():
    frame = invoices().history.outputs()
    assert frame.index.name == "turn" and frame.index.tolist() == [1, 3]  # turn 2 had no output type
    assert list(frame.columns) == ["vendor", "total", "attempts"]
    assert frame["vendor"].tolist() == ["ACME", "Bolt"]
    assert frame["total"].tolist() == [12.5, 7.0] and frame["total"].dtype == "float64"
    assert frame["attempts"].tolist() == [1, 2]


def test_turns_gains_the_output_as_data_and_the_attempt_count():
    frame = invoices().history.turns()
    assert list(frame.columns) == list(TURN_COLUMNS)
    assert frame["output"].tolist() == [
        {"vendor": "ACME", "total": 12.5},
        None,
        {"vendor": "Bolt", "total": 7.0},
    ]
    assert frame["attempts"].tolist() == [1, 0, 2]


def test_a_turn_whose_answers_all_failed_is_a_row_with_its_fields_missing():
    model = ScriptedModel(
        [tool_call("final_result", vendor="A", total=1), tool_call("final_result", vendor="B")]
        + [tool_call("final_result", total="x")] * 2
    )
    agent = Agent("x", model, output_type=Invoice)
    agent.run("one")
    with pytest.raises(OutputValidationError):
        agent.run("two")
    frame = agent.history.outputs()
    assert frame.index.tolist() == [1, 2] and frame["attempts"].tolist() == [1, 2]
    assert frame.loc[2, ["vendor", "total"]].isna().all()
    assert agent.history.turns()["output"].tolist() == [{"vendor": "A", "total": 1.0}, None]


def test_a_union_shares_the_fields_its_members_share():
    model = ScriptedModel(
        [
            tool_call("final_result_Invoice", vendor="A", total=1),
            tool_call("final_result_Refund", order="R1", total=2),
        ]
    )
    agent = Agent("x", model, output_type=Invoice | Refund)
    agent.run("a")
    agent.run("b")
    frame = agent.history.outputs()
    assert list(frame.columns) == ["vendor", "total", "order", "attempts"]
    assert frame["total"].tolist() == [1.0, 2.0]
    assert frame.loc[1, "vendor"] == "A" and pd.isna(frame.loc[1, "order"])
    assert frame.loc[2, "order"] == "R1" and pd.isna(frame.loc[2, "vendor"])


def test_an_output_that_is_not_an_object_is_one_output_column():
    model = ScriptedModel(
        [tool_call("final_result", response="yes"), tool_call("final_result", response=[1, 2])]
    )
    agent = Agent("x", model)
    agent.run("a", output_type=Literal["yes", "no"])
    agent.run("b", output_type=list[int])
    frame = agent.history.outputs()
    assert list(frame.columns) == ["output", "attempts"]
    assert frame["output"].tolist() == ["yes", [1, 2]]


def test_a_field_named_attempts_keeps_its_name_and_the_count_moves_aside():
    class Try(BaseModel):
        attempts: int

    agent = Agent("x", ScriptedModel([tool_call("final_result", attempts=9)]), output_type=Try)
    agent.run("a")
    frame = agent.history.outputs()
    assert frame["attempts"].tolist() == [9] and frame["_attempts"].tolist() == [1]


def test_an_empty_history_and_one_without_output_types_give_empty_frames():
    empty = Agent("x", ScriptedModel([])).history.outputs()
    assert len(empty) == 0 and list(empty.columns) == ["attempts"]
    plain = Agent("y", ScriptedModel(["hi"]))
    plain.run("hello")
    assert len(plain.history.outputs()) == 0
    assert plain.history.turns()["attempts"].tolist() == [0]


def test_editing_the_frame_does_not_edit_the_recorded_output():
    class Basket(BaseModel):
        items: list[str]

    agent = Agent("x", ScriptedModel([tool_call("final_result", items=["milk"])]), output_type=Basket)
    agent.run("a")
    agent.history.outputs().loc[1, "items"].append("poison")
    agent.history.turns().loc[0, "output"]["items"].append("poison")
    assert agent.history[0].output_data == {"items": ["milk"]}
    assert agent.history.outputs().loc[1, "items"] == ["milk"]
