"""Evaluation checks on the typed output: ``check.output`` (a JSON pointer into the last turn's
output) and ``check.attempts`` (the answers each turn needed); they re-score a stored run."""

from __future__ import annotations

import pytest
from pydantic import BaseModel

from agentnb import Agent, ScriptedModel, tool_call
from agentnb.errors import EvalCheckError
from agentnb.evals import Case, check, load_run


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
    # A case whose answers all failed did not finish: an error of the case, with every attempt.
    assert failing.status == "error" and failing.error_type == "OutputValidationError"
    assert "no answer matched the output type Invoice in 2 attempt(s)" in failing.error
    assert len(failing.turns[0].attempts) == 2


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
