"""How a tool result's images go on Chat Completions: the tool message names them, and one user
message after the round's tool messages carries them (the API takes only text in a tool
message); the Responses API's items; what a request with no image gives back unchanged."""

from __future__ import annotations

from agentnb.messages import ImagePart, Message, ToolCall
from agentnb.messages.png import encode_png
from agentnb.models.attachments import chat_tool_results, outgoing, responses_content

PNG = encode_png(bytes(12), 2, 2, 3)


def tool_message(call_id: str, *content) -> dict:
    return Message.tool(ToolCall(call_id, "plot", "{}"), list(content)).to_openai()


def test_a_request_without_images_in_tool_results_is_the_same_list() -> None:
    messages = [{"role": "user", "content": "hi"}, {"role": "tool", "tool_call_id": "c", "content": "3"}]
    assert chat_tool_results(messages) is messages


def test_the_images_of_a_round_follow_its_last_tool_message() -> None:
    image = ImagePart(PNG, name="a.png")
    messages = [
        {"role": "assistant", "content": None, "tool_calls": []},
        tool_message("c1", "first", image),
        {"role": "tool", "tool_call_id": "c2", "content": "plain"},
        tool_message("c3", image),
        {"role": "assistant", "content": "done"},
    ]
    out = chat_tool_results(messages)
    assert [m["role"] for m in out] == ["assistant", "tool", "tool", "tool", "user", "assistant"]
    assert out[1]["content"] == "first\n[image a.png attached below]"
    assert out[3]["content"] == "[image a.png attached below]"
    assert [i["type"] for i in out[4]["content"]] == ["text", "image_url", "text", "image_url"]
    assert out[4]["content"][0]["text"] == "[image a.png from tool call c1]"
    assert messages[1]["content"][0] == {"type": "text", "text": "first"}  # the request is not changed


def test_a_round_that_ends_the_request_gets_its_user_message_at_the_end() -> None:
    out = chat_tool_results([tool_message("c1", ImagePart(PNG, name="a.png"))])
    assert [m["role"] for m in out] == ["tool", "user"]


def test_responses_items_keep_the_parts_description_until_sent() -> None:
    image = ImagePart(PNG, name="a.png", detail="high")
    items = responses_content(Message.user(["see", image]).to_openai()["content"], "user")
    assert items[0] == {"type": "input_text", "text": "see"}
    assert items[1]["type"] == "input_image" and items[1]["detail"] == "high"
    assert items[1]["image_url"] == f"agentnb-blob:{image.sha256}" and items[1]["part"]["name"] == "a.png"
    sent = outgoing({"input": [{"role": "user", "content": items}]}, {image.sha256: image})
    assert sent["input"][0]["content"][1] == {
        "type": "input_image",
        "image_url": "data:image/png;base64," + __import__("base64").b64encode(PNG).decode(),
        "detail": "high",
    }
    assert responses_content("text", "assistant") == "text"
    body = {"input": "x"}
    assert outgoing(body, {}) is body
