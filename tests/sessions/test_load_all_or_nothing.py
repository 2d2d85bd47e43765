"""``load_session_state(session_id, **modules)`` loads every module or none: each agent's saved
state is read and checked before any changes, and a plain state module loaded before one that
fails is put back as it was."""

from __future__ import annotations

import json

import pytest

from agentnb import Agent, ScriptedModel
from agentnb.errors import SessionModuleError
from agentnb.sessions import JSONSession
from agentnb.state.modules import StateModule


class Counter(StateModule):
    def __init__(self, count: int) -> None:
        self.count = count
        self.register_state("count")


def edit(path, change) -> None:
    document = json.loads(path.read_text())
    change(document)
    path.write_text(json.dumps(document))


def test_two_agents_load_together_or_not_at_all(tmp_path):
    first, second = Agent("one", ScriptedModel(["a"])), Agent("two", ScriptedModel(["b"]))
    first.run("hi")
    second.run("hi")
    JSONSession(tmp_path).save_session_state_sync("pair", one=first, two=second)
    edit(tmp_path / "pair.json", lambda d: d["two"]["history"].update(turns="none"))

    one, two = Agent("one", ScriptedModel([])), Agent("two", ScriptedModel([]))
    with pytest.raises(SessionModuleError) as caught:
        JSONSession(tmp_path).load_session_state_sync("pair", one=one, two=two)
    assert (len(one.history), len(two.history), one.state.messages) == (0, 0, [])
    assert caught.value.module == "two" and caught.value.where == str(tmp_path / "pair.json")
    assert str(caught.value).startswith(f"{tmp_path / 'pair.json'} (module 'two'): ")
    assert str(caught.value).endswith(
        "; nothing was loaded (every module keeps its state) and the files are left as they are: "
        "restore them from version control or a backup"
    )


def test_a_plain_module_loaded_before_one_that_fails_is_put_back(tmp_path):
    JSONSession(tmp_path).save_session_state_sync("s", first=Counter(5), second=Counter(7))
    edit(tmp_path / "s.json", lambda d: d["second"].pop("count"))

    first, second = Counter(1), Counter(2)
    with pytest.raises(SessionModuleError, match=r"\(module 'second'\): it does not hold a state .*KeyError"):
        JSONSession(tmp_path).load_session_state_sync("s", first=first, second=second)
    assert (first.count, second.count) == (1, 2)


def test_an_agent_is_checked_before_a_plain_module_is_loaded(tmp_path):
    agent = Agent("one", ScriptedModel(["a"]), session_state={"n": 1})
    agent.run("hi")
    JSONSession(tmp_path).save_session_state_sync("s", counter=Counter(5), agent=agent)
    edit(tmp_path / "s.json", lambda d: d["agent"].update(messages=[{"role": "wizard", "content": "x"}]))

    counter, fresh = Counter(1), Agent("one", ScriptedModel([]), session_state={"n": 0})
    with pytest.raises(SessionModuleError, match=r"\(module 'agent'\):.*unknown role 'wizard'"):
        JSONSession(tmp_path).load_session_state_sync("s", counter=counter, agent=fresh)
    assert counter.count == 1 and fresh.session_state == {"n": 0} and len(fresh.history) == 0
