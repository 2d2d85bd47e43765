"""An evaluation and a comparison as a user meets them, in a real JupyterLab and a real Notebook 7
(Debian's Chromium, Python playwright), light and dark.

A 400-case evaluation is run as a user writes it (a cell ending with ``shop.evaluate(...)``, its
display the grid), and a comparison of a fork with its parent ends a cell. The test reads the
grid: it scrolls inside its own box under a header that stays in sight, with the filters and the
case picker above it; ✓ / ✗ in the theme's colours; a long reason cut at a word with an
ellipsis, whole in its tooltip. "open in inspector" on a failed case lands on Checks; the
comparison's "flipped" filter keeps the flipped cases only, and "open in Compare" lands on
Compare, which says why. Then the notebook is saved: opened in the other front end (the kernel
still up) no widget error is logged, and with the kernel shut down, reopened, each grid's output
is its static record — summary, rates per check, the failing cases — not "model not found".
Screenshots land in ``test-artifacts/``.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from labserver import (
    ARTIFACTS,
    SAVE_JS,
    SHUTDOWN_JS,
    THEME_JS,
    LabServer,
    NewPage,
    PageLog,
    open_notebook,
    run_all,
    write_notebook,
)

pytestmark = pytest.mark.browser

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"

CELLS = [
    "%load_ext agentnb",
    '''from agentnb import Agent, ScriptedModel, tool_call
from agentnb.evals import Case, check

def add_item(item: str, session_state) -> str:
    """Add an item to the shopping list."""
    session_state.setdefault("items", []).append(item)
    return f"added {item}"

def no_sweets_hook(function_name, function_call, arguments):
    if arguments.get("item") in ("candy", "cake"):
        return "<b>sweets</b> are not allowed"
    return function_call(**arguments)

def shopper(request):
    if request.tool_results():
        return "Done: " + request.tool_results()[-1]["content"]
    if "Never add sweets" in request.system_prompt and request.last_user_message in ("candy", "cake"):
        return "Sorry, no sweets."
    return tool_call("add_item", item=request.last_user_message)

def honest(result):
    assert result.answer.startswith(("Done: added", "Sorry")), (
        f"the answer {result.answer!r} claims the item was handled although the list does not hold it"
    )

shop = Agent("shop", model=ScriptedModel(shopper), tools=[add_item], tool_hooks=[no_sweets_hook],
             session_state={"items": []}, instructions="You keep a shopping list.")
goods = ["milk", "candy", "bread", "cake", "tea", "rice", "eggs", "jam"]
cases = [Case(goods[i % 8], id=f"T-{i:03}", expected=goods[i % 8]) for i in range(400)]
checks = [check.called("add_item", answered_by="tool", name="added"),
          check.state("/items", contains=check.EXPECTED, name="on_list"), honest]''',
    'shop.evaluate(cases, checks, name="big", folder="evals-here", concurrency=4);',
    """strict = shop.fork("strict")
strict.instructions = "You keep a shopping list. Never add sweets."
base = shop.evaluate(cases[:12], checks, name="base", folder="evals-here", display=False)
candidate = strict.evaluate(cases[:12], checks, name="strict", folder="evals-here", display=False)
candidate.compare(base)""",
]
FLIPPED = ["T-001", "T-003", "T-009", "T-011"]  # candy and cake: the fork refuses them honestly

# The computed colour of an element as [r, g, b].
COLOUR_JS = """(el) => {
  const c = getComputedStyle(el).color.match(/[\\d.]+/g).map(Number);
  return c.slice(0, 3);
}"""


def _widget_errors(log: PageLog) -> list[str]:
    """What the page logged (any console message, an uncaught error) about a widget it could not show."""
    logged = log.console + log.page_errors
    return [line for line in logged if re.search(r"model not found|Error displaying widget", line, re.I)]


def _check_grid(page, cell, ui: str) -> None:
    """The 400-case grid: inner scroll, sticky header, the picker above it, colours, cut reasons;
    a failed case opens on Checks."""
    from playwright.sync_api import expect

    grid = cell.locator(".agentnb-eval-grid")
    expect(grid.locator("tbody tr")).to_have_count(400, timeout=60_000)
    expect(cell).to_contain_text("big: 400/400 done")
    expect(cell).to_contain_text("10,300 tokens")  # the record's count
    box = grid.evaluate(
        "(el) => ({ h: el.clientHeight, sh: el.scrollHeight, top: el.getBoundingClientRect().top })"
    )
    assert box["sh"] > 10 * box["h"] and box["h"] < 600, box  # it scrolls inside its own box
    picker = cell.locator(".widget-dropdown select")
    assert picker.bounding_box()["y"] < box["top"], "the case picker sits above the grid"
    # The header stays in sight as the grid scrolls.
    grid.evaluate("(el) => { el.scrollTop = 5000; }")
    page.wait_for_timeout(200)
    head = grid.locator("th").first.bounding_box()
    assert abs(head["y"] - grid.bounding_box()["y"]) <= 2, (head, grid.bounding_box())
    cell.screenshot(path=str(ARTIFACTS / f"eval-{ui}-grid-scrolled.png"))
    grid.evaluate("(el) => { el.scrollTop = 0; }")
    # ✓ green, ✗ red, from the theme.
    ok = grid.locator(".anb-mark-pass").first.evaluate(COLOUR_JS)
    bad = grid.locator(".anb-mark-fail").first.evaluate(COLOUR_JS)
    assert ok[1] > ok[0] and bad[0] > bad[1], (ok, bad)
    # A long reason is cut at a word, with an ellipsis; the tooltip has it whole.
    reason = grid.locator("tr[data-case='T-001'] td").nth(5).locator("span[title]").last
    shown, whole = reason.inner_text(), reason.get_attribute("title") or ""
    assert shown.endswith("…") and whole.startswith(shown[:-1]), (shown, whole)
    assert whole[len(shown) - 1] in " ,;:", (shown, whole)  # cut where a word ends
    # A failed case opens in the inspector on its Checks tab.
    cell.locator(".widget-toggle-buttons button", has_text="failed").click()
    expect(grid.locator("tbody tr")).to_have_count(100)
    picker.select_option(index=0)
    cell.locator("button", has_text="open in inspector").click()
    inspector = cell.locator(".anb-root")
    expect(inspector.locator(".anb-name")).to_have_text("big:T-001", timeout=30_000)
    expect(inspector.locator("[role=tab][data-tab='checks']")).to_have_attribute("aria-selected", "true")
    expect(inspector.locator(".anb-panel")).to_have_attribute("data-tab", "checks")
    expect(inspector.locator(".anb-check-row[data-check='honest']")).to_have_attribute("data-status", "fail")
    cell.screenshot(path=str(ARTIFACTS / f"eval-{ui}-grid-checks.png"))


def _check_comparison(page, cell, ui: str) -> None:
    """The comparison's grid: flips marked, the "flipped" filter, a flipped case into Compare."""
    from playwright.sync_api import expect

    grid = cell.locator(".agentnb-eval-grid").last
    expect(grid.locator("tbody tr")).to_have_count(12, timeout=30_000)
    expect(grid.locator("tr.anb-flipped")).to_have_count(4)
    cell.locator(".widget-toggle-buttons button", has_text="flipped").click()
    expect(grid.locator("tbody tr")).to_have_count(4)
    assert [r.get_attribute("data-case") for r in grid.locator("tbody tr").all()] == FLIPPED
    expect(grid.locator("tbody tr").first).to_contain_text("honest fail→pass")
    cell.locator(".widget-dropdown select").select_option(index=1)
    cell.locator("button", has_text="open in Compare").click()
    inspector = cell.locator(".anb-root")
    expect(inspector.locator(".anb-name")).to_have_text("strict:T-003", timeout=30_000)
    expect(inspector.locator("[role=tab][data-tab='compare']")).to_have_attribute("aria-selected", "true")
    expect(inspector.locator(".anb-cmp-why")).to_contain_text("instructions", timeout=20_000)
    cell.screenshot(path=str(ARTIFACTS / f"eval-{ui}-comparison-compare.png"))
    page.evaluate(THEME_JS, "JupyterLab Dark")
    page.wait_for_timeout(500)
    ok = grid.locator(".anb-mark-pass").first.evaluate(COLOUR_JS)
    assert ok[1] > ok[0], ok
    cell.screenshot(path=str(ARTIFACTS / f"eval-{ui}-comparison-dark.png"))
    page.evaluate(THEME_JS, "JupyterLab Light")


def _check_saved(work: Path) -> None:
    """The saved file: the grids' outputs keep their static records and no widget view."""
    saved = json.loads((work / "evaluate.ipynb").read_text())
    outputs = [o for c in saved["cells"] for o in c.get("outputs", []) if "data" in o]
    assert not [o for o in outputs if WIDGET_VIEW in o["data"]], "a widget view was saved"
    html = ["".join(o["data"].get("text/html", "")) for o in outputs]
    record = [h for h in html if "agentnb-static-eval" in h]
    assert len(record) == 1 and "evaluation big · 400 run(s)" in record[0], html
    assert "… 290 more" in record[0] and "re-run the cell" in record[0]
    assert any("agentnb-eval-compare" in h and "strict vs base" in h for h in html), html


def _check_static(page, ui: str) -> None:
    """Reopened without a kernel: each grid's output is its static record."""
    from playwright.sync_api import expect

    record = page.locator(".agentnb-static-eval")
    expect(record).to_be_visible(timeout=30_000)
    expect(record).to_contain_text("evaluation big · 400 run(s) of 400 case(s) · 300 passed (75%)")
    expect(record.locator("table").first).to_contain_text("on_list")
    expect(record).to_contain_text("not passed (300)")
    expect(record).to_contain_text("… 290 more")
    # The reasons read left to right.
    align = (
        record.locator("table").nth(1).locator("td").nth(3).evaluate("(el) => getComputedStyle(el).textAlign")
    )
    assert align in ("left", "start"), align
    expect(page.locator(".agentnb-eval-compare")).to_contain_text("strict vs base · 12 paired run(s)")
    assert "model not found" not in page.locator("body").inner_text()
    record.screenshot(path=str(ARTIFACTS / f"eval-{ui}-static.png"))


@pytest.mark.parametrize("ui", ["lab", "notebook"])
def test_grids_clicks_and_the_saved_records(
    lab_server: LabServer, new_page: NewPage, tmp_path: Path, ui: str
) -> None:
    from playwright.sync_api import expect

    pytest.importorskip("notebook", reason="Notebook 7 is not installed (pip install notebook)")
    port, work = lab_server(write_notebook(tmp_path / "evaluate.ipynb", CELLS), "evaluate.ipynb", ui=ui)
    other = "notebook" if ui == "lab" else "lab"
    ARTIFACTS.mkdir(exist_ok=True)
    page, log = new_page()
    run_all(page, port, ui, "evaluate.ipynb", len(CELLS), timeout=120_000)
    cells = page.locator(".jp-Notebook .jp-CodeCell")
    _check_grid(page, cells.nth(2), ui)
    _check_comparison(page, cells.nth(3), ui)
    assert not _widget_errors(log), log

    page.evaluate(SAVE_JS)
    page.evaluate(SAVE_JS)  # again: the file the hook rewrote is not "changed on disk"
    _check_saved(work)
    # The other front end opens the saved file with no widget error (the kernel still up).
    elsewhere, seen = new_page()
    open_notebook(elsewhere, port, other, "evaluate.ipynb")
    expect(elsewhere.locator(".agentnb-static-eval")).to_be_visible(timeout=30_000)
    elsewhere.wait_for_timeout(1000)
    assert "model not found" not in elsewhere.locator("body").inner_text()
    assert not _widget_errors(seen), seen
    elsewhere.close()

    page.evaluate(SHUTDOWN_JS)
    open_notebook(page, port, ui, "evaluate.ipynb")
    _check_static(page, ui)
    page.wait_for_timeout(1000)
    assert not _widget_errors(log), log
