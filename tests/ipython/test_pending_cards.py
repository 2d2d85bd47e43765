"""The inspector's pending cards on the wire: what a paused turn's cards carry, what a card sends
(a decision, a check of arguments being typed) and what comes back, and every way a card's
message can be wrong — arguments that do not fit the schema, an item decided already, an unknown
item, a turn that went on or was left behind, a kind that does not take the decision."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from test_inspector import Clock, Wire

from agentnb import Agent, ScriptedModel, Team, tool, tool_call
from agentnb.ipython import pending_cards, wire
from agentnb.ipython.inspector import Inspector
from agentnb.ipython.record import static_text

# A viewer that breaks on a paused or resumed run warns (and would lose the inspector's view).
pytestmark = pytest.mark.filterwarnings("error:agentnb. event subscriber:UserWarning")

ROOT = Path(__file__).resolve().parents[2]
K = wire.KIND


@tool(requires_approval=True)
def charge(customer: str, amount: int, session_state) -> str:
    """Charge a customer's card."""
    session_state["charged"].append([customer, amount])
    return f"charged {customer} {amount}"


def pay_answer(request) -> Any:
    last = request.messages[-1]
    if last["role"] == "tool":
        return "Done: " + "; ".join(m["content"] for m in request.messages if m["role"] == "tool")
    words = last["content"].split()
    pairs = list(zip(words[::2], words[1::2]))
    return (
        [tool_call("charge", customer=n, amount=int(a)) for n, a in pairs] if pairs else "Nothing to charge."
    )


def paused_pay(monkeypatch) -> tuple[Agent, Wire]:
    agent = Agent("pay", ScriptedModel(pay_answer), tools=[charge], session_state={"charged": []})
    sent = Wire(Inspector.for_agent(agent), monkeypatch, Clock(step=0.0))
    agent.run("bob 250 ann 40")
    return agent, sent


def cards(sent: Wire) -> dict[str, Any]:
    """The last ``pending`` message sent."""
    return [m for m in sent.messages if m[K] == pending_cards.PENDING][-1]


def decide(sent: Wire, item: str, verdict: str, turn: int = 0, **fields: Any) -> dict[str, Any]:
    """Send a card's decision; the replies it brought (the first of each kind), and ``all`` of them."""
    before = len(sent.messages)
    sent.inspector._on_msg(
        sent.inspector,
        {K: pending_cards.DECIDE, wire.TURN_INDEX: turn, pending_cards.ITEM: item, "verdict": verdict,
         pending_cards.TICKET: "view-1:7", **fields},
        [],
    )  # fmt: skip
    replies = sent.messages[before:]
    return {"all": replies, **{m[K]: m for m in reversed(replies) if m[K] != wire.BATCH}}


def refused(sent: Wire, item: Any, verdict: str = "approve", **fields: Any) -> str:
    replies = decide(sent, item, verdict, **fields)
    failed = replies[pending_cards.DECIDE_FAILED]
    assert failed[pending_cards.TICKET] == "view-1:7" and failed[pending_cards.ITEM] == item
    assert [m[K] for m in replies["all"]] == [pending_cards.DECIDE_FAILED]  # nothing else moved
    return failed[wire.TEXT]


def test_the_wire_names_match_the_front_end() -> None:
    source = (ROOT / "js" / "pending.js").read_text()
    block = re.search(r"export const CARD_WIRE = (\{.*?\});", source, re.S)
    assert block is not None and json.loads(block.group(1)) == pending_cards.CARD_WIRE


def test_a_pause_sends_its_cards_after_the_pause_and_the_snapshot_carries_them(monkeypatch) -> None:
    agent, sent = paused_pay(monkeypatch)
    kinds = [m[K] for m in sent.messages]
    assert kinds[-2:] == [wire.BATCH, pending_cards.PENDING]  # the pause first, then its cards
    assert sent.events()[-1][wire.EVENT_BODY]["kind"] == "run_paused"
    message = cards(sent)
    assert (message[wire.TURN_INDEX], message[pending_cards.RUN_ID], message[pending_cards.PAUSES]) == (
        0,
        agent.history[0].run_id,
        1,
    )
    bob, ann = message[pending_cards.ITEMS]
    assert [bob["id"], ann["id"]] == [item.id for item in agent.pending]
    assert (bob["kind"], bob["tool"], bob["arguments"], bob["path"]) == (
        "approval", "charge", {"customer": "bob", "amount": 250}, ["pay"],
    )  # fmt: skip
    assert bob["parameters"]["properties"]["amount"] == {"type": "integer"}
    assert bob["decision"] is None and bob["request"] is None
    # What led to both is their run's, said once.
    assert bob["run_id"] == ann["run_id"] == agent.history[0].run_id
    (led,) = message[pending_cards.RUNS].values()
    assert led["state"] == '{"charged": []}' and led["earlier"] == 0
    assert [m["role"] for m in led["prompt"]] == ["user", "assistant"]
    assert [c["function"]["name"] for c in led["prompt"][1]["tool_calls"]] == ["charge", "charge"]
    assert (
        bob["line"]
        == f'[{bob["id"]}] approval: charge({{"customer": "bob", "amount": 250}}) — charge requires approval'
    )
    snapshot = json.loads(sent.inspector.snapshot())
    assert snapshot[pending_cards.PENDING][pending_cards.ITEMS] == message[pending_cards.ITEMS]


def test_cards_approve_one_then_edit_the_other_and_the_turn_goes_on(monkeypatch) -> None:
    agent, sent = paused_pay(monkeypatch)
    bob, ann = (item.id for item in agent.pending)
    replies = decide(sent, bob, "approve")
    assert replies[pending_cards.DECIDED][wire.TEXT] == "1 other item(s) still wait for a decision"
    assert replies[pending_cards.DECIDED][pending_cards.TICKET] == "view-1:7"
    assert [c["decision"] for c in replies[pending_cards.PENDING][pending_cards.ITEMS]] == [
        {"verdict": "approved", "arguments": None, "reason": None, "value": None, "by": "person"},
        None,
    ]
    assert agent.is_paused and agent.session_state == {"charged": []}  # nothing ran yet

    replies = decide(sent, ann, "edit", arguments='{"customer": "ann", "amount": 30}')
    assert replies[pending_cards.DECIDED][wire.TEXT] == "the turn goes on"
    assert replies[pending_cards.PENDING][pending_cards.ITEMS][1]["decision"]["arguments"] == {
        "customer": "ann",
        "amount": 30,
    }
    # The turn went on in the kernel and the view followed it: the same turn, live.
    kinds = [e[wire.EVENT_BODY]["kind"] for e in sent.events()]
    assert kinds[kinds.index("run_resumed") :][-1] == "run_finished"
    assert {e[wire.TURN_INDEX] for e in sent.events()} == {0}
    assert agent.session_state == {"charged": [["bob", 250], ["ann", 30]]}
    turn = agent.history[0]
    assert (len(agent.history), turn.status, turn.content) == (
        1,
        "ok",
        "Done: charged bob 250; charged ann 30",
    )
    assert [c.decision for c in turn.tool_calls] == ["approved", "edited"]
    assert pending_cards.PENDING not in json.loads(sent.inspector.snapshot())  # a new view shows no card


def test_a_rejected_call_does_not_run_and_the_model_reads_why(monkeypatch) -> None:
    agent, sent = paused_pay(monkeypatch)
    bob, ann = (item.id for item in agent.pending)
    assert refused(sent, bob, "reject", reason="  ") == (
        f"reject pending item {bob} (approval: charge) with a reason: the model reads it (item.reject('why'))"
    )
    decide(sent, bob, "reject", reason="bob paid in cash")
    decide(sent, ann, "approve")
    assert agent.session_state == {"charged": [["ann", 40]]}
    assert agent.history[0].content == "Done: Rejected by the person: bob paid in cash; charged ann 40"


def test_arguments_that_do_not_fit_or_are_not_json_are_refused_and_nothing_is_decided(monkeypatch) -> None:
    agent, sent = paused_pay(monkeypatch)
    bob = agent.pending[0].id
    assert refused(sent, bob, "edit", arguments='{"customer": "bob", "amount": "lots"}') == (
        f"the arguments for pending item {bob} (approval: charge) do not fit the tool's schema: amount: "
        "must be integer; give arguments that do"
    )
    assert refused(sent, bob, "edit", arguments='{"customer": "bob"') == (
        f"the arguments for pending item {bob}: not JSON (Expecting ',' delimiter at position 18)"
    )
    assert refused(sent, bob, "edit", arguments='["bob", 5]') == (
        f"the arguments for pending item {bob} (approval: charge) must be a dict; got list"
    )
    assert refused(sent, bob, "edit", arguments={"customer": "bob"}).startswith(
        f"the arguments for pending item {bob}: JSON text is needed, got dict"
    )
    assert refused(sent, bob, "edit", arguments="[" * 100_000).endswith("nested too deeply")
    assert not agent.pending[0].decided and agent.is_paused


def test_deciding_twice_an_unknown_item_and_a_wrong_kind_are_refused(monkeypatch) -> None:
    agent, sent = paused_pay(monkeypatch)
    bob = agent.pending[0].id
    decide(sent, bob, "approve")
    # A second view (or tab) sends the same decision before it heard of the first.
    assert refused(sent, bob) == (
        f"pending item {bob} (approval: charge) was already approved by person, in another view or in "
        "Python: a decision is taken once"
    )
    assert (
        refused(sent, "zzz")
        == f"pay has no pending item 'zzz'; the pending items are {bob}, {agent.pending[1].id}"
    )
    assert refused(sent, None) == "a card's message names its pending item (its id, as text)"
    assert refused(sent, ["x"]) == "a card's message names its pending item (its id, as text)"
    ann = agent.pending[1].id
    assert refused(sent, ann, "answer", answer="yes").startswith(
        f"pending item {ann} (approval: charge) waits for approval, not an answer"
    )
    assert (
        refused(sent, ann, "run it")
        == "a card decides with one of approve, edit, reject, answer; got 'run it'"
    )
    assert refused(sent, ann, turn=5) == "pay has no turn 5; the card names a turn that is not there"
    assert refused(sent, ann, turn=True) == "pay has no turn True; the card names a turn that is not there"
    assert agent.is_paused and not agent.pending[1].decided


def test_a_card_of_a_turn_that_went_on_or_was_left_behind_is_refused(monkeypatch) -> None:
    agent, sent = paused_pay(monkeypatch)
    bob, ann = (item.id for item in agent.pending)
    decide(sent, bob, "approve")
    decide(sent, ann, "approve")  # the turn goes on and ends
    assert refused(sent, ann) == (
        f"turn 1 of pay no longer waits for a decision (it is ok now); pending item {ann} cannot be decided"
    )
    agent.run("carl 9")
    carl = agent.pending[0].id
    assert sent.ask(**{K: wire.SYNC})[wire.SUMMARIES][1]["status"] == "paused"
    agent.run("dan 1")  # a new turn leaves the paused one behind
    # A new view's History says so too (the paused turn's row was not kept as it was).
    left = sent.ask(**{K: wire.SYNC})[wire.SUMMARIES][1]
    assert (left["status"], left["pauses"], left["resumed"]) == ("failed", 1, 0)
    assert refused(sent, carl, turn=1) == (
        f"turn 2 of pay no longer waits for a decision (a newer turn started since); pending item {carl} "
        "cannot be decided"
    )
    dan = agent.pending[0].id
    other_run = {pending_cards.RUN_ID: "not-this-run"}
    assert refused(sent, dan, turn=2, **other_run).startswith(
        "turn 3 of pay no longer waits for a decision (it is another run now)"
    )


def test_arguments_are_checked_as_they_are_typed(monkeypatch) -> None:
    agent, sent = paused_pay(monkeypatch)
    bob = agent.pending[0].id

    def check(text: Any, item: Any = bob) -> Any:
        reply = sent.ask(**{K: pending_cards.CHECK, wire.TURN_INDEX: 0, pending_cards.ITEM: item,
                            pending_cards.ARGUMENTS: text, pending_cards.TICKET: "v:1"})  # fmt: skip
        assert reply[K] == pending_cards.CHECKED and reply[pending_cards.TICKET] == "v:1"
        assert reply[pending_cards.ARGUMENTS] == text and reply[pending_cards.ITEM] == item
        return reply[wire.TEXT]

    assert check('{"customer": "bob", "amount": 3}') is None
    assert check('{"customer": "bob", "amount": "x"}').endswith(
        "amount: must be integer; give arguments that do"
    )
    assert check('{"customer": "bob"}').endswith(
        "(arguments): must contain ['amount'] properties; give arguments that do"
    )
    assert check("{").endswith("not JSON (Expecting property name enclosed in double quotes at position 1)")
    assert check("{}", item="nope").startswith("pay has no pending item 'nope'")
    assert not agent.pending[0].decided  # a check decides nothing


def test_a_decision_taken_in_python_reaches_the_cards_after_the_cell(monkeypatch) -> None:
    agent, sent = paused_pay(monkeypatch)
    agent.pending[1].reject("not today")
    sent.inspector._after_cell()
    assert [c["decision"] and c["decision"]["verdict"] for c in cards(sent)[pending_cards.ITEMS]] == [
        None,
        "rejected",
    ]
    count = len(sent.messages)
    sent.inspector._after_cell()  # nothing new: nothing sent again
    assert [m[K] for m in sent.messages[count:]].count(pending_cards.PENDING) == 0


def test_a_question_answered_from_its_card(monkeypatch) -> None:
    def ask(request) -> Any:
        last = request.messages[-1]
        return (
            f"Booked {last['content']}."
            if last["role"] == "tool"
            else tool_call("ask_user", question="Which city?")
        )

    agent = Agent("helper", ScriptedModel(ask), ask_user=True)
    sent = Wire(Inspector.for_agent(agent), monkeypatch, Clock(step=0.0))
    agent.run("book")
    (card,) = cards(sent)[pending_cards.ITEMS]
    assert (card["kind"], card["reason"]) == ("question", "Which city?")
    assert refused(sent, card["id"]).startswith(
        f"pending item {card['id']} (question: ask_user) is answered, not approved"
    )
    assert (
        refused(sent, card["id"], "answer", answer=["Lisbon"])
        == f"the answer to pending item {card['id']} is text; got list"
    )
    decide(sent, card["id"], "answer", answer="Lisbon")
    assert agent.history[0].content == "Booked Lisbon."


def test_a_breakpoint_card_shows_the_request_and_its_edit_is_what_the_model_gets(monkeypatch) -> None:
    model = ScriptedModel(lambda request: "You said: " + request.messages[-1]["content"])
    agent = Agent("stepper", model, break_before=["model"])
    sent = Wire(Inspector.for_agent(agent), monkeypatch, Clock(step=0.0))
    agent.run("hello")
    (card,) = cards(sent)[pending_cards.ITEMS]
    assert card["kind"] == "breakpoint" and card["tool"] is None
    assert card["request"]["messages"][-1] == {"role": "user", "content": "hello"}
    check = sent.ask(
        **{
            K: pending_cards.CHECK,
            wire.TURN_INDEX: 0,
            pending_cards.ITEM: card["id"],
            pending_cards.ARGUMENTS: "{}",
        }
    )
    assert check[wire.TEXT] == f"pending item {card['id']} is a model call: it has no arguments to check"
    assert refused(sent, card["id"], "reject", reason="no").startswith(
        f"pending item {card['id']} (breakpoint: model call 1) is a model call and cannot be rejected"
    )
    assert refused(sent, card["id"], "edit", request='{"messages": []}').endswith(
        "must be a non-empty list of chat messages"
    )
    edited = dict(card["request"], messages=[{"role": "user", "content": "hello from the card"}])
    decide(sent, card["id"], "edit", request=json.dumps(edited))
    assert model.requests[-1].messages[-1]["content"] == "hello from the card"
    assert agent.history[0].content == "You said: hello from the card"


def test_a_members_card_names_its_path_and_going_on_resumes_the_member_then_the_leader(monkeypatch) -> None:
    billing = Agent("billing", ScriptedModel([tool_call("charge", customer="eve", amount=7), "Charged eve."]),
                    tools=[charge], session_state={"charged": []})  # fmt: skip
    team = Team(
        "desk",
        ScriptedModel(
            [tool_call("delegate_task_to_member", member_id="billing", task="charge eve 7"), "All done."]
        ),
        members=[billing],
        session_state={"charged": []},
    )
    sent = Wire(Inspector.for_agent(team), monkeypatch, Clock(step=0.0))
    team.run("charge eve")
    (card,) = cards(sent)[pending_cards.ITEMS]
    assert card["path"] == ["desk", "billing"] and card["tool"] == "charge"
    assert card["line"].endswith("[desk ▸ billing] — charge requires approval")
    assert card["run_id"] != team.history[0].run_id  # the member's run waits
    led = cards(sent)[pending_cards.RUNS][card["run_id"]]
    assert (
        led["prompt"][-1]["tool_calls"][0]["function"]["name"] == "charge"
        and led["state"] == '{"charged": []}'
    )
    decide(sent, card["id"], "approve")
    assert team.history[0].status == "ok" and team.history[0].content == "All done."


def test_a_run_that_fails_going_on_is_followed_and_the_handler_does_not_raise(monkeypatch) -> None:
    agent = Agent("pay", ScriptedModel([tool_call("charge", customer="bob", amount=1)]), tools=[charge],
                  session_state={"charged": []})  # fmt: skip
    sent = Wire(Inspector.for_agent(agent), monkeypatch, Clock(step=0.0))
    agent.run("bob 1")
    replies = decide(sent, agent.pending[0].id, "approve")  # the model has no answer left
    assert pending_cards.DECIDED in replies and wire.ERROR not in replies
    assert sent.events()[-1][wire.EVENT_BODY]["kind"] == "run_failed"
    assert agent.history[0].status == "failed"


def test_history_rows_and_the_static_view_of_a_paused_turn(monkeypatch) -> None:
    agent, sent = paused_pay(monkeypatch)
    row = sent.ask(**{K: wire.SYNC})[wire.SUMMARIES][0]
    assert (row["status"], row["pauses"], row["resumed"]) == ("paused", 1, 0)
    lines = static_text(agent).split("\n")
    bob, ann = agent.pending
    assert lines[-3:] == [
        "paused: waits for a person — decide each item (approve / reject / answer), then continue_run()",
        f'  [{bob.id}] approval: charge({{"customer": "bob", "amount": 250}}) — charge requires approval',
        f'  [{ann.id}] approval: charge({{"customer": "ann", "amount": 40}}) — charge requires approval',
    ]
    for item in agent.pending:
        item.approve()
    agent.continue_run()
    agent.run("thanks")
    first, second = sent.ask(**{K: wire.SYNC})[wire.SUMMARIES]
    assert (first["status"], first["pauses"], first["resumed"]) == ("ok", 1, 1)
    assert "pauses" not in second  # a turn that never paused says nothing of it
    assert static_text(agent).split("\n")[-1] == "answer: Nothing to charge."
