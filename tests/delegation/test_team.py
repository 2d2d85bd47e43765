"""Team (coordinate / route / broadcast, nesting, prompt blocks) and handoffs."""

from __future__ import annotations

import itertools
import random
import re
import threading

import pytest

from agentnb import Agent, ScriptedModel, Team, handoff, tool_call
from agentnb.errors import TeamDefinitionError
from agentnb.history.render import turn_html, turn_text
from agentnb.models.tokens import TokenCounter


def add_item(item: str, session_state) -> str:
    """Add an item to the shopping list."""
    session_state["shopping_list"].append(item)
    return f"added {item}"


def agent(name, steps, **kwargs):
    return Agent(name, model=ScriptedModel(steps), **kwargs)


def test_leader_prompt_has_team_members_block_and_mode():
    a = agent("Web Researcher", ["x"], role="Finds sources", description="Searches the web", tools=[add_item])
    sub = Team("Writers", members=[agent("editor", ["y"])], description="Writes things")
    team = Team(
        "lead",
        members=[a, sub],
        model=ScriptedModel(["hi"]),
        add_member_tools_to_context=True,
        instructions="Be brief.",
    )
    prompt = team.observe("hello").system_prompt
    assert prompt.startswith(
        "<team_members>\n"
        '<member id="web-researcher" name="Web Researcher">\n'
        "  Role: Finds sources\n  Description: Searches the web\n  Tools: add_item\n</member>\n"
        '<member id="writers" name="Writers" type="team">\n  Description: Writes things\n'
        '  <member id="editor" name="editor">\n  </member>\n</member>\n</team_members>'
    )
    assert "coordinate mode" in prompt and prompt.endswith("Be brief.")
    sources = [s.source for s in team.observe("hello").sections]
    assert sources[:2] == ["team_members", "team_mode"] and "instructions" in sources
    assert [t.name for t in team.all_tools()] == ["delegate_task_to_member"]
    assert [t.name for t in Team("b", members=[a], mode="broadcast").all_tools()] == [
        "delegate_task_to_members"
    ]


def test_coordinate_unknown_member_is_an_error_result_the_leader_can_fix():
    shopper = agent("shopper", ["ok"])
    team = Team(
        "team",
        members=[shopper],
        model=ScriptedModel(
            [
                tool_call("delegate_task_to_member", member_id="nobody", task="x"),
                tool_call("delegate_task_to_member", member_id="shopper", task="x"),
                "done",
            ]
        ),
    )
    team.run("go")
    first, second = team.history[-1].tool_calls
    assert (
        first.error
        == "team 'team' has no member 'nobody'; members: shopper (DelegationError raised by tool 'delegate_task_to_member')"
    )
    assert second.error is None and second.result == "ok"


def test_route_mode_answers_with_the_member_answer_without_another_leader_call():
    billing = agent("billing", ["Your invoice is 12 EUR."])
    leader_model = ScriptedModel([tool_call("delegate_task_to_member", member_id="billing", task="invoice?")])
    team = Team("support", members=[billing], model=leader_model, mode="route")
    assert team.run("what do I owe?").content == "Your invoice is 12 EUR."
    assert len(leader_model.requests) == 1 and team.respond_directly


def test_member_interactions_and_team_history_are_labelled_sections():
    a = agent("a", ["A1", "A2"])
    b = agent("b", ["B1", "B2"])
    leader = ScriptedModel(
        [
            tool_call("delegate_task_to_member", member_id="a", task="first"),
            tool_call("delegate_task_to_member", member_id="b", task="second"),
            "done 1",
            tool_call("delegate_task_to_member", member_id="b", task="third"),
            "done 2",
        ]
    )
    team = Team(
        "t", members=[a, b], model=leader, share_member_interactions=True, add_team_history_to_members=True
    )
    team.run("turn one")
    prompt = team.history[-1].children[1].prompt
    assert (
        prompt.user_prompt
        == "<member_interaction_context>\nSee below interactions with other team members.\nMember: a\nTask: first\nResponse: A1\n\n</member_interaction_context>\n\nsecond"
    )
    assert [s.source for s in prompt.user_sections] == [
        "share_member_interactions",
        "task (delegate_task_to_member)",
    ]
    team.run("turn two")
    prompt = team.history[-1].children[0].prompt
    assert (
        prompt.user_prompt
        == "<team_history_context>\n[run-1]\ninput: turn one\nresponse: done 1\n\n</team_history_context>\n\nthird"
    )
    assert [s.source for s in prompt.user_sections] == [
        "add_team_history_to_members",
        "task (delegate_task_to_member)",
    ]
    for section in prompt.user_sections:
        assert prompt.user_prompt[section.start : section.end] == section.text


def test_nested_team_chain_usage_and_record():
    shopper = agent("shopper", [tool_call("add_item", item="tea"), "added tea"], tools=[add_item])
    sub = Team(
        "sub",
        members=[shopper],
        model=ScriptedModel(
            [tool_call("delegate_task_to_member", member_id="shopper", task="tea"), "sub done"]
        ),
    )
    top = Team(
        "top",
        members=[sub],
        model=ScriptedModel(
            [tool_call("delegate_task_to_member", member_id="sub", task="get tea"), "all done"]
        ),
        session_state={"shopping_list": []},
    )
    top.run("tea please")
    assert top.session_state == {"shopping_list": ["tea"]}
    turn = top.history[-1]
    (sub_run,) = turn.children
    (shop_run,) = sub_run.children
    assert shop_run.path == ("top", "sub", "shopper") and shop_run.started.depth == 2
    (merge,) = turn.state_changes
    assert merge.cause.chain() == "top ▸ sub ▸ shopper ▸ tool:add_item"
    assert turn.usage_total == turn.usage + sub_run.usage + shop_run.usage
    text = turn_text(turn)
    assert "delegations (1):\n  ▸ top ▸ sub · task: 'get tea' · answer: 'sub done'" in text
    assert (
        "\n    ▸ top ▸ sub ▸ shopper · task: 'tea' · answer: 'added tea' · state: + shopping_list › 0: \"tea\" (by tool:add_item)"
        in text
    )
    assert 'state:\n  + shopping_list › 0: "tea"  (by merge:sub ▸ shopper ▸ tool:add_item)' in text
    html = turn_html(turn)
    assert "<details open><summary>▸ top ▸ sub" in html and "<script" not in html


class FinishOrder:
    """Makes members that run side by side finish their tool call in a chosen order (a member
    run alone would wait for one that never comes: the wait fails the test instead)."""

    def __init__(self, order: tuple[str, ...]) -> None:
        self.order, self.done = order, []
        self._turn = threading.Condition()

    def wait_for_turn(self, name: str) -> None:
        with self._turn:
            if not self._turn.wait_for(lambda: self.order[len(self.done)] == name, timeout=20):
                raise AssertionError(
                    f"{name} waited for {self.order[len(self.done)]}: the members did not run side by side"
                )
            self.done.append(name)
            self._turn.notify_all()


def ordered_member(name: str, finish: FinishOrder) -> Agent:
    def work(session_state) -> str:
        """Do some work, finishing when the test says."""
        finish.wait_for_turn(name)
        session_state.setdefault(f"by_{name}", name)
        return name

    return agent(name, [tool_call("work"), f"{name} finished"], tools=[work])


def masked_record(team: Team) -> str:
    turn = team.history[-1]
    text = turn_text(turn) + "\n" + repr(team.session_state)
    for record in turn.walk():
        text += "\n" + record.run_id
    ids = {r.run_id: f"run{i}" for i, r in enumerate(turn.walk())}
    for run_id, label in ids.items():
        text = text.replace(run_id, label)
    return re.sub(r"\d+\.\d+ ?ms", "<ms>", text)


def test_broadcast_of_three_is_byte_identical_over_20_runs_with_random_completion():
    records = set()
    finish_orders = set()
    rng = random.Random(20)
    orders = list(itertools.permutations(("alpha", "beta", "gamma")))
    for run in range(20):
        finish = FinishOrder(
            orders[run] if run < len(orders) else rng.choice(orders)
        )  # every order, then random ones
        members = [ordered_member(n, finish) for n in ("alpha", "beta", "gamma")]
        team = Team(
            "panel",
            members=members,
            mode="broadcast",
            model=ScriptedModel([tool_call("delegate_task_to_members", task="work"), "summary"]),
            session_state={"shared": 1},
        )
        team.run("go")
        finish_orders.add(tuple(finish.done))
        records.add(masked_record(team))
    assert len(records) == 1
    record = records.pop()
    assert (
        "Agent alpha: alpha finished\\n\\nAgent beta: beta finished\\n\\nAgent gamma: gamma finished"
        in record
    )
    assert "'by_alpha'" not in record  # member's new keys stay private
    assert len(finish_orders) == 6  # the members finished in every order, and the record never changed


def test_team_definition_errors():
    a = agent("a", [])
    with pytest.raises(TeamDefinitionError, match="member 'a' is named twice"):
        Team("t", members=[a, agent("a", [])])
    inner = Team("inner", members=[a])
    outer = Team("outer", members=[inner])
    inner.members.append(outer)
    with pytest.raises(TeamDefinitionError, match="outer ▸ inner ▸ outer is a cycle"):
        Team("outer", members=[inner])
    with pytest.raises(TeamDefinitionError, match="tasks mode is not supported"):
        Team("t", members=[a], mode="tasks")
    assert Team([a], name="agno_style").members == [a]


def test_handoff_moves_control_and_keeps_the_agent_in_charge():
    billing_model = ScriptedModel(["You owe 5 EUR.", "Paid, thanks."])
    billing = Agent("billing", model=billing_model, description="Invoices and payments")
    triage_model = ScriptedModel([tool_call("transfer_to_billing")])
    triage = Agent("triage", model=triage_model, handoffs=[billing])
    assert [t.name for t in triage.all_tools()] == ["transfer_to_billing"]
    assert triage.run("how much do I owe?").content == "You owe 5 EUR."
    assert triage.in_charge is billing and triage.agent_in_charge() is billing
    # the next turn goes to billing without asking triage's model
    assert triage.run("I paid").content == "Paid, thanks."
    assert len(triage_model.requests) == 1
    second = triage.history[-1]
    assert [e.kind for e in second.events][:4] == [
        "run_started",
        "prompt_rendered",
        "tool_call_started",
        "tool_call_finished",
    ]
    # billing sees the conversation so far (its own earlier turn in context, memory="member")
    sent = billing_model.requests[-1].messages
    assert [m["role"] for m in sent][-1] == "user" and sent[-1]["content"] == "I paid"
    assert any(m.get("content") == "You owe 5 EUR." for m in sent)
    triage.reset()
    assert triage.in_charge is None


def test_handoff_input_filter_and_hand_back():
    seen = []

    def only_user(messages):
        seen.append([m.role for m in messages])
        return [m for m in messages if m.role == "user"]

    refunds = Agent(
        "refunds", model=ScriptedModel([tool_call("transfer_to_triage"), "Back to triage next time."])
    )
    triage = Agent(
        "triage",
        model=ScriptedModel(["hello", tool_call("transfer_to_refunds")]),
        handoffs=[handoff(refunds, input_filter=only_user)],
        add_history_to_context=True,
    )
    refunds.handoffs = [handoff(triage)]
    triage.run("hi")
    triage.run("refund please")
    # the run so far: the earlier turn, the message, the handoff call answered with the transfer
    assert seen == [["user", "assistant", "user", "assistant", "tool"]]
    child = triage.history[-1].children[0]
    assert [m.role for m in child.messages][:2] == ["user", "user"]  # the filtered history, then the message
    assert child.tool_calls[0].result == "Control goes back to triage from the next message."
    assert triage.in_charge is None


def shop_team() -> Team:
    shopper = agent(
        "shopper",
        [tool_call("add_item", item="tea"), "added"] * 3,
        tools=[add_item],
        session_state={"mine": 0},
    )
    return Team(
        "team",
        members=[shopper],
        model=ScriptedModel(
            [tool_call("delegate_task_to_member", member_id="shopper", task="tea"), "done"] * 3
        ),
        session_state={"shopping_list": []},
    )


def test_one_session_holds_the_tree_and_resume_relinks_it(tmp_path):
    from agentnb.sessions import JSONSession

    team = shop_team()
    team.attach_recording(tmp_path, "nb")
    team.run("one")
    team.run("two")
    saved = JSONSession(tmp_path).load_session_state_sync
    assert set(team.modules("agent")) == {"agent", "agent/shopper"}
    again = shop_team()
    again.attach_recording(tmp_path, "nb")
    assert again.resume() == 2
    assert len(again.members[0].history) == 2 and again.members[0].session_state == {"mine": 0}
    assert [[c.run_id for c in t.children] for t in again.history] == [
        [c.run_id for c in t.children] for t in team.history
    ]
    assert again.history.runs()["path"].tolist() == ["team", "team/shopper", "team", "team/shopper"]
    assert callable(saved)


def test_fork_and_reset_work_on_the_whole_tree():
    team = shop_team()
    team.run("one")
    team.run("two")
    forked = team.fork("f", turn=1)
    assert len(forked.history) == 1 and len(forked.members[0].history) == 1
    assert forked.members[0] is not team.members[0] and forked.session_state == {"shopping_list": ["tea"]}
    assert forked.history[0].children[0].run_id == team.history[0].children[0].run_id
    team.reset()
    assert (len(team.history), len(team.members[0].history), team.session_state) == (
        0,
        0,
        {"shopping_list": []},
    )


def test_agent_in_charge_is_saved_with_the_session():
    billing = agent("billing", ["5 EUR"])
    triage = agent("triage", [tool_call("transfer_to_billing")], handoffs=[billing])
    triage.run("owe?")
    saved = triage.state_dict()
    assert saved["in_charge"] == "billing"
    fresh = agent("triage", [], handoffs=[billing])
    fresh.load_state_dict(saved)
    assert fresh.in_charge is billing


def test_runs_tool_calls_and_changes_frames_carry_path_and_chain():
    team = shop_team()
    team.run("one")
    runs = team.history.runs()
    assert runs[["path", "tokens_own", "tokens_total"]].values.tolist()[1][0] == "team/shopper"
    top, member_row = runs.to_dict("records")
    assert (
        top["tokens_total"] == top["tokens_own"] + member_row["tokens_total"]
        and member_row["parent_run_id"] == top["run_id"]
    )
    calls = team.history.tool_calls()
    assert calls[["path", "chain"]].values.tolist() == [
        ["team", "team ▸ delegate_task_to_member"],
        ["team/shopper", "team ▸ shopper ▸ add_item"],
    ]
    assert calls["child_run_id"].tolist()[0] == member_row["run_id"]
    changes = team.history.changes()
    assert changes[["path", "author", "chain"]].values.tolist() == [
        ["team", "merge:shopper ▸ tool:add_item", "team ▸ shopper ▸ tool:add_item"],
        ["team/shopper", "tool:add_item", "team ▸ shopper ▸ tool:add_item"],
    ]


def test_diff_of_two_team_turns_covers_the_delegated_runs():
    def team_with(answer: str) -> Team:
        shopper = agent("shopper", [tool_call("add_item", item="tea"), answer], tools=[add_item])
        return Team(
            "team",
            members=[shopper],
            model=ScriptedModel(
                [tool_call("delegate_task_to_member", member_id="shopper", task="tea"), "done"]
            ),
            session_state={"shopping_list": []},
        )

    left, right, same = team_with("added tea"), team_with("added green tea"), team_with("added tea")
    for team in (left, right, same):
        team.run("tea please")
    differ = left.compare(right)
    assert "the delegated runs differ" in differ.effects
    text = differ.text()
    assert "delegations:" in text and "answer: 'added green tea'" in text
    assert "delegated runs" not in " ".join(left.compare(same).effects)
    assert "delegations:\n  = the same" in left.compare(same).text()
    assert "<script" not in differ.html() and "delegations</td>" in differ.html()


def test_the_leaders_hook_wraps_the_delegation_and_can_veto_it():
    seen = []

    def gate(function_name, arguments, function_call):
        seen.append((function_name, dict(arguments)))
        if arguments.get("member_id") == "shopper":
            return "not today"
        return function_call(**arguments)

    shopper = agent("shopper", ["never runs"])
    team = Team(
        "team",
        members=[shopper],
        tool_hooks=[gate],
        model=ScriptedModel([tool_call("delegate_task_to_member", member_id="shopper", task="x"), "ok"]),
    )
    team.run("go")
    (call,) = team.history[-1].tool_calls
    assert seen == [("delegate_task_to_member", {"member_id": "shopper", "task": "x"})]
    assert call.result == "not today" and call.answered_by == "gate" and call.child_run_id is None
    assert len(shopper.history) == 0 and team.history[-1].children == []


class WordCounter(TokenCounter):
    """Counts words: exact, and unlike the 4-characters estimate it tells one text from another."""

    exact = True

    @property
    def name(self) -> str:
        return "words"

    def count(self, text: str) -> int:
        return len(text.split())


class Counted(ScriptedModel):
    """A scripted model whose token counter is ``WordCounter``."""

    def token_counter(self) -> TokenCounter:
        return WordCounter()


def test_what_the_team_added_to_a_members_message_is_counted_part_by_part():
    counter = WordCounter()
    a = Agent("a", model=Counted(["A1", "A2"]))
    b = Agent("b", model=Counted(["B1 answered", "B2"]), instructions="You are b.")
    leader = ScriptedModel(
        [
            tool_call("delegate_task_to_member", member_id="a", task="first"),
            tool_call("delegate_task_to_member", member_id="b", task="the second task"),
            "done 1",
            tool_call("delegate_task_to_member", member_id="b", task="third"),
            "done 2",
        ]
    )
    team = Team(
        "t", members=[a, b], model=leader, share_member_interactions=True, add_team_history_to_members=True
    )
    team.run("turn one")
    team.run("turn two")
    prompts = [team.history[0].children[1].prompt, team.history[1].children[0].prompt]
    assert [[s.source for s in p.user_sections] for p in prompts] == [
        ["share_member_interactions", "task (delegate_task_to_member)"],
        ["add_team_history_to_members", "task (delegate_task_to_member)"],
    ]
    for prompt in prompts:
        tokens = prompt.tokens
        assert tokens.counter == "words" and tokens.exact
        assert tokens.user_sections == tuple(counter.count(s.text) for s in prompt.user_sections)
        assert tokens.sections == tuple(
            counter.count(s.text) for s in prompt.sections
        )  # the same counter as the system prompt's
        assert tokens.user == counter.count(
            prompt.user_prompt
        )  # the parts are of the message, not added to it
        assert tokens.earlier_sections == () and tokens.total == tokens.system + tokens.history + tokens.user
    assert prompts[0].tokens.user_sections[1] == 3  # "the second task"
    assert prompts[0].tokens.user_sections[0] == len(prompts[0].user_sections[0].text.split()) > 10
    # a member asked without a team's additions has nothing labelled to count
    assert team.history[0].children[0].prompt.tokens.user_sections == (1,)  # its task alone: "first"


def test_a_handoffs_filtered_history_is_labelled_and_counted_message_by_message():
    counter = WordCounter()

    def only_user(messages):
        return [m for m in messages if m.role == "user"]

    refunds = Agent("refunds", model=Counted(["Refunded in full."]))
    triage = Agent(
        "triage",
        model=ScriptedModel(["hello there", tool_call("transfer_to_refunds")]),
        handoffs=[handoff(refunds, input_filter=only_user)],
        add_history_to_context=True,
    )
    triage.run("hi, my order 42 is late")
    triage.run("refund please")
    prompt = triage.history[-1].children[0].prompt
    assert [(s.source, s.text) for s in prompt.earlier_sections] == [
        ("handoff (transfer_to_refunds) history, after input_filter: user", "hi, my order 42 is late")
    ]
    assert [(s.source, s.text) for s in prompt.user_sections] == [
        ("handoff (transfer_to_refunds)", "refund please")
    ]
    tokens = prompt.tokens
    assert tokens.earlier_sections == (counter.count("hi, my order 42 is late"),) == (6,)
    assert tokens.user_sections == (2,)
    # the history is sent, so it is in the prompt's total (it was counted nowhere before)
    assert tokens.total == tokens.system + tokens.history + 6 + tokens.user + (tokens.template or 0)


def test_a_members_record_and_preview_break_its_message_down_by_what_the_team_added():
    counter = WordCounter()
    b = Agent("b", model=Counted(["B1", "B2"]))
    team = Team(
        "t",
        members=[b],
        model=ScriptedModel(
            [
                tool_call("delegate_task_to_member", member_id="b", task="one"),
                "done 1",
                tool_call("delegate_task_to_member", member_id="b", task="two more"),
                "done 2",
            ]
        ),
        add_team_history_to_members=True,
    )
    team.run("turn one")
    team.run("turn two")
    child = team.history[-1].children[0]
    history, task = child.prompt.user_sections
    counts = (counter.count(history.text), counter.count(task.text))
    assert counts[1] == 2
    line = f"user message {child.prompt.tokens.user} (add_team_history_to_members {counts[0]} · task (delegate_task_to_member) {counts[1]})"
    assert line in turn_text(child)
    # what %agentnb preview t/b shows: the same parts, counted by the member's counter
    observation = team.observe_member("b", "three")
    assert [s.source for s in observation.user_sections] == [
        "add_team_history_to_members",
        "task (delegate_task_to_member)",
    ]
    assert observation.tokens.user_sections == tuple(counter.count(s.text) for s in observation.user_sections)
    # a handoff's history is its own part of the prompt's cost
    refunds = Agent("refunds", model=Counted(["Refunded."]))
    triage = Agent(
        "triage",
        model=ScriptedModel(["hello there", tool_call("transfer_to_refunds")]),
        handoffs=[refunds],
        add_history_to_context=True,
    )
    triage.run("my order is late")
    triage.run("refund please")
    handed = triage.history[-1].children[0]
    # "my order is late", "hello there", then the run so far: "transfer_to_refunds({})" and the
    # transfer note '{"assistant": "refunds"}'
    assert handed.prompt.tokens.earlier_sections == (4, 2, 1, 2)
    assert "handoff history 9 · user message 2)" in turn_text(handed)
