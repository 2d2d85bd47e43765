"""AgentScope's sessions and ``StateModule``, ported to agentnb.

Peer files (agentscope-ai/agentscope at v1.0.21): tests/session_test.py (SessionTest and the
TablestoreSessionTest lifecycle cases, whose ``user_id`` naming JSONSession shares),
tests/memory_test.py (``_test_serialization``), tests/plan_test.py (an agent's nested state).
Cases marked "differential" pin what agentscope 1.0.21's ``StateModule`` / ``JSONSession``
(src/agentscope/module/_state_module.py, src/agentscope/session/_json_session.py) do when run
side by side; AgentScope has no unit test of its own for them.
"""

from __future__ import annotations

import asyncio
import gc
import json
import logging
from pathlib import Path
from typing import Any

import pytest

from agentnb import Agent, JSONSession, ScriptedModel
from agentnb.sessions import StateModule


class Memory(StateModule):
    """A message list, saved with its owner (AgentScope's InMemoryMemory, reduced)."""

    def __init__(self) -> None:
        super().__init__()
        self.content: list[dict[str, Any]] = []
        self.register_state("content")


class MyAgent(StateModule):
    """session_test.py's MyAgent: two registered attributes and a nested memory module."""

    def __init__(self) -> None:
        super().__init__()
        self.name = "Friday"
        self.sys_prompt = "A helpful assistant."
        self.memory = Memory()
        self.register_state("name")
        self.register_state("sys_prompt")


def _save(session: JSONSession, session_id: str, **kwargs: Any) -> None:
    asyncio.run(session.save_session_state(session_id, **kwargs))


def _load(session: JSONSession, session_id: str, **kwargs: Any) -> None:
    asyncio.run(session.load_session_state(session_id, **kwargs))


# session_test.py::SessionTest::test_session_base
def test_session_base(tmp_path: Path) -> None:
    session = JSONSession(save_dir=str(tmp_path))
    agent1 = Agent(name="Friday", model=ScriptedModel([]), instructions="A helpful assistant.")
    agent2 = MyAgent()
    agent2.memory.content.append({"name": "Alice", "content": "Hi!", "role": "user"})
    _save(session, "user_1", agent1=agent1, agent2=agent2)
    agent1.name = "Changed"
    agent2.sys_prompt = "Changed prompt"
    _load(session, "user_1", agent1=agent1, agent2=agent2)
    assert agent1.name == "Friday"
    assert agent2.sys_prompt == "A helpful assistant."


# session_test.py::SessionTest::test_session_base (the StateModule half)
def test_session_restores_registered_attributes(tmp_path: Path) -> None:
    session = JSONSession(save_dir=str(tmp_path))
    agent2 = MyAgent()
    _save(session, "user_1", agent2=agent2)
    agent2.sys_prompt = "Changed prompt"
    agent2.name = "Changed"
    _load(session, "user_1", agent2=agent2)
    assert (agent2.name, agent2.sys_prompt) == ("Friday", "A helpful assistant.")


# session_test.py::TablestoreSessionTest::test_save_and_load_session_state (JSONSession takes the
# same user_id and names the file <user_id>_<session_id>.json)
def test_save_and_load_with_user_id(tmp_path: Path) -> None:
    session = JSONSession(save_dir=str(tmp_path))
    agent = MyAgent()
    _save(session, "sess_1", user_id="user_1", agent=agent)
    assert (tmp_path / "user_1_sess_1.json").exists()
    agent.name, agent.sys_prompt = "Changed", "Changed prompt"
    _load(session, "sess_1", user_id="user_1", agent=agent)
    assert (agent.name, agent.sys_prompt) == ("Friday", "A helpful assistant.")


# session_test.py::TablestoreSessionTest::test_load_before_save_session_not_exist
def test_load_before_save_session_not_exist(tmp_path: Path) -> None:
    agent = MyAgent()
    _load(JSONSession(save_dir=str(tmp_path)), "nonexistent", allow_not_exist=True, agent=agent)
    assert (agent.name, agent.sys_prompt) == ("Friday", "A helpful assistant.")


# session_test.py::TablestoreSessionTest::test_load_before_save_raises_when_not_allowed
def test_load_before_save_raises_when_not_allowed(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="nonexistent"):
        _load(JSONSession(save_dir=str(tmp_path)), "nonexistent", allow_not_exist=False, agent=MyAgent())


# session_test.py::TablestoreSessionTest::test_lifecycle_load_save_load
def test_lifecycle_load_save_load(tmp_path: Path) -> None:
    session = JSONSession(save_dir=str(tmp_path))
    agent = MyAgent()
    _load(session, "lifecycle_sess", allow_not_exist=True, agent=agent)
    assert (agent.name, agent.sys_prompt) == ("Friday", "A helpful assistant.")
    agent.memory.content.append({"name": "Bob", "content": "Hello!", "role": "user"})
    _save(session, "lifecycle_sess", agent=agent)
    agent.name, agent.sys_prompt = "Mutated", "Mutated prompt"
    _load(session, "lifecycle_sess", agent=agent)
    assert (agent.name, agent.sys_prompt) == ("Friday", "A helpful assistant.")


# session_test.py::TablestoreSessionTest::test_save_overwrites_previous_state
def test_save_overwrites_previous_state(tmp_path: Path) -> None:
    session = JSONSession(save_dir=str(tmp_path))
    agent = MyAgent()
    _save(session, "overwrite_sess", agent=agent)
    agent.name, agent.sys_prompt = "UpdatedName", "Updated prompt"
    _save(session, "overwrite_sess", agent=agent)
    agent.name, agent.sys_prompt = "Garbage", "Garbage"
    _load(session, "overwrite_sess", agent=agent)
    assert (agent.name, agent.sys_prompt) == ("UpdatedName", "Updated prompt")


# differential: JSONSession writes <save_dir>/<session_id>.json holding {module_name: state_dict}
# (seed 003: "JSON 结构"); nested modules are saved under their attribute name
def test_session_file_layout(tmp_path: Path) -> None:
    agent = MyAgent()
    agent.memory.content.append({"role": "user", "content": "Hi!"})
    _save(JSONSession(save_dir=str(tmp_path)), "user_1", agent2=agent)
    saved = json.loads((tmp_path / "user_1.json").read_text(encoding="utf-8"))
    assert saved["agent2"] == {
        "memory": {"content": [{"role": "user", "content": "Hi!"}]},
        "name": "Friday",
        "sys_prompt": "A helpful assistant.",
    }


# differential: a session file as AgentScope writes it ({module_name: state_dict}, nothing else) loads
def test_agentscope_written_file_loads(tmp_path: Path) -> None:
    (tmp_path / "user_1.json").write_text(
        json.dumps({"agent2": {"name": "Saved", "sys_prompt": "Saved prompt", "memory": {"content": []}}}),
        encoding="utf-8",
    )
    agent = MyAgent()
    _load(JSONSession(save_dir=str(tmp_path)), "user_1", allow_not_exist=False, agent2=agent)
    assert (agent.name, agent.sys_prompt) == ("Saved", "Saved prompt")


# differential: load_session_state skips a module name the file does not hold
def test_load_skips_modules_not_in_the_file(tmp_path: Path) -> None:
    session = JSONSession(save_dir=str(tmp_path))
    _save(session, "user_1", agent2=MyAgent())
    other = MyAgent()
    other.name = "Other"
    _load(session, "user_1", other=other)
    assert other.name == "Other"


# memory_test.py::_test_serialization (state_dict follows the attribute; load_state_dict restores it)
def test_registered_attribute_serialization() -> None:
    memory = Memory()
    assert memory.state_dict() == {"content": []}
    memory.content = [{"role": "user", "content": "Hi there!"}]
    state = memory.state_dict()
    assert state == {"content": [{"role": "user", "content": "Hi there!"}]}
    memory.content = []
    assert memory.state_dict() == {"content": []}
    memory.load_state_dict(state)
    assert memory.state_dict() == {"content": [{"role": "user", "content": "Hi there!"}]}


# plan_test.py (agent.state_dict() holds its nested modules under their attribute names, and
# agent.load_state_dict(state) restores them)
def test_nested_modules_in_state_dict() -> None:
    agent = MyAgent()
    agent.memory.content.append({"role": "user", "content": "Hi!"})
    state = agent.state_dict()
    assert state == {
        "memory": {"content": [{"role": "user", "content": "Hi!"}]},
        "name": "Friday",
        "sys_prompt": "A helpful assistant.",
    }
    fresh = MyAgent()
    fresh.load_state_dict(state)
    assert fresh.memory.content == [{"role": "user", "content": "Hi!"}]


# differential: StateModule.register_state rejects a value JSON cannot hold
def test_register_state_rejects_a_non_json_value() -> None:
    class Bad(StateModule):
        def __init__(self) -> None:
            super().__init__()
            self.when = object()
            self.register_state("when")

    with pytest.raises(TypeError, match="'when' is not JSON serializable"):
        Bad()


# differential: custom_to_json / custom_from_json convert on the way out and in
def test_register_state_with_custom_conversion() -> None:
    class Custom(StateModule):
        def __init__(self) -> None:
            super().__init__()
            self.items = {1, 2}
            self.register_state("items", custom_to_json=sorted, custom_from_json=set)

    state = Custom().state_dict()
    assert state == {"items": [1, 2]}
    other = Custom()
    other.items = set()
    other.load_state_dict(state)
    assert other.items == {1, 2}


# differential: load_state_dict(strict=True) wants every registered key; strict=False keeps the rest
def test_load_state_dict_strict() -> None:
    with pytest.raises(KeyError, match="sys_prompt"):
        MyAgent().load_state_dict({"name": "x", "memory": {"content": []}})
    agent = MyAgent()
    agent.load_state_dict({"name": "x"}, strict=False)
    assert (agent.name, agent.sys_prompt) == ("x", "A helpful assistant.")


# differential: deleting a registered attribute takes it out of the state
def test_deleted_attribute_leaves_the_state() -> None:
    agent = MyAgent()
    del agent.sys_prompt
    assert agent.state_dict() == {"memory": {"content": []}, "name": "Friday"}


# session_test.py (the not-exist case checks AgentScope's log record): loading a session that
# is not there with allow_not_exist=True says so through logging, at INFO, and skips loading.
def test_load_not_exist_logs_at_info(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    agent = MyAgent()
    with caplog.at_level(logging.INFO, logger="agentnb.sessions"):
        _load(JSONSession(save_dir=str(tmp_path)), "nonexistent", allow_not_exist=True, agent=agent)
    (record,) = [r for r in caplog.records if r.name == "agentnb.sessions"]
    assert record.levelno == logging.INFO
    assert "'nonexistent' does not exist" in record.getMessage() and "skipped" in record.getMessage()
    assert str(tmp_path) in record.getMessage()
    assert not [
        p for p in tmp_path.iterdir() if p.suffix in (".json", ".jsonl")
    ]  # nothing saved by a skipped load


def test_a_found_session_logs_nothing_at_info(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    session = JSONSession(save_dir=str(tmp_path))
    _save(session, "here", agent=MyAgent())
    with caplog.at_level(logging.INFO, logger="agentnb.sessions"):
        _load(session, "here", allow_not_exist=True, agent=MyAgent())
    assert [r for r in caplog.records if r.name == "agentnb.sessions"] == []


# session_test.py's shape for several agents (``save_session_state(sid, **modules)`` under names of
# the caller's choosing), with a team: loaded by hand in either order, the team's runs find their
# members' runs (no relink); a team built with session= saves and restores the whole tree.
@pytest.mark.parametrize("order", ["team first", "member first"])
def test_a_team_and_its_member_loaded_by_hand_have_the_whole_tree(tmp_path: Path, order: str) -> None:
    from agentnb import Team, tool_call

    def build() -> tuple[Team, Agent]:
        shopper = Agent(name="shopper", model=ScriptedModel(["added"]))
        team = Team(
            name="team",
            members=[shopper],
            model=ScriptedModel(
                [tool_call("delegate_task_to_member", member_id="shopper", task="tea"), "done"]
            ),
        )
        return team, shopper

    team, shopper = build()
    team.run("tea please")
    session = JSONSession(save_dir=str(tmp_path))
    _save(session, "sid", team=team, shopper=shopper)
    del team, shopper
    gc.collect()  # nothing of the first tree is left in memory to be found
    again, shopper_again = build()
    modules = {"team": again, "shopper": shopper_again}
    _load(session, "sid", **(modules if order == "team first" else dict(reversed(modules.items()))))
    (child,) = again.history[-1].children
    assert child is shopper_again.history[-1] and child.parent_run_id == again.history[-1].run_id
    assert again.history.runs()["path"].tolist() == ["team", "team/shopper"]


def test_a_team_with_session_saves_and_restores_the_whole_tree(tmp_path: Path) -> None:
    from agentnb import Team, tool_call

    def build() -> tuple[Team, Agent]:
        shopper = Agent(name="shopper", model=ScriptedModel(["added"]))
        team = Team(
            name="team",
            members=[shopper],
            model=ScriptedModel(
                [tool_call("delegate_task_to_member", member_id="shopper", task="tea"), "done"]
            ),
            session=JSONSession(save_dir=str(tmp_path)),
        )
        return team, shopper

    team, _ = build()
    team.run("tea please")
    assert sorted(JSONSession(save_dir=str(tmp_path)).read_modules("team").modules) == [
        "agent",
        "agent/shopper",
    ]
    again, shopper_again = build()
    assert len(shopper_again.history) == 1
    assert again.history[-1].children == [shopper_again.history[-1]]
