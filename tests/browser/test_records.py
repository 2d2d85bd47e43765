"""A %%chat record in a real JupyterLab: text shows literally (dollar signs are not TeX)."""

from __future__ import annotations

from pathlib import Path

import pytest
from labserver import ARTIFACTS, READY_JS, LabServer, NewPage, run_all_cells, write_notebook

pytestmark = pytest.mark.browser

ANSWER = "Apples are $0.50 each and bread is $2.25; $x^2$ stays as typed."


def test_a_chat_record_shows_dollars_as_dollars(
    tmp_path: Path, lab_server: LabServer, new_page: NewPage
) -> None:
    from playwright.sync_api import expect

    cells = [
        "%load_ext agentnb",
        f"from agentnb import ScriptedModel\nmodel = ScriptedModel([{ANSWER!r}])",
        "%%agent grocer --model model --no-session\nAnswer with prices.",
        "%%chat grocer\nHow much are apples and bread?",
    ]
    source = write_notebook(tmp_path / "prices.ipynb", cells)
    port, _ = lab_server(source, "prices.ipynb")
    page, _log = new_page(height=900)
    run_all_cells(page, port, "prices.ipynb", len(cells))
    record = page.locator(".agentnb-record").last
    expect(record.locator(".agentnb-record-answer")).to_contain_text(ANSWER, timeout=30_000)
    page.wait_for_timeout(1000)  # MathJax typesets after rendering: give it the chance
    assert record.locator("mjx-container, .MathJax").count() == 0
    expect(record.locator(".agentnb-record-answer")).to_contain_text(ANSWER)


RECORD_CELLS = [
    "%load_ext agentnb",
    """from agentnb import ScriptedModel, tool_call
model = ScriptedModel([
    [tool_call("set_price", item="tea", price=4.25, note="a long note " * 12), tool_call("set_price", item="coffee", price=-1)],
    "Tea is 4.25; coffee cannot be negative.",
    "Done again.",
])""",
    '''%%tool
def set_price(item: str, price: float, session_state, note: str = "") -> str:
    """Set an item's price in the budget."""
    if price < 0:
        raise ValueError(f"price of {item} cannot be negative")
    session_state["budget"]["items"][item] = {"price": price, "note": note}
    return f"{item} costs {price}"''',
    """%%agent budget --model model --state '{"budget": {"limit": 50.0, "items": {"tea": {"price": 4.0, "note": ""}}}}' --tools set_price --no-session
You keep a budget: {budget}.""",
    "%%chat budget\nSet tea to 4.25 and coffee to -1.",
    "%agentnb fork budget budget_v2 --turn 1",
    "budget_v2.instructions = 'You keep a strict budget: {budget}.'\nbudget_v2.model = ScriptedModel(['Strictly done.'])\nbudget_v2.run('Set tea to 4.25 and coffee to -1.');",
    "%agentnb diff budget:1 budget_v2:2",
]

# The colours a record uses, checked as the browser computes them: the text against the first
# opaque background behind it (WCAG 2 relative luminance and contrast ratio).
CONTRAST_JS = """(el) => {
  const rgb = (s) => (s.match(/[\\d.]+/g) || []).map(Number);
  const lum = ([r, g, b]) => {
    const c = [r, g, b].map((v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); });
    return 0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2];
  };
  let node = el, bg = null;
  while (node && node.nodeType === 1) {
    const c = rgb(getComputedStyle(node).backgroundColor);
    if (c.length === 3 || (c.length === 4 && c[3] > 0.9)) { bg = c.slice(0, 3); break; }
    node = node.parentElement;
  }
  bg = bg || [255, 255, 255];
  const c = rgb(getComputedStyle(el).color);
  const alpha = c.length === 4 ? c[3] : 1;  // a translucent text colour, as seen over its background
  const fg = c.slice(0, 3).map((v, i) => v * alpha + bg[i] * (1 - alpha));
  const [a, b] = [lum(fg), lum(bg)].sort((x, y) => y - x);
  return (a + 0.05) / (b + 0.05);
}"""


# How many lines each element's text takes: its fragments' tops, a line apart or more.
LINES_JS = """(els) => els.map((e) => {
  const range = document.createRange();
  range.selectNodeContents(e);
  const tops = [...range.getClientRects()].map((r) => r.top).sort((a, b) => a - b);
  return tops.filter((t, i) => i === 0 || t - tops[i - 1] > 8).length;
})"""


def test_chat_and_diff_records_read_in_lab_light_and_dark(
    tmp_path: Path, lab_server: LabServer, new_page: NewPage
) -> None:
    from playwright.sync_api import expect

    source = write_notebook(tmp_path / "budget.ipynb", RECORD_CELLS)
    port, _ = lab_server(source, "budget.ipynb")
    ARTIFACTS.mkdir(exist_ok=True)
    page, _log = new_page()
    # Run All by hand: run_all_cells refuses an output saying "Error", and this one
    # shows a tool's error on purpose.
    page.goto(f"http://127.0.0.1:{port}/lab/tree/budget.ipynb")
    page.wait_for_selector(".jp-NotebookPanel .jp-Cell", timeout=60_000)
    page.evaluate(READY_JS, 60_000)
    page.evaluate("() => { window.jupyterapp.commands.execute('notebook:run-all-cells'); }")
    prompts = page.locator(".jp-NotebookPanel .jp-CodeCell .jp-InputPrompt")
    expect(prompts.last).to_have_text(f"[{len(RECORD_CELLS)}]:", timeout=60_000)
    assert "Traceback" not in "".join(page.locator(".jp-OutputArea-output").all_inner_texts())
    record = page.locator(".agentnb-record").last
    compare = page.locator(".agentnb-compare").last
    expect(record.locator(".agentnb-record-answer")).to_contain_text("Tea is 4.25", timeout=30_000)
    for theme in ("JupyterLab Light", "JupyterLab Dark"):
        page.evaluate(
            "(t) => window.jupyterapp.commands.execute('apputils:change-theme', { theme: t })", theme
        )
        page.wait_for_timeout(1500)
        cells = record.locator(".agentnb-record-calls td, .agentnb-record-calls th")
        aligns = cells.evaluate_all("(els) => els.map((e) => getComputedStyle(e).textAlign)")
        assert aligns and set(aligns) == {"left"}, (theme, aligns)  # Lab right-aligns table cells
        # Each argument on its own line; the long note wraps inside the cell, never past it.
        args = record.locator(".agentnb-record-calls tr").nth(1).locator("td").nth(2)
        assert args.inner_text().splitlines()[:2] == ['item: "tea"', "price: 4.25"]
        box, table = args.bounding_box(), record.locator(".agentnb-record-calls").bounding_box()
        assert box["x"] + box["width"] <= table["x"] + table["width"] + 1
        error = record.locator(".agentnb-record-call-error .agentnb-error")
        expect(error).to_contain_text("✗ error [tool_error]: price of coffee cannot be negative")
        assert error.evaluate(CONTRAST_JS) >= 4.5, theme
        changes = record.locator(".agentnb-record-state li")
        assert changes.all_inner_texts()[0].startswith("~ budget › items › tea › price: 4.0 → 4.25")
        for i in range(changes.count()):
            for part in ("code", "i"):  # the change in its colour; who made it, muted
                assert changes.nth(i).locator(part).evaluate(CONTRAST_JS) >= 4.5, (
                    theme,
                    part,
                    changes.nth(i).inner_text(),
                )
        # The comparison's row labels stay on one line; its coloured marks read.
        labels = compare.locator("tr[data-how] > td:first-child")
        lines = labels.evaluate_all(LINES_JS)
        assert lines and max(lines) == 1, (theme, lines)
        marks = compare.locator("tr[data-how='changed'] > td:first-child b")
        assert marks.count() > 0 and min(marks.evaluate_all(f"(els) => els.map({CONTRAST_JS})")) >= 4.5, theme
        slug = "dark" if "Dark" in theme else "light"
        record.screenshot(path=str(ARTIFACTS / f"chat-record-{slug}.png"))
        compare.screenshot(path=str(ARTIFACTS / f"diff-record-{slug}.png"))
