"""The notebooks in notebooks/ are real nbval tests: executed, deterministic, collected, compared.

nbval passes a cell whose reference was never executed without comparing anything, so a
notebook committed without outputs would "pass" silently; these checks make that a failure.
nbval re-runs every cell against the committed outputs and the check here that every notebook is
normalised completes it: together they prove the committed notebooks are what
``notebooks/execute.py`` writes.
"""

from __future__ import annotations

import json
import re
import runpy
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = ROOT / "notebooks"
EXPECTED = [
    "01_agentic_state.ipynb",
    "02_tool_hooks.ipynb",
    "03_state_schema.ipynb",
    "04_sessions.ipynb",
    "05_observe_context.ipynb",
    "06_mcp.ipynb",
    "07_teams.ipynb",
    "08_evaluate.ipynb",
    "09_tracing.ipynb",
    "10_typed_output.ipynb",
    "11_approvals.ipynb",
    "12_charts.ipynb",
    "quickstart.ipynb",
]
MAGIC_CELLS = ("%%chat", "%%agent", "%%tool", "%agentnb preview", "%agentnb show")
EXECUTE = runpy.run_path(str(NOTEBOOKS / "execute.py"))  # notebooks/ is a folder, not a package


def _load(name: str) -> dict:
    return json.loads((NOTEBOOKS / name).read_text(encoding="utf-8"))


def _code_cells(nb: dict) -> list[dict]:
    return [c for c in nb["cells"] if c["cell_type"] == "code"]


def _source(cell: dict) -> str:
    return "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]


def test_every_notebook_is_there():
    assert sorted(p.name for p in NOTEBOOKS.glob("*.ipynb")) == EXPECTED


@pytest.mark.parametrize("name", EXPECTED)
def test_notebook_is_committed_executed_in_order(name):
    cells = _code_cells(_load(name))
    counts = [c["execution_count"] for c in cells]
    # 1..n: executed top to bottom in one kernel, nothing skipped, nothing re-run out of order.
    assert counts == list(range(1, len(cells) + 1)), (
        f"{name}: run `.venv/bin/python notebooks/execute.py {name}`"
    )
    for cell in cells:
        assert not [o for o in cell["outputs"] if o["output_type"] == "error"], _source(cell)
        if _source(cell).lstrip().startswith(MAGIC_CELLS):
            assert cell["outputs"], f"{name}: {_source(cell).splitlines()[0]!r} has no output"
    asserts = sum("assert " in _source(c) for c in cells)
    assert asserts >= 2, f"{name} checks behaviour in only {asserts} cell(s)"


@pytest.mark.parametrize("name", EXPECTED)
def test_notebook_outputs_are_deterministic(name):
    nb = _load(name)
    assert "widgets" not in nb["metadata"], "widget state (random model ids) must be stripped"
    text = json.dumps([c.get("outputs", []) for c in nb["cells"]], ensure_ascii=False)
    assert not re.search(r" at 0x[0-9a-f]+", text), "a memory address in an output"
    assert "Traceback" not in text
    for cell in nb["cells"]:
        assert "execution" not in cell["metadata"], "nbclient timestamps must be stripped"


@pytest.mark.parametrize("name", EXPECTED)
def test_every_agent_has_its_recording_beside_the_notebook(name):
    """Durations and token counts in the outputs come from the recording: without it committed,
    a re-run would show other numbers."""
    nb = _load(name)
    agents = [
        match.group(1)
        for cell in nb["cells"]
        if cell["cell_type"] == "code"
        for match in [re.match(r"%%?agent (\w+)", "".join(cell["source"]))]
        if match and "--no-session" not in "".join(cell["source"]).splitlines()[0]
    ]
    assert agents, "every notebook here defines an agent"
    folder = NOTEBOOKS / (Path(name).stem + ".agentnb")
    for agent in agents:
        assert (folder / f"{agent}.json").exists(), (
            f"{folder.name}/{agent}.json: run `make notebooks` and commit it"
        )


@pytest.mark.parametrize("name", EXPECTED)
def test_notebook_is_what_the_normalise_step_writes(name):
    path = NOTEBOOKS / name
    normalised = EXECUTE["normalise"](nbformat.read(path, as_version=4))
    assert path.read_text(encoding="utf-8") == normalised, (
        f"run `.venv/bin/python notebooks/execute.py {name}`"
    )


def _as_saved_after_a_run(name: str) -> dict:
    """The committed notebook as JupyterLab or papermill saves it after a run on some machine."""
    nb = _load(name)
    nb["metadata"]["widgets"] = {
        "application/vnd.jupyter.widget-state+json": {"state": {}, "version_major": 2, "version_minor": 0}
    }
    nb["metadata"]["kernelspec"] = {
        "display_name": "Python (agentnb)",
        "language": "python",
        "name": "agentnb",
    }
    nb["metadata"]["language_info"] = {
        "codemirror_mode": {"name": "ipython", "version": 3},
        "file_extension": ".py",
        "mimetype": "text/x-python",
        "name": "python",
        "nbconvert_exporter": "python",
        "pygments_lexer": "ipython3",
        "version": "3.11.2",
    }
    nb["metadata"]["papermill"] = {"duration": 4.2, "start_time": "2025-05-01T10:00:00", "parameters": {}}
    for cell in _code_cells(nb):
        cell["metadata"]["execution"] = {
            "iopub.execute_input": "2025-05-01T10:00:00.100Z",
            "iopub.status.busy": "2025-05-01T10:00:00.000Z",
            "iopub.status.idle": "2025-05-01T10:00:00.300Z",
            "shell.execute_reply": "2025-05-01T10:00:00.200Z",
        }
        cell["metadata"]["papermill"] = {"duration": 0.1, "status": "completed", "exception": False}
    return nb


def test_normalise_strips_what_changes_from_run_to_run_and_check_names_the_files(tmp_path):
    """A notebook saved after a run elsewhere, or written in another JSON layout, fails `--check`
    (named, left as it is) and normalises to exactly the committed file; a normalised one passes."""
    committed = (NOTEBOOKS / "quickstart.ipynb").read_text(encoding="utf-8")
    saved, loose, clean = tmp_path / "saved.ipynb", tmp_path / "loose.ipynb", tmp_path / "clean.ipynb"
    nbformat.write(nbformat.from_dict(_as_saved_after_a_run("quickstart.ipynb")), saved)
    loose.write_text(json.dumps(_load("quickstart.ipynb"), indent=2), encoding="utf-8")
    clean.write_text(committed, encoding="utf-8")
    before = saved.read_text(encoding="utf-8")

    out = subprocess.run(
        [sys.executable, str(NOTEBOOKS / "execute.py"), "--check", str(saved), str(loose), str(clean)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 1, out.stdout + out.stderr
    assert "not normalised: saved.ipynb loose.ipynb\n" in out.stderr
    assert saved.read_text(encoding="utf-8") == before, "--check must not write"
    for path in (saved, loose):
        assert EXECUTE["normalise"](nbformat.read(path, as_version=4)) == committed


def test_pytest_collects_the_notebooks_only_under_notebooks():
    """`pytest tests notebooks` runs nbval on notebooks/*.ipynb and not on tests/browser/*.ipynb."""
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "--collect-only",
            "-q",
            "-p",
            "no:cacheprovider",
            "tests/browser",
            "--ignore=tests/browser/test_lab.py",
            "notebooks",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    collected = [line for line in out.stdout.splitlines() if "::" in line]
    files = {line.split("::")[0] for line in collected if ".ipynb" in line}
    assert files == {f"notebooks/{n}" for n in EXPECTED}
    assert any(line.startswith("notebooks/quickstart.ipynb::Cell 0") for line in collected)


def _notebook(cells: list[tuple[str, list[dict]]]) -> dict:
    return {
        "cells": [
            {
                "cell_type": "code",
                "execution_count": i + 1,
                "id": f"c{i}",
                "metadata": {},
                "outputs": outputs,
                "source": source,
            }
            for i, (source, outputs) in enumerate(cells)
        ],
        "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }


def test_nbval_compares_a_chat_record_and_fails_when_it_changes(tmp_path):
    """A %%chat cell is compared as Jupyter saved it: its live view (updated while the turn runs,
    which nbval ignores) starts and ends empty, and the record is an output of its own; so an
    unchanged record passes and a changed answer fails."""
    shutil.copy(NOTEBOOKS / "conftest.py", tmp_path / "conftest.py")
    shutil.copy(NOTEBOOKS / "nbval_sanitize.cfg", tmp_path / "nbval_sanitize.cfg")

    def record(answers: list[str]) -> list[list[dict]]:
        from agentnb import Agent, ScriptedModel
        from agentnb.history.render import turn_html, turn_text

        agent = Agent(
            "bot", ScriptedModel(answers), instructions="Be brief.", add_history_to_context=True
        )  # as %%agent below
        turns = [agent.run("hi").turn for _ in answers]
        live = {"output_type": "display_data", "metadata": {}, "data": {"text/plain": ""}}
        return [
            [
                live,
                {
                    "output_type": "display_data",
                    "metadata": {},
                    "data": {"text/plain": turn_text(t), "text/html": turn_html(t)},
                },
            ]
            for t in turns
        ]

    first, second = record(["hello there", "changed answer"])  # the kernel will answer "second answer"
    from agentnb import Agent, ScriptedModel
    from agentnb.ipython.record import static_view

    static = static_view(Agent("bot", ScriptedModel([])))
    nb = _notebook(
        [
            ("%load_ext agentnb", []),
            (
                "from agentnb import ScriptedModel\nmodel = ScriptedModel(['hello there', 'second answer'])",
                [],
            ),
            (
                "%%agent bot --model model --no-session\nBe brief.",
                [
                    {
                        "output_type": "stream",
                        "name": "stdout",
                        "text": "Agent('bot', model=scripted, tools=[], state keys=[])\n",
                    },
                    {
                        "output_type": "display_data",
                        "metadata": {},
                        "data": {"text/plain": "Inspector(agent='bot', turns=0)", "text/html": static},
                    },
                ],
            ),
            ("%%chat bot\nhi", first),
            ("%%chat bot\nhi", second),
        ]
    )
    (tmp_path / "chat.ipynb").write_text(json.dumps(nb), encoding="utf-8")
    out = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rf", str(tmp_path)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert "1 failed, 4 passed" in out.stdout, out.stdout + out.stderr
    assert "FAILED chat.ipynb::Cell 4" in out.stdout
    assert "changed answer" in out.stdout and "second answer" in out.stdout


def test_normalise_blanks_widget_model_ids_and_keeps_the_static_view():
    nb = _load("quickstart.ipynb")
    views = [
        output
        for cell in nb["cells"]
        for output in cell.get("outputs", [])
        if "application/vnd.jupyter.widget-view+json" in output.get("data", {})
    ]
    assert views, "the quickstart shows inspectors"
    for output in views:
        assert output["data"]["application/vnd.jupyter.widget-view+json"]["model_id"] == ""
        assert "agentnb-static-inspector" in "".join(output["data"]["text/html"])
    saved = nbformat.read(NOTEBOOKS / "quickstart.ipynb", as_version=4)
    for cell in saved.cells:
        for output in cell.get("outputs", []):
            if "application/vnd.jupyter.widget-view+json" in output.get("data", {}):
                output["data"]["application/vnd.jupyter.widget-view+json"]["model_id"] = "0" * 32
    assert '"model_id": ""' in EXECUTE["normalise"](saved)
