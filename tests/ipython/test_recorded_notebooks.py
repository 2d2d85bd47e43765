"""A user's own notebook re-runs and tests like a program: written as the README shows (no
--fresh, no column picking, no sanitiser), run once in a kernel, then `pytest --nbval` twice.

Each test runs real kernels (nbconvert, then nbval in a subprocess), so the file takes a while.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook, new_output
from openai_server import OpenAIServer, Reply

JUPYTER = Path(sys.executable).with_name("jupyter")

README_NOTEBOOK = [
    "%load_ext agentnb",
    """from agentnb import ScriptedModel, tool_call

model = ScriptedModel([
    tool_call("add_item", item="milk"),
    tool_call("update_session_state", session_state_updates={"budget": 10}),
    "Added milk; your budget is 10.",
    tool_call("remove_item", item="milk"),
    "Milk is off the list.",
])""",
    '''%%tool
def add_item(item: str, session_state) -> str:
    """Add an item to the shopping list."""
    session_state["shopping_list"].append(item)
    return f"added {item}"


def remove_item(item: str, session_state) -> str:
    """Remove an item from the shopping list."""
    session_state["shopping_list"].remove(item)
    return f"removed {item}"''',
    """def audit(function_name, function_call, arguments):
    print("calling", function_name, arguments)
    return function_call(**arguments)""",
    """%%agent shop --model model --state '{"shopping_list": []}' --tools add_item,remove_item --hooks audit --state-in-context --agentic-state
You keep the user's shopping list. It has {shopping_list}.""",
    "%%chat shop\nAdd milk, and my budget is 10.",
    "%%chat shop\nActually, take the milk off.",
    "shop.history.turns()",
    "shop.history.tool_calls()",
    "shop.history.states()",
]


def write_notebook(path: Path, sources: list[str]) -> None:
    nb = new_notebook(cells=[new_code_cell(source) for source in sources])
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3 (ipykernel)",
        "language": "python",
    }
    nbformat.write(nb, path)


def execute(path: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """Run every cell in a fresh kernel, as Restart & Run All does, and save the outputs."""
    return subprocess.run(
        [str(JUPYTER), "nbconvert", "--to", "notebook", "--execute", "--inplace", path.name],
        cwd=path.parent,
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
        timeout=240,
    )


def nbval(
    path: Path, env: dict[str, str] | None = None, extra: list[str] | None = None
) -> subprocess.CompletedProcess[str]:
    """`pytest --nbval NOTEBOOK` with no other option, as a user would type it."""
    clean = {k: v for k, v in os.environ.items() if k not in ("AGENTNB_REPLAY", "JPY_SESSION_NAME")}
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "--nbval",
            "-p",
            "no:cacheprovider",
            "-q",
            path.name,
            *(extra or []),
        ],
        cwd=path.parent,
        env={**clean, **(env or {})},
        capture_output=True,
        text=True,
        timeout=240,
    )


def folder_digest(folder: Path) -> dict[str, str]:
    return {
        p.name: hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.iterdir())
        if p.suffix != ".lock"
    }


def test_a_notebook_written_from_the_readme_passes_nbval_twice(tmp_path):
    notebook = tmp_path / "groceries.ipynb"
    write_notebook(notebook, README_NOTEBOOK)
    done = execute(notebook)
    assert done.returncode == 0, done.stderr[-3000:]
    recording = tmp_path / "groceries.agentnb"
    assert (recording / "shop.json").exists()
    saved = nbformat.read(notebook, as_version=4)
    turns_table = saved.cells[7].outputs[0]["data"]["text/plain"]
    assert "duration_ms" in turns_table  # every column, durations included
    before = folder_digest(recording)
    for _ in range(2):
        run = nbval(notebook)
        assert run.returncode == 0, run.stdout[-3000:]
        assert f"{len(README_NOTEBOOK)} passed" in run.stdout
    assert folder_digest(recording) == before  # strict replay under nbval writes nothing


SHUFFLER = """
from pathlib import Path

import pytest


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items):
    # Last cell first, as a plugin that reorders the tests may put them (pytest-randomly shuffles
    # them, before every other plugin's hook).
    items.sort(key=lambda item: -item.cell_num)
    Path(__file__).with_name("shuffled.txt").write_text(" | ".join(item.name for item in items))
"""


def test_a_notebooks_cells_run_in_order_when_a_plugin_reordered_the_tests(tmp_path):
    notebook = tmp_path / "steps.ipynb"
    write_notebook(notebook, ["steps = [1]", "steps.append(2)", "steps.append(3)\nprint(steps)"])
    saved = nbformat.read(notebook, as_version=4)
    for count, cell in enumerate(saved.cells, 1):
        cell.execution_count = count
    saved.cells[2].outputs = [new_output("stream", name="stdout", text="[1, 2, 3]\n")]
    nbformat.write(saved, notebook)
    (tmp_path / "conftest.py").write_text(SHUFFLER)
    run = nbval(notebook)
    assert (tmp_path / "shuffled.txt").read_text() == "Cell 2 | Cell 1 | Cell 0"
    # Run in that order, the first cell would find no list to append to.
    assert run.returncode == 0, run.stdout[-3000:]
    assert "3 passed" in run.stdout


def server_notebook(url: str, second_message: str) -> list[str]:
    return [
        "%load_ext agentnb",
        f'from agentnb import OpenAIChat\nserver = OpenAIChat("tiny", base_url="{url}", stream=False)',
        "%%agent helper --model server\nAnswer briefly.",
        "%%chat helper\nHello!",
        f"%%chat helper\n{second_message}",
        "helper.history.turns()[['turn', 'message', 'answer', 'input_tokens', 'duration_ms']]",
    ]


def test_an_edited_chat_cell_goes_live_from_its_turn_and_strict_replay_names_cell_turn_and_call(tmp_path):
    notebook = tmp_path / "talk.ipynb"
    with OpenAIServer() as server:
        server.add(Reply(text="Hi there."), Reply(text="Paris."))
        write_notebook(notebook, server_notebook(server.url, "What is the capital of France?"))
        assert execute(notebook).returncode == 0
        assert len(server.requests) == 2

        # Restart & Run All with nothing changed: every answer comes from the recording.
        assert execute(notebook).returncode == 0
        assert len(server.requests) == 2

        # The second %%chat cell edited, run interactively: that turn calls the model, and the
        # recording is replaced from there.
        server.add(Reply(text="Rome."))
        write_notebook(notebook, server_notebook(server.url, "What is the capital of Italy?"))
        assert execute(notebook).returncode == 0
        assert len(server.requests) == 3
        assert server.requests[-1].body["messages"][-1]["content"] == "What is the capital of Italy?"
        assert server.requests[-1].body["messages"][2] == {
            "role": "assistant",
            "content": "Hi there.",
        }  # a conversation
        saved = json.loads((tmp_path / "talk.agentnb" / "helper.json").read_text())
        assert [t["message"] for t in saved["agent"]["history"]["turns"]] == [
            "Hello!",
            "What is the capital of Italy?",
        ]

        # Under nbval (strict), the recorded notebook passes with the server gone...
    run = nbval(notebook)
    assert run.returncode == 0, run.stdout[-3000:]
    # ... and an edit that was never recorded fails its cell, naming the cell, turn and call.
    edited = nbformat.read(notebook, as_version=4)
    edited.cells[4].source = "%%chat helper\nWhat is the capital of Spain?"
    nbformat.write(edited, notebook)
    run = nbval(notebook)
    assert run.returncode == 1
    assert "Cell 4" in run.stdout
    assert (
        "%%chat helper 'What is the capital of Spain?': turn 2 failed: replay drift at turn 2, model call 1: the request differs"
        in run.stdout
    )
    assert '+      "content": "What is the capital of Spain?"' in run.stdout
    # It says how to re-record, and is the only failure: the turns table after it, which would
    # differ too (a row missing: NaN / None in its HTML), is skipped, naming the cell that failed.
    assert "to re-record, run the notebook once outside nbval with the model reachable" in run.stdout
    assert "1 failed, 4 passed, 1 skipped" in run.stdout, run.stdout[-2000:]
    run = nbval(notebook, extra=["-rs"])
    assert "not run: Cell 4 failed because its turn differs from the recording" in run.stdout


@pytest.mark.local_llm
def test_a_notebook_recorded_against_the_local_model_replays_with_the_server_stopped(tmp_path):
    pytest.importorskip("xllamacpp")
    notebook = tmp_path / "local.ipynb"
    write_notebook(
        notebook,
        [
            "%load_ext agentnb",
            "%%agent tiny --model local\nAnswer in one short sentence.",
            "%%chat tiny\nWhat is the capital of France?",
            "%%chat tiny\nAnd of Italy?",
            "tiny.history.turns()",
        ],
    )
    done = execute(notebook)
    assert done.returncode == 0, done.stderr[-3000:]
    answers = [c.outputs[-1]["data"]["text/plain"] for c in nbformat.read(notebook, as_version=4).cells[2:4]]
    assert all("answer:" in a for a in answers)
    # The kernel that ran the server is gone with it. Under nbval replay is strict: a request
    # that the recording does not answer fails its cell before any server is started.
    for _ in range(2):
        run = nbval(notebook)
        assert run.returncode == 0, run.stdout[-3000:]
