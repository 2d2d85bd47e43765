"""An evaluation's store after its cases ran again: the blobs of the turns they replaced are
deleted once old (never one the manifest or the last line of a case refers to, even by a drop
killed with SIGKILL midway), the lines they replaced are kept and no longer read for blobs; and
values of the user's shaped like stored parts go through the store unchanged."""

from __future__ import annotations

import hashlib
import json
import os
import random
import signal
import time
from pathlib import Path
from typing import Any

import pytest
from fresh_process import forked, run_fresh

from agentnb import Agent, ScriptedModel, tool_call
from agentnb.evals import Case, check
from agentnb.evals.engine.store import EvalStore
from agentnb.messages import ImagePart
from agentnb.messages.png import encode_png
from agentnb.sessions.recording import REPLAY_ENV

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")

CASE_IMAGE = encode_png(bytes(range(48)), 4, 4, 3)
NOWHERE = "cd" * 32


def chart(n: int) -> bytes:
    return encode_png(bytes((n * 13 + i) % 256 for i in range(6 * 5 * 3)), 6, 5, 3)


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def blob_names(store: Path) -> set[str]:
    return {p.name.split(".")[0] for p in (store / "blobs").iterdir()}


def age(store: Path) -> None:
    hour_ago = time.time() - 3600
    for blob in (store / "blobs").iterdir():
        os.utime(blob, (hour_ago, hour_ago))


def plotter(n: int) -> Agent:
    def plot() -> ImagePart:
        """Draw this run's chart."""
        return ImagePart(chart(n), name=f"chart-{n}.png")

    return Agent(
        "analyst",
        ScriptedModel(lambda r: tool_call("plot") if len(r.messages) < 3 else "Drawn."),
        tools=[plot],
    )


def cases() -> list[Case]:
    return [
        Case(["Plot this:", CASE_IMAGE], id="with-image", expected="Drawn."),
        Case("Plot it.", id="plain", expected={"$agentnb": "part", "type": "image", "sha256": NOWHERE}),
    ]


def test_cases_run_again_drop_the_images_their_old_turns_held(tmp_path, monkeypatch):
    store = tmp_path / "evals" / "plots"
    plotter(1).evaluate(cases(), [check.answer_contains("Drawn")], name="plots", folder=tmp_path)
    assert blob_names(store) == {sha(CASE_IMAGE), sha(chart(1))}
    age(store)
    monkeypatch.setenv(REPLAY_ENV, "live")  # every case runs again, its tool drawing another chart
    again = plotter(2).evaluate(cases(), [check.answer_contains("Drawn")], name="plots", folder=tmp_path)
    assert [row.status for row in again.rows] == ["ok", "ok"]
    assert blob_names(store) == {sha(CASE_IMAGE), sha(chart(2))}  # the case's own image stays
    lines = (store / "cases.jsonl").read_text().splitlines()
    assert len(lines) == 4 and sum(sha(chart(1)) in line for line in lines) == 2  # replaced lines stay
    found = run_fresh(
        tmp_path,
        "probe",
        "",
        """
        import hashlib, json
        from agentnb.evals import load_run
        run = load_run("plots", folder=".")
        tool = [m for row in run.rows for t in row.turns for m in t.messages if m.role == "tool"]
        print(json.dumps([[hashlib.sha256(m.content[0].data).hexdigest() for m in tool],
                          [row.case.expected for row in run.rows]]))
        """,
    )
    assert found == [
        [sha(chart(2))] * 2,
        ["Drawn.", {"$agentnb": "part", "type": "image", "sha256": NOWHERE}],
    ]


def test_a_young_blob_nothing_refers_to_yet_is_kept(tmp_path):
    plotter(1).evaluate(cases(), name="plots", folder=tmp_path)
    store = EvalStore(tmp_path / "evals" / "plots")
    store.blobs.put(chart(9), "image/png")  # another process's, whose line is not written yet
    assert store.drop_unused_blobs() == []
    assert [p.name for p in store.drop_unused_blobs(older_than=-1)] == [f"{sha(chart(9))}.png"]


def test_a_drop_killed_at_any_moment_never_deletes_a_blob_still_referred_to(tmp_path):
    plotter(1).evaluate(cases(), name="plots", folder=tmp_path)
    folder = tmp_path / "evals" / "plots"
    used = blob_names(folder)
    rng = random.Random(39)
    left_counts: list[int] = []

    def unused_blobs() -> set[str]:
        store = EvalStore(folder)
        return {store.blobs.put(os.urandom(20_000), "image/png") for _ in range(150)}

    unused_blobs()
    started = time.perf_counter()
    os.waitpid(forked(lambda: EvalStore(folder).drop_unused_blobs(older_than=-1)), 0)
    whole = time.perf_counter() - started  # how long a drop takes here: kills land all through it
    for kill in range(12):
        unused = unused_blobs()
        pid = forked(lambda: EvalStore(folder).drop_unused_blobs(older_than=-1))
        time.sleep(rng.uniform(0, whole * 1.2))
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        left = blob_names(folder)
        assert used <= left, f"kill {kill}: a blob still referred to was dropped"
        assert left - used <= unused
        left_counts.append(len(left - used))
        assert not list((folder / "blobs").glob("*.tmp")), "a blob file was left half written"
        rows = EvalStore(folder).rows()
        assert {key[0] for key in rows} == {"with-image", "plain"}
        EvalStore(folder).drop_unused_blobs(older_than=-1)
    print(f"unused blobs left by SIGKILLed drops (of 150): {left_counts}")
    assert blob_names(folder) == used


def test_a_value_of_the_user_s_shaped_like_a_part_goes_through_the_store_unchanged(tmp_path):
    expected: Any = {
        "content": [{"$agentnb": "part", "type": "image", "sha256": NOWHERE, "media_type": "image/png"}],
        "$agentnb": "part",
        "$agentnb$": [{"type": "file", "sha256": NOWHERE, "media_type": "text/csv"}],
    }
    case = Case("What is it?", id="x", expected=expected)
    Agent("a", ScriptedModel(lambda r: "it")).evaluate([case], name="odd", folder=tmp_path)
    line = (tmp_path / "evals" / "odd" / "cases.jsonl").read_text()
    assert '"$agentnb$":"part"' in line and '"$agentnb$$":' in line
    (row,) = EvalStore(tmp_path / "evals" / "odd").rows().values()
    assert json.dumps(row["case"]["expected"]) == json.dumps(expected)
    assert not (tmp_path / "evals" / "odd" / "blobs").exists()
