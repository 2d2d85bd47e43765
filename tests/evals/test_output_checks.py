"""Evaluation checks on the typed output: ``check.output`` (a JSON pointer into the last turn's
output) and ``check.attempts`` (the answers each turn needed); they re-score a stored run."""

from __future__ import annotations

import json

import pytest
from openai_server import OpenAIServer, Reply
from pydantic import BaseModel

from agentnb import Agent, ScriptedModel, tool_call
from agentnb.errors import EvalCheckError
from agentnb.evals import Case, check, load_run
from agentnb.models import OpenAIChat
from agentnb.sessions.recording import REPLAY_ENV


class Line(BaseModel):
    sku: str
    qty: int


class Invoice(BaseModel):
    vendor: str
    total: float
    lines: list[Line] = []


def read(request):
    """Answers with the invoice the message names; ``retry ...`` answers badly first, ``never`` always."""
    message = request.last_user_message or ""
    vendor, _, total = message.removeprefix("retry ").partition(" ")
    bad = message == "never" or (message.startswith("retry") and not request.tool_results())
    if bad:
        return tool_call("final_result", vendor=vendor, total="lots")
    return tool_call("final_result", vendor=vendor, total=float(total), lines=[{"sku": "A1", "qty": 2}])


def invoicer() -> Agent:
    return Agent("inv", ScriptedModel(read), output_type=Invoice)


CASES = [
    Case("ACME 12.5", id="plain", expected=12.5),
    Case("retry Bolt 3", id="retried", expected=3.0),
    Case("never", id="failing", expected=1.0),
]


def test_output_reads_the_typed_output_at_a_pointer_and_attempts_bounds_the_retries(tmp_path):
    checks = [check.output("/total"), check.output("/lines/0/sku", equals="A1"), check.attempts(at_most=1)]
    run = invoicer().evaluate(CASES, checks, folder=tmp_path, display=False)
    plain, retried, failing = (run.case(c) for c in ("plain", "retried", "failing"))
    assert [plain.verdict(c.name).status for c in checks] == ["pass", "pass", "pass"]
    assert plain.verdict("output:/total").reason == "/total is 12.5"
    assert [retried.verdict(c.name).status for c in checks] == ["pass", "pass", "fail"]
    assert retried.verdict("attempts").reason == "turn 1 took 2 attempt(s), expected at most 1"
    # A case whose answers all failed is scored and fails: its checks see both attempts.
    assert failing.status == "invalid" and failing.error_type == "OutputValidationError"
    assert failing.passed is False
    assert "no answer matched the output type Invoice in 2 attempt(s)" in failing.error
    assert len(failing.turns[0].attempts) == 2
    assert [failing.verdict(c.name).status for c in checks] == ["fail", "fail", "fail"]
    assert failing.verdict("output:/total").reason == (
        "no answer matched Invoice in 2 attempt(s): attempt 1: /total Input should be a valid number, "
        "unable to parse string as a number; attempt 2: /total Input should be a valid number, unable "
        "to parse string as a number"
    )
    assert failing.verdict("attempts").reason == "turn 1 took 2 attempt(s) (none matched), expected at most 1"


def test_the_checks_re_score_a_stored_run(tmp_path):
    invoicer().evaluate(CASES[:2], [check.output("/total")], name="inv", folder=tmp_path, display=False)
    stored = load_run("inv", tmp_path)  # read back from the files: no agent, no model
    assert stored.case("retried").turns[0].output == {
        "vendor": "Bolt",
        "total": 3.0,
        "lines": [{"sku": "A1", "qty": 2}],
    }
    again = stored.rescore([check.output("/vendor", equals="Bolt"), check.attempts(at_least=2)])
    assert again.case("retried").verdict("output:/vendor").status == "pass"
    assert again.case("plain").verdict("output:/vendor").reason == '/vendor is "ACME", expected "Bolt"'
    assert again.case("retried").verdict("attempts").status == "pass"
    assert again.case("plain").verdict("attempts").reason == "turn 1 took 1 attempt(s), expected at least 2"


def test_an_expected_pydantic_model_compares_as_its_data(tmp_path):
    want = Invoice(vendor="ACME", total=12.5, lines=[Line(sku="A1", qty=2)])
    run = invoicer().evaluate(
        [Case("ACME 12.5", id="a", expected=want)], [check.output()], folder=tmp_path, display=False
    )
    assert run.case("a").verdict("output:/").status == "pass"


def test_a_turn_without_an_output_type_is_an_error_not_a_fail(tmp_path):
    plain = Agent("p", ScriptedModel(lambda request: "just text"))
    run = plain.evaluate(
        [Case("hi", id="a")],
        [check.output("/x", equals=1), check.attempts(at_most=1)],
        folder=tmp_path,
        display=False,
    )
    verdicts = {v.check: v for v in run.case("a").verdicts}
    assert (
        verdicts["output:/x"].status == "error" and "asked for no output_type" in verdicts["output:/x"].reason
    )
    assert verdicts["attempts"].status == "error"


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: check.output("total"), "'total' is not a JSON pointer; write it like '/total'"),
        (lambda: check.attempts(), "give at_most=n"),
        (lambda: check.attempts(at_most=0), "at_most must be a whole number >= 1, got 0"),
        (lambda: check.attempts(at_most=True), "got True"),
    ],
)
def test_bad_arguments_are_short_errors(make, message):
    with pytest.raises(EvalCheckError, match=message):
        make()


def crashing(request):
    """Like ``read``, but ``crash`` breaks the model itself (a case error, not a validation failure)."""
    if request.last_user_message == "crash":
        raise RuntimeError("the model broke")
    return read(request)


def test_a_case_with_no_valid_output_is_not_a_crash_in_the_record_and_the_table(tmp_path):
    agent = Agent("inv", ScriptedModel(crashing), output_type=Invoice)
    cases = [*CASES, Case("crash", id="crashed")]
    run = agent.evaluate(cases, [check.attempts(at_most=3)], folder=tmp_path, display=False)
    assert [r.status for r in run.rows] == ["ok", "ok", "invalid", "error"]
    assert [r.passed for r in run.rows] == [True, True, False, None]
    assert [r.case.id for r in run.invalid] == ["failing"] and [r.case.id for r in run.errors] == ["crashed"]
    # at most 3 attempts: the invalid case took 2 and passes that check, yet the case fails.
    assert run.case("failing").verdict("attempts").reason == "attempts per turn: turn 1: 2 (none matched)"
    assert run.case("crashed").verdict("attempts").status == "error"
    text = run.text()
    head = text.splitlines()[0]
    assert " · 2 passed (50%) · 1 error(s) · " in head and head.endswith(" tokens · 1 with no valid output")
    assert "  failing · — · invalid: no answer matched the output type Invoice in 2 attempt(s)" in text
    assert "  crashed · — · error: " in text and "1× RuntimeError" in text
    frame = run.frame().set_index("case_id")
    assert frame.loc["failing", "status"] == "invalid" and frame.loc["failing", "passed"] == False  # noqa: E712
    assert frame.loc["failing", "attempts"] == True  # noqa: E712


def test_resuming_replays_an_invalid_case_and_re_scoring_sees_its_attempts(tmp_path):
    calls = []

    def counted(request):
        calls.append(request.last_user_message)
        return read(request)

    agent = Agent("inv", ScriptedModel(counted), output_type=Invoice)
    first = agent.evaluate(CASES, [check.output("/total")], name="inv", folder=tmp_path, display=False)
    assert len(calls) == 5  # 1 + 2 + 2 answers
    lines = (tmp_path / "evals" / "inv" / "cases.jsonl").read_text().splitlines()
    # Cases run concurrently: the file is in the order they finished, so read it by id.
    statuses = {json.loads(line)["case"]["id"]: json.loads(line)["status"] for line in lines}
    assert statuses == {"plain": "ok", "retried": "ok", "failing": "invalid"}
    again = agent.evaluate(CASES, [check.output("/total")], name="inv", folder=tmp_path, display=False)
    failing = again.case("failing")
    assert failing.status == "invalid" and failing.verdict("output:/total").status == "fail"
    assert len(failing.turns[0].attempts) == 2 and failing.error == first.case("failing").error
    # The scripted model answers in Python: resuming ran it again, and wrote nothing new.
    assert len(calls) == 10
    assert len((tmp_path / "evals" / "inv" / "cases.jsonl").read_text().splitlines()) == 3
    stored = load_run("inv", tmp_path)  # read back from the files: no agent, no model
    assert stored.case("failing").status == "invalid" and stored.case("failing").passed is False
    rescored = stored.rescore([check.attempts(at_most=1), check.output("/vendor", equals="never")])
    verdicts = rescored.case("failing").verdicts
    assert [v.status for v in verdicts] == ["fail", "fail"]
    assert verdicts[0].reason == "turn 1 took 2 attempt(s) (none matched), expected at most 1"
    assert verdicts[1].reason.startswith("no answer matched Invoice in 2 attempt(s): attempt 1: /total ")
    assert verdicts[1].evidence["attempts"][1]["errors"][0]["path"] == "/total"


def test_an_invalid_case_answered_by_a_server_replays_with_no_request(tmp_path, monkeypatch):
    monkeypatch.delenv(REPLAY_ENV, raising=False)
    cases = [Case("ACME 12.5", id="plain"), Case("never", id="failing")]

    def served(url: str) -> Agent:
        return Agent(
            "inv", OpenAIChat("gpt-test", base_url=url, max_retries=0, stream=False), output_type=Invoice
        )

    with OpenAIServer() as server:
        server.add(
            Reply(text='{"vendor": "ACME", "total": 12.5}'),
            Reply(text='{"vendor": "never", "total": "lots"}', repeat=True),
        )
        first = served(server.url).evaluate(
            cases, [check.attempts(at_most=1)], folder=tmp_path, concurrency=1, display=False
        )
        assert len(server.requests) == 3 and first.case("failing").status == "invalid"
        again = served(server.url).evaluate(
            cases, [check.attempts(at_most=1)], folder=tmp_path, display=False
        )
        assert len(server.requests) == 3  # both finished cases replayed
    failing = again.case("failing")
    assert failing.status == "invalid" and failing.replayed and failing.passed is False
    assert failing.verdict("attempts").reason == "turn 1 took 2 attempt(s) (none matched), expected at most 1"
    monkeypatch.setenv(REPLAY_ENV, "strict")  # as under nbval: no server at all
    offline = served("http://127.0.0.1:9/v1").evaluate(
        cases, [check.attempts(at_most=1)], folder=tmp_path, display=False
    )
    assert offline.text() == again.text()
