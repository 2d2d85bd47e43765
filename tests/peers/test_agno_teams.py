"""Agno's team tests, ported to agentnb's API.

Peer files (agno-agi/agno, libs/agno/tests/integration/teams/): test_session_state.py,
test_team_delegation.py, test_history.py, test_metrics.py, test_tool_hooks.py. Agno's tests
run OpenAI models and assert what those did; here a ScriptedModel plays the leader and each
member, making the calls the instructions ask for, so each case checks what agentnb does with
them. Agno keeps state between runs only with a ``db``; agentnb keeps it on the team. Where a
case reads Agno's storage (``get_session``, ``get_last_run_output``) the port reads the team's
and members' own records.
"""

from __future__ import annotations

import asyncio

import pytest

from agentnb import Agent, RunContext, ScriptedModel, Team, tool_call
from agentnb.errors import TeamDefinitionError


def delegate(member_id: str, task: str):
    return tool_call("delegate_task_to_member", member_id=member_id, task=task)


def add_item(run_context: RunContext, item: str) -> str:
    """Add an item to the shopping list."""
    run_context.session_state["shopping_list"].append(item)
    return f"The shopping list is now {run_context.session_state['shopping_list']}"


# -- test_session_state.py ------------------------------------------------------------------------


# test_session_state.py::test_team_default_state / test_team_get_session_state
def test_team_default_state() -> None:
    team = Team(
        model=ScriptedModel(["I am well."]),
        members=[],
        session_state={"test_key": "test_value"},
        markdown=True,
    )
    response = team.run("Hello, how are you?")
    assert response.turn.run_id is not None
    assert team.session_state == {"test_key": "test_value"}
    assert team.get_session_state() == {"test_key": "test_value"}


# test_session_state.py::test_team_with_state_on_team (and _stream, via iter_run)
@pytest.mark.parametrize("stream", [False, True])
def test_team_with_state_on_team(stream: bool) -> None:
    model = ScriptedModel([tool_call("add_item", item="oranges"), "Added.", "Here it is."])
    team = Team(
        session_state={"shopping_list": []},
        members=[],
        tools=[add_item],
        instructions="Current state (shopping list) is: {shopping_list}",
        markdown=True,
        model=model,
    )
    team.run("Add oranges to my shopping list")
    message = 'Current shopping list: {shopping_list}. Other random json ```json { "properties": { "title": { "title": "a" } } }```'
    if stream:
        list(team.iter_run(message))
        response = team.history[-1]
    else:
        response = team.run(message)
    assert response.messages[1].content == (
        'Current shopping list: [\'oranges\']. Other random json ```json { "properties": { "title": { "title": "a" } } }```'
    )


# test_session_state.py::test_team_with_state_on_run (and the async variant)
@pytest.mark.parametrize("use_async", [False, True])
def test_team_with_state_on_run(use_async: bool) -> None:
    model = ScriptedModel([tool_call("add_item", item="oranges"), "Added.", "Here it is."])
    team = Team(
        members=[],
        tools=[add_item],
        instructions="Current state (shopping list) is: {shopping_list}",
        model=model,
    )
    if use_async:
        asyncio.run(team.arun("Add oranges to my shopping list", session_state={"shopping_list": []}))
    else:
        team.run("Add oranges to my shopping list", session_state={"shopping_list": []})
    response = team.run(
        'Current shopping list: {shopping_list}. Other random json ```json { "properties": { "title": { "title": "a" } } }```'
    )
    assert response.messages[1].content == (
        'Current shopping list: [\'oranges\']. Other random json ```json { "properties": { "title": { "title": "a" } } }```'
    )


# test_session_state.py::test_team_with_state_shared_with_members
def test_team_with_state_shared_with_members() -> None:
    shopping_agent = Agent(
        name="Shopping Agent",
        role="Manages shopping lists. Use the add_item tool to add items.",
        tools=[add_item],
        instructions=["You MUST use the add_item tool to add items to the shopping list."],
        model=ScriptedModel([tool_call("add_item", item="oranges"), "Added oranges."]),
    )
    team = Team(
        members=[shopping_agent],
        instructions=[
            "You MUST delegate shopping list tasks to the Shopping Agent.",
            "Do NOT respond directly - always use the Shopping Agent member.",
        ],
        model=ScriptedModel([delegate("shopping-agent", "Add oranges"), "Done."]),
    )
    team.run("Add oranges to my shopping list", session_state={"shopping_list": []})
    assert team.session_state == {"shopping_list": ["oranges"]}


# test_session_state.py::test_add_session_state_to_context
def test_add_session_state_to_context() -> None:
    model = ScriptedModel(["You have oranges."])
    team = Team(
        session_state={"shopping_list": ["oranges"]},
        members=[],
        markdown=True,
        add_session_state_to_context=True,
        model=model,
    )
    response = team.run("What is in my shopping list?")
    assert "'shopping_list': ['oranges']" in response.messages[0].content
    assert "oranges" in response.content.lower()


# test_session_state.py::test_team_session_state_switch_session_id
@pytest.mark.xfail(
    strict=True,
    reason="deliberate: one team object is one session; run(session_id=...) switching storage rows is Agno's db API",
)
def test_team_session_state_switch_session_id() -> None:
    team = Team(model=ScriptedModel(["a", "b"]), members=[], session_state={"test_key": "test_value"})
    team.run("What can you do?", session_id="session_1")
    team.run("What can you do?", session_id="session_2")
    assert team.session_id == "session_2" and team.session_state == {"test_key": "test_value"}


# -- test_team_delegation.py ------------------------------------------------------------------------


def get_climate_change_info() -> str:
    """Climate facts."""
    return "Climate change is a global issue that requires urgent action."


# test_team_delegation.py::test_team_delegation
def test_team_delegation() -> None:
    researcher = Agent(
        name="Researcher",
        role="Research information",
        tools=[get_climate_change_info],
        model=ScriptedModel([tool_call("get_climate_change_info"), "Research: urgent action needed."]),
    )
    writer = Agent(
        name="Writer", role="Write content based on research", model=ScriptedModel(["Article: act now."])
    )
    team = Team(
        name="Content Team",
        members=[researcher, writer],
        instructions=[
            "First, have the Researcher gather information on the topic.",
            "Then, have the Writer create content based on the research.",
        ],
        model=ScriptedModel(
            [delegate("researcher", "gather"), delegate("writer", "write"), "Act now on climate."]
        ),
    )
    response = team.run("Write a short article about climate change solutions")
    assert isinstance(response.content, str) and len(response.content) > 0
    assert [r.content for r in response.member_responses] == [
        "Research: urgent action needed.",
        "Article: act now.",
    ]


# test_team_delegation.py::test_respond_directly
def test_respond_directly() -> None:
    english = Agent(name="English Agent", role="Answer in English", model=ScriptedModel(["Madrid"]))
    spanish = Agent(
        name="Spanish Agent", role="Answer in Spanish", model=ScriptedModel(["Madrid tiene el Prado."])
    )
    team = Team(
        name="Translation Team",
        determine_input_for_members=False,
        respond_directly=True,
        members=[english, spanish],
        instructions=[
            "If the user asks in English, respond in English. If the user asks in Spanish, respond in Spanish.",
            "Never answer directly, you must delegate the task to the appropriate agent.",
        ],
        model=ScriptedModel([delegate("spanish-agent", "Tell me about Madrid")]),
    )
    response = team.run("¿Cuéntame algo interesante sobre Madrid?")
    assert isinstance(response.content, str) and len(response.content) > 0
    assert response.member_responses[0].content == response.content
    assert response.member_responses[0].messages[1].role == "user"
    assert response.member_responses[0].messages[1].content == "¿Cuéntame algo interesante sobre Madrid?"


# test_team_delegation.py::test_delegate_to_all_members (and the async identity cases)
def test_delegate_to_all_members() -> None:
    agent1 = Agent(
        name="Agent 1",
        role="First perspective provider",
        instructions="Provide a perspective on the given topic.",
        model=ScriptedModel(["Pro: no commute."]),
    )
    agent2 = Agent(
        name="Agent 2",
        role="Second perspective provider",
        instructions="Provide a different perspective on the given topic.",
        model=ScriptedModel(["Con: isolation."]),
    )
    team = Team(
        name="Collaborative Team",
        delegate_to_all_members=True,
        members=[agent1, agent2],
        instructions=["Synthesize the perspectives from both team members."],
        model=ScriptedModel(
            [tool_call("delegate_task_to_members", task="pros and cons of remote work"), "Balanced view."]
        ),
    )
    response = team.run("What are the pros and cons of remote work?")
    assert response.content == "Balanced view."
    assert len(response.tool_calls) == 1
    # the agent identity of each member response (test_async_delegate_to_all_members_agent_identity)
    assert [r.turn.agent for r in response.member_responses] == ["Agent 1", "Agent 2"]
    assert (
        response.tool_calls[0].result == "Agent Agent 1: Pro: no commute.\n\nAgent Agent 2: Con: isolation."
    )


# -- test_history.py ------------------------------------------------------------------------------


# test_history.py::test_add_team_history_to_members
def test_add_team_history_to_members() -> None:
    ack = Agent(
        name="Acknowledge Agent",
        role="Acknowledges all tasks",
        instructions="Acknowledge the task that was delegated to you with a simple 'Ack.'",
        model=ScriptedModel(["Ack."] * 3),
    )
    team = Team(
        members=[ack],
        instructions="Delegate all tasks to Acknowledge Agent.",
        add_team_history_to_members=True,
        num_team_history_runs=1,
        determine_input_for_members=False,
        respond_directly=True,
        model=ScriptedModel([delegate("acknowledge-agent", "x")] * 3),
    )
    for task in ("Task 1001", "Task 1002", "Task 1003"):
        team.run(task)
    sent = ack.history[-1].message
    assert "<team_history_context>" in sent
    assert "Task 1001" not in sent and "Task 1002" in sent and "Task 1003" in sent


# test_history.py::test_add_team_history_to_members_nested_team
def test_add_team_history_to_members_nested_team() -> None:
    analyst = Agent(
        name="analyst",
        role="Internal worker",
        instructions="Acknowledge the task with a simple 'Ack.'",
        model=ScriptedModel(["Ack."] * 4),
    )
    research = Team(
        name="research_team",
        members=[analyst],
        role="The only member that handles SUB tasks",
        model=ScriptedModel([delegate("analyst", "sub"), "Ack."] * 2),
    )
    solo = Agent(
        name="solo_agent", role="The only member that handles SOLO tasks", model=ScriptedModel(["Ack."])
    )
    team = Team(
        members=[solo, research],
        add_team_history_to_members=True,
        num_team_history_runs=5,
        determine_input_for_members=False,
        model=ScriptedModel(
            [
                delegate("solo_agent", "x"),
                "ok",
                delegate("research_team", "x"),
                "ok",
                delegate("research_team", "x"),
                "ok",
            ]
        ),
    )
    for task in ("SOLO-TASK-1", "SUB-TASK-1", "SUB-TASK-2"):
        team.run(task)
    sub_inputs = "\n".join(t.message for t in research.history)
    assert research.history and "SOLO-TASK-1" not in sub_inputs
    assert "SUB-TASK-1" in research.history[-1].message  # its own earlier task, as its history


# test_history.py::test_share_member_interactions
def test_share_member_interactions() -> None:
    agent_a = Agent(name="Agent A", role="First agent", model=ScriptedModel(["Hello!"]))
    agent_b = Agent(name="Agent B", role="Second agent", model=ScriptedModel(["Agent A said hello."]))
    team = Team(
        members=[agent_a, agent_b],
        instructions="First delegate to Agent A, then delegate to Agent B asking what Agent A said.",
        share_member_interactions=True,
        model=ScriptedModel(
            [delegate("agent-a", "say hello"), delegate("agent-b", "what did A say?"), "done"]
        ),
    )
    team.run("Ask Agent A to say hello, then ask Agent B what Agent A said.")
    assert "<member_interaction_context>" in agent_b.history[-1].message


# test_history.py::test_member_history_independent
def test_member_history_independent() -> None:
    model_a = ScriptedModel(["Noted.", "Your favorite color is red."])
    agent_a = Agent(name="Agent A", role="Specialist A", add_history_to_context=True, model=model_a)
    team = Team(
        members=[agent_a],
        respond_directly=True,
        determine_input_for_members=False,
        model=ScriptedModel([delegate("agent-a", "x")] * 2),
    )
    team.run("My favorite color is red.")
    response = team.run("What is my favorite color?")
    assert "red" in response.content.lower()
    sent = model_a.requests[-1].messages
    assert [m["role"] for m in sent] == ["system", "user", "assistant", "user"]
    assert (
        sent[1]["content"] == "My favorite color is red."
        and sent[3]["content"] == "What is my favorite color?"
    )


# -- test_metrics.py ------------------------------------------------------------------------------


# test_metrics.py::test_team_metrics_basic / test_team_member_metrics
def test_team_metrics_basic_and_member_metrics() -> None:
    member = Agent(name="Helper", model=ScriptedModel(["Paris is the capital."]))
    team = Team(members=[member], model=ScriptedModel([delegate("helper", "capital of France?"), "Paris."]))
    response = team.run("What is the capital of France?")
    turn = response.turn
    assert response.usage.input_tokens > 0 and response.usage.output_tokens > 0
    member_usage = response.member_responses[0].usage
    assert member_usage.total_tokens > 0
    # agentnb keeps own and total apart: the team's own figure never includes the member's
    assert turn.usage_total.total_tokens == turn.usage.total_tokens + member_usage.total_tokens


# test_metrics.py::test_team_metrics_multiple_runs / test_team_session_metrics_run_independence
def test_team_metrics_per_run_are_independent() -> None:
    team = Team(members=[], model=ScriptedModel(["one", "two, longer answer"]))
    first = team.run("a")
    second = team.run("b")
    assert first.usage != second.usage
    frame = team.history.runs()
    assert frame["tokens_own"].tolist() == [first.usage.total_tokens, second.usage.total_tokens]


# test_metrics.py::test_team_tool_call_metrics_sync
def test_team_tool_call_metrics() -> None:
    team = Team(
        members=[],
        tools=[get_climate_change_info],
        model=ScriptedModel([tool_call("get_climate_change_info"), "ok"]),
    )
    response = team.run("climate?")
    (call,) = response.tool_calls
    assert call.name == "get_climate_change_info" and call.duration_ms >= 0
    assert response.turn.events[-1].tool_calls == 1


# -- test_tool_hooks.py ---------------------------------------------------------------------------


# test_tool_hooks.py::test_member_tool_hook_receives_messages (coordinate and route)
@pytest.mark.parametrize("mode", ["coordinate", "route"])
def test_member_tool_hook_receives_messages(mode: str) -> None:
    seen: list[list[str]] = []

    def spy(function_name, function_call, arguments, run_context):
        seen.append([m.role for m in run_context.messages])
        return function_call(**arguments)

    member = Agent(
        name="Worker",
        tools=[get_climate_change_info],
        tool_hooks=[spy],
        model=ScriptedModel([tool_call("get_climate_change_info"), "done"]),
    )
    leader = (
        [delegate("worker", "look it up"), "ok"]
        if mode == "coordinate"
        else [delegate("worker", "look it up")]
    )
    team = Team(members=[member], mode=mode, model=ScriptedModel(leader))
    team.run("climate?")
    # the member's own messages (no system prompt: it has no instructions), never the leader's
    assert seen == [["user", "assistant"]]


# test_tool_hooks.py::test_mutation_does_not_affect_team_run
def test_member_hook_mutating_messages_does_not_affect_team_run() -> None:
    def clobber(function_name, function_call, arguments, run_context):
        run_context.messages.clear()
        return function_call(**arguments)

    member = Agent(
        name="Worker",
        tools=[get_climate_change_info],
        tool_hooks=[clobber],
        model=ScriptedModel([tool_call("get_climate_change_info"), "done"]),
    )
    team = Team(members=[member], model=ScriptedModel([delegate("worker", "x"), "team answer"]))
    response = team.run("go")
    assert response.content == "team answer"
    assert [m.role for m in response.messages][:2] == ["system", "user"]


# Agno leaks a member's own default keys into the team state (A4 in the research); agentnb keeps them private.
@pytest.mark.xfail(
    strict=True,
    reason="deliberate: a member's own keys stay in its private state, they never go up to the team's",
)
def test_member_default_keys_merge_into_team_state_as_agno() -> None:
    member = Agent(name="Worker", session_state={"worker_default": 1}, model=ScriptedModel(["ok"]))
    team = Team(
        members=[member], session_state={"shared": 0}, model=ScriptedModel([delegate("worker", "x"), "done"])
    )
    team.run("go")
    assert team.session_state == {"shared": 0, "worker_default": 1}


def test_member_default_keys_stay_private() -> None:
    member = Agent(name="Worker", session_state={"worker_default": 1}, model=ScriptedModel(["ok"]))
    team = Team(
        members=[member], session_state={"shared": 0}, model=ScriptedModel([delegate("worker", "x"), "done"])
    )
    team.run("go")
    assert team.session_state == {"shared": 0} and member.session_state == {"worker_default": 1}


# -- unit/team/test_team_mode.py (TestTeamModeBackwardsCompat) -------------------------------------


# test_team_mode.py::test_default_mode_is_coordinate / test_mode_coordinate_explicit
@pytest.mark.parametrize("options", [{}, {"mode": "coordinate"}])
def test_default_mode_is_coordinate(options: dict) -> None:
    team = Team(name="test", members=[], **options)
    assert team.mode == "coordinate"
    assert not team.respond_directly and not team.delegate_to_all_members


# test_team_mode.py::test_mode_route_sets_respond_directly / test_mode_broadcast_sets_delegate_to_all
def test_mode_sets_the_flags() -> None:
    route, broadcast = Team(name="r", members=[], mode="route"), Team(name="b", members=[], mode="broadcast")
    assert route.respond_directly is True and route.delegate_to_all_members is False
    assert broadcast.delegate_to_all_members is True and broadcast.respond_directly is False


# test_team_mode.py::test_respond_directly_infers_route / test_delegate_to_all_infers_broadcast
def test_the_flags_infer_the_mode() -> None:
    assert Team(name="test", members=[], respond_directly=True).mode == "route"
    assert Team(name="test", members=[], delegate_to_all_members=True).mode == "broadcast"


# The mode is what a run does: a team built with respond_directly=True, without a mode, routes
# (its prompt says so) and says so in its repr.
def test_a_team_with_respond_directly_runs_and_reads_as_route() -> None:
    member = Agent(name="Worker", model=ScriptedModel(["the member's answer"]))
    team = Team(
        name="t", members=[member], respond_directly=True, model=ScriptedModel([delegate("worker", "x")])
    )
    assert team.run("go").content == "the member's answer"
    assert "route mode" in team.history[-1].prompt.system_prompt
    assert "mode=route" in repr(team)


# test_team_mode.py::test_mode_route_overrides_conflicting_delegate_to_all and its three siblings
CONFLICTS = [
    {"mode": "route", "delegate_to_all_members": True},
    {"mode": "broadcast", "respond_directly": True},
    {"mode": "coordinate", "respond_directly": True, "delegate_to_all_members": True},
]


@pytest.mark.xfail(
    strict=True,
    reason="deliberate: an explicit mode and a flag that says otherwise are an error at definition, not a flag silently dropped",
)
@pytest.mark.parametrize("options", CONFLICTS)
def test_mode_overrides_conflicting_flags(options: dict) -> None:
    team = Team(name="test", members=[], **options)
    assert team.mode == options["mode"]
    assert team.respond_directly is (options["mode"] == "route")
    assert team.delegate_to_all_members is (options["mode"] == "broadcast")


@pytest.mark.parametrize("options", CONFLICTS)
def test_a_mode_and_a_flag_that_contradict_it_are_refused(options: dict) -> None:
    flag = next(k for k in options if k != "mode")
    with pytest.raises(TeamDefinitionError) as info:
        Team(name="test", members=[], **options)
    assert str(info.value).startswith(f"team 'test': mode={options['mode']!r} contradicts {flag}=True")
    assert str(info.value).endswith(
        "give the mode alone, which sets respond_directly and delegate_to_all_members"
    )


def test_two_flags_that_name_two_modes_are_refused_and_agreeing_ones_pass() -> None:
    with pytest.raises(
        TeamDefinitionError, match=r"respond_directly=True \(route mode.*delegate_to_all_members=True"
    ):
        Team(name="test", members=[], respond_directly=True, delegate_to_all_members=True)
    agreed = Team(name="test", members=[], mode="route", respond_directly=True, delegate_to_all_members=False)
    assert agreed.mode == "route"


# -- a team saved with db= (its members' runs with it) ---------------------------------------------


def shopping_team(db=None, **options) -> tuple[Team, Agent]:
    shopper = Agent(
        name="Shopper",
        tools=[add_item],
        model=ScriptedModel([tool_call("add_item", item="tea"), "Added tea."] * 2),
    )
    team = Team(
        name="Shop",
        members=[shopper],
        db=db,
        session_state={"shopping_list": []},
        model=ScriptedModel([delegate("shopper", "add tea"), "Tea is on the list."] * 2),
        **options,
    )
    return team, shopper


# test_event_streaming.py::test_tool_parent_run_id: the member's run is stored in the team's
# session with parent_run_id = the team's run, which the delegate call belongs to (read back here
# by a team built again on the same db, where Agno reads team.get_session().get_run(...)).
def test_tool_parent_run_id() -> None:
    from agentnb.sessions import InMemoryDb

    db = InMemoryDb()
    team, _ = shopping_team(db, session_id="test_session")
    team.run("What is the meaning of life?")
    again, shopper = shopping_team(db, session_id="test_session")
    team_run = again.history[-1]
    (member_run,) = team_run.children
    assert member_run is shopper.history[-1]
    assert member_run.parent_run_id == team_run.run_id
    (call,) = team_run.tool_calls
    assert call.name == "delegate_task_to_member" and call.run_id == member_run.parent_run_id
    assert call.child_run_id == member_run.run_id


@pytest.mark.parametrize("db", ["SqliteDb", "JsonDb"])
def test_a_team_saved_with_db_reloads_with_its_whole_tree(tmp_path, db) -> None:
    from agentnb.sessions import JsonDb, SqliteDb

    def make() -> object:
        return SqliteDb(db_file=tmp_path / "agents.db") if db == "SqliteDb" else JsonDb(db_path=tmp_path)

    team, shopper = shopping_team(make(), session_id="s1")
    team.run("tea please")
    team.run("more tea")
    again, shopper_again = shopping_team(make(), session_id="s1")
    assert [len(t.children) for t in again.history] == [1, 1]
    assert again.history.runs()["path"].tolist() == ["Shop", "Shop/Shopper", "Shop", "Shop/Shopper"]
    assert [t.run_id for t in shopper_again.history] == [t.run_id for t in shopper.history]
    assert again.session_state == {"shopping_list": ["tea", "tea"]}
    # the reloaded tree goes on, and is saved whole again
    again.run("and more")
    third, _ = shopping_team(make(), session_id="s1")
    assert [len(t.children) for t in third.history] == [1, 1, 1]
    assert third.session_state == {"shopping_list": ["tea", "tea", "tea"]}
