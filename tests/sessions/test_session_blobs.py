"""Images and files in saved sessions: each stored once by its hash beside the session (JSON:
``blobs/<sha256>.<ext>``; SQLite: a ``blobs`` table), the session referring to it by hash; a
missing or damaged blob stops a load before anything changed, naming the blob, where it was
expected and what to do; sessions without parts are written as before."""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading

import pytest
from fresh_process import run_fresh
from matplotlib.figure import Figure

from agentnb import Agent, ScriptedModel
from agentnb.errors import MissingBlobError, PartSizeError
from agentnb.messages import FilePart, ImagePart, TextPart, describe
from agentnb.messages.png import encode_png
from agentnb.sessions import JSONSession, MemorySession, SQLiteSession, load_history
from agentnb.sessions import segments as seg
from agentnb.sessions.blobs import DirectoryBlobs, Ref, referenced

PDF = b"%PDF-1.4\n1 0 obj<<>>endobj\n%%EOF\n"


def chart() -> Figure:
    figure = Figure(figsize=(3, 2), dpi=50)
    figure.add_subplot().plot([1, 3, 2])
    return figure


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def figure_turns(session, turns: int = 10) -> tuple[Agent, bytes]:
    figure = chart()
    agent = Agent("shop", ScriptedModel(lambda r: "seen"), session=session, add_history_to_context=True)
    for n in range(turns):
        agent.run([f"What changed in month {n}?", figure])
    user = next(m for m in agent.history[0].messages if m.role == "user")
    image = user.content[1]
    assert isinstance(image, ImagePart) and image.data is not None
    return agent, image.data


def test_ten_turns_sending_one_figure_store_one_blob_beside_the_session(tmp_path):
    agent, png = figure_turns(JSONSession(tmp_path))
    assert sorted(p.name for p in (tmp_path / "blobs").iterdir()) == [f"{sha(png)}.png"]
    assert (tmp_path / "blobs" / f"{sha(png)}.png").read_bytes() == png
    text = "".join(p.read_text() for p in tmp_path.glob("shop.json*"))
    assert text.count(sha(png)) >= 10  # every turn refers to it by hash...
    assert png.hex()[:64] not in text and "base64" not in text  # ...and none holds its bytes


def test_a_saved_session_brings_its_images_and_files_back_in_a_fresh_process(tmp_path):
    png = encode_png(bytes(range(48)), 4, 4, 3)
    agent = Agent("shop", ScriptedModel(["ok"]), session=JSONSession(tmp_path))
    agent.run(["Read these:", png, FilePart(PDF, name="report.pdf")])
    found = run_fresh(
        tmp_path,
        "probe",
        "",
        """
        import hashlib, json
        from agentnb import Agent, ScriptedModel
        from agentnb.sessions import JSONSession
        agent = Agent("shop", ScriptedModel(["ok"]), session=JSONSession("."))
        user = next(m for m in agent.history[0].messages if m.role == "user")
        print(json.dumps([[p.kind, hashlib.sha256(p.data).hexdigest() if p.kind != "text" else p.text,
                           getattr(p, "name", None)] for p in user.content]))
        """,
    )
    assert found == [
        ["text", "Read these:", None],
        ["image", sha(png), None],
        ["file", sha(PDF), "report.pdf"],
    ]
    assert sorted(p.name for p in (tmp_path / "blobs").iterdir()) == sorted(
        [f"{sha(png)}.png", f"{sha(PDF)}.pdf"]
    )


def test_a_missing_blob_stops_the_load_naming_the_hash_the_file_and_the_fix(tmp_path):
    _, png = figure_turns(JSONSession(tmp_path), turns=2)
    (tmp_path / "blobs" / f"{sha(png)}.png").unlink()
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir() if p.is_file()}
    fresh = Agent("shop", ScriptedModel(["ok"]), session_state={"mine": 1})
    with pytest.raises(MissingBlobError) as caught:
        JSONSession(tmp_path).load_session_state_sync("shop", agent=fresh)
    message = str(caught.value)
    assert sha(png) in message
    assert str(tmp_path / "blobs" / f"{sha(png)}.png") in message
    assert "Restore the blobs" in message and "nothing was loaded" in message
    assert len(fresh.history) == 0 and fresh.session_state == {"mine": 1}  # nothing loaded
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir() if p.is_file()} == before  # nothing written
    with pytest.raises(MissingBlobError, match=sha(png)):
        load_history(tmp_path / "shop.json")


def test_attaching_a_session_with_a_missing_blob_fails_and_leaves_the_session_as_it_was(tmp_path):
    figure_turns(JSONSession(tmp_path), turns=2)
    for blob in (tmp_path / "blobs").iterdir():
        blob.unlink()
    before = {p.name: p.read_bytes() for p in tmp_path.glob("shop.*")}
    with pytest.raises(MissingBlobError):
        Agent("shop", ScriptedModel(["ok"]), session=JSONSession(tmp_path))
    assert {p.name: p.read_bytes() for p in tmp_path.glob("shop.*")} == before


def test_a_blob_whose_bytes_were_changed_is_refused(tmp_path):
    _, png = figure_turns(JSONSession(tmp_path), turns=1)
    path = tmp_path / "blobs" / f"{sha(png)}.png"
    path.write_bytes(png[:-10])
    found = run_fresh(  # (this process holds the right bytes, which it trusts)
        tmp_path,
        "probe",
        "",
        """
        import json
        from agentnb import Agent, ScriptedModel
        from agentnb.errors import MissingBlobError, PartSizeError
        from agentnb.sessions import JSONSession
        try:
            JSONSession(".").load_session_state_sync("shop", agent=Agent("shop", ScriptedModel(["ok"])))
        except MissingBlobError as exc:
            print(json.dumps(str(exc)))
        """,
    )
    assert "does not hold the bytes its name says" in found and f"blobs/{path.name}" in found


def test_a_blob_written_under_another_extension_is_found_by_its_hash(tmp_path):
    _, png = figure_turns(JSONSession(tmp_path), turns=1)
    (tmp_path / "blobs" / f"{sha(png)}.png").rename(tmp_path / "blobs" / f"{sha(png)}.x-png")
    again = Agent("shop", ScriptedModel(["ok"]))
    JSONSession(tmp_path).load_session_state_sync("shop", agent=again)
    assert next(m for m in again.history[0].messages if m.role == "user").content[1].data == png


def test_sqlite_keeps_each_blob_once_in_its_blobs_table_and_loads_it_in_a_fresh_process(tmp_path):
    db = tmp_path / "s.db"
    _, png = figure_turns(SQLiteSession(db))
    with sqlite3.connect(db) as conn:
        rows = conn.execute("SELECT sha256, media_type, data FROM blobs").fetchall()
    assert [(r[0], r[1], bytes(r[2])) for r in rows] == [(sha(png), "image/png", png)]
    assert sorted(p.name for p in tmp_path.iterdir() if not p.name.startswith("s.db")) == []
    found = run_fresh(
        tmp_path,
        "probe",
        "",
        """
        import hashlib, json
        from agentnb import Agent, ScriptedModel
        from agentnb.sessions import SQLiteSession
        agent = Agent("shop", ScriptedModel(["ok"]), session=SQLiteSession("s.db"))
        print(json.dumps([hashlib.sha256(m.content[1].data).hexdigest()
                          for t in agent.history for m in t.messages if m.role == "user"]))
        """,
    )
    assert found == [sha(png)] * 10


def test_sqlite_with_a_missing_blob_row_names_it_and_loads_nothing(tmp_path):
    db = tmp_path / "s.db"
    _, png = figure_turns(SQLiteSession(db), turns=2)
    with sqlite3.connect(db) as conn:
        conn.execute("DELETE FROM blobs")
    fresh = Agent("shop", ScriptedModel(["ok"]))
    with pytest.raises(MissingBlobError, match=f"{sha(png)}.*table blobs"):
        SQLiteSession(db).load_session_state_sync("shop", agent=fresh)
    assert len(fresh.history) == 0


def test_a_memory_session_keeps_its_parts(tmp_path):
    session = MemorySession()
    _, png = figure_turns(session, turns=2)
    again = Agent("shop", ScriptedModel(["ok"]))
    session.load_session_state_sync("shop", agent=again)
    assert [m.content[1].data for t in again.history for m in t.messages if m.role == "user"] == [png, png]


def test_a_tool_result_image_is_stored_once_too(tmp_path):
    png = encode_png(bytes(range(27)), 3, 3, 3)

    def plot() -> ImagePart:
        """Draw the chart."""
        return ImagePart(png, name="chart.png")

    from agentnb import tool_call

    model = ScriptedModel([tool_call("plot"), "A chart.", tool_call("plot"), "Again."])
    agent = Agent("shop", model, tools=[plot], session=JSONSession(tmp_path))
    agent.run("Plot it.")
    agent.run("Once more.")
    assert [p.name for p in (tmp_path / "blobs").iterdir()] == [f"{sha(png)}.png"]
    again = Agent("shop", ScriptedModel(["ok"]), tools=[plot], session=JSONSession(tmp_path))
    tool_messages = [m for t in again.history for m in t.messages if m.role == "tool"]
    assert [m.content[0].data for m in tool_messages] == [png, png]
    assert again.history[0].tool_calls[0].attachments[0]["sha256"] == sha(png)


def test_older_turns_stored_apart_read_their_blobs_when_first_read(tmp_path, monkeypatch):
    monkeypatch.setattr(seg, "SPLIT_AT", 6)
    monkeypatch.setattr(seg, "RECENT", 2)
    session = JSONSession(tmp_path, compact_min_bytes=1)
    session.compact_in_background = False
    images = [encode_png(bytes([n] * 12), 2, 2, 3) for n in range(9)]
    agent = Agent("shop", ScriptedModel(lambda r: "ok"), session=session)
    for n, png in enumerate(images):
        agent.run([f"turn {n}", png])
    assert list(tmp_path.glob("shop.turns-*.json")), "older turns were stored apart"
    assert len(list((tmp_path / "blobs").iterdir())) == 9
    again = Agent("shop", ScriptedModel(["ok"]), session=JSONSession(tmp_path))
    assert [m.content[1].data for t in again.history for m in t.messages if m.role == "user"] == images


def test_a_session_without_parts_writes_no_blobs_and_the_same_text(tmp_path):
    agent = Agent("shop", ScriptedModel(["one", "two"]), session=JSONSession(tmp_path / "j"))
    agent.run("Add milk.")
    agent.run(["Add", "bread."])  # a list of text only is text
    assert not (tmp_path / "j" / "blobs").exists()
    text = "".join(p.read_text() for p in (tmp_path / "j").glob("shop.json*"))
    assert "Add milk." in text
    assert '"sha256"' not in text and referenced([text]) == {}
    db = tmp_path / "s.db"
    Agent("shop", ScriptedModel(["one"]), session=SQLiteSession(db)).run("Add milk.")
    with sqlite3.connect(db) as conn:
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert "blobs" not in tables


def test_the_blobs_needed_are_the_message_parts_of_the_stored_text():
    image = ImagePart(encode_png(bytes(12), 2, 2, 3))
    message = {"role": "user", "content": [TextPart("hi").to_dict(), image.to_dict()]}
    stored = json.dumps({"messages": [message]}, separators=(",", ":"))
    assert referenced([stored]) == {image.sha256: Ref("image/png", sure=True)}
    pretty = json.dumps(json.loads(stored), indent=2)  # a file put through jq reads the same
    assert referenced([pretty.encode()]) == {image.sha256: Ref("image/png", sure=True)}
    unmarked = stored.replace('"$agentnb":"part",', "")  # as stored before the mark: maybe the user's
    assert referenced([unmarked]) == {image.sha256: Ref("image/png", sure=False)}
    described = json.dumps({"attachments": [describe(image)], "part": describe(image)})
    quoted = json.dumps({"role": "user", "content": [TextPart(json.dumps(message)).to_dict()]})
    not_hex = json.dumps({"content": [{**image.to_dict(), "sha256": "../../etc/passwd"}]})
    assert referenced([described, quoted, not_hex]) == {}  # descriptions, text, no hash: no blob


def test_parts_refused_for_their_size_are_never_stored_and_the_turn_is(tmp_path):
    big = b"\x89PNG\r\n\x1a\n" + bytes(18 * 1024 * 1024)

    def plots() -> list[ImagePart]:
        """Three large charts (54 MB together: over the 50 MB a request takes)."""
        return [ImagePart(big + bytes([n])) for n in range(3)]

    from agentnb import tool_call

    model = ScriptedModel([tool_call("plots"), "They were too large to send."])
    agent = Agent("shop", model, tools=[plots], session=JSONSession(tmp_path))
    assert agent.run("Plot them.").content == "They were too large to send."  # the call failed, not the run
    with pytest.raises(PartSizeError):  # the user's own message: refused before any turn
        agent.run(["And these:", big + b"1", big + b"2", big + b"3"])
    assert not (tmp_path / "blobs").exists()
    again = Agent("shop", ScriptedModel(["ok"]), tools=[plots], session=JSONSession(tmp_path))
    (turn,) = again.history
    (call,) = turn.tool_calls
    assert turn.status == "ok" and call.error_kind == "tool_error" and "50.0 MB" in (call.error or "")


def test_concurrent_writers_of_one_blob_leave_one_whole_file(tmp_path):
    data = encode_png(bytes(range(256)) * 30, 32, 80, 3)
    store = DirectoryBlobs(tmp_path / "blobs")
    threads = [threading.Thread(target=store.put, args=(data, "image/png")) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert [p.name for p in (tmp_path / "blobs").iterdir()] == [f"{sha(data)}.png"]
    assert store.read(sha(data), "image/png") == data == store.get(sha(data))
