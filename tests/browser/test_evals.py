"""An evaluation in a real JupyterLab: a failing case opens in the inspector on its Checks tab, and
a case that flipped between a fork and its parent opens on Compare, which says why."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from labserver import ARTIFACTS, LabServer, NewPage, run_all_cells, write_notebook

pytestmark = pytest.mark.browser

CELLS = [
    "%load_ext agentnb",
    '''from agentnb import Agent, ScriptedModel, tool_call
from agentnb.evals import Case, check

def add_item(item: str, session_state) -> str:
    """Add an item to the shopping list."""
    session_state.setdefault("items", []).append(item)
    return f"added {item}"

def no_sweets_hook(function_name, function_call, arguments):
    if arguments.get("item") == "candy":
        return "<b>sweets</b> are not allowed"
    return function_call(**arguments)

def shopper(request):
    if request.tool_results():
        return "Done: " + request.tool_results()[-1]["content"]
    if "Never add sweets" in request.system_prompt and request.last_user_message == "candy":
        return "Sorry, no sweets."
    return tool_call("add_item", item=request.last_user_message)

shop = Agent("shop", model=ScriptedModel(shopper), tools=[add_item], tool_hooks=[no_sweets_hook], session_state={"items": []}, instructions="You keep a shopping list.")
cases = [Case("milk", id="T-1", expected="milk"), Case("candy", id="T-2", expected="candy")]
checks = [check.called("add_item", answered_by="tool", name="added"), check.state("/items", contains=check.EXPECTED, name="on_list"), check.not_called("add_item", name="refused")]
base = shop.evaluate(cases, checks, name="base", folder="evals-here")''',
    'base.inspect("T-2")',
    """strict = shop.fork("strict")
strict.instructions = "You keep a shopping list. Never add sweets."
candidate = strict.evaluate(cases, checks, name="strict", folder="evals-here")
candidate.compare(base).inspect("T-2")""",
]


def test_a_failing_case_opens_on_checks_and_a_flip_on_compare(
    tmp_path: Path, lab_server: LabServer, new_page: NewPage
) -> None:
    from playwright.sync_api import expect

    source = write_notebook(tmp_path / "evaluate.ipynb", CELLS)
    port, _ = lab_server(source, "evaluate.ipynb")
    page, _log = new_page()
    run_all_cells(page, port, "evaluate.ipynb", len(CELLS))
    inspectors = page.locator(".anb-root")
    expect(inspectors).to_have_count(2, timeout=30_000)
    case = inspectors.nth(0)
    expect(case.locator(".anb-name")).to_have_text("base:T-2")
    tab = case.locator("[role=tab][data-tab='checks']")
    expect(tab).to_have_text("Checks (0/3)")  # the hook answered: the call ran, never the tool
    tab.click()
    added = case.locator(".anb-check-row[data-check='added']")
    expect(added).to_have_attribute("data-status", "fail")
    expect(added).to_contain_text("answered by no_sweets_hook")
    expect(case.locator(".anb-check-row[data-check='refused']")).to_have_attribute("data-status", "fail")
    added.locator("summary").click()
    expect(added.locator(".anb-check-evidence")).to_contain_text('"answered_by": "no_sweets_hook"')
    assert case.locator(".anb-checks b").count() == 0  # the hook's markup stays text
    case.screenshot(path=str(ARTIFACTS / "evals-checks-tab.png"))

    flip = inspectors.nth(1)
    expect(flip.locator(".anb-name")).to_have_text("strict:T-2")
    flip.locator("[role=tab][data-tab='checks']").click()
    expect(flip.locator(".anb-check-row[data-check='refused']")).to_have_attribute("data-status", "pass")
    flip.locator("[role=tab][data-tab='compare']").click()
    expect(flip.locator(".anb-cmp-side[data-side='left'] select.anb-cmp-agent")).to_have_value(
        "base:T-2", timeout=20_000
    )
    expect(flip.locator(".anb-cmp-side[data-side='right'] select.anb-cmp-agent")).to_have_value("strict:T-2")
    expect(flip.locator(".anb-cmp-why")).to_contain_text(re.compile("instructions"))
    flip.screenshot(path=str(ARTIFACTS / "evals-flip-compare.png"))
