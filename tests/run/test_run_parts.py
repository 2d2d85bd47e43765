"""A run given images and files: what the scripted model receives (each part's hash and size),
what the history and the prompt keep, ``messages=[...]``, ``arun`` / ``iter_run``, teams,
tool results, size limits and what is refused."""

from __future__ import annotations

import asyncio
import hashlib

import pytest

from agentnb import Agent, Image, ScriptedModel, ToolResult, tool_call
from agentnb.errors import ConfigurationError, PartError, PartSizeError
from agentnb.messages import MAX_IMAGE_BYTES, FilePart, ImagePart, Message, TextPart
from agentnb.messages.png import encode_png
from agentnb.models.tokens import image_tokens

PNG = encode_png(bytes(range(30)), 5, 2, 3)
PDF = b"%PDF-1.4\n%%EOF\n"


def test_the_scripted_model_sees_each_part_s_hash_and_size() -> None:
    model = ScriptedModel(["A small image."])
    Agent("a", model=model).run(["What is this?", PNG, FilePart(PDF, name="r.pdf")])
    (request,) = model.requests
    content = request.messages[-1]["content"]
    assert content[1]["part"]["sha256"] == hashlib.sha256(PNG).hexdigest()
    assert (content[1]["part"]["size"], content[1]["part"]["width"], content[1]["part"]["height"]) == (
        len(PNG),
        5,
        2,
    )
    assert content[2]["part"] == {
        "type": "file",
        "sha256": hashlib.sha256(PDF).hexdigest(),
        "media_type": "application/pdf",
        "size": len(PDF),
        "name": "r.pdf",
    }
    text, image, pdf = request.last_user_parts
    assert (text, image.data, pdf.data) == (TextPart("What is this?"), PNG, PDF)
    assert request.last_user_message == "What is this?"


def test_a_scripted_function_can_answer_from_the_image() -> None:
    model = ScriptedModel(lambda request: f"{request.last_user_parts[1].width} px wide")
    assert Agent("a", model=model).run(["How wide?", PNG]).content == "5 px wide"


def test_the_history_keeps_the_user_message_s_parts_and_the_record_its_text() -> None:
    agent = Agent("a", model=ScriptedModel(["one", "two"]), add_history_to_context=True)
    agent.run(["Look:", PNG])
    agent.run("And now?")
    record = agent.history[0]
    assert record.message == "Look:"
    (user,) = [m for m in record.messages if m.role == "user"]
    assert user.content == (TextPart("Look:"), ImagePart(PNG))
    sent = agent.model.requests[1].messages
    assert [m["role"] for m in sent] == ["user", "assistant", "user"]
    assert sent[0]["content"][1]["part"]["sha256"] == hashlib.sha256(PNG).hexdigest()
    assert sha_of(agent.model.requests[1].parts) == {hashlib.sha256(PNG).hexdigest()}


def sha_of(parts) -> set[str]:
    return set(parts)


def test_a_message_of_text_only_stays_a_str() -> None:
    agent = Agent("a", model=ScriptedModel(["ok"]))
    agent.run(["one", "two"])
    assert agent.model.requests[0].messages[-1] == {"role": "user", "content": "one\ntwo"}


def test_a_prompt_template_or_formatter_puts_the_text_first_and_the_images_after() -> None:
    agent = Agent(
        "a", model=ScriptedModel(["ok"]), add_datetime_to_context=False, dependencies={"city": "Oslo"}
    )
    agent.add_dependencies_to_context = True
    agent.run([PNG, "the weather in {city}?"])
    content = agent.model.requests[0].messages[-1]["content"]
    assert content[0]["type"] == "text" and content[0]["text"].startswith("the weather in Oslo?")
    assert "<additional context>" in content[0]["text"]
    assert content[1]["type"] == "image_url"


def test_messages_given_as_chat_messages_keep_the_last_one_s_parts() -> None:
    agent = Agent("a", model=ScriptedModel(["ok"]))
    agent.run(messages=[Message.user("earlier"), Message.assistant("noted"), Message.user(["now this", PNG])])
    sent = agent.model.requests[0].messages
    assert sent[0] == {"role": "user", "content": "earlier"}
    assert sent[-1]["content"][1]["part"]["size"] == len(PNG)


def test_a_wire_dict_with_a_data_url_is_a_user_message_of_parts() -> None:
    import base64

    agent = Agent("a", model=ScriptedModel(["ok"]))
    url = "data:image/png;base64," + base64.b64encode(PNG).decode()
    agent.run(
        messages=[
            {
                "role": "user",
                "content": [{"type": "text", "text": "hi"}, {"type": "image_url", "image_url": {"url": url}}],
            }
        ]
    )
    assert agent.model.requests[0].last_user_parts[1].data == PNG


def test_iter_run_and_arun_take_parts() -> None:
    agent = Agent("a", model=ScriptedModel(["one", "two"]))
    kinds = [event.kind for event in agent.iter_run(["see", PNG])]
    assert kinds[0] == "run_started" and kinds[-1] == "run_finished"
    result = asyncio.run(agent.arun(["see", Image(PNG, detail="low")]))
    assert result.content == "two"
    assert agent.model.requests[1].messages[-1]["content"][1]["image_url"]["detail"] == "low"


def test_a_team_leader_receives_the_parts() -> None:
    from agentnb import Team

    member = Agent("member", model=ScriptedModel(["member answer"]))
    team = Team("team", members=[member], model=ScriptedModel(["the team saw it"]))
    assert team.run(["What is in the chart?", PNG]).content == "the team saw it"
    assert team.model.requests[0].last_user_parts[1].data == PNG


def test_the_prompt_counts_the_image_tokens_by_the_tile_rule() -> None:
    big = encode_png(bytes(1024 * 3) * 1024, 1024, 1024, 3)
    agent = Agent("a", model=ScriptedModel(["ok"]))
    agent.run(["look", Image(big, detail="high"), Image(PNG, detail="low")])
    rendered = next(e for e in agent.history[-1].events if e.kind == "prompt_rendered")
    assert rendered.tokens.images == 765 + 85 == image_tokens(1024, 1024, "high") + image_tokens(5, 2, "low")
    assert rendered.tokens.total >= rendered.tokens.images + rendered.tokens.user


def test_parts_over_the_size_limits_fail_before_any_request() -> None:
    model = ScriptedModel(["never"])
    agent = Agent("a", model=model)
    huge = b"\x89PNG\r\n\x1a\n" + bytes(MAX_IMAGE_BYTES)
    with pytest.raises(PartSizeError, match="the OpenAI API takes an image of at most 20.0 MB"):
        agent.run(["look", huge])
    three = [b"\x89PNG\r\n\x1a\n" + bytes(19 * 1024 * 1024) + bytes([i]) for i in range(3)]
    with pytest.raises(PartSizeError, match="the images of one message come to 57.0 MB"):
        agent.run(["look", *three])
    assert model.requests == [] and len(agent.history) == 0


def test_what_cannot_be_sent_is_refused_naming_what_is_accepted() -> None:
    agent = Agent("a", model=ScriptedModel(["never"]))
    with pytest.raises(PartError, match=r"cannot send a builtins\.set to a model; a message takes a str"):
        agent.run(["look", {1, 2}])
    assert isinstance(PartError("x"), ConfigurationError)


def plot() -> ImagePart:
    """Draw the chart."""
    return Image(PNG, name="chart.png")


def broken() -> ToolResult:
    """A result that cannot be sent."""
    return ToolResult(content=["text", object()])


def test_a_tool_s_image_is_in_the_tool_message_and_described_in_its_event() -> None:
    model = ScriptedModel([tool_call("plot"), "Seen."])
    agent = Agent("a", model=model, tools=[plot])
    agent.run("draw it")
    tool_message = model.requests[1].messages[-1]
    assert tool_message["role"] == "tool"
    assert tool_message["content"] == [
        {
            "type": "image_url",
            "image_url": {"url": f"agentnb-blob:{hashlib.sha256(PNG).hexdigest()}", "detail": "auto"},
            "part": {
                "type": "image",
                "sha256": hashlib.sha256(PNG).hexdigest(),
                "media_type": "image/png",
                "size": len(PNG),
                "name": "chart.png",
                "detail": "auto",
                "width": 5,
                "height": 2,
            },
        }
    ]
    finished = next(e for e in agent.history[-1].events if e.kind == "tool_call_finished")
    assert finished.result == "[image chart.png]" and finished.attachments[0]["size"] == len(PNG)
    # the recorded payload (Chat Completions form) sends it in a user message after the tool's
    payload = next(e for e in agent.history[-1].events if e.kind == "model_requested" and e.call == 1).request
    assert payload["messages"][-2] == {
        "role": "tool",
        "content": "[image chart.png attached below]",
        "tool_call_id": tool_message["tool_call_id"],
    }
    assert payload["messages"][-1]["role"] == "user"


def test_a_tool_result_that_cannot_be_sent_is_the_call_s_error() -> None:
    model = ScriptedModel([tool_call("broken"), "Sorry."])
    agent = Agent("a", model=model, tools=[broken])
    agent.run("go")
    finished = next(e for e in agent.history[-1].events if e.kind == "tool_call_finished")
    assert finished.error_kind == "tool_error"
    assert "returned what cannot be sent to the model: cannot send a builtins.object" in finished.result


def test_a_team_member_receives_the_user_s_images_after_its_task() -> None:
    from agentnb import Team

    member = Agent("reader", model=ScriptedModel(["a bar chart"]))
    leader = ScriptedModel(
        [
            tool_call("delegate_task_to_member", member_id="reader", task="Describe the chart."),
            "It is a bar chart.",
        ]
    )
    team = Team("team", members=[member], model=leader)
    assert team.run(["What is this?", PNG]).content == "It is a bar chart."
    text, image = member.model.requests[0].last_user_parts
    assert text.text.endswith("Describe the chart.") and image.data == PNG


def test_a_handoff_target_receives_the_user_s_images() -> None:
    billing = Agent("billing", model=ScriptedModel(["Refund approved."]))
    triage = Agent("triage", model=ScriptedModel([tool_call("transfer_to_billing")]), handoffs=[billing])
    assert triage.run(["Refund this receipt", PNG]).content == "Refund approved."
    request = billing.model.requests[0]
    (user,) = [m for m in request.messages if m["role"] == "user"]
    assert [i["type"] for i in user["content"]] == ["text", "image_url"]
    assert request.parts[hashlib.sha256(PNG).hexdigest()].data == PNG


def test_a_turn_with_an_image_replays_by_hash_and_drifts_on_another_image() -> None:
    from agentnb import ReplayModel
    from agentnb.errors import ReplayDriftError

    agent = Agent("a", model=ScriptedModel(["A small image."]))
    agent.run(["What is this?", PNG])
    replayed = Agent("a", model=ReplayModel.from_history(agent.history))
    assert replayed.run(["What is this?", PNG]).content == "A small image."
    other = encode_png(bytes(range(1, 31)), 5, 2, 3)
    again = Agent("a", model=ReplayModel.from_history(agent.history))
    with pytest.raises(ReplayDriftError, match=hashlib.sha256(other).hexdigest()[:16]):
        again.run(["What is this?", other])


def test_observe_shows_a_message_of_parts_as_a_run_sends_it_without_calling_the_model() -> None:
    model = ScriptedModel(["A small image."])
    agent = Agent("a", model=model, instructions="Describe images.")
    observation = agent.observe(["What is this?", PNG])
    assert model.requests == []  # nothing was asked
    agent.run(["What is this?", PNG])
    sent = model.requests[0].messages[-1]["content"]
    assert observation.request["messages"][-1]["content"] == sent
    assert sent[1]["part"]["sha256"] == hashlib.sha256(PNG).hexdigest()
    assert "base64" not in str(observation.request)  # a preview names the image, never inlines it


def test_observe_refuses_what_a_run_refuses() -> None:
    with pytest.raises(PartError):
        Agent("a", model=ScriptedModel(["x"])).observe(["What is this?", object()])


def test_a_tool_returning_more_images_than_a_message_takes_fails_as_its_call_not_the_run() -> None:
    def charts() -> list[ImagePart]:
        """Every chart there is."""
        return [ImagePart(PNG, name=f"c{i}") for i in range(501)]

    model = ScriptedModel([tool_call("charts"), "Too many charts; I will ask for fewer."])
    result = Agent("a", model=model, tools=[charts]).run("Show me the charts.")
    assert result.content == "Too many charts; I will ask for fewer."  # the run went on
    (finished,) = result.turn.tool_calls
    assert finished.error_kind == "tool_error" and "at most 500 per request" in finished.error
    sent = model.requests[1].messages[-1]
    assert sent["role"] == "tool" and "cannot be sent to the model" in sent["content"]
