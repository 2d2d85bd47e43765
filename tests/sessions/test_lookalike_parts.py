"""State, tool results and typed outputs holding dicts shaped exactly like stored images and files,
marked or not, at any depth: saved and loaded back byte for byte, in JSON, SQLite and memory
sessions, through the log and through compaction, never taken for a part (no blob asked for, none
dropped); and a session written in the format before parts were marked still loads."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from agentnb import Agent, ScriptedModel, tool_call
from agentnb.messages import ImagePart
from agentnb.messages.png import encode_png
from agentnb.sessions import JSONSession, MemorySession, SQLiteSession
from agentnb.sessions import format as fmt
from agentnb.sessions.codec import register_encoder

PNG = encode_png(bytes((i * 5) % 256 for i in range(4 * 4 * 3)), 4, 4, 3)
REAL = hashlib.sha256(PNG).hexdigest()
NOWHERE = "ab" * 32  # a hash no blob has
V3 = Path(__file__).parent / "data" / "v3_images"


def lookalike(sha: str, marked: bool, **more: Any) -> dict[str, Any]:
    part = {"type": "image", "sha256": sha, "media_type": "image/png", "size": 3, "detail": "auto"}
    return {"$agentnb": "part", **part, **more} if marked else {**part, **more}


def hostile_state() -> dict[str, Any]:
    deep: Any = {"content": [lookalike(NOWHERE, True)]}
    for depth in range(12):
        deep = {"level": depth, "items": [deep, lookalike(NOWHERE, depth % 2 == 0)]}
    return {
        "top": lookalike(NOWHERE, True),
        "content": [lookalike(NOWHERE, False), lookalike(NOWHERE, True)],
        "message": {"role": "user", "content": [{"type": "text", "text": "hi"}, lookalike(NOWHERE, False)]},
        "real_hash": {"content": [lookalike(REAL, True, name="mine")]},
        "file": {
            "content": [{"$agentnb": "part", "type": "file", "sha256": NOWHERE, "media_type": "text/csv"}]
        },
        "tag_last": {"type": "image", "sha256": NOWHERE, "media_type": "image/png", "$agentnb": "part"},
        "old_wrapper": {"$agentnb": "dict", "value": {"$agentnb": "part", "sha256": NOWHERE}},
        "escaped_looking": {"$agentnb$": "part", "$agentnb$$": {"$agentnb": "part", "sha256": NOWHERE}},
        "float_tag": {"$agentnb": "float", "value": "nan"},
        "bytes_tag": {"$agentnb": "bytes", "value": "aGk="},
        "wire": {
            "content": [
                {
                    "type": "image_url",
                    "image_url": {"url": f"agentnb-blob:{NOWHERE}"},
                    "part": lookalike(NOWHERE, False),
                }
            ]
        },
        "deep": deep,
        "text": '{"$agentnb":"part","type":"image","sha256":"' + NOWHERE + '","media_type":"image/png"}',
        "$agentnb": "part",
    }


class Chart(BaseModel):
    """A typed output shaped like a stored part."""

    type: str
    sha256: str
    media_type: str


def lookup() -> dict[str, Any]:
    """A tool whose result is a dict shaped like a stored part."""
    return lookalike(NOWHERE, True)


def shown() -> ImagePart:
    """A tool that returns a real image."""
    return ImagePart(PNG, name="real.png")


def run_turns(session: Any) -> Agent:
    model = ScriptedModel(
        [
            tool_call("lookup"),
            tool_call("shown"),
            "Seen.",
            json.dumps({"type": "image", "sha256": NOWHERE, "media_type": "image/png"}),
            "Again.",
        ]
    )
    agent = Agent("shop", model, tools=[lookup, shown], session=session, session_state=hostile_state())
    agent.run(["Look:", PNG])
    agent.run("As a chart:", output_type=Chart)
    agent.session_state["later"] = {"content": [lookalike(NOWHERE, True)], "$agentnb": "part"}
    agent.run("Once more.")
    return agent


def plain_output(output: Any) -> Any:
    return output.model_dump() if isinstance(output, BaseModel) else output


def dumped(value: Any) -> str:
    return json.dumps(value, sort_keys=False, allow_nan=True)


def sessions(tmp_path: Path) -> dict[str, Any]:
    return {
        "json": lambda: JSONSession(tmp_path / "j", compact_min_bytes=1 << 30),
        "sqlite": lambda: SQLiteSession(tmp_path / "s.db", compact_min_bytes=1 << 30),
    }


@pytest.mark.parametrize("kind", ["json", "sqlite", "memory"])
def test_lookalike_parts_in_state_tool_results_and_outputs_load_back_byte_for_byte(tmp_path, kind):
    memory = MemorySession()
    make = sessions(tmp_path).get(kind, lambda: memory)
    agent = run_turns(make())
    expected = dumped(agent.session_state)
    assert dumped({k: agent.session_state[k] for k in hostile_state()}) == dumped(hostile_state())
    assert "later" in agent.session_state
    outputs = [plain_output(t.output) for t in agent.history]
    assert outputs[1] == {"type": "image", "sha256": NOWHERE, "media_type": "image/png"}
    tool_results = [c.result for t in agent.history for c in t.tool_calls]
    for compact in (False, True):  # from the log, then from the snapshot the log folded into
        session = make()
        if compact:
            session.compact("shop")
        again = Agent("shop", ScriptedModel(["ok"]), tools=[lookup, shown], session=session)
        assert dumped(again.session_state) == expected
        assert [plain_output(t.output) for t in again.history] == outputs  # (a loaded one is JSON data)
        assert [c.result for t in again.history for c in t.tool_calls] == tool_results
        user = next(m for m in again.history[0].messages if m.role == "user")
        tool = next(m for m in again.history[0].messages if m.role == "tool" and m.name == "shown")
        assert user.content[1].data == PNG and tool.content[0].data == PNG  # real parts still are
    if kind == "json":
        assert [p.name for p in (tmp_path / "j" / "blobs").iterdir()] == [f"{REAL}.png"]
        assert JSONSession(tmp_path / "j").drop_unused_blobs(older_than=-1) == []


def test_a_users_key_that_is_the_tag_is_escaped_and_its_dict_keeps_its_order(tmp_path):
    state = {"b": {"z": 1, "$agentnb": "part", "a": [{"$agentnb$": "x", "q": None}]}, "a": 2}
    agent = Agent("shop", ScriptedModel(["ok"]), session=JSONSession(tmp_path), session_state=state)
    agent.run("hi")
    text = (tmp_path / "shop.jsonl").read_text()
    assert '"b":{"z":1,"$agentnb$":"part","a":[{"$agentnb$$":"x","q":null}]}' in text
    again = Agent("shop", ScriptedModel([]), session=JSONSession(tmp_path))
    assert dumped(again.session_state) == dumped(state)


@pytest.mark.parametrize("kind", ["json", "sqlite"])
def test_later_changes_to_a_state_whose_keys_were_escaped_are_kept(tmp_path, kind):
    make = sessions(tmp_path)[kind]
    agent = Agent("shop", ScriptedModel(lambda r: "ok"), session=make(), session_state={"$agentnb": "part"})
    agent.run("one")
    agent.session_state["added"] = {"$agentnb": "part", "sha256": NOWHERE}
    agent.run("two")
    del agent.session_state["$agentnb"]
    agent.session_state["$agentnb$"] = 1
    agent.run("three")
    for compact in (False, True):
        session = make()
        if compact:
            session.compact("shop")
        again = Agent("shop", ScriptedModel([]), session=session)
        assert dumped(again.session_state) == dumped(agent.session_state)
        assert again.session_state == {"added": {"$agentnb": "part", "sha256": NOWHERE}, "$agentnb$": 1}
        assert [dict(t.state_after) for t in again.history] == [dict(t.state_after) for t in agent.history]


def test_no_encoder_may_take_a_name_the_codec_writes():
    for name in ("part", "dict", "float"):
        with pytest.raises(TypeError, match=f"cannot use the name '{name}'"):
            register_encoder(Chart, name, dict, dict)


def test_a_session_written_before_parts_were_marked_loads_and_goes_on(tmp_path):
    folder = tmp_path / "v3"
    shutil.copytree(V3, folder)
    assert '"version":3' in (folder / "shop.json").read_text()
    assert '"$agentnb":"part"' not in (folder / "shop.json").read_text() + (folder / "shop.jsonl").read_text()
    agent = Agent("shop", ScriptedModel(["Still there."]), session=JSONSession(folder))
    png = (
        folder / "blobs" / "c146356598c1d43c0aff08c8ce0325127c37337706da823f54746a66a6d384ec.png"
    ).read_bytes()
    users = [m for t in agent.history for m in t.messages if m.role == "user"]
    assert [p.kind for m in users for p in m.parts] == ["text", "image", "text", "file"]
    assert users[0].content[1].data == png and users[1].content[1].name == "report.pdf"
    assert users[1].content[1].data == b"%PDF-1.4\n1 0 obj<<>>endobj\n%%EOF\n"
    state = agent.session_state
    assert state["tagged"] == {"$agentnb": "mine", "kept": [1, 2]}  # its old escape reads
    assert state["doc"]["content"][0]["sha256"] == hashlib.sha256(png).hexdigest()
    assert state["n"] == float("inf") and state["when"] == {"$agentnb": "float", "value": "nan"}
    agent.run(["And now?", png])  # a save into it writes the current version's lines
    last = (folder / "shop.jsonl").read_text().splitlines()[-1]
    assert json.loads(last)["v"] == fmt.VERSION and '"$agentnb":"part"' in last
    again = Agent("shop", ScriptedModel([]), session=JSONSession(folder))
    assert dumped(again.session_state) == dumped(agent.session_state)
    assert [m.content[1].data for t in again.history for m in t.messages if m.role == "user"][::2] == [
        png,
        png,
    ]
