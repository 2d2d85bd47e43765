"""Typed output when an evaluation's finished cases replay: under strict replay (nbval) a changed
output type, schema or set of validators — or a validator that now judges the recorded answer
otherwise — is a drift named in the case's error with the re-record hint, and no model is
called; outside strict replay the case runs again, live."""

from __future__ import annotations

import pytest
from openai_server import OpenAIServer, Reply
from pydantic import BaseModel

from agentnb import Agent, ModelRetry
from agentnb.evals import Case, check
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


CASES = [Case("ACME 12.5", id="acme", expected=12.5)]
ANSWER = Reply(text='{"vendor": "ACME", "total": 12.5}', repeat=True)


def invoicer(server: OpenAIServer, output_type=Invoice, validators=(positive,)) -> Agent:
    model = OpenAIChat("gpt-test", base_url=server.url, max_retries=0, stream=False)
    return Agent("inv", model, output_type=output_type, output_validators=list(validators))


def evaluated(agent: Agent, folder) -> object:
    return agent.evaluate(CASES, [check.output("/total")], name="inv", folder=folder, display=False)


@pytest.fixture
def recorded(tmp_path, monkeypatch):
    """A server, and the evaluation run once against it (the store holds the case)."""
    monkeypatch.delenv(REPLAY_ENV, raising=False)
    with OpenAIServer() as server:
        server.add(ANSWER)
        first = evaluated(invoicer(server), tmp_path)
        assert first.case("acme").status == "ok" and len(server.requests) == 1
        yield server


def test_an_unchanged_typed_case_replays_under_strict_with_no_call(recorded, tmp_path, monkeypatch):
    monkeypatch.setenv(REPLAY_ENV, "strict")
    run = evaluated(invoicer(recorded), tmp_path)
    row = run.case("acme")
    assert row.status == "ok" and row.replayed and row.verdict("output:/total").status == "pass"
    assert len(recorded.requests) == 1


def test_a_validator_that_now_refuses_the_recorded_answer_is_named(recorded, tmp_path, monkeypatch):
    cell = {"ModelRetry": ModelRetry}  # the validator's cell edited and run again, as in a notebook
    exec(
        "def positive(output):\n    if output.total < 100:\n        raise ModelRetry('too small')\n    return output",
        cell,
    )
    monkeypatch.setenv(REPLAY_ENV, "strict")
    run = evaluated(invoicer(recorded, validators=(cell["positive"],)), tmp_path)
    row = run.case("acme")
    assert row.status == "error" and row.error_type == "ReplayDriftError"
    assert "attempt 1 was accepted when recorded, rejected ((answer): too small) now" in row.error
    assert len(recorded.requests) == 1


@pytest.mark.parametrize(
    ("changed", "named"),
    [
        ({"output_type": Bill}, "output_type Invoice → Bill"),
        ({"validators": ()}, "output validators positive → none"),
    ],
)
def test_a_changed_type_or_set_of_validators_is_named_with_the_re_record_hint(
    recorded, tmp_path, monkeypatch, changed, named
):
    monkeypatch.setenv(REPLAY_ENV, "strict")
    run = evaluated(invoicer(recorded, **changed), tmp_path)
    row = run.case("acme")
    assert row.status == "error" and row.error_type == "ReplayDriftError"
    assert row.error.startswith(f"replay drift at turn 1: the output differs from the recorded run ({named})")
    assert "strict replay (AGENTNB_REPLAY=strict) does not call openai:gpt-test" in row.error
    assert RERECORD in row.error
    assert len(recorded.requests) == 1  # no model call


def test_a_changed_schema_under_the_same_name_is_named(recorded, tmp_path, monkeypatch):
    class Invoice(BaseModel):  # the same name, another field
        vendor: str
        total: float
        currency: str = "EUR"

    monkeypatch.setenv(REPLAY_ENV, "strict")
    row = evaluated(invoicer(recorded, output_type=Invoice), tmp_path).case("acme")
    assert "(the schema of output_type Invoice changed)" in row.error and RERECORD in row.error


def test_outside_strict_replay_a_changed_output_runs_the_case_again(recorded, tmp_path):
    run = evaluated(invoicer(recorded, validators=()), tmp_path)
    row = run.case("acme")
    assert row.status == "ok" and not row.replayed and row.turns[0].attempts[0].validators == ()
    assert len(recorded.requests) == 2  # live, and stored again
