"""Typed output in a notebook's recording: every attempt is recorded and replays; a changed
output type, schema, mode or set of validators — or a validator that now judges the same answer
otherwise — is named as drift under strict replay, with the re-record hint."""

from __future__ import annotations

import dataclasses

import pytest
from openai_server import OpenAIServer, Reply
from pydantic import BaseModel

from agentnb import Agent, JSONSession, ModelRetry, ScriptedModel, tool_call
from agentnb.errors import ReplayDriftError
from agentnb.models import OpenAIChat
from agentnb.sessions.recording import REPLAY_ENV, RERECORD


class Invoice(BaseModel):
    vendor: str
    total: float


class Bill(BaseModel):
    vendor: str
    total: float


def positive(output: Invoice) -> Invoice:
    if output.total <= 0:
        raise ModelRetry("the total must be positive")
    return output


def answers() -> list:
    return [
        tool_call("final_result", vendor="ACME", total=-1),
        tool_call("final_result", vendor="ACME", total=12.5),
    ]


def invoicer(output_type=Invoice, validators=(positive,), **options) -> Agent:
    return Agent(
        "inv",
        ScriptedModel(answers()),
        output_type=output_type,
        output_validators=list(validators),
        **options,
    )


def recorded(folder, **options) -> Agent:
    agent = invoicer(**options)
    agent.attach_recording(folder)
    agent.run("read the invoice")
    return agent


def same_attempts(agent: Agent, other: Agent) -> bool:
    """The attempts of the first turns are the same but for the run ids."""
    ours, theirs = agent.history[0].attempts, other.history[0].attempts
    return len(ours) == len(theirs) > 0 and all(
        dataclasses.replace(a, run_id="") == dataclasses.replace(b, run_id="") for a, b in zip(ours, theirs)
    )


def strict_rerun(folder, monkeypatch, agent: Agent) -> ReplayDriftError:
    monkeypatch.setenv(REPLAY_ENV, "strict")
    agent.attach_recording(folder)
    with pytest.raises(ReplayDriftError) as caught:
        agent.run("read the invoice")
    assert agent.history[-1].status == "failed"
    return caught.value


def test_an_unchanged_typed_turn_replays_under_strict_with_the_same_attempts(tmp_path, monkeypatch):
    monkeypatch.delenv(REPLAY_ENV, raising=False)
    first = recorded(tmp_path)
    monkeypatch.setenv(REPLAY_ENV, "strict")
    again = invoicer()
    again.attach_recording(tmp_path)
    assert again.run("read the invoice").output == Invoice(vendor="ACME", total=12.5)
    assert same_attempts(again, first)
    (rejected, accepted) = again.history[0].attempts
    assert rejected.errors == (
        {"path": "", "message": "the total must be positive", "validator": "positive"},
    )
    assert accepted.validators == ("positive",) and accepted.output_type == "Invoice"


@pytest.mark.parametrize(
    ("options", "named"),
    [
        ({"output_type": Bill}, "output_type Invoice → Bill"),
        ({"output_mode": "prompted"}, "output_mode tool → prompted"),
        ({"validators": ()}, "output validators positive → none"),
    ],
)
def test_a_changed_type_mode_or_set_of_validators_is_named_as_drift(tmp_path, monkeypatch, options, named):
    monkeypatch.delenv(REPLAY_ENV, raising=False)
    recorded(tmp_path)
    error = strict_rerun(tmp_path, monkeypatch, invoicer(**options))
    message = str(error)
    assert message.startswith(f"replay drift at turn 1: the output differs from the recording ({named})")
    assert "strict replay (AGENTNB_REPLAY=strict) does not call scripted" in message and RERECORD in message


def test_a_changed_schema_under_the_same_name_is_named(tmp_path, monkeypatch):
    monkeypatch.delenv(REPLAY_ENV, raising=False)
    recorded(tmp_path)

    class Invoice(BaseModel):  # the same name, another field
        vendor: str
        total: float
        currency: str = "EUR"

    error = strict_rerun(tmp_path, monkeypatch, invoicer(output_type=Invoice))
    assert "(the schema of output_type Invoice changed)" in str(error)


def test_a_validator_that_now_judges_the_same_answer_otherwise_is_named(tmp_path, monkeypatch):
    monkeypatch.delenv(REPLAY_ENV, raising=False)
    recorded(tmp_path)

    cell = {"ModelRetry": ModelRetry}  # the validator's cell edited and run again, as in a notebook
    exec(
        "def positive(output):\n"
        "    if output.total <= 0:\n        raise ModelRetry('the total must be positive')\n"
        "    if output.total < 100:\n        raise ModelRetry('too small')\n"
        "    return output",
        cell,
    )
    error = strict_rerun(tmp_path, monkeypatch, invoicer(validators=(cell["positive"],)))
    assert "attempt 2 was accepted when recorded, rejected ((answer): too small) now" in str(error)


def test_a_type_added_to_a_turn_recorded_without_one_is_named(tmp_path, monkeypatch):
    monkeypatch.delenv(REPLAY_ENV, raising=False)
    plain = Agent("inv", ScriptedModel(["ACME, 12.50"]))
    plain.attach_recording(tmp_path)
    plain.run("read the invoice")
    error = strict_rerun(tmp_path, monkeypatch, invoicer())
    assert "this run asks for output_type Invoice, the recorded turn for none" in str(error)


def test_outside_strict_a_changed_validator_re_records_the_turn(tmp_path, monkeypatch):
    monkeypatch.delenv(REPLAY_ENV, raising=False)
    recorded(tmp_path)
    again = invoicer(validators=())
    recording = again.attach_recording(tmp_path)
    assert again.run("read the invoice").output == Invoice(vendor="ACME", total=-1.0)
    assert recording.cut == 0
    saved = invoicer()
    JSONSession(tmp_path).load_session_state_sync("inv", agent=saved)
    (only,) = saved.history[0].attempts
    assert only.validators == () and saved.history[0].output == {"vendor": "ACME", "total": -1.0}


def served_invoicer(url: str, validators=(positive,)) -> Agent:
    model = OpenAIChat("gpt-test", base_url=url, max_retries=0, stream=False)
    return Agent("inv", model, output_type=Invoice, output_mode="native", output_validators=list(validators))


def test_a_served_typed_turn_with_a_retry_replays_without_a_request(tmp_path, monkeypatch):
    monkeypatch.delenv(REPLAY_ENV, raising=False)
    with OpenAIServer() as server:
        server.add(
            Reply(text='{"vendor": "ACME", "total": -1}'), Reply(text='{"vendor": "ACME", "total": 12.5}')
        )
        first = served_invoicer(server.url)
        first.attach_recording(tmp_path)
        first.run("read the invoice")
        assert len(server.requests) == 2
        monkeypatch.setenv(REPLAY_ENV, "strict")
        again = served_invoicer(server.url)
        again.attach_recording(tmp_path)
        assert again.run("read the invoice").output == Invoice(vendor="ACME", total=12.5)
        assert len(server.requests) == 2  # both attempts answered from the recording
        assert same_attempts(again, first)
        changed = served_invoicer(server.url, validators=())
        changed.attach_recording(tmp_path)
        with pytest.raises(ReplayDriftError, match="output validators positive → none"):
            changed.run("read the invoice")
        assert len(server.requests) == 2
