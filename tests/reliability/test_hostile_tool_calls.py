"""Hostile tool calls from a model: whatever the arguments and names, a run ends (ok, with a
clean tool error sent back) and, with autosave, every turn reaches the disk.

Payloads come from hypothesis: deep nesting, 5000-digit integers, lone surrogates, huge
strings, NaN, every JSON type as the whole arguments, garbage text, names that are not strings.
"""

from __future__ import annotations

import json
import tempfile
import warnings
from pathlib import Path
from typing import Any

import pytest
from campaign import Scale, Tally
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentnb import Agent, ScriptedModel, tool_call

ERROR_RESULT_LIMIT = 8_000
"""Longest error text a failed tool call may send back to the model (a few KB plus a note)."""
TOOLS = ("echo", "remember", "update_session_state")


def echo(value=None):
    """Return the value."""
    return value


def remember(key: str, value, session_state: dict) -> str:
    """Store a value in the state."""
    session_state[key] = value
    return "stored"


# -- payloads -------------------------------------------------------------------------------

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True, allow_infinity=True) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)


def _nested(depth: int, kind: str) -> str:
    return "[" * depth + "]" * depth if kind == "list" else '{"a":' * depth + "1" + "}" * depth


def decodable_values(scale: Scale, max_depth: int = 60) -> st.SearchStrategy[str]:
    """JSON texts any JSON library decodes (the hostile part is in the values)."""
    surrogate = st.sampled_from(
        ['"\\ud800"', '"a\\udfffb"', '"\ud83d"', '["\\udc00", "x"]', '{"\\ud800": 1}']
    )
    return st.one_of(
        json_values.map(json.dumps),
        surrogate,
        st.integers(1, max_depth).flatmap(
            lambda d: st.sampled_from([_nested(d, "list"), _nested(d, "dict")])
        ),
        st.integers(1, 4000).map(lambda n: "9" * n),
        st.integers(1, scale(200_000, 2_000_000)).map(lambda n: json.dumps("x" * n)),
        st.sampled_from(["NaN", "Infinity", "-Infinity", "1e999", "-0.0", '"\\u0000"', '"\u2028<script>"']),
    )


def beyond_limits(scale: Scale) -> st.SearchStrategy[str]:
    """JSON texts past what can be decoded safely: nesting deeper than the stack, integers
    longer than Python converts."""
    return st.one_of(
        st.integers(400, scale(20_000, 200_000)).flatmap(
            lambda d: st.sampled_from([_nested(d, "list"), _nested(d, "dict")])
        ),
        st.integers(4301, 50_000).map(lambda n: "9" * n),
    )


def arguments_for(values: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    """Whole argument texts built around a hostile value, or the value itself."""
    return st.one_of(
        values.map(lambda v: '{"value": ' + v + "}"),
        st.tuples(st.text(max_size=6), values).map(
            lambda kv: '{"key": ' + json.dumps(kv[0]) + ', "value": ' + kv[1] + "}"
        ),
        st.tuples(st.text(max_size=6), values).map(
            lambda kv: '{"session_state_updates": {' + json.dumps(kv[0]) + ": " + kv[1] + "}}"
        ),
        values,
        st.text(max_size=40),
    )


def well_formed_calls(scale: Scale) -> st.SearchStrategy[tuple[Any, str]]:
    return st.tuples(st.sampled_from(TOOLS), arguments_for(decodable_values(scale)))


hostile_names = st.one_of(
    st.text(max_size=20),
    st.integers(),
    st.lists(st.text(max_size=3), max_size=2),
    st.none(),
    st.just({"n": 1}),
)


def hostile_calls(scale: Scale) -> st.SearchStrategy[tuple[Any, str]]:
    return st.one_of(
        st.tuples(st.sampled_from(TOOLS), arguments_for(beyond_limits(scale))),
        st.tuples(hostile_names, arguments_for(decodable_values(scale))),
        well_formed_calls(scale),
    )


# -- one case ---------------------------------------------------------------------------------


def make_agent(steps: list[Any], folder: Path | None) -> Agent:
    return Agent(
        "fuzz",
        ScriptedModel(steps),
        tools=[echo, remember],
        enable_agentic_state=True,
        session=folder,
    )


def run_case(name: Any, arguments: str, folder: Path | None, bound_errors: bool = True) -> str | None:
    """What went wrong with one hostile call (None when everything held); ``bound_errors``
    also checks the size of the error text sent back."""
    agent = make_agent([tool_call(name, raw_arguments=arguments), "done", "again"], folder)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for message in ("go", "next"):
            try:
                agent.run(message)
            except Exception as exc:  # noqa: BLE001 - any escape is what is counted
                return f"{message!r} raised {type(exc).__name__}"
            turn = agent.history[-1]
            if turn.status != "ok":
                return f"{message!r} ended {turn.status}: {turn.error}"[:120]
            for call in turn.tool_calls:
                if bound_errors and call.error is not None and len(call.result) > ERROR_RESULT_LIMIT:
                    return f"error result of {len(call.result)} chars sent back"
    saves = [w for w in caught if "could not save" in str(w.message) or "subscriber" in str(w.message)]
    if saves:
        return f"save failed: {str(saves[0].message)[:80]}"
    if folder is None:
        return None
    try:
        restored = make_agent([], folder)
    except Exception as exc:  # noqa: BLE001
        return f"load raised {type(exc).__name__}"
    if len(restored.history) != len(agent.history):
        return f"{len(agent.history) - len(restored.history)} turn(s) not on disk"
    if (
        restored.session_state != agent.session_state
        and _json_equal(restored.session_state, agent.session_state) is False
    ):
        return "state did not round-trip"
    return None


def _json_equal(a: Any, b: Any) -> bool:
    # NaN != NaN: compare as JSON text, where the same value writes the same way.
    return json.dumps(a, sort_keys=True, default=repr) == json.dumps(b, sort_keys=True, default=repr)


def explore(
    strategy: st.SearchStrategy[Any], tally: Tally, autosave: bool, examples: int, bound_errors: bool = True
) -> None:
    @settings(
        max_examples=examples,
        deadline=None,
        database=None,
        derandomize=True,
        suppress_health_check=list(HealthCheck),
    )
    @given(case=strategy)
    def one(case: tuple[Any, str]) -> None:
        if autosave:
            with tempfile.TemporaryDirectory() as tmp:
                tally.check(run_case(*case, Path(tmp), bound_errors), case)
        else:
            tally.check(run_case(*case, None, bound_errors), case)

    one()


# -- tests ------------------------------------------------------------------------------------


@pytest.mark.parametrize("autosave", [False, True], ids=["memory", "autosave"])
def test_decodable_hostile_values_run_and_reach_disk(autosave, scale):
    """Surrogates, NaN, huge strings, every JSON type: each run ends ok and, with autosave,
    every turn and the state (exactly) are on disk. (How long the error sent back for a huge
    bad argument may be is the business of the tests below, and of the loop.)"""
    area = "malformed tool calls, decodable values" + (", with autosave" if autosave else "")
    tally = Tally(area)
    explore(
        well_formed_calls(scale),
        tally,
        autosave,
        scale(40, 2500) // (2 if autosave else 1),
        bound_errors=False,
    )
    assert tally.failed == 0, tally.summary()


@pytest.mark.parametrize("autosave", [False, True], ids=["memory", "autosave"])
def test_any_hostile_tool_call_ends_the_run_cleanly(autosave, scale):
    area = "malformed tool calls, all payloads" + (", with autosave" if autosave else "")
    tally = Tally(area)
    explore(hostile_calls(scale), tally, autosave, scale(60, 3000) // (2 if autosave else 1))
    assert tally.failed == 0, tally.summary()


# -- named cases: each a single known failure, so a fix shows exactly which one it closed -----


NAMED = Tally("malformed tool calls, named cases")


def single(name: Any, arguments: str, folder: Path | None = None) -> str | None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        problem = run_case(name, arguments, folder)
    NAMED.check(problem, (name, arguments[:40]))
    return problem


@pytest.mark.parametrize(
    "arguments",
    ['"\\ud800"', '{"\\udfff": "x\\ud800y"}', '"' + "\ud800" + '"', "NaN", '{"n": Infinity}'],
    ids=["escaped", "key", "raw", "nan", "infinity"],
)
def test_values_json_text_cannot_hold_round_trip_through_autosave(tmp_path, arguments):
    assert (
        single("update_session_state", '{"session_state_updates": {"v": ' + arguments + "}}", tmp_path)
        is None
    )
    files = [p for p in tmp_path.iterdir() if p.suffix in (".json", ".jsonl")]
    for path in files:
        path.read_bytes().decode("utf-8")  # strict UTF-8 on disk, whatever the state held


@pytest.mark.parametrize(
    "arguments",
    [
        _nested(100_000, "list"),
        _nested(5_000, "dict"),
        _nested(1_000, "list"),
        "9" * 5000,
        '{"value": ' + "9" * 5000 + "}",
    ],
    ids=["list", "dict", "list 1000", "digits", "digits in an object"],
)
@pytest.mark.parametrize("autosave", [False, True], ids=["memory", "autosave"])
def test_arguments_past_the_decoder_limits_are_a_tool_error(arguments, autosave, tmp_path):
    """The call's error result; with autosave the turn reaches the disk and loads again."""
    assert single("echo", arguments, tmp_path if autosave else None) is None


@pytest.mark.parametrize("name", [None, 7, "", "echo\u0000"], ids=["none", "int", "empty", "nul"])
def test_a_hashable_tool_name_that_names_no_tool_is_a_tool_error(name):
    assert single(name, "{}") is None


@pytest.mark.parametrize("name", [["echo"], {"n": 1}], ids=["list", "dict"])
def test_an_unhashable_tool_name_is_a_tool_error(name):
    assert single(name, "{}") is None


def test_the_error_sent_back_for_a_huge_bad_argument_is_bounded():
    # Arguments that are a JSON string, not an object: the error quotes them whole.
    assert single("remember", json.dumps("x" * 1_000_000)) is None


def test_a_deeply_nested_value_in_the_state_does_not_break_later_runs(tmp_path):
    assert single("remember", '{"key": "deep", "value": ' + _nested(500, "list") + "}", tmp_path) is None


@pytest.mark.parametrize(
    "name, arguments", [(["echo"], "{}"), ("echo", _nested(100_000, "list"))], ids=["list name", "deep"]
)
def test_chat_magic_reports_a_hostile_tool_call_in_one_line(shell, name, arguments):
    from IPython.core.error import UsageError
    from IPython.utils.capture import capture_output

    shell.user_ns["fuzz"] = make_agent([tool_call(name, raw_arguments=arguments), "done"], None)
    try:
        with capture_output():
            shell.run_cell_magic("chat", "fuzz", "go")
    except UsageError as exc:
        assert "\n" not in str(exc)
    # The run goes on: the tool call gets an error result, the model answers.
    assert shell.user_ns["fuzz"].history[-1].status == "ok"
