"""The inspector reopened, without a kernel, and the marks and layout a reader relies on, in a
real JupyterLab and a real Notebook 7 (Debian's Chromium, Python playwright), light and dark.

``budget_demo.ipynb`` (a hook that rounds prices, a tool that fails for one item, float state) is
run; the test reads the inspector: hook marks (a tool's error is not the hook's; what a hook
changed in the arguments), History's failed-call mark, the Tool calls tab's +/~ words, token
labels, float editing (50.0 stays 50.0, an edit keeps a float), the Preview box, word breaks,
the change list's value column, the Compare answers row's geometry, one height for every tab and
after a run, and WCAG contrast computed from the colours. Then the notebook is saved and its
kernel shut down: the view says it is not connected (no spinner, no uncaught "Cannot send"); and
reopened, the saved file shows the latest turn as a static view. A notebook executed by nbconvert
(widget state saved) opened without its kernel says plainly that it is not connected.
Screenshots land in ``test-artifacts/``.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from labserver import (
    ARTIFACTS,
    EXECUTE_JS,
    SAVE_JS,
    SHUTDOWN_JS,
    THEME_JS,
    LabServer,
    NewPage,
    PageLog,
    open_notebook,
    show_tab,
)

pytestmark = pytest.mark.browser

NOTEBOOK = Path(__file__).with_name("budget_demo.ipynb")
CODE_CELLS = 4
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"

# WCAG contrast of an element's text against what is behind it, from the computed colours
# (a 1x1 canvas resolves any CSS colour, color-mix() included, to RGBA).
CONTRAST_JS = """(el) => {
  const canvas = document.createElement("canvas");
  canvas.width = canvas.height = 1;
  const g = canvas.getContext("2d", { willReadFrequently: true });
  const rgba = (css) => { g.clearRect(0, 0, 1, 1); g.fillStyle = "#000"; g.fillStyle = css; g.fillRect(0, 0, 1, 1); const d = g.getImageData(0, 0, 1, 1).data; return [d[0], d[1], d[2], d[3] / 255]; };
  const over = (top, under) => [0, 1, 2].map((i) => top[i] * top[3] + under[i] * (1 - top[3])).concat([1]);
  const layers = [];
  for (let node = el; node; node = node.parentElement) {
    const c = rgba(getComputedStyle(node).backgroundColor);
    if (c[3] > 0) layers.push(c);
    if (c[3] >= 1) break;
  }
  let bg = [255, 255, 255, 1];
  for (const layer of layers.reverse()) bg = over(layer, bg);
  const fg = over(rgba(getComputedStyle(el).color), bg);
  const lum = (c) => { const [r, g2, b] = c.slice(0, 3).map((v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); }); return 0.2126 * r + 0.7152 * g2 + 0.0722 * b; };
  const [a, b] = [lum(fg), lum(bg)].sort((x, y) => y - x);
  return (a + 0.05) / (b + 0.05);
}"""

# Words of an element's text that the layout split over two lines.
BROKEN_WORDS_JS = """(el) => {
  const broken = [];
  const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    for (const m of node.data.matchAll(/\\S+/g)) {
      const range = document.createRange();
      range.setStart(node, m.index);
      range.setEnd(node, m.index + m[0].length);
      const tops = [...range.getClientRects()].filter((r) => r.width > 0).map((r) => r.top);
      if (tops.length && Math.max(...tops) - Math.min(...tops) > 4) broken.push(m[0]);
    }
  }
  return broken;
}"""


# agentnb's code in a stack trace: the served front end, and (named by a sourceURL) the loader
# anywidget imports from a blob: URL and the front end a kernel sends (static/loader.js).
OURS = "agentnb/static/"
# Notebook 7.6's own page error, on every page load, with or without agentnb or any widget: its
# copy of JupyterLab's shortcuts extension reads registry.plugins[shortcuts.id].schema when another
# plugin's settings load first (jupyter/notebook#7862). Every frame is in notebook_core.
NB7_SHORTCUTS_RACE = "TypeError: Cannot read properties of undefined (reading 'schema')"
STACK_URL = re.compile(r"(?:https?://|blob:)[^\s)]+|agentnb/static/[^\s)]+")


def _is_nb7_shortcuts_race(error: str) -> bool:
    urls = STACK_URL.findall(error)
    return (
        error.startswith(f"page error: {NB7_SHORTCUTS_RACE}")
        and bool(urls)
        and all("/static/notebook/notebook_core." in url for url in urls)
    )


def _assert_no_error_of_ours(log: PageLog, ui: str) -> None:
    """No page or console error from agentnb's code, and no page error at all but Notebook 7's own."""
    ours = [e for e in log.errors if OURS in e]
    assert not ours, "\n\n".join(ours)
    unexplained = [e for e in log.page_errors if not (ui == "notebook" and _is_nb7_shortcuts_race(e))]
    assert not unexplained, "\n\n".join(unexplained)


def _height(inspector) -> float:
    return inspector.evaluate("(el) => el.getBoundingClientRect().height")


def _contrast(locator) -> float:
    return locator.evaluate(CONTRAST_JS)


def _check_marks(page, inspector, ui: str) -> None:
    """Tokens, hook marks, Compare's answers, History's failed call, changed arguments, +/~ words."""
    from playwright.sync_api import expect

    # Token count says what it counts.
    tokens = inspector.locator(".anb-tokens")
    expect(tokens).to_have_text(re.compile(r"^≈?\d+ tok used · 2 calls$"))
    assert "The Prompt tab counts one prompt" in (tokens.get_attribute("title") or "")
    expect(inspector.locator(".anb-tokens-line")).to_contain_text("the input of one model call")

    # Turn 2: the tool raised; the hook only passed the call on (and let the error through).
    show_tab(inspector, "tools")
    inspector.locator("details.anb-tool[data-tool='buy'] > summary").click()
    hook = inspector.locator("li.anb-hook[data-hook='round_prices']")
    expect(hook).to_have_class(re.compile(r"\banb-hook-passed\b"))
    expect(hook).not_to_have_class(re.compile(r"\banb-hook-raised\b"))
    expect(hook.locator(".anb-hook-outcome")).to_have_text("passed on")
    expect(hook).to_contain_text("let through what a later link raised: ValueError: caviar is over budget")
    expect(inspector.locator("li.anb-hook[data-hook='tool']")).to_have_class(
        re.compile(r"\banb-hook-raised\b")
    )
    inspector.screenshot(path=str(ARTIFACTS / f"reopen-{ui}-hook-marks.png"))

    # The Compare tab's answers: each under its own side's heading, wider than the label column.
    show_tab(inspector, "compare")
    answers = inspector.locator("table.anb-cmp-answers")
    expect(answers).to_be_visible(timeout=20_000)
    geometry = inspector.evaluate("""(root) => {
      const box = (sel) => root.querySelector(sel).getBoundingClientRect();
      const main = "table.anb-cmp-table:not(.anb-cmp-answers) > thead > tr > th";
      return { headLeft: box(main + ":nth-child(2)"), headRight: box(main + ":nth-child(3)"),
               left: box("table.anb-cmp-answers td.anb-cmp-left"), right: box("table.anb-cmp-answers td.anb-cmp-right") };
    }""")
    assert abs(geometry["left"]["x"] - geometry["headLeft"]["x"]) <= 1, geometry
    assert abs(geometry["right"]["x"] - geometry["headRight"]["x"]) <= 1, geometry
    assert geometry["left"]["width"] >= geometry["headLeft"]["width"] - 1, geometry
    expect(answers.locator("td.anb-cmp-left")).to_have_text("Bought coffee.")
    expect(answers.locator("td.anb-cmp-right")).to_have_text("Caviar is over budget.")
    answers.scroll_into_view_if_needed()
    inspector.screenshot(path=str(ARTIFACTS / f"reopen-{ui}-compare.png"))

    # History marks the turn whose tool call failed (and not the other).
    show_tab(inspector, "history")
    expect(inspector.locator("tr[data-turn='1'] td[data-failed='1']")).to_have_text("1 · ✕ 1 failed")
    expect(inspector.locator("tr[data-turn='0'] td[data-failed]")).to_have_count(0)

    # Turn 1: what the hook received, what it passed on, the difference, what the tool got;
    # its state changes in the State tab's words.
    inspector.locator("tr[data-turn='0']").click()
    expect(inspector.locator(".anb-pos")).to_have_text("turn 1 of 2")
    show_tab(inspector, "tools")
    inspector.locator("details.anb-tool[data-tool='buy'] > summary").click()
    hook = inspector.locator("li.anb-hook[data-hook='round_prices']")
    expect(hook).to_contain_text('received {"item":"coffee","price":1.289}')
    expect(hook.locator(".anb-hook-changed-args")).to_contain_text('passed on {"item":"coffee","price":1.29}')
    expect(hook.locator(".anb-hook-diff")).to_have_text("changed: price: 1.289 → 1.29")
    expect(inspector.locator("li.anb-hook[data-hook='tool'] .anb-tool-received")).to_have_text(
        'received {"item":"coffee","price":1.29}'
    )
    ops = inspector.locator("ul.anb-patch > li").all_inner_texts()
    assert ops and all(o[:2] in ("+ ", "~ ", "− ") for o in ops), ops
    assert any(o.startswith("~ budget › spent = 1.29") for o in ops), ops


def _check_state(page, inspector, ui: str) -> None:
    """The change list, floats, word breaks, a float edit marked as edited, the Preview box."""
    from playwright.sync_api import expect

    # State of turn 1: the change list's value column is not squeezed; floats keep their form.
    show_tab(inspector, "state")
    values = inspector.locator(".anb-changes .anb-change-values")
    expect(values.first).to_be_visible()
    assert min(values.evaluate_all("(els) => els.map((e) => e.getBoundingClientRect().width)")) >= 150
    expect(inspector.locator(".anb-node[data-path='/budget/limit'] .anb-value")).to_have_text("50.0")
    # "what the model saw" breaks no word in the middle.
    block = inspector.locator(".anb-model-block")
    expect(block).to_contain_text("groceries and household supplies")
    inspector.screenshot(path=str(ARTIFACTS / f"reopen-{ui}-state.png"))
    assert block.evaluate(BROKEN_WORDS_JS) == []

    # Back to the newest turn: edit 50.0 to 80, which stays a float, marked as edited.
    inspector.locator("button.anb-next").click()
    expect(inspector.locator(".anb-pos")).to_have_text("turn 2 of 2")
    inspector.locator("button.anb-edit-toggle").click()
    inspector.locator("button.anb-edit[data-fkey='edit/budget/limit']").click()
    box = inspector.locator("textarea.anb-edit-text")
    expect(box).to_have_value("50.0")
    box.fill("80")
    inspector.locator("button.anb-edit-apply").click()
    limit = inspector.locator(".anb-node[data-path='/budget/limit']")
    expect(limit.locator(".anb-value")).to_have_text("80.0", timeout=20_000)
    expect(limit).to_have_class(re.compile(r"\banb-mark-edited\b"))
    expect(limit.locator(".anb-badge-edited")).to_have_text("✎ edited")
    check = "assert type(budget.session_state['budget']['limit']) is float and budget.session_state['budget']['limit'] == 80.0"
    assert page.evaluate(EXECUTE_JS, check) == "ok"
    inspector.screenshot(path=str(ARTIFACTS / f"reopen-{ui}-state-edited.png"))

    # Preview after the edit: the box shows the message the preview is for.
    show_tab(inspector, "preview")
    expect(inspector.locator("input.anb-preview-input")).to_have_value("buy caviar", timeout=20_000)


def _check_layout(page, inspector, ui: str) -> None:
    """Contrast in light and dark, one height for every tab and after a run."""
    from playwright.sync_api import expect

    # Light theme contrast (WCAG AA, 4.5:1): "✓ done", the system message line, Context tab.
    show_tab(inspector, "request")
    system = inspector.locator(".anb-role-system > summary").first
    expect(system).to_be_visible(timeout=20_000)
    context_tab = inspector.locator("[role=tab][data-tab='context']")
    expect(context_tab).to_have_text("Context (none)")
    status = inspector.locator(".anb-status")
    expect(status).to_have_class(re.compile(r"anb-status-ok"))
    for name, item in (("done", status), ("system", system), ("context tab", context_tab)):
        ratio = _contrast(item)
        assert ratio >= 4.5, f"light theme: {name} contrast {ratio:.2f}"

    # One height for every tab, and no growth when a run ends.
    heights = {}
    for tab in ("prompt", "request", "tools", "state", "context", "history", "preview", "compare"):
        show_tab(inspector, tab)
        page.wait_for_timeout(100)
        heights[tab] = _height(inspector)
    assert max(heights.values()) - min(heights.values()) <= 1, heights
    show_tab(inspector, "prompt")
    before = _height(inspector)
    assert page.evaluate(EXECUTE_JS, 'print(budget.run("how much is left?").content)') == "ok"
    expect(inspector.locator(".anb-pos")).to_have_text("turn 3 of 3", timeout=20_000)
    expect(status).to_have_text(re.compile(r"^✓ done"))
    assert abs(_height(inspector) - before) <= 1, (before, _height(inspector))
    inspector.screenshot(path=str(ARTIFACTS / f"reopen-{ui}-light.png"))

    page.evaluate(THEME_JS, "JupyterLab Dark")
    page.wait_for_timeout(500)
    for name, item in (("done", status), ("context tab", context_tab)):
        ratio = _contrast(item)
        assert ratio >= 4.5, f"dark theme: {name} contrast {ratio:.2f}"
    show_tab(inspector, "request")
    expect(system).to_be_visible(timeout=20_000)
    ratio = _contrast(system)
    assert ratio >= 4.5, f"dark theme: system contrast {ratio:.2f}"
    inspector.screenshot(path=str(ARTIFACTS / f"reopen-{ui}-dark-request.png"))
    show_tab(inspector, "prompt")
    inspector.screenshot(path=str(ARTIFACTS / f"reopen-{ui}-dark.png"))
    page.evaluate(THEME_JS, "JupyterLab Light")


def _check_disconnect_and_reopen(page, inspector, ui: str, port: int, work: Path, log: PageLog) -> None:
    """Saved, the kernel shut down, the saved file, the notebook reopened."""
    from playwright.sync_api import expect

    status = inspector.locator(".anb-status")
    # Save, then shut the kernel down: the view says so, and waits for nothing.
    page.evaluate(SAVE_JS)
    page.evaluate(SAVE_JS)  # again: the file the hook rewrote is not "changed on disk"
    expect(page.locator(".jp-Dialog")).to_have_count(0)
    saved = json.loads((work / "budget.ipynb").read_text())
    page.evaluate(SHUTDOWN_JS)
    expect(inspector).to_have_attribute("data-connected", "false", timeout=20_000)
    expect(status).to_have_text("⚠ not connected")
    expect(inspector.locator(".anb-error-line")).to_contain_text("the kernel is not connected")
    expect(inspector.locator(".anb-error-line")).to_contain_text("Re-run this cell for a live inspector.")
    # Turn 1 reached the view either with its events (its requests held) or, when the turns came
    # within one 50 ms batch, as its History row only: then the Request tab says why it cannot
    # show one. Never "Loading…" with no kernel to answer.
    inspector.locator("button.anb-prev").click()
    inspector.locator("button.anb-prev").click()
    expect(inspector.locator(".anb-pos")).to_have_text("turn 1 of 3")
    show_tab(inspector, "request")
    panel = inspector.locator(".anb-panel")
    expect(panel).to_contain_text(
        re.compile(r"Cannot load the request of call 2: the kernel is not connected|user: buy coffee")
    )
    expect(panel).not_to_contain_text("Loading")
    show_tab(inspector, "preview")
    inspector.locator("button.anb-preview-go").click()
    page.wait_for_timeout(500)
    expect(inspector.locator("button.anb-preview-go")).to_have_text("observe")
    inspector.screenshot(path=str(ARTIFACTS / f"reopen-{ui}-disconnected.png"))
    assert not [e for e in log.errors if "Cannot send" in e], log.errors

    # The saved file: the inspector's output is its static view of turn 3, no widget view.
    outputs = [
        o for c in saved["cells"] if c["cell_type"] == "code" for o in c.get("outputs", []) if "data" in o
    ]
    static = [o for o in outputs if "agentnb-static-inspector" in str(o["data"].get("text/html", ""))]
    assert len(static) == 1, outputs
    assert WIDGET_VIEW not in static[0]["data"]
    text = "".join(static[0]["data"]["text/plain"])  # saved as a list of lines
    assert "3 turn(s)" in text and "Still within the budget." in text, text
    assert "inspectors" not in saved["metadata"].get("agentnb", {})

    # Reopened (the page loaded afresh): the static view, not "model not found".
    open_notebook(page, port, ui, "budget.ipynb")
    view = page.locator(".agentnb-static-inspector")
    expect(view).to_be_visible(timeout=30_000)
    expect(view).to_contain_text("budget · inspector")
    expect(view).to_contain_text("3 turn(s)")
    expect(view).to_contain_text("Still within the budget.")
    assert "model not found" not in page.locator("body").inner_text()
    view.screenshot(path=str(ARTIFACTS / f"reopen-{ui}-static.png"))
    _assert_no_error_of_ours(log, ui)


@pytest.mark.parametrize("ui", ["lab", "notebook"])
def test_marks_layout_disconnect_and_reopen(lab_server: LabServer, new_page: NewPage, ui: str) -> None:
    from playwright.sync_api import expect

    if ui == "notebook":
        pytest.importorskip("notebook", reason="Notebook 7 is not installed (pip install notebook)")
    port, work = lab_server(NOTEBOOK, "budget.ipynb", ui=ui)
    ARTIFACTS.mkdir(exist_ok=True)
    page, log = new_page(height=1100)
    open_notebook(page, port, ui, "budget.ipynb")
    page.evaluate("() => { window.jupyterapp.commands.execute('notebook:run-all-cells'); }")
    prompts = page.locator(".jp-Notebook .jp-CodeCell .jp-InputPrompt")
    expect(prompts.last).to_have_text(f"[{CODE_CELLS}]:", timeout=60_000)
    inspector = page.locator(".anb-root")
    expect(inspector.locator(".anb-pos")).to_have_text("turn 2 of 2", timeout=30_000)
    expect(inspector).to_have_attribute("data-connected", "true")

    _check_marks(page, inspector, ui)
    _check_state(page, inspector, ui)
    _check_layout(page, inspector, ui)
    _check_disconnect_and_reopen(page, inspector, ui, port, work, log)


@pytest.mark.parametrize("ui", ["lab", "notebook"])
def test_saved_widget_state_without_its_kernel(
    lab_server: LabServer, new_page: NewPage, tmp_path: Path, ui: str
) -> None:
    """A notebook executed by nbconvert keeps its widget state: opened later, the inspector
    renders from it and says plainly that its kernel is not connected (nothing spins)."""
    from playwright.sync_api import expect

    if ui == "notebook":
        pytest.importorskip("notebook", reason="Notebook 7 is not installed (pip install notebook)")
    port, work = lab_server(NOTEBOOK, "budget.ipynb", ui=ui)
    subprocess.run(
        [
            sys.executable,
            "-m",
            "nbconvert",
            "--to",
            "notebook",
            "--execute",
            "--inplace",
            str(work / "budget.ipynb"),
        ],
        check=True,
        cwd=work,
        capture_output=True,
        timeout=180,
    )
    executed = json.loads((work / "budget.ipynb").read_text())
    assert executed["metadata"]["widgets"]["application/vnd.jupyter.widget-state+json"]["state"]
    # The user's own executed notebook: trusted, so Jupyter draws widgets from the saved state
    # (an untrusted one shows the output's static view instead).
    trust_env = dict(os.environ, JUPYTER_DATA_DIR=str(tmp_path / "data"))  # the server's (conftest.py)
    subprocess.run(
        [sys.executable, "-m", "jupyter", "trust", str(work / "budget.ipynb")],
        check=True,
        cwd=work,
        env=trust_env,
        capture_output=True,
        timeout=60,
    )
    page, log = new_page()
    open_notebook(page, port, ui, "budget.ipynb")
    inspector = page.locator(".anb-root")
    expect(inspector).to_be_visible(timeout=30_000)
    expect(inspector.locator(".anb-pos")).to_have_text("turn 2 of 2")
    expect(inspector).to_have_attribute("data-connected", "false", timeout=20_000)
    expect(inspector.locator(".anb-status")).to_have_text("⚠ not connected")
    show_tab(inspector, "request")
    expect(inspector.locator(".anb-panel")).to_contain_text("Cannot load", timeout=20_000)
    inspector.screenshot(path=str(ARTIFACTS / f"reopen-{ui}-saved-state.png"))
    assert not [e for e in log.errors if "Cannot send" in e], log.errors
    _assert_no_error_of_ours(log, ui)
