"""Images and files on the wire of both OpenAI APIs, through the real ``openai`` client against
the scripted server on 127.0.0.1 (which checks every content part as the API does): every input
type, streamed and not; tool results with images; the recorded request keeps references, never
base64."""

from __future__ import annotations

import base64
import hashlib
import json
from pathlib import Path

import pytest
from openai_server import OpenAIServer, Reply

from agentnb import Agent, Image, ToolResult
from agentnb.messages import FilePart, ImagePart, TextPart
from agentnb.messages.png import encode_png
from agentnb.models import OpenAIChat, OpenAIResponses

PDF = b"%PDF-1.4\n1 0 obj<<>>endobj\n%%EOF\n"


@pytest.fixture
def inputs(tmp_path: Path):
    """One of every input type a notebook holds, and the parts they become, in order."""
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np
    import pandas as pd
    from PIL import Image as PILImage

    fig, ax = plt.subplots(figsize=(2, 1), dpi=40)
    ax.plot([1, 3, 2])
    (tmp_path / "report.pdf").write_bytes(PDF)
    (tmp_path / "notes.txt").write_text("sales rose in March\n")
    (tmp_path / "photo.png").write_bytes(encode_png(bytes(range(12)), 2, 2, 3))
    items = [
        "What changed in March?",
        fig,
        PILImage.new("RGB", (8, 6), (0, 128, 255)),
        np.full((4, 5, 3), 200, dtype=np.uint8),
        encode_png(bytes(27), 3, 3, 3),
        tmp_path / "photo.png",
        Image("https://example.com/chart.png", detail="low"),
        tmp_path / "report.pdf",
        tmp_path / "notes.txt",
        pd.DataFrame({"month": ["Jan", "Feb", "Mar"], "sales": [10, 12, 30]}),
    ]
    yield items
    plt.close(fig)


def chat(server: OpenAIServer, stream: bool) -> OpenAIChat:
    return OpenAIChat("gpt-4o", base_url=server.url, max_retries=0, stream=stream)


def responses(server: OpenAIServer, stream: bool) -> OpenAIResponses:
    return OpenAIResponses("gpt-4o", base_url=server.url, max_retries=0, stream=stream)


def data_of(url: str) -> tuple[str, bytes]:
    head, _, body = url.partition(",")
    return head[len("data:") : -len(";base64")], base64.b64decode(body)


def user_parts(agent: Agent) -> tuple:
    (user,) = [m for m in agent.history[-1].messages if m.role == "user"]
    return user.content


def assert_recorded_by_reference(agent: Agent, parts: tuple) -> None:
    """The recorded request names each image and file by hash and holds none of its bytes."""
    recorded = json.dumps(agent.history[-1].model_calls[0].request)
    for part in parts:
        if isinstance(part, (FilePart, ImagePart)) and part.data is not None:
            assert f"agentnb-blob:{part.sha256}" in recorded
            assert base64.b64encode(part.data).decode()[:32] not in recorded
    assert "base64" not in recorded


@pytest.mark.parametrize("stream", [True, False])
def test_every_input_type_reaches_chat_completions(server, inputs, stream) -> None:
    server.add(Reply(text="Sales tripled in March."))
    agent = Agent("analyst", model=chat(server, stream))
    result = agent.run(inputs)
    assert result.content == "Sales tripled in March."
    assert server.problems == []
    parts = user_parts(agent)
    assert [type(p).__name__ for p in parts] == [
        "TextPart",
        *["ImagePart"] * 6,
        "FilePart",
        "FilePart",
        "TextPart",
    ]
    sent = server.requests[-1].body["messages"][-1]["content"]
    assert sent[0] == {"type": "text", "text": "What changed in March?"}
    for item, part in zip(sent[1:6], parts[1:6]):
        assert item["type"] == "image_url" and item["image_url"]["detail"] == "auto"
        assert data_of(item["image_url"]["url"]) == ("image/png", part.data)
    assert sent[6] == {
        "type": "image_url",
        "image_url": {"url": "https://example.com/chart.png", "detail": "low"},
    }
    assert sent[7] == {
        "type": "file",
        "file": {
            "filename": "report.pdf",
            "file_data": "data:application/pdf;base64," + base64.b64encode(PDF).decode(),
        },
    }
    # Chat Completions' file input takes PDFs: a text file goes as its text
    assert sent[8] == {
        "type": "text",
        "text": "--- file notes.txt (text/plain) ---\nsales rose in March\n\n--- end of file notes.txt ---",
    }
    assert sent[9]["type"] == "text" and sent[9]["text"].startswith("DataFrame: 3 rows x 2 columns")
    assert (parts[1].width, parts[1].height) == (80, 40)  # the figure at its dpi
    assert_recorded_by_reference(agent, parts)


@pytest.mark.parametrize("stream", [True, False])
def test_every_input_type_reaches_the_responses_api(server, inputs, stream) -> None:
    server.add(Reply(text="Sales tripled in March."))
    agent = Agent("analyst", model=responses(server, stream))
    assert agent.run(inputs).content == "Sales tripled in March."
    assert server.problems == []
    parts = user_parts(agent)
    (user,) = [i for i in server.requests[-1].body["input"] if i.get("role") == "user"]
    sent = user["content"]
    assert sent[0] == {"type": "input_text", "text": "What changed in March?"}
    for item, part in zip(sent[1:6], parts[1:6]):
        assert item["type"] == "input_image" and item["detail"] == "auto"
        assert data_of(item["image_url"]) == (part.media_type, part.data)
    assert sent[6] == {"type": "input_image", "image_url": "https://example.com/chart.png", "detail": "low"}
    assert sent[7] == {
        "type": "input_file",
        "filename": "report.pdf",
        "file_data": "data:application/pdf;base64," + base64.b64encode(PDF).decode(),
    }
    assert data_of(sent[8]["file_data"]) == ("text/plain", b"sales rose in March\n")
    assert sent[9]["type"] == "input_text" and "Mar" in sent[9]["text"]
    assert_recorded_by_reference(agent, parts)


def chart() -> ImagePart:
    """Draw the sales chart."""
    return Image(encode_png(bytes(range(48)), 4, 4, 3), name="chart.png")


def report() -> ToolResult:
    """The sales report, with its chart and the PDF."""
    return ToolResult(content=["Sales report:", chart(), FilePart(PDF, name="report.pdf")])


@pytest.mark.parametrize("stream", [True, False])
def test_a_tool_s_image_reaches_chat_completions_in_a_user_message_after_the_tool_messages(
    server, stream
) -> None:
    server.add(Reply(tool_calls=[("chart", {}), ("report", {})]), Reply(text="It rose."))
    agent = Agent("analyst", model=chat(server, stream), tools=[chart, report])
    assert agent.run("Show me the sales").content == "It rose."
    assert server.problems == []
    messages = server.requests[-1].body["messages"]
    first, second, after = messages[-3:]
    assert (first["role"], first["content"]) == ("tool", "[image chart.png attached below]")
    assert (second["role"], second["content"]) == (
        "tool",
        "Sales report:\n[image chart.png attached below]\n[file report.pdf attached below]",
    )
    assert after["role"] == "user"
    kinds = [(item["type"], item.get("text")) for item in after["content"]]
    call_ids = [first["tool_call_id"], second["tool_call_id"]]
    assert kinds == [
        ("text", f"[image chart.png from tool call {call_ids[0]}]"),
        ("image_url", None),
        ("text", f"[image chart.png from tool call {call_ids[1]}]"),
        ("image_url", None),
        ("text", f"[file report.pdf from tool call {call_ids[1]}]"),
        ("file", None),
    ]
    assert data_of(after["content"][1]["image_url"]["url"])[1] == chart().data
    finished = [e for e in agent.history[-1].events if e.kind == "tool_call_finished"]
    assert finished[0].result == "[image chart.png]"
    assert finished[0].attachments[0]["sha256"] == hashlib.sha256(chart().data).hexdigest()
    assert [a["type"] for a in finished[1].attachments] == ["image", "file"]
    assert finished[1].result == "Sales report:"


@pytest.mark.parametrize("stream", [True, False])
def test_a_tool_s_image_reaches_the_responses_api_in_the_function_output(server, stream) -> None:
    server.add(Reply(tool_calls=[("report", {})]), Reply(text="It rose."))
    agent = Agent("analyst", model=responses(server, stream), tools=[report])
    assert agent.run("Show me the sales").content == "It rose."
    assert server.problems == []
    (output,) = [i for i in server.requests[-1].body["input"] if i.get("type") == "function_call_output"]
    items = output["output"]
    assert [i["type"] for i in items] == ["input_text", "input_image", "input_file"]
    assert items[0]["text"] == "Sales report:"
    assert data_of(items[1]["image_url"]) == ("image/png", chart().data)
    assert items[2]["filename"] == "report.pdf"
    assert [i.get("role") for i in server.requests[-1].body["input"] if "role" in i] == ["user"]


def test_an_image_in_the_history_is_sent_again_from_the_same_part(server) -> None:
    image = chart()
    agent = Agent("analyst", model=chat(server, stream=False), add_history_to_context=True)
    for turn in range(3):
        server.add(Reply(text=f"answer {turn}"))
        agent.run([f"turn {turn}", image])
    last = server.requests[-1].body["messages"]
    images = [
        i for m in last if isinstance(m["content"], list) for i in m["content"] if i["type"] == "image_url"
    ]
    assert len(images) == 3  # the history sends it again, each time from the same part
    assert len({i["image_url"]["url"] for i in images}) == 1
    assert server.problems == []


def test_a_text_turn_sends_the_bytes_it_always_did(server) -> None:
    server.add(Reply(text="hi"))
    agent = Agent("plain", model=chat(server, stream=False), instructions="Be brief.")
    agent.run("hello")
    assert server.requests[-1].body["messages"] == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "hello"},
    ]
    assert agent.history[-1].model_calls[0].request == server.requests[-1].body


def test_the_server_s_usage_wins_over_the_image_estimate(server) -> None:
    server.add(Reply(text="ok", usage=(1234, 5)))
    agent = Agent("a", model=chat(server, stream=True))
    result = agent.run(["look", chart()])
    assert (result.usage.input_tokens, result.usage.estimated) == (1234, False)
    rendered = next(e for e in agent.history[-1].events if e.kind == "prompt_rendered")
    assert rendered.tokens.images == 85 + 170  # a 4x4 image: one tile, an estimate
    assert user_parts(agent)[0] == TextPart("look")
