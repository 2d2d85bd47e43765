"""Formatters: the structured user payload (paragraph / JSON) and parsing the model's reply."""

from __future__ import annotations

import json

import pytest

from agentnb import Agent, ScriptedModel
from agentnb.errors import ConfigurationError, OutputFormatError
from agentnb.formatters import FIELDS_KEY, REQUIREMENTS_KEY, JsonFormatter, ParagraphFormatter


def test_seed_example_a_observe_shows_the_paragraph_payload():
    model = ScriptedModel()  # no steps: a model call would raise
    agent = Agent(
        name="writer",
        model=model,
        instructions="你是一个简洁的写作者。",
        prompt_template="主题：{topic}",
    )
    system_prompt, user_prompt, messages = agent.observe({"topic": "MASFactory 是什么？"})
    assert system_prompt == "你是一个简洁的写作者。"
    assert [m["role"] for m in messages] == ["system", "user"]
    assert user_prompt == (
        "MESSAGE TO YOU: 主题：MASFactory 是什么？\n\n"
        f"RESPONSE FORMAT REQUIREMENTS: {JsonFormatter.requirements}"
    )
    assert messages[1]["content"] == user_prompt
    assert model.requests == []


def test_output_fields_are_stated_in_the_payload():
    agent = Agent(
        model=ScriptedModel(),
        prompt_template="Topic: {topic}",
        output_fields={"title": "a short title", "summary": "two sentences"},
    )
    user_prompt = agent.observe({"topic": "graphs"}).user_prompt
    assert user_prompt.endswith(
        "REQUIRED OUTPUT FIELDS AND THEIR DESCRIPTIONS:\n"
        + json.dumps({"title": "a short title", "summary": "two sentences"}, indent=2)
    )
    assert user_prompt.startswith(
        "MESSAGE TO YOU: Topic: graphs\n\nRESPONSE FORMAT REQUIREMENTS: Reply with one JSON object"
    )


def test_unused_input_fields_are_appended_unless_hidden():
    shown = Agent(model=ScriptedModel(), prompt_template="Topic: {topic}", output_formatter=False)
    assert shown.observe({"topic": "t", "audience": "kids", "n": 3}).user_prompt == (
        "MESSAGE TO YOU: Topic: t\n\naudience: kids\n\nn: 3"
    )
    hidden = Agent(
        model=ScriptedModel(),
        prompt_template="Topic: {topic}",
        output_formatter=False,
        hide_unused_fields=True,
    )
    assert hidden.observe({"topic": "t", "audience": "kids"}).user_prompt == "MESSAGE TO YOU: Topic: t"


def test_template_reads_inputs_then_state_and_leaves_unknown_placeholders():
    agent = Agent(
        model=ScriptedModel(),
        session_state={"lang": "French"},
        prompt_template="Translate {message} into {lang} {unknown}",
        output_formatter=False,
    )
    assert agent.observe("hello").user_prompt == "MESSAGE TO YOU: Translate hello into French {unknown}"


def test_paragraph_dump_puts_multiline_values_below_the_key():
    text = ParagraphFormatter().dump({"A": "one", "B": "two\nlines", "C": {"x": 1}, "D": None})
    assert text == 'A: one\n\nB:\ntwo\nlines\n\nC:\n{\n  "x": 1\n}\n\nD:'


def test_json_input_formatter_writes_the_payload_as_json():
    agent = Agent(
        model=ScriptedModel(), prompt_template="Topic: {topic}", formatter="json", output_fields=["title"]
    )
    payload = json.loads(agent.observe({"topic": "graphs"}).user_prompt)
    assert list(payload) == ["MESSAGE TO YOU", REQUIREMENTS_KEY, FIELDS_KEY]
    assert payload["MESSAGE TO YOU"] == "Topic: graphs"
    assert json.loads(payload[FIELDS_KEY]) == {"title": ""}


@pytest.mark.parametrize(
    "reply",
    [
        '{"title": "Graphs", "summary": "Nodes and edges."}',
        '```json\n{"title": "Graphs", "summary": "Nodes and edges."}\n```',
        '<think>plan it</think>\n{"title": "Graphs", "summary": "Nodes and edges."}',
        'Here it is: {"title": "Graphs", "summary": "Nodes and edges."} Enjoy.',
    ],
)
def test_json_parse_success(reply):
    parsed = JsonFormatter().parse(reply, ["title", "summary"])
    assert parsed.ok
    assert parsed.to_dict() == {"title": "Graphs", "summary": "Nodes and edges."}
    assert parsed["title"] == "Graphs"
    assert parsed.raw == reply


def test_json_parse_failure_keeps_the_raw_text_and_says_why():
    parsed = JsonFormatter().parse("Sure! The title is Graphs.", ["title"])
    assert not parsed.ok
    assert parsed.data is None
    assert parsed.raw == "Sure! The title is Graphs."
    assert parsed.error.startswith("the reply is not valid JSON (Expecting value at line 1 column 1)")
    with pytest.raises(OutputFormatError, match="could not be parsed: the reply is not valid JSON") as info:
        parsed["title"]
    assert info.value.raw == "Sure! The title is Graphs."

    assert JsonFormatter().parse("[1, 2]").error == "the reply is JSON but a list, not an object"
    assert JsonFormatter().parse("").error == "the reply is empty; expected a JSON object"

    missing = JsonFormatter().parse('{"title": "G"}', ["title", "summary"])
    assert not missing.ok and missing["title"] == "G"
    assert missing.error == "the reply is missing required field(s) ['summary']; it has ['title']"
    with pytest.raises(OutputFormatError, match="no field 'summary'"):
        missing["summary"]


def test_paragraph_parse_with_declared_fields_keeps_colons_in_values():
    reply = "title: Meeting at 10:30\nsummary:\nWe met.\nNote: bring coffee.\n"
    parsed = ParagraphFormatter().parse(reply, ["title", "summary"])
    assert parsed.ok
    assert parsed.to_dict() == {"title": "Meeting at 10:30", "summary": "We met.\nNote: bring coffee."}
    free = ParagraphFormatter().parse("A: 1\nB: 2")
    assert free.to_dict() == {"A": "1", "B": "2"}
    assert ParagraphFormatter().parse("no fields here").error == "the reply has no 'KEY: value' lines"


def test_run_parses_the_json_reply_into_result_output():
    model = ScriptedModel(['{"title": "Graphs", "summary": "Nodes and edges."}'])
    agent = Agent(
        model=model,
        instructions="You write summaries.",
        prompt_template="Topic: {topic}",
        output_fields={"title": "short", "summary": "two sentences"},
    )
    result = agent.run({"topic": "graphs"})
    assert result.output["title"] == "Graphs"
    assert result.output.to_dict() == {"title": "Graphs", "summary": "Nodes and edges."}
    assert result.turn.output is result.output
    assert result.turn.message == '{"topic": "graphs"}'
    assert model.requests[0].last_user_message.startswith("MESSAGE TO YOU: Topic: graphs\n\n")


def test_an_unparsable_reply_finishes_the_run_with_an_error_result():
    agent = Agent(
        model=ScriptedModel(["I'd rather chat."]), prompt_template="Topic: {topic}", output_fields=["title"]
    )
    result = agent.run({"topic": "graphs"})
    assert result.turn.status == "ok"
    assert result.content == "I'd rather chat."
    assert not result.output.ok
    assert result.output.raw == "I'd rather chat."
    with pytest.raises(OutputFormatError):
        result.output["title"]


def test_plain_agents_have_no_output_parsing():
    result = Agent(model=ScriptedModel(["hi"])).run("hello")
    assert result.output is None
    assert result.turn.output is None


def test_masfactory_formatters_spelling_and_bad_options():
    agent = Agent(
        model=ScriptedModel(["title: T"]),
        prompt_template="{x}",
        output_fields=["title"],
        formatters=[ParagraphFormatter(), ParagraphFormatter()],
    )
    observed = agent.observe({"x": "go"}).user_prompt
    assert f"RESPONSE FORMAT REQUIREMENTS:\n{ParagraphFormatter.requirements}" in observed
    assert agent.run({"x": "go"}).output.to_dict() == {"title": "T"}

    with pytest.raises(
        ConfigurationError, match="formatter must be 'paragraph', 'json' or a MessageFormatter"
    ):
        Agent(model=ScriptedModel(), formatter="yaml")
    with pytest.raises(ConfigurationError, match="not both"):
        Agent(model=ScriptedModel(), formatters=[JsonFormatter()], formatter="json")
    with pytest.raises(ConfigurationError, match="output_fields must be a dict"):
        Agent(model=ScriptedModel(), output_fields="title")
    with pytest.raises(
        ConfigurationError, match=r"must be a str, a dict of input fields for a prompt_template"
    ):
        Agent(model=ScriptedModel()).observe(42)  # type: ignore[arg-type]
