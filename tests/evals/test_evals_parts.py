"""Cases that send images and files: ``Case(input=[text, image])``, kept by hash in the store's
blobs folder, resumed and re-scored in a fresh process, run in worker processes, taken from a
DataFrame column of images or paths, and from a recorded turn that had an image."""

from __future__ import annotations

import concurrent.futures
import hashlib
import json
import multiprocessing

import pandas as pd
import pytest
from evals_helpers import describe_parts
from fresh_process import run_fresh
from matplotlib.figure import Figure

from agentnb import Agent, Image, ScriptedModel
from agentnb.errors import EvalCaseError, MissingBlobError
from agentnb.evals import Case, cases_from_frame, check
from agentnb.messages import FilePart, ImagePart, TextPart
from agentnb.messages.png import encode_png

PNG = encode_png(bytes(range(60)), 5, 4, 3)
PDF = b"%PDF-1.4\n%%EOF\n"


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def chart() -> Figure:
    figure = Figure(figsize=(2, 1.5), dpi=40)
    figure.add_subplot().plot([1, 4, 2])
    return figure


def analyst() -> Agent:
    return Agent("analyst", ScriptedModel(describe_parts))


def test_a_case_sends_text_and_an_image_and_its_store_keeps_the_image_once(tmp_path):
    figure = chart()
    cases = [
        Case(["What changed?", figure], id="fig", expected="a 80x60 image"),
        Case(["Same chart, again?", Image(figure, name="sales")], id="again", expected="a 80x60 image"),
        Case(["And this?", PNG], id="png", expected="a 5x4 image"),
    ]
    run = analyst().evaluate(cases, [check.answer_contains()], name="charts", folder=tmp_path)
    assert list(run.frame()["passed"]) == [True, True, True]
    assert run.rows[0].case.text.startswith("What changed? [image ")
    store = tmp_path / "evals" / "charts"
    png = cases[0].input[1].data
    assert sorted(p.name for p in (store / "blobs").iterdir()) == sorted(
        [f"{sha(png)}.png", f"{sha(PNG)}.png"]
    )
    text = (store / "cases.jsonl").read_text() + (store / "manifest.json").read_text()
    assert sha(png) in text and "base64" not in text


def test_a_stored_run_with_images_loads_and_re_scores_in_a_fresh_process(tmp_path):
    analyst().evaluate([Case(["What is it?", PNG], id="png")], name="charts", folder=tmp_path)
    found = run_fresh(
        tmp_path,
        "probe",
        "",
        """
        import hashlib, json
        from agentnb.evals import check, load_run
        def shown_a_png(view):
            '''The case sent the PNG and the answer names its size.'''
            return view.input[1].data.startswith(b"\\x89PNG") and "5x4" in view.answer
        run = load_run("charts", folder=".", checks=[check.that(shown_a_png)])
        row = run.rows[0]
        user = next(m for m in row.turns[0].messages if m.role == "user")
        print(json.dumps([hashlib.sha256(row.case.input[1].data).hexdigest(),
                          hashlib.sha256(user.content[1].data).hexdigest(), bool(run.frame()["passed"][0])]))
        """,
    )
    assert found == [sha(PNG), sha(PNG), True]


def test_resuming_replays_the_finished_case_with_its_image(tmp_path):
    cases = [Case(["What is it?", PNG], id="png")]
    first = analyst().evaluate(cases, name="charts", folder=tmp_path)
    again = analyst().evaluate(cases, name="charts", folder=tmp_path)
    assert first.rows[0].answer == again.rows[0].answer == "What is it?; a 5x4 image " + sha(PNG)[:8]
    assert again.rows[0].replayed


def test_a_store_whose_blob_is_missing_says_which_and_writes_nothing(tmp_path):
    analyst().evaluate([Case(["What is it?", PNG], id="png")], name="charts", folder=tmp_path)
    store = tmp_path / "evals" / "charts"
    (store / "blobs" / f"{sha(PNG)}.png").unlink()
    before = {p.name: p.read_bytes() for p in store.iterdir() if p.is_file()}
    found = run_fresh(  # (this process still holds the bytes)
        tmp_path,
        "probe",
        "",
        """
        import json
        from agentnb.errors import MissingBlobError
        from agentnb.evals import load_run
        try:
            load_run("charts", folder=".")
        except MissingBlobError as exc:
            print(json.dumps(str(exc)))
        """,
    )
    assert sha(PNG) in found and f"blobs/{sha(PNG)}.png" in found and "move" in found
    assert {p.name: p.read_bytes() for p in store.iterdir() if p.is_file()} == before
    with pytest.raises(MissingBlobError, match=sha(PNG)):
        analyst().evaluate([Case(["What is it?", PNG], id="png")], name="charts", folder=tmp_path)
    assert {p.name: p.read_bytes() for p in store.iterdir() if p.is_file()} == before


def test_cases_with_images_run_in_worker_processes_and_come_back_whole(tmp_path):
    cases = [Case(["What is it?", PNG], id="png"), Case(["Read:", FilePart(PDF, name="r.pdf")], id="pdf")]
    local = analyst().evaluate(cases, name="local", folder=tmp_path)
    context = multiprocessing.get_context("spawn")
    with concurrent.futures.ProcessPoolExecutor(2, mp_context=context) as pool:
        remote = analyst().evaluate(cases, name="remote", folder=tmp_path, executor=pool)
        again = analyst().evaluate(cases, name="remote", folder=tmp_path, executor=pool)  # resumed there
    assert (
        [r.answer for r in remote.rows]
        == [r.answer for r in local.rows]
        == [
            f"What is it?; a 5x4 image {sha(PNG)[:8]}",
            f"Read:; a file r.pdf of {len(PDF)} bytes",
        ]
    )
    users = [next(m for m in r.turns[0].messages if m.role == "user") for r in remote.rows]
    assert [u.content[1].data for u in users] == [PNG, PDF]
    assert [r.replayed for r in again.rows] == [True, True]
    assert sorted(p.name for p in (tmp_path / "evals" / "remote" / "blobs").iterdir()) == sorted(
        [f"{sha(PNG)}.png", f"{sha(PDF)}.pdf"]
    )


def test_a_dataframe_column_of_images_or_paths_is_attached_to_each_row_s_question(tmp_path):
    (tmp_path / "march.png").write_bytes(PNG)
    frame = pd.DataFrame(
        {
            "question": ["What is in March?", "And here?", "Nothing attached?"],
            "chart": [str(tmp_path / "march.png"), chart(), None],
            "expected": ["a 5x4 image", "a 80x60 image", "Nothing attached?"],
        }
    )
    cases = cases_from_frame(frame, input="question", expected="expected", attach="chart")
    assert [type(p).__name__ for p in cases[0].input] == ["TextPart", "ImagePart"]
    assert cases[2].input == "Nothing attached?"
    run = analyst().evaluate(cases, [check.answer_contains()], name="frame", folder=tmp_path)
    assert list(run.frame()["passed"]) == [True, True, True]
    with pytest.raises(EvalCaseError, match="not a column"):
        cases_from_frame(frame, input="question", attach="charts")


def test_a_case_from_a_recorded_turn_with_images_sends_them_again(tmp_path):
    agent = Agent("analyst", ScriptedModel(describe_parts), add_history_to_context=True)
    agent.run(["Look at this:", PNG])
    small = encode_png(bytes(27), 3, 3, 3)
    agent.run(["And this one:", ImagePart(small)])
    first, second = Case.from_turn(agent, 1), Case.from_turn(agent, 2)
    assert first.input == (TextPart("Look at this:"), ImagePart(PNG))
    run = Agent("analyst", ScriptedModel(describe_parts)).evaluate(
        [first, second], name="turns", folder=tmp_path
    )
    assert [r.answer for r in run.rows] == [t.content for t in agent.history]
    blobs = tmp_path / "evals" / "turns" / "blobs"
    assert sorted(p.name for p in blobs.iterdir()) == sorted([f"{sha(PNG)}.png", f"{sha(small)}.png"])
    found = run_fresh(  # the conversation the second case starts from refers to the first image by hash
        tmp_path,
        "probe",
        "",
        """
        import hashlib, json
        from agentnb import Agent, ScriptedModel
        from agentnb.definition import AgentDefinition
        from agentnb.evals import load_run
        from agentnb.evals.engine.worker import case_agent
        case = load_run("turns", folder=".").rows[1].case
        agent = case_agent(AgentDefinition.of(Agent("analyst")), ScriptedModel(["ok"]), case)
        print(json.dumps([hashlib.sha256(p.data).hexdigest() for m in agent.state.messages for p in m.attachments]))
        """,
    )
    assert found == [sha(PNG)]


def test_a_stored_case_keeps_its_parts_by_hash_and_its_id_by_their_content():
    case = Case(["What changed?", PNG, FilePart(PDF, name="r.pdf")])
    data = case.to_dict()
    assert data["input"][1] == {
        "$agentnb": "part",
        "type": "image",
        "sha256": sha(PNG),
        "media_type": "image/png",
        "size": len(PNG),
        "detail": "auto",
        "width": 5,
        "height": 4,
    }
    assert Case.from_dict(json.loads(json.dumps(data))) == case
    assert Case(["What changed?", PNG, FilePart(PDF, name="r.pdf")]).id == case.id
    assert case.id == "c-b83d3306f5"  # as before parts were marked: a stored evaluation's cases still match
    assert Case(["What changed?", encode_png(bytes(60), 5, 4, 3), FilePart(PDF, name="r.pdf")]).id != case.id
    assert Case("text only").id == Case.from_dict(Case("text only").to_dict()).id
    with pytest.raises(
        EvalCaseError, match="a message must be a str, a dict of input fields or a list of parts"
    ):
        Case(3.5)
    with pytest.raises(EvalCaseError, match="case x: "):
        Case(["What?", object()], id="x")


def test_the_plan_counts_a_case_s_images_by_the_tile_rule(tmp_path):
    from agentnb.models.tokens import image_tokens

    big = encode_png(bytes(1024 * 1024 * 3), 1024, 1024, 3)  # 765 tokens at high detail
    text = analyst().evaluate([Case("What is it?", id="c")], name="text", folder=tmp_path)
    image = analyst().evaluate([Case(["What is it?", big], id="c")], name="image", folder=tmp_path)
    added = image.plan.input_tokens - text.plan.input_tokens
    assert image_tokens(1024, 1024, "auto") == 765
    assert 765 <= added < 765 + 200  # the image's tiles, and the few characters naming it
