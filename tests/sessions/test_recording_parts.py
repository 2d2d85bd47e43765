"""A notebook's recording of turns that sent images: the blobs beside it (once per figure), replay
by hash on both OpenAI APIs (in a fresh process too), and a changed figure named as a drift."""

from __future__ import annotations

import hashlib
import json

import pytest
from fresh_process import run_fresh
from openai_server import OpenAIServer, Reply

from agentnb import Agent
from agentnb.errors import ReplayDriftError
from agentnb.messages import FilePart
from agentnb.messages.png import encode_png
from agentnb.models import OpenAIChat, OpenAIResponses
from agentnb.sessions.part_drift import part_changes
from agentnb.sessions.recording import REPLAY_ENV, RERECORD

PNG = encode_png(bytes(range(48)), 4, 4, 3)
OTHER = encode_png(bytes(range(1, 49)), 4, 4, 3)
PDF = b"%PDF-1.4\n%%EOF\n"
PDF_PART = FilePart(PDF, name="r.pdf")
MODELS = {"chat": OpenAIChat, "responses": OpenAIResponses}


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def analyst(url: str, api: str = "chat") -> Agent:
    return Agent("analyst", MODELS[api]("tiny", base_url=url), add_history_to_context=True)


@pytest.mark.parametrize("api", ["chat", "responses"])
def test_a_recorded_turn_with_an_image_replays_when_its_hash_matches(tmp_path, monkeypatch, api):
    monkeypatch.delenv(REPLAY_ENV, raising=False)
    folder = tmp_path / "report.agentnb"
    with OpenAIServer() as server:
        server.add(Reply(text="Sales rose."), Reply(text="The PDF agrees."))
        first = analyst(server.url, api)
        first.attach_recording(folder)
        first.run(["What changed?", PNG])
        first.run(["And the report?", FilePart(PDF, name="report.pdf")])
        assert len(server.requests) == 2
        assert sorted(p.name for p in (folder / "blobs").iterdir()) == sorted(
            [f"{sha(PNG)}.png", f"{sha(PDF)}.pdf"]
        )
        files = {p: p.read_bytes() for p in folder.rglob("*") if p.is_file()}

        again = analyst(server.url, api)
        recording = again.attach_recording(folder)
        assert again.run(["What changed?", PNG]).content == "Sales rose."
        assert again.run(["And the report?", FilePart(PDF, name="report.pdf")]).content == "The PDF agrees."
        assert len(server.requests) == 2  # both answered from the recording
    assert recording.replayed == 2 and recording.cut is None
    assert {p: p.read_bytes() for p in folder.rglob("*") if p.is_file()} == files


def test_a_recording_replays_in_a_fresh_process_from_the_blobs_on_disk(tmp_path, monkeypatch):
    monkeypatch.setenv(REPLAY_ENV, "strict")
    folder = tmp_path / "report.agentnb"
    with OpenAIServer() as server:
        server.add(Reply(text="Sales rose."))
        first = analyst(server.url)
        first.attach_recording(folder, mode="auto")
        first.run(["What changed?", PNG])
        found = run_fresh(
            tmp_path,
            "probe",
            f"PNG = {PNG!r}\nURL = {server.url!r}\n",
            """
            import json
            from agentnb import Agent
            from agentnb.models import OpenAIChat
            agent = Agent("analyst", OpenAIChat("tiny", base_url=URL), add_history_to_context=True)
            recording = agent.attach_recording("report.agentnb")
            sent = [m.content[1].data == PNG for m in recording.turns[0].messages if m.role == "user"]
            print(json.dumps([agent.run(["What changed?", PNG]).content, recording.replayed, sent]))
            """,
        )
        assert len(server.requests) == 1
    assert found == ["Sales rose.", 1, [True]]


def test_strict_replay_names_a_changed_image_by_its_hashes_and_says_how_to_re_record(tmp_path, monkeypatch):
    monkeypatch.delenv(REPLAY_ENV, raising=False)
    folder = tmp_path / "report.agentnb"
    with OpenAIServer() as server:
        server.add(Reply(text="Sales rose."))
        first = analyst(server.url)
        first.attach_recording(folder)
        first.run(["What changed?", PNG])
        monkeypatch.setenv(REPLAY_ENV, "strict")
        again = analyst(server.url)
        again.attach_recording(folder)
        with pytest.raises(ReplayDriftError) as caught:
            again.run(["What changed?", OTHER])
        assert len(server.requests) == 1
    message = str(caught.value)
    assert f"image 1 changed: sha256 {sha(PNG)[:12]}… → {sha(OTHER)[:12]}…" in message.splitlines()[0]
    assert "turn 1, model call 1" in message and RERECORD in message


def test_ten_turns_sending_one_figure_record_one_blob(tmp_path, monkeypatch):
    monkeypatch.delenv(REPLAY_ENV, raising=False)
    from matplotlib.figure import Figure

    figure = Figure(figsize=(2, 2), dpi=40)
    figure.add_subplot().bar(["a", "b"], [3, 5])
    folder = tmp_path / "report.agentnb"
    with OpenAIServer() as server:
        server.add(*[Reply(text=f"answer {n}") for n in range(10)])
        agent = analyst(server.url)
        agent.attach_recording(folder)
        for n in range(10):
            agent.run([f"Question {n} about the chart.", figure])
        assert len(server.requests) == 10
        sent = {
            item["image_url"]["url"][:40]
            for r in server.requests
            for item in r.body["messages"][-1]["content"]
            if item["type"] == "image_url"
        }
    assert sent == {"data:image/png;base64,iVBORw0KGgoAAAANSU"}  # the bytes went to the server
    assert len(list((folder / "blobs").iterdir())) == 1
    stored = "".join(p.read_text() for p in folder.glob("analyst.json*"))
    assert "base64" not in stored


def test_part_changes_name_added_removed_and_changed_parts_by_kind():
    def request(*shas: tuple[str, str]) -> dict:
        return {
            "messages": [
                {
                    "role": "user",
                    "content": [
                        {"type": "x", "part": {"type": kind, "sha256": s, "name": f"{kind}.bin"}}
                        for kind, s in shas
                    ],
                }
            ]
        }

    a, b, c = "a" * 64, "b" * 64, "c" * 64
    assert part_changes(request(("image", a)), request(("image", a))) == []
    assert part_changes(request(("image", a), ("file", b)), request(("image", c), ("file", b))) == [
        f"image 1 (image.bin) changed: sha256 {'a' * 12}… → {'c' * 12}…"
    ]
    assert part_changes(request(("image", a)), request(("image", a), ("image", b))) == [
        f"image 2 added: sha256 {'b' * 12}… (image.bin)"
    ]
    assert part_changes(request(("file", a)), request()) == [f"file 1 removed: sha256 {'a' * 12}… (file.bin)"]
    assert json.dumps(part_changes({}, {})) == "[]"


def test_a_figure_renders_the_same_bytes_in_every_process_so_its_recording_replays(tmp_path):
    code = """
        import hashlib, json
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        from agentnb import Image
        fig, ax = plt.subplots(figsize=(3, 2), dpi=50)
        ax.plot([3, 4, 9], marker="o")
        ax.set_title("Sales")
        data = Image(fig).data
        print(json.dumps([hashlib.sha256(data).hexdigest(), b"tEXt" in data]))
        """
    first, second = (run_fresh(tmp_path, "probe", "", code) for _ in range(2))
    assert first == second and first[1] is False  # no "Software: Matplotlib version" text chunk


def test_re_recording_with_another_figure_drops_the_blob_nothing_refers_to(tmp_path, monkeypatch):
    import os
    import time

    monkeypatch.delenv(REPLAY_ENV, raising=False)
    folder = tmp_path / "report.agentnb"
    with OpenAIServer() as server:
        server.add(Reply(text="Sales rose."), Reply(text="Kept."), Reply(text="Sales fell."))
        first = analyst(server.url)
        first.attach_recording(folder)
        first.run(["What changed?", PNG])
        other = Agent("keeper", OpenAIChat("tiny", base_url=server.url))
        other.attach_recording(folder)
        other.run(["Keep this one:", PDF_PART])  # another session of the notebook, its own blob
        hour_ago = time.time() - 3600
        for blob in (folder / "blobs").iterdir():
            os.utime(blob, (hour_ago, hour_ago))
        again = analyst(server.url)
        again.attach_recording(folder)
        assert again.run(["What changed?", OTHER]).content == "Sales fell."  # a drift: re-recorded
    assert sorted(p.name for p in (folder / "blobs").iterdir()) == sorted(
        [f"{sha(OTHER)}.png", f"{sha(PDF)}.pdf"]
    )
    reloaded = Agent("keeper", OpenAIChat("tiny", base_url="http://127.0.0.1:9/v1"))
    kept = reloaded.attach_recording(folder)  # the other session still loads: its blob was kept
    assert [m.content[1].data for m in kept.turns[0].messages if m.role == "user"] == [PDF]


def test_a_blob_younger_than_the_grace_period_is_kept_whatever_refers_to_it(tmp_path):
    from agentnb.sessions import JSONSession

    session = JSONSession(tmp_path)
    session.blobs.put(PNG, "image/png")  # written by a save whose text is not there yet
    assert session.drop_unused_blobs() == []
    assert [p.name for p in session.drop_unused_blobs(older_than=-1)] == [f"{sha(PNG)}.png"]
