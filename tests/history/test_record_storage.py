"""How a turn record keeps its states, and which records a run finds as its children."""

from __future__ import annotations

import gc

from agentnb import Agent, ScriptedModel, Team, tool_call
from agentnb.history import records
from agentnb.history.records import TurnRecord
from agentnb.state.frozen import EMPTY, FrozenMap


def test_a_records_states_read_as_stored_and_an_unset_one_as_empty() -> None:
    record = TurnRecord(index=0, run_id="r", agent="a", message="m", model="x", state_after={"n": [1]})
    assert record.state_start == {} and record.frozen_start is EMPTY and record.frozen_before is EMPTY
    assert record.state_after == {"n": [1]} and type(record.frozen_after) is FrozenMap
    record.state_after = None  # (cleared: read as empty again)
    assert record.state_after == {} and record.frozen_after is EMPTY
    assert record.events == [] and record.messages == []


def test_an_own_copy_shares_the_frozen_states_and_keeps_its_own_events() -> None:
    agent = Agent("a", ScriptedModel(["hi"]), session_state={"items": ["pen"]})
    agent.run("hello")
    record = agent.history[-1]
    copied = record.own_copy()
    for name in ("frozen_start", "frozen_before", "frozen_after"):
        assert getattr(copied, name) is getattr(record, name)  # shared, never copied
    assert copied.events == record.events and copied.events is not record.events
    assert copied.state_after == record.state_after and copied.state_after["items"] == ["pen"]


def test_only_a_run_some_run_may_name_as_its_child_is_in_the_index_of_runs() -> None:
    billing = Agent("billing", ScriptedModel(["12 EUR."]))
    leader = ScriptedModel([tool_call("delegate_task_to_member", member_id="billing", task="invoice?")])
    team = Team("support", members=[billing], model=leader, mode="route")
    team.run("what do I owe?")
    top, child = team.history[-1], billing.history[-1]
    assert records._RUNS.get(top.run_id) is None  # a top-level run: no run names it
    assert records._RUNS.get(child.run_id) is child and top.children == [child]
    # Loaded one by one, the parent finds its child among the loaded records.
    loaded_child = TurnRecord.from_dict(child.to_dict())
    loaded_top = TurnRecord.from_dict(top.to_dict())
    assert [c.run_id for c in loaded_top.children] == [child.run_id]
    assert loaded_top.children[0] is loaded_child
    del loaded_child, loaded_top
    gc.collect()
    assert records._RUNS.get(child.run_id) is None  # the index holds its records weakly
