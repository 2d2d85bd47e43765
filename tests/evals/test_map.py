"""``agent.map``: a list, a Series or a DataFrame of items in, a DataFrame of typed rows out,
aligned with the input's index; a row that fails validation shows its attempts; the store beside
the notebook makes a re-run a replay (the loopback server sees no new request); 429s cut the
in-flight limit; the budget gate refuses before any call; bad input is a short error."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from openai_server import OpenAIServer, Reply
from pydantic import BaseModel

from agentnb import Agent, ScriptedModel, tool_call
from agentnb.errors import ConfigurationError, EvalBudgetError
from agentnb.models import OpenAIChat
from agentnb.sessions.recording import REPLAY_ENV

pytestmark = pytest.mark.filterwarnings("ignore::pytest.PytestUnhandledThreadExceptionWarning")


class Invoice(BaseModel):
    vendor: str
    total: float


def read(request):
    """Reads ``vendor: total`` from the message; a total that is no number stays wrong every time."""
    vendor, _, total = (request.last_user_message or "").partition(":")
    return tool_call("final_result", vendor=vendor.strip(), total=total.strip())


def reader(**options) -> Agent:
    return Agent("inv", ScriptedModel(read), **options)


def test_a_list_maps_to_typed_rows_in_order_with_their_attempts(tmp_path):
    frame = reader().map(
        ["ACME: 12.5", "Bolt: lots", "Crux: 3"], output_type=Invoice, folder=tmp_path, display=False
    )
    assert list(frame.columns) == ["vendor", "total", "status", "error", "attempts", "tokens"]
    assert frame.index.tolist() == [0, 1, 2]
    assert frame["vendor"].tolist()[::2] == ["ACME", "Crux"] and frame["total"].tolist()[::2] == [12.5, 3.0]
    assert frame["status"].tolist() == ["ok", "invalid", "ok"]  # no valid output: not a crash
    assert frame["attempts"].tolist() == [1, 2, 1]
    failed = frame.loc[1]
    assert pd.isna(failed["vendor"]) and pd.isna(failed["total"])
    assert "no answer matched the output type Invoice in 2 attempt(s)" in failed["error"]
    assert (frame["tokens"] > 0).all()


def test_a_series_keeps_its_index_and_the_agents_own_type_is_used(tmp_path):
    items = pd.Series(["ACME: 1", "Bolt: 2"], index=["inv-7", "inv-9"])
    frame = reader(output_type=Invoice).map(items, folder=tmp_path, display=False)
    assert frame.index.tolist() == ["inv-7", "inv-9"]
    assert frame["total"].tolist() == [1.0, 2.0]


def test_a_dataframe_sends_a_column_or_a_template_over_its_columns(tmp_path):
    texts = pd.DataFrame({"who": ["ACME", "Bolt"], "amount": [12.5, 7]}, index=pd.Index([10, 20], name="row"))
    frame = reader().map(texts, output_type=Invoice, input="{who}: {amount}", folder=tmp_path, display=False)
    assert frame.index.equals(texts.index)
    assert frame["vendor"].tolist() == ["ACME", "Bolt"] and frame["total"].tolist() == [12.5, 7.0]
    lines = pd.DataFrame({"line": ["ACME: 1"]})
    one = reader().map(lines, output_type=Invoice, input="line", name="lines", folder=tmp_path, display=False)
    assert one["vendor"].tolist() == ["ACME"]


def test_the_map_is_an_evaluation_stored_beside_the_notebook_under_its_name(tmp_path):
    reader().map(["ACME: 1"], output_type=Invoice, name="invoices", folder=tmp_path, display=False)
    (line,) = (tmp_path / "evals" / "invoices").glob("*.jsonl")
    stored = [json.loads(x) for x in line.read_text().splitlines() if x.strip()]
    assert [s["case"]["id"] for s in stored] == ["0"]
    assert not (tmp_path / "evals" / "inv").exists()  # not the agent's own evaluation folder


def served(server: OpenAIServer) -> Agent:
    model = OpenAIChat("gpt-test", base_url=server.url, stream=False)
    return Agent("inv", model, output_type=Invoice)


ANSWER = Reply(text='{"vendor": "ACME", "total": 12.5}', repeat=True)


def test_re_running_replays_every_finished_row_with_no_request(tmp_path, monkeypatch):
    monkeypatch.delenv(REPLAY_ENV, raising=False)
    items = [f"invoice {i}" for i in range(12)]
    with OpenAIServer() as server:
        server.add(ANSWER)
        first = served(server).map(items, folder=tmp_path, concurrency=4, display=False)
        assert len(server.requests) == 12
        assert all("response_format" in r.body for r in server.requests)  # native: the schema asked for
        again = served(server).map(items, folder=tmp_path, concurrency=4, display=False)
        assert len(server.requests) == 12  # every row came back from the store
    assert again.equals(first) and (first["status"] == "ok").all()
    lines = (tmp_path / "evals" / "inv_map" / "cases.jsonl").read_text().splitlines()
    assert len(lines) == 12  # a replayed row is not written again
    monkeypatch.setenv(REPLAY_ENV, "strict")  # as under nbval: no server at all
    offline = Agent(
        "inv", OpenAIChat("gpt-test", base_url="http://127.0.0.1:9", stream=False), output_type=Invoice
    )
    assert offline.map(items, folder=tmp_path, concurrency=4, display=False).equals(first)


def test_429s_cut_the_in_flight_limit_and_every_row_still_finishes(tmp_path, monkeypatch):
    monkeypatch.delenv(REPLAY_ENV, raising=False)
    with OpenAIServer() as server:
        server.add(
            *[Reply(status=429, error="slow down", headers={"retry-after-ms": "200"}) for _ in range(3)],
            ANSWER,
        )
        frame = served(server).map([f"i{i}" for i in range(8)], folder=tmp_path, concurrency=4, display=False)
        assert len(server.requests) == 8 + 3
    assert (frame["status"] == "ok").all() and frame["vendor"].tolist() == ["ACME"] * 8


def test_the_budget_gate_refuses_before_any_call(tmp_path, monkeypatch):
    monkeypatch.delenv(REPLAY_ENV, raising=False)
    with OpenAIServer() as server:
        server.add(ANSWER)
        with pytest.raises(EvalBudgetError, match="above max_cost"):
            served(server).map(
                ["a", "b"], folder=tmp_path, max_cost=1e-9, prices={"gpt-test": (1.0, 2.0)}, display=False
            )
        assert server.requests == []


@pytest.mark.parametrize(
    ("items", "options", "message"),
    [
        (["a"], {"input": "text"}, "input= names a column or a template of a DataFrame"),
        ("just one", {}, "items must be a list, a pandas Series or a DataFrame, got str"),
        ([3], {}, "item 0 is a int; each item is a message"),
        (pd.Series(["a", "b"], index=[1, 1]), {}, "the label 1 is there twice"),
        (pd.DataFrame({"a": [1], "b": [2]}), {}, "give input= a column (a, b)"),
        (
            pd.DataFrame({"a": [1]}),
            {"input": "{c}"},
            "the template '{c}' names 'c', which is not a column (a)",
        ),
        (pd.DataFrame({"a": [1]}), {"input": "b"}, "input='b' is not a column"),
        (["a"], {"output_type": lambda text: text}, "is a function; give a type"),
    ],
)
def test_bad_items_are_short_errors_before_any_run(tmp_path, items, options, message):
    agent = reader()
    with pytest.raises(ConfigurationError, match=message.replace("(", r"\(").replace(")", r"\)")):
        agent.map(items, **{"output_type": Invoice, **options}, folder=tmp_path, display=False)
    assert not (tmp_path / "evals").exists()


def test_a_field_named_like_a_bookkeeping_column_keeps_its_name(tmp_path):
    class Ticket(BaseModel):
        status: str

    agent = Agent("t", ScriptedModel(lambda request: tool_call("final_result", status="open")))
    frame = agent.map(["x"], output_type=Ticket, folder=tmp_path, display=False)
    assert list(frame.columns) == ["status", "_status", "error", "attempts", "tokens"]
    assert frame["status"].tolist() == ["open"] and frame["_status"].tolist() == ["ok"]


def test_agent_map_is_reached_through_its_slot():
    from agentnb import slots

    assert slots.map_items in slots.SLOTS
    seen = []
    slots.map_items.fill(lambda agent, items, **options: seen.append((agent.name, items, options)) or "frame")
    try:
        assert reader().map(["a"], output_type=Invoice, name="n") == "frame"
    finally:
        slots.map_items.clear()
    assert seen == [("inv", ["a"], {"output_type": Invoice, "name": "n"})]
    assert slots.map_items.get().__module__ == "agentnb.evals.mapping"  # the provider fills it again
