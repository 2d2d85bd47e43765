"""The main job end to end: the quickstart notebook opened in a real JupyterLab with its recording
beside it and run top to bottom (Restart & Run All) in Debian's Chromium, offline: its inspectors
render, no error anywhere, and the notebook comes out as committed without a model call."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
from labserver import ARTIFACTS, LabServer, NewPage, run_all_cells

from agentnb.ipython.pytest_plugin import INSPECTOR_PATTERNS
from agentnb.models.local import SERVER_SCRIPT

pytestmark = pytest.mark.browser

QUICKSTART = Path(__file__).resolve().parents[2] / "notebooks" / "quickstart.ipynb"
RECORDING = QUICKSTART.with_name("quickstart.agentnb")
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


SCROLL_TO_AGENT_JS = """() => {
  const notebook = window.jupyterapp.shell.currentWidget.content;
  const index = notebook.widgets.findIndex((cell) => cell.model.sharedModel.getSource().startsWith("%%agent shop"));
  notebook.activeCellIndex = index;
  return notebook.scrollToItem(index, "start");
}"""


def as_compared(value: object) -> object:
    """A value as agentnb's nbval plugin sanitizes it (an inspector's outputs as "an inspector")."""
    if isinstance(value, str):
        for pattern, replacement in INSPECTOR_PATTERNS.items():
            value = re.sub(pattern, replacement, value)
    return value


def outputs_of(notebook: dict) -> list[list[tuple]]:
    """Each code cell's outputs as nbval compares them: stream text and display data, without
    execution counts and widget model ids, sanitized as agentnb's nbval plugin does."""
    cells = []
    for cell in notebook["cells"]:
        if cell["cell_type"] != "code":
            continue
        shown = []
        for output in cell.get("outputs", []):
            if output["output_type"] == "stream":
                text = "".join(output["text"])
                if shown and shown[-1][:2] == ("stream", output["name"]):  # one print may arrive in pieces
                    text = shown.pop()[2] + text
                shown.append(("stream", output["name"], text))
            elif output["output_type"] in ("display_data", "execute_result"):
                data = {
                    k: as_compared("".join(v) if isinstance(v, list) else v)
                    for k, v in output["data"].items()
                    if k != WIDGET_VIEW
                }
                shown.append(("data", tuple(sorted(data.items()))))
            else:
                shown.append((output["output_type"], output.get("ename")))
        cells.append(shown)
    return cells


def digest(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.suffix != ".lock"}


def test_quickstart_restart_and_run_all_reproduces_it_from_its_recording(
    lab_server: LabServer, new_page: NewPage
) -> None:
    import json

    from playwright.sync_api import expect

    committed = json.loads(QUICKSTART.read_text())
    code_cells = sum(c["cell_type"] == "code" for c in committed["cells"])
    port, work = lab_server(QUICKSTART, "quickstart.ipynb", (RECORDING,))
    recording = digest(work / RECORDING.name)
    ARTIFACTS.mkdir(exist_ok=True)
    page, log = new_page()
    run_all_cells(page, port, "quickstart.ipynb", code_cells)
    # Both inspectors of shop (the %%agent cell's and %agentnb show's) follow it to turn 2.
    inspectors = page.locator('.anb-root[data-agent="shop"]')
    expect(inspectors).to_have_count(2, timeout=30_000)
    for i in range(2):
        expect(inspectors.nth(i).locator(".anb-pos")).to_have_text("turn 2 of 2", timeout=30_000)
    # The %%chat records rendered as HTML, answer included.
    expect(page.get_by_text("Took the eggs off; milk is left.").first).to_be_visible()
    first = page.locator(".anb-root").first
    # Lab draws only the cells near the viewport: scroll its notebook to the %%agent cell.
    page.evaluate(SCROLL_TO_AGENT_JS)
    # Lab renders the cells of a scrolled notebook lazily: wait until they are drawn.
    expect(first).to_be_in_viewport(timeout=20_000)
    expect(first.locator(".anb-panel")).to_be_visible()
    page.screenshot(path=str(ARTIFACTS / "quickstart.png"))
    # The real model's turns came from the recording: its inspector says so.
    tiny = page.locator('.anb-root[data-agent="tiny"]')
    tiny.scroll_into_view_if_needed()
    expect(tiny).to_contain_text("replayed", timeout=30_000)
    page.evaluate("() => window.jupyterapp.commands.execute('docmanager:save')")
    page.wait_for_timeout(1500)
    saved = json.loads((work / "quickstart.ipynb").read_text())
    # Restart & Run All reproduced the notebook: the same outputs, cell for cell, ...
    assert outputs_of(saved) == outputs_of(committed)
    # ... no model call (the embedded llama.cpp server never started; the scripted agent is
    # Python, like its tools) and nothing re-recorded. Only this checkout's server counts: other
    # checkouts on the machine may run their own.
    assert subprocess.run(["pgrep", "-f", str(SERVER_SCRIPT)], capture_output=True).returncode == 1
    assert digest(work / RECORDING.name) == recording
    assert not log.errors, log.errors
