"""The static view an inspector's output carries, kept current where no front end renders the
widget: ``jupyter nbconvert --execute`` saves the latest turn, a notebook front end gets no
display updates (it makes the static view at save)."""

from __future__ import annotations

import json
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import nbformat
import pytest

pytest.importorskip("anywidget")

from agentnb.ipython import wire  # noqa: E402

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"

CELLS = [
    "%load_ext agentnb",
    "from agentnb import ScriptedModel\nmodel = ScriptedModel(['First answer.', 'Second answer.'])",
    "%%agent bot --model model --no-session\nBe brief.",
    "%%chat bot\nhello",
    "%%chat bot\nagain",
]


def nbconvert_execute(folder: Path, cells: list[str]) -> dict[str, Any]:
    """A notebook of ``cells`` run by ``jupyter nbconvert --execute`` in ``folder``, as it saved it."""
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(source) for source in cells]
    nbformat.write(nb, folder / "cells.ipynb")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "jupyter",
            "nbconvert",
            "--to",
            "notebook",
            "--execute",
            "cells.ipynb",
            "--output",
            "out.ipynb",
        ],
        cwd=folder,
        check=True,
        capture_output=True,
        timeout=300,
    )
    return json.loads((folder / "out.ipynb").read_text(encoding="utf-8"))  # type: ignore[no-any-return]


def test_nbconvert_execute_saves_the_inspectors_latest_turn(tmp_path: Path) -> None:
    saved = nbconvert_execute(tmp_path, CELLS)
    outputs = saved["cells"][2]["outputs"]
    assert [o["output_type"] for o in outputs] == ["stream", "display_data"]
    assert (
        "".join(outputs[0]["text"]) == "Agent('bot', model=scripted, tools=[], state keys=[])\n"
    )  # no turn count to go stale
    data = outputs[1]["data"]
    assert data[WIDGET_VIEW]["model_id"]  # still the live widget where one can render
    assert "".join(data["text/plain"]) == "Inspector(agent='bot', turns=2)"
    html = "".join(data["text/html"])
    assert "2 turn(s)" in html and "0 turn(s)" not in html
    assert "turn 2" in html and "Second answer." in html and "again" in html
    assert "First answer." not in html  # the last turn's record, not every turn's


def _execute(client: Any, code: str, metadata: dict[str, Any]) -> list[dict[str, Any]]:
    """Run ``code`` as a front end would (with ``metadata`` on the request); the IOPub messages it caused."""
    msg = client.session.msg(
        "execute_request",
        {
            "code": code,
            "silent": False,
            "store_history": True,
            "user_expressions": {},
            "allow_stdin": False,
            "stop_on_error": True,
        },
        metadata=metadata,
    )
    client.shell_channel.send(msg)
    seen = []
    while True:
        reply = client.get_iopub_msg(timeout=60)
        if reply["parent_header"].get("msg_id") != msg["header"]["msg_id"]:
            continue
        seen.append(reply)
        if reply["msg_type"] == "status" and reply["content"]["execution_state"] == "idle":
            return seen


def _updates_inspector(msg: dict[str, Any]) -> bool:
    """An update of an inspector's output (a ``%%chat`` record's live area has updates of its own)."""
    return msg["msg_type"] == "update_display_data" and msg["content"]["transient"]["display_id"].startswith(
        "agentnb-inspector-"
    )


def test_a_notebook_front_end_gets_no_display_updates_and_a_headless_run_does() -> None:
    from jupyter_client.manager import start_new_kernel

    manager, client = start_new_kernel(kernel_name="python3")
    try:
        for code in CELLS[:2]:
            _execute(client, code, {})
        lab = {"cellId": str(uuid.uuid4())}  # JupyterLab and Notebook 7 send each cell's id
        for name, metadata in (("lab", lab), ("headless", {})):
            _execute(client, f"model_{name} = ScriptedModel(['one', 'two'])", metadata)
            shown = _execute(client, f"%%agent {name} --model model_{name} --no-session\nBe brief.", metadata)
            display = [m for m in shown if m["msg_type"] == "display_data"]
            assert display and display[0]["content"]["transient"]["display_id"].startswith(
                "agentnb-inspector-"
            )
            updates = []
            for text in ("hello", "again"):
                updates += [
                    m for m in _execute(client, f"%%chat {name}\n{text}", metadata) if _updates_inspector(m)
                ]
            if name == "lab":
                assert updates == []
            else:
                assert len(updates) == 2  # one per cell that ran a turn
                last = updates[-1]["content"]
                assert last["transient"]["display_id"] == display[0]["content"]["transient"]["display_id"]
                assert "2 turn(s)" in last["data"]["text/html"] and "two" in last["data"]["text/html"]
                assert last["data"][WIDGET_VIEW] == display[0]["content"]["data"][WIDGET_VIEW]
                quiet = _execute(client, "1 + 1", metadata)  # nothing changed: no update
                assert [m for m in quiet if _updates_inspector(m)] == []
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)


def test_a_rendered_view_stops_the_static_refresh_and_a_terminal_never_gets_one(monkeypatch) -> None:
    from types import SimpleNamespace

    from test_inspector import make_agent

    from agentnb.ipython import inspector as module

    updates: list[Any] = []
    monkeypatch.setattr("IPython.display.update_display", lambda data, **kw: updates.append((data, kw)))
    monkeypatch.setattr("IPython.display.display", lambda *a, **kw: None)
    agent = make_agent(["one", "two", "three", "four"])
    widget = module.Inspector.for_agent(agent)
    try:
        widget._outputs.shell = SimpleNamespace(parent_header={})  # a terminal IPython: no kernel
        widget.show()
        agent.run("hello")
        widget._after_cell()
        assert updates == []  # a terminal prints every display: no updates there
        widget._outputs.shell = SimpleNamespace(
            kernel=object(), parent_header={"metadata": {}}
        )  # a kernel, no notebook front end
        widget.show()
        agent.run("again")
        widget._after_cell()
        assert len(updates) == 1 and updates[0][1]["display_id"] == widget.display_id
        assert "2 turn(s)" in updates[0][0]["text/html"]
        widget._on_msg(widget, {wire.KIND: wire.VIEWING}, [])  # a view rendered in a front end
        agent.run("third")
        widget._after_cell()
        assert len(updates) == 1
    finally:
        widget.close()


def test_the_static_view_is_the_last_turn_as_escaped_text() -> None:
    from agentnb import Agent, ScriptedModel, tool_call
    from agentnb.ipython.record import STATIC_CSS_CLASS, static_text, static_view

    def add(item: str, session_state) -> str:
        """Add an item."""
        session_state.setdefault("items", []).append(item)
        return f"added <b>{item}</b>"

    agent = Agent(
        "bot",
        ScriptedModel(["First.", tool_call("add", item="x<y"), "Done & <i>ok</i>." + "z" * 400]),
        tools=[add],
    )
    assert static_text(agent).endswith("0 turn(s) · a static view: re-run this cell for the live inspector")
    agent.run("hello")
    agent.run("add <script>alert(1)</script>")
    lines = static_text(agent).split("\n")
    assert lines[0].startswith("bot · inspector · model scripted · 2 turn(s) · ")
    assert lines[1:4] == [
        "turn 2 · ok",
        "user: add <script>alert(1)</script>",
        '  1. add({"item": "x<y"}) -> added <b>x<y</b>',
    ]
    assert (
        lines[4].startswith("answer: Done & <i>ok</i>.zzz")
        and len(lines[4]) == len("answer: ") + 300
        and lines[4].endswith("…")
    )
    page = static_view(agent)
    assert page.startswith(f'<div class="{STATIC_CSS_CLASS} ')
    for raw in ("<script>", "<b>", "<i>", "x<y"):
        assert raw not in page
    assert "add &lt;script&gt;alert(1)&lt;/script&gt;" in page and "Done &amp; &lt;i&gt;ok&lt;/i&gt;." in page
