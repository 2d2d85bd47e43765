"""The inspector in a saved notebook and the marks it shows (issue 27): the server extension's
pre-save hook, the static text kept current, hook steps that tell a tool's error from a hook's and
record the arguments a hook passed on, History's failed-call count, and edits that keep a float."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import tomllib

pytest.importorskip("anywidget")

from agentnb import (  # noqa: E402
    Agent,
    ScriptedModel,
    serverext,  # noqa: E402
    tool_call,
)
from agentnb.events import ToolCallFinished  # noqa: E402
from agentnb.ipython import wire  # noqa: E402
from agentnb.ipython.history_row import turn_summary  # noqa: E402
from agentnb.ipython.inspector import Inspector  # noqa: E402
from agentnb.ipython.record import STATIC_CSS_CLASS, static_view  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


def buy(item: str, price: float, session_state) -> str:
    """Buy an item."""
    if item == "caviar":
        raise ValueError("caviar is over budget")
    session_state["budget"]["spent"] += price
    return f"bought {item}"


def round_prices(function_name, arguments, function_call):
    """Rounds prices to cents."""
    if "price" in arguments:
        arguments = {**arguments, "price": round(arguments["price"], 2)}
    return function_call(**arguments)


def rewrap(function_name, arguments, function_call):
    """Turns any error further in into its own."""
    try:
        return function_call(**arguments)
    except ValueError as exc:
        raise RuntimeError(f"refused: {exc}") from exc


def budget_agent(*hooks: Any) -> Agent:
    model = ScriptedModel(
        [
            tool_call("buy", item="coffee", price=1.289),
            "Bought.",
            tool_call("buy", item="caviar", price=99.5),
            "No.",
        ]
    )
    return Agent(
        "budget",
        model,
        session_state={"budget": {"limit": 50.0, "spent": 0.0}},
        tools=[buy],
        tool_hooks=list(hooks) or [round_prices],
    )


def finished(agent: Agent, turn: int) -> ToolCallFinished:
    (event,) = [e for e in agent.history[turn].events if isinstance(e, ToolCallFinished)]
    return event


def test_a_hook_that_passed_the_call_on_is_not_marked_as_raising_the_tools_error() -> None:
    agent = budget_agent()
    agent.run("buy coffee")
    agent.run("buy caviar")
    (step,) = finished(agent, 1).hooks
    assert step.outcome == "passed" and step.error is None
    assert step.passed_error == "ValueError: caviar is over budget"
    assert finished(agent, 1).error_kind == "tool_error"


def test_a_hook_that_raises_its_own_error_after_passing_on_is_marked_as_raising() -> None:
    agent = budget_agent(rewrap, round_prices)
    agent.run("buy coffee")
    agent.run("buy caviar")
    outer, inner = finished(agent, 1).hooks
    assert (outer.name, outer.outcome, outer.error) == (
        "rewrap",
        "raised",
        "RuntimeError: refused: caviar is over budget",
    )
    assert (inner.name, inner.outcome, inner.passed_error) == (
        "round_prices",
        "passed",
        "ValueError: caviar is over budget",
    )


def test_the_arguments_a_hook_passed_on_are_recorded_beside_what_it_received() -> None:
    agent = budget_agent()
    agent.run("buy coffee")
    (step,) = finished(agent, 0).hooks
    assert step.arguments == {"item": "coffee", "price": 1.289}
    assert step.passed_arguments == {"item": "coffee", "price": 1.29}
    assert agent.session_state["budget"]["spent"] == 1.29


def test_history_rows_count_failed_tool_calls() -> None:
    agent = budget_agent()
    agent.run("buy coffee")
    agent.run("buy caviar")
    assert [turn_summary(r)["failed_tool_calls"] for r in agent.history] == [0, 1]


def test_the_widget_names_its_model_and_its_snapshot_holds_the_last_turn_for_the_saved_text() -> None:
    """The front end makes the saved static text from the snapshot (js/saved.js): the rows, the
    last turn's tool calls, and the widget's own id to file it under."""
    agent = budget_agent()
    inspector = Inspector(agent)
    try:
        agent.run("buy coffee")
        agent.run("buy caviar")
        inspector.publish_snapshot()
        assert inspector.widget_id == inspector.model_id
        snap = json.loads(inspector.view_snapshot)
        assert [row["status"] for row in snap[wire.SUMMARIES]] == ["ok", "ok"]
        assert snap[wire.SUMMARIES][-1]["content"] == "No."
        (call,) = [e for e in snap[wire.EVENTS] if e["kind"] == "tool_call_finished"]
        assert call["name"] == "buy" and call["error"].startswith("caviar is over budget")
        assert STATIC_CSS_CLASS in static_view(agent) and "2 turn(s)" in static_view(agent)
    finally:
        inspector.close()


def edit(inspector: Inspector, path: str, value: str) -> None:
    inspector._on_msg(inspector, {wire.KIND: wire.EDIT, wire.PATH: path, wire.VALUE: value}, [])


def test_an_edit_of_a_float_to_a_whole_number_keeps_it_a_float(monkeypatch: pytest.MonkeyPatch) -> None:
    agent = budget_agent()
    agent.session_state["count"] = 3
    inspector = Inspector(agent)
    monkeypatch.setattr(inspector, "send", lambda *a, **k: None)
    try:
        edit(inspector, "/budget/limit", "80")
        edit(inspector, "/count", "4")
        edit(inspector, "/budget/spent", "true")
        limit = agent.session_state["budget"]["limit"]
        assert (limit, type(limit)) == (80.0, float)
        assert type(agent.session_state["count"]) is int
        assert agent.session_state["budget"]["spent"] is True  # only whole numbers become floats
    finally:
        inspector.close()


# -- the server extension ----------------------------------------------------------------

MODEL_ID = "a" * 32


def notebook(
    saved_state: bool = False, text: str | None = "budget · inspector · 2 turn(s)\nturn 2:\nanswer: No."
) -> dict[str, Any]:
    output = {
        "output_type": "display_data",
        "metadata": {},
        "data": {
            serverext.WIDGET_VIEW: {"version_major": 2, "version_minor": 0, "model_id": MODEL_ID},
            "text/plain": "Inspector(agent='budget', turns=0)",
            "text/html": f'<div class="{STATIC_CSS_CLASS}">0 turn(s)</div>',
        },
    }
    other = {
        "output_type": "display_data",
        "metadata": {},
        "data": {serverext.WIDGET_VIEW: {"model_id": "b" * 32}, "text/plain": "IntSlider()"},
    }
    nb: dict[str, Any] = {
        "cells": [{"cell_type": "code", "outputs": [output, other], "metadata": {}, "source": ""}],
        "metadata": {},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    if text is not None:
        nb["metadata"]["agentnb"] = {"inspectors": {MODEL_ID: {"agent": "budget", "text": text}}}
    if saved_state:
        nb["metadata"]["widgets"] = {
            serverext.WIDGET_STATE: {"state": {MODEL_ID: {}}, "version_major": 2, "version_minor": 0}
        }
    return nb


def test_the_pre_save_hook_puts_the_latest_turn_in_place_of_a_widget_whose_state_is_not_saved() -> None:
    nb = notebook()
    serverext.pre_save_hook(model={"type": "notebook", "content": nb}, path="x.ipynb")
    data = nb["cells"][0]["outputs"][0]["data"]
    assert serverext.WIDGET_VIEW not in data
    assert data["text/plain"].startswith("budget · inspector · 2 turn(s)")
    assert STATIC_CSS_CLASS in data["text/html"] and "answer: No." in data["text/html"]
    assert "agentnb" not in nb["metadata"]  # what the front end put there is used up
    assert serverext.WIDGET_VIEW in nb["cells"][0]["outputs"][1]["data"]  # another widget: untouched


def test_a_widget_whose_state_is_saved_keeps_its_view_with_fresh_text() -> None:
    nb = notebook(saved_state=True)
    serverext.fix_inspectors(nb)
    data = nb["cells"][0]["outputs"][0]["data"]
    assert data[serverext.WIDGET_VIEW]["model_id"] == MODEL_ID
    assert "2 turn(s)" in data["text/plain"]


def test_an_inspector_saved_without_fresh_text_still_falls_back_to_its_own_static_view() -> None:
    nb = notebook(text=None)
    assert serverext.fix_inspectors(nb) == 1
    data = nb["cells"][0]["outputs"][0]["data"]
    assert serverext.WIDGET_VIEW not in data and "0 turn(s)" in data["text/html"]


def test_hostile_text_in_the_metadata_is_escaped_not_markup() -> None:
    nb = notebook(text="<img src=x onerror=alert(1)>\n<script>alert(2)</script>")
    serverext.fix_inspectors(nb)
    html = nb["cells"][0]["outputs"][0]["data"]["text/html"]
    assert "<script>" not in html and "<img" not in html
    assert "&lt;script&gt;alert(2)&lt;/script&gt;" in html


def test_an_evaluations_and_a_comparisons_grid_keep_their_records_and_lose_their_views() -> None:
    from agentnb.ipython.eval_view import static_record

    def widget(model_id: str, html: str | list[str]) -> dict[str, Any]:
        return {
            "output_type": "display_data",
            "metadata": {},
            "data": {serverext.WIDGET_VIEW: {"model_id": model_id}, "text/plain": "x", "text/html": html},
        }

    record = static_record("big", None)
    grids = [
        widget("c" * 32, record),
        # saved by a front end as a list of lines
        widget("d" * 32, ['<div class="agentnb-eval-compare"><pre>strict vs base\n', "</pre></div>"]),
        widget("e" * 32, "<p>a user's own widget with HTML</p>"),
    ]
    nb: dict[str, Any] = {
        "cells": [{"cell_type": "code", "outputs": grids, "metadata": {}, "source": ""}],
        "metadata": {},
    }
    assert serverext.fix_inspectors(nb) == 2
    first, second, third = (o["data"] for o in nb["cells"][0]["outputs"])
    # no live widget id left for the other front end to look for; the record stays as it was
    assert serverext.WIDGET_VIEW not in first and first["text/html"] == record
    assert serverext.WIDGET_VIEW not in second and "strict vs base" in "".join(second["text/html"])
    assert third[serverext.WIDGET_VIEW]["model_id"] == "e" * 32  # not agentnb's: untouched


def test_other_files_and_odd_notebooks_pass_untouched() -> None:
    model = {"type": "file", "content": "text"}
    serverext.pre_save_hook(model=model, path="a.txt")
    assert model == {"type": "file", "content": "text"}
    odd = {
        "cells": [{"cell_type": "markdown"}, {"cell_type": "code", "outputs": [{"data": "x"}]}],
        "metadata": {"agentnb": {"inspectors": "not a map"}},
    }
    assert serverext.fix_inspectors(odd) == 0


def test_the_wheel_enables_the_server_extension() -> None:
    config = json.loads((ROOT / "jupyter-config/jupyter_server_config.d/agentnb.json").read_text())
    assert config["ServerApp"]["jpserver_extensions"] == {"agentnb.serverext": True}
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    files = project["tool"]["setuptools"]["data-files"]["etc/jupyter/jupyter_server_config.d"]
    assert files == ["jupyter-config/jupyter_server_config.d/agentnb.json"]
    assert serverext._jupyter_server_extension_points() == [{"module": "agentnb.serverext"}]


# -- the front end is not carried in saved widget state ---------------------------------


def test_the_widget_carries_a_small_loader_and_the_kernel_sends_the_front_end_on_request(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    static = Path(serverext.__file__).parent / "ipython" / "static"
    assert static == serverext.STATIC and (static / "inspector.js").exists()
    inspector = Inspector(budget_agent())
    sent: list[tuple[Any, Any]] = []
    monkeypatch.setattr(inspector, "send", lambda content, buffers=None: sent.append((content, buffers)))
    try:
        esm = inspector._esm
        assert len(esm) < 4000 and "agentnb/static/" in esm and "__VERSION__" not in esm
        assert not getattr(inspector, "_css", "")
        inspector._on_msg(inspector, {wire.KIND: wire.FRONT_END}, [])
        ((content, buffers),) = sent
        assert content == {wire.KIND: wire.FRONT_END}
        assert buffers == [(static / "inspector.js").read_bytes(), (static / "inspector.css").read_bytes()]
    finally:
        inspector.close()


def test_a_notebook_executed_by_nbconvert_holds_no_front_end_per_inspector(tmp_path: Path) -> None:
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    source = nbformat.read(ROOT / "tests/browser/budget_demo.ipynb", as_version=4)
    nbclient.NotebookClient(
        source, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    ).execute()
    states = source.metadata["widgets"]["application/vnd.jupyter.widget-state+json"]["state"]
    (inspector,) = [s["state"] for s in states.values() if s["state"].get("agent_name") == "budget"]
    assert len(inspector["_esm"]) < 4000
    assert not inspector.get("_css")
    size = len(json.dumps(inspector))
    assert size < 20_000, size  # the snapshot of two small turns and the loader; the front end was 86 KB


def test_nbval_passes_a_notebook_saved_in_jupyter_with_its_inspector_showing_the_latest_turn(
    tmp_path: Path,
) -> None:
    """A save in JupyterLab puts the latest turn in the inspector's output (the server
    extension); nbval, re-running the notebook, sees the display-time view there. agentnb's
    nbval patterns compare both as "an inspector" (that cell passes), while a changed answer
    elsewhere still fails (one run: only the changed cell fails)."""
    import subprocess
    import sys

    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    nb = nbformat.read(ROOT / "tests/browser/budget_demo.ipynb", as_version=4)
    nbclient.NotebookClient(
        nb, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    ).execute()
    del nb.metadata["widgets"]
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs if "data" in o]
    (shown,) = [o for o in outputs if serverext.WIDGET_VIEW in o["data"]]
    model_id = shown["data"][serverext.WIDGET_VIEW]["model_id"]
    nb.metadata["agentnb"] = {
        "inspectors": {
            model_id: {
                "agent": "budget",
                "text": "budget · inspector · model scripted · 2 turn(s) · a static view: x\nturn 2:\nanswer: Caviar is over budget.",
            }
        }
    }
    content = json.loads(nbformat.writes(nb))
    assert serverext.fix_inspectors(content) == 1
    path = tmp_path / "saved.ipynb"
    path.write_text(json.dumps(content))

    def nbval() -> subprocess.CompletedProcess[str]:
        command = [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:randomly",
            "-p",
            "no:cacheprovider",
            "--nbval",
            "--nbval-current-env",
            str(path),
        ]
        return subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=240)

    # A changed answer elsewhere still fails: only the inspector's outputs are compared loosely.
    content["cells"][-1]["outputs"][0]["text"] = ["Caviar is fine.\n"]
    path.write_text(json.dumps(content))
    run = nbval()
    assert run.returncode != 0 and "Caviar is fine." in run.stdout, run.stdout[-3000:]
    assert "1 failed, 3 passed" in run.stdout, run.stdout[-3000:]
