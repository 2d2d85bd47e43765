"""The inspector in a real JupyterLab, driven through Debian's Chromium by Python playwright.

A scratch copy of ``inspector_demo.ipynb`` (no outputs) is opened and run, with one more cell
at the end that waits until the test lets it finish: while it waits (Run All still under way)
the inspector must already show both turns. A third turn is then run straight on the kernel so
it reaches the open view as live event messages. The test reads the inspector's DOM: prompt,
hook chain, state highlights and old → new values, context (a passive provider added before
turn 3, an active one the model calls in turn 4), time travel, that hostile tool output shows as
text and never runs, and that an update to another turn leaves the shown panel alone.
Screenshots land in ``test-artifacts/``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from labserver import ARTIFACTS, EXECUTE_JS, LabServer, NewPage, run_all_cells

pytestmark = pytest.mark.browser

NOTEBOOK = Path(__file__).with_name("inspector_demo.ipynb")
CODE_CELLS = 7  # the demo's six and the held cell below

# The last cell of the run: it holds the kernel until the test writes "release" beside the
# notebook (or two minutes pass), so the test can look at the inspector while Run All is busy.
# Runs CODE in a new cell at the end of the notebook, its output shown under it.
NEW_CELL_JS = """async (code) => {
  const app = window.jupyterapp;
  const notebook = app.shell.currentWidget.content;
  notebook.activeCellIndex = notebook.widgets.length - 1;
  await app.commands.execute("notebook:insert-cell-below");
  notebook.activeCell.model.sharedModel.setSource(code);
  await app.commands.execute("notebook:run-cell");
  return notebook.widgets.length;
}"""

HELD_CELL = """import pathlib, time
release, deadline = pathlib.Path("release"), time.monotonic() + 120
while not release.exists() and time.monotonic() < deadline:
    time.sleep(0.05)
print("released:", release.exists())"""


@pytest.fixture
def lab(lab_server: LabServer, tmp_path: Path) -> Iterator[tuple[int, Path]]:
    notebook = json.loads(NOTEBOOK.read_text())
    notebook["cells"].append(
        {"cell_type": "code", "metadata": {}, "source": HELD_CELL, "outputs": [], "execution_count": None}
    )
    source = tmp_path / "demo-held.ipynb"
    source.write_text(json.dumps(notebook))
    yield lab_server(source, "demo.ipynb")


def test_inspector_in_jupyterlab(lab: tuple[int, Path], new_page: NewPage) -> None:
    from playwright.sync_api import expect

    port, work = lab
    ARTIFACTS.mkdir(exist_ok=True)
    page, log = new_page()
    inspector = page.locator(".anb-root")

    def during_run_all() -> None:
        # The held cell is running: the kernel has not finished Run All, yet the
        # inspector shows both turns (it renders from the snapshot it was created with
        # and the events that follow, not from a reply queued behind the cells).
        prompts = page.locator(".jp-NotebookPanel .jp-CodeCell .jp-InputPrompt")
        expect(prompts.last).to_have_text("[*]:", timeout=60_000)
        expect(inspector.locator(".anb-pos")).to_have_text("turn 2 of 2", timeout=30_000)
        expect(inspector).to_have_attribute("data-status", "ok")
        expect(inspector.locator(".anb-answer .anb-text")).to_have_text(
            "Added bread; clearing is not allowed."
        )
        expect(prompts.last).to_have_text("[*]:")  # still held
        inspector.screenshot(path=str(ARTIFACTS / "inspector-during-run-all.png"))
        (work / "release").write_text("")

    outputs = run_all_cells(page, port, "demo.ipynb", CODE_CELLS, while_running=during_run_all)
    assert outputs[-1].strip() == "released: True"

    expect(inspector).to_have_count(1, timeout=30_000)
    expect(inspector).to_have_attribute("data-status", "ok", timeout=30_000)
    expect(inspector.locator(".anb-pos")).to_have_text("turn 2 of 2")
    expect(inspector.locator(".anb-name")).to_have_text("shop")
    expect(inspector.locator(".anb-model")).to_have_text("scripted")

    # Prompt of turn 2: rendered from the state turn 1 left, the state block distinct.
    state_section = inspector.locator(".anb-section-state")
    expect(state_section).to_contain_text("<session_state>")
    expect(state_section).to_contain_text("{'items': ['milk', 'eggs']}")
    expect(inspector.locator(".anb-section[data-source='instructions'] .anb-section-label")).to_have_text(
        re.compile(r"^instructions≈\d+ tok$")
    )
    expect(inspector.locator(".anb-ph:not(.anb-ph-unresolved)")).to_contain_text("['milk', 'eggs']")
    expect(inspector.locator(".anb-ph-unresolved")).to_contain_text("{budget}")
    inspector.screenshot(path=str(ARTIFACTS / "inspector.png"))

    # A third turn reaches the open view as live events (no new snapshot); a passive
    # context provider added just before it gives that turn (only) context.
    code = (
        "from agentnb import DocumentContext\n"
        'shop.context_providers.append(DocumentContext(["Butter is in the dairy aisle.", "Tea is in aisle 2."], label="AISLES"))\n'
        'print(shop.run("add butter").content)'
    )
    counters = {
        name: inspector.get_attribute(f"data-applied-{name}") for name in ("snapshots", "gaps", "syncs")
    }
    events_before = int(inspector.get_attribute("data-applied-events") or 0)
    assert page.evaluate(EXECUTE_JS, code) == "ok"
    expect(inspector.locator(".anb-pos")).to_have_text("turn 3 of 3", timeout=20_000)
    expect(inspector).to_have_attribute("data-status", "ok")
    expect(inspector.locator(".anb-answer .anb-text")).to_have_text("Added butter.")
    assert {name: inspector.get_attribute(f"data-applied-{name}") for name in counters} == counters
    assert int(inspector.get_attribute("data-applied-events") or 0) >= events_before + 10

    # Context of turn 3, live: the block the provider injected, with its label and score.
    context_tab = inspector.locator("[role=tab][data-tab='context']")
    expect(context_tab).to_have_text("Context (1)")
    expect(context_tab).not_to_have_class(re.compile("anb-tab-idle"))
    context_tab.click()
    lookup = inspector.locator(".anb-ctx[data-label='AISLES']")
    expect(lookup).to_have_count(1)
    expect(lookup.locator(".anb-ctx-query")).to_have_text('"add butter"')
    expect(lookup.locator(".anb-ctx-count")).to_have_text("1 block(s), top 3")
    block = lookup.locator("tr.anb-ctx-block")
    expect(block).to_have_count(1)
    expect(block.locator(".anb-ctx-text")).to_have_text("Butter is in the dairy aisle.")
    expect(block.locator(".anb-ctx-source")).to_have_text("doc 0")
    expect(block.locator("td.anb-num")).to_have_text(re.compile(r"^\d+\.\d+$"))
    inspector.screenshot(path=str(ARTIFACTS / "inspector-context.png"))
    # Turn 2 had no provider: the tab is greyed and says so.
    inspector.locator("button.anb-prev").click()
    expect(inspector.locator(".anb-pos")).to_have_text("turn 2 of 3")
    expect(context_tab).to_have_text("Context (none)")
    expect(context_tab).to_have_class(re.compile("anb-tab-idle"))
    expect(inspector.locator(".anb-panel")).to_contain_text("No context in this turn.")
    inspector.locator("button.anb-next").click()
    expect(inspector.locator(".anb-pos")).to_have_text("turn 3 of 3")

    # State tree: the key this turn changed is highlighted with its author.
    inspector.locator("[role=tab][data-tab='state']").click()
    expect(inspector.locator("[role=tab][data-tab='state']")).to_have_text("State (1 changed)")
    added = inspector.locator(".anb-node[data-path='/items/3']")
    expect(added).to_have_class("anb-node anb-leaf anb-mark-added")
    expect(added).to_contain_text('"butter"')
    expect(added.locator(".anb-badge")).to_have_text("+ tool:add_item")
    expect(inspector.locator(".anb-node[data-path='/items']")).to_have_class(
        "anb-node anb-branch anb-mark-within"
    )
    expect(inspector.locator(".anb-chip")).to_have_text("items")
    change_row = inspector.locator(".anb-change[data-path='/items/3']")
    expect(change_row.locator(".anb-change-path")).to_have_text("items › 3")
    expect(change_row.locator(".anb-change-values")).to_have_text('"butter"')
    expect(change_row.locator(".anb-change-by")).to_have_text("tool:add_item")

    # Time travel: turn 2's state has no butter; its tool calls show the hook chain.
    inspector.locator("button.anb-prev").click()
    expect(inspector.locator(".anb-pos")).to_have_text("turn 2 of 3")
    items = inspector.locator(".anb-node[data-path='/items'] > .anb-children > .anb-node")
    expect(items).to_have_count(3)
    expect(inspector.locator(".anb-tree")).not_to_contain_text("butter")
    expect(inspector.locator(".anb-node[data-path='/items/2']")).to_have_class(
        "anb-node anb-leaf anb-mark-added"
    )
    inspector.screenshot(path=str(ARTIFACTS / "inspector-state.png"))

    inspector.locator("[role=tab][data-tab='tools']").click()
    add_row = inspector.locator(".anb-tool[data-tool='add_item']")
    add_row.locator("summary").click()
    chain = add_row.locator(".anb-hooks > .anb-hook")
    expect(chain).to_have_count(3)
    expect(chain.nth(0)).to_have_attribute("data-hook", "audit")
    expect(chain.nth(0).locator(".anb-hook-outcome")).to_have_text("passed on")
    expect(chain.nth(0)).to_contain_text("passed on as received")  # audit changes nothing
    expect(chain.nth(1)).to_have_attribute("data-hook", "guard")
    expect(chain.nth(2).locator(".anb-hook-outcome")).to_have_text("ran")
    expect(add_row).to_contain_text("state keys changed: items")
    clear_row = inspector.locator(".anb-tool[data-tool='clear_list']")
    clear_row.locator("summary").click()
    expect(clear_row.locator(".anb-tool-status")).to_have_text("answered by guard")
    expect(clear_row.locator(".anb-hook[data-hook='guard'] .anb-hook-outcome")).to_have_text("answered")
    expect(clear_row.locator(".anb-hook[data-hook='tool'] .anb-hook-outcome")).to_have_text("not called")

    # Turn 1 (fetched on demand): hostile tool output is text, nothing runs.
    inspector.locator("button.anb-prev").click()
    expect(inspector.locator(".anb-pos")).to_have_text("turn 1 of 3")
    banner = inspector.locator(".anb-tool[data-tool='show_banner']")
    banner.locator("summary").click()
    expect(banner.locator(".anb-tool-body pre").last).to_have_text(
        "<img src=x onerror=alert(1)> <script>alert(2)</script>"
    )
    expect(inspector.locator(".anb-answer .anb-text")).to_have_text("Added eggs. <b>bold?</b>")
    assert inspector.locator("img, script, b").count() == 0
    inspector.screenshot(path=str(ARTIFACTS / "inspector-tools.png"))

    # History: clicking a row selects that turn everywhere.
    inspector.locator("[role=tab][data-tab='history']").click()
    rows = inspector.locator("tr.anb-history-row")
    expect(rows).to_have_count(3)
    rows.nth(2).click()
    expect(inspector.locator(".anb-pos")).to_have_text("turn 3 of 3")

    # Request of the selected turn, fetched on demand.
    inspector.locator("[role=tab][data-tab='request']").click()
    expect(inspector.locator(".anb-request-head")).to_contain_text("scripted · 4 message(s) · 3 tool(s)")

    page.screenshot(path=str(ARTIFACTS / "lab.png"))

    # Dark theme: the inspector follows Lab's variables (no white panel left behind).
    light = inspector.evaluate("(el) => getComputedStyle(el).backgroundColor")
    page.evaluate("window.jupyterapp.commands.execute('apputils:change-theme', {theme: 'JupyterLab Dark'})")
    expect(page.locator("body")).to_have_attribute("data-jp-theme-light", "false", timeout=20_000)
    page.wait_for_function(
        "(light) => getComputedStyle(document.querySelector('.anb-root')).backgroundColor !== light",
        arg=light,
    )
    dark = inspector.evaluate("(el) => getComputedStyle(el).backgroundColor")
    channels = [int(c) for c in re.findall(r"\d+", dark)[:3]]
    assert sum(channels) < 3 * 128, f"inspector background in the dark theme is {dark}"
    inspector.locator("[role=tab][data-tab='prompt']").click()
    inspector.screenshot(path=str(ARTIFACTS / "inspector-dark.png"))

    # A fourth turn where the model looks something up: the retrieval is tied to its call.
    code = (
        'shop.context_providers.append(DocumentContext({"returns": "Returns within 30 days."}, label="FAQ", passive=False, active=True))\n'
        'model.add(tool_call("retrieve_context", source="FAQ", query="returns"), "30 days.")\n'
        'print(shop.run("can I return tea?").content)'
    )
    assert page.evaluate(EXECUTE_JS, code) == "ok"
    expect(inspector.locator(".anb-pos")).to_have_text("turn 4 of 4", timeout=20_000)
    expect(inspector).to_have_attribute("data-status", "ok")
    context_tab.click()
    expect(context_tab).to_have_text("Context (2)")  # "tea" in the aisles, "returns" in the FAQ
    asked = inspector.locator(".anb-ctx-tool[data-label='FAQ']")
    expect(asked.locator(".anb-ctx-text")).to_have_text("Returns within 30 days.")
    expect(inspector.locator(".anb-ctx-passive[data-label='AISLES'] .anb-ctx-text")).to_have_text(
        "Tea is in aisle 2."
    )
    inspector.screenshot(path=str(ARTIFACTS / "inspector-context-dark.png"))
    asked.locator(".anb-ctx-call button").click()
    expect(inspector.locator("[role=tab][data-tab='tools']")).to_have_attribute("aria-selected", "true")
    call_row = inspector.locator(".anb-tool[data-tool='retrieve_context']")
    expect(call_row).to_have_attribute("open", "")
    expect(call_row.locator(".anb-tool-body")).to_contain_text("Returns within 30 days.")

    # Pinned to turn 2's state with a node the user closed, a new turn redraws the
    # header, not the panel: the closed node stays closed.
    inspector.locator("[role=tab][data-tab='history']").click()
    rows.nth(1).click()
    expect(inspector.locator(".anb-pos")).to_have_text("turn 2 of 4")
    inspector.locator("[role=tab][data-tab='state']").click()
    items_node = inspector.locator(".anb-node[data-path='/items']")
    expect(items_node).to_have_attribute("open", "")
    items_node.locator("> summary").click()
    expect(items_node).not_to_have_attribute("open", "")
    builds = inspector.get_attribute("data-panel-builds")
    # Edits between turns (by the user) show in the next turn: a changed item, a removed
    # one with its old value, and a key whose name holds a slash.
    code = (
        'shop.session_state["items"][0] = "oat milk"\n'
        'shop.session_state["items"].pop()\n'
        'shop.session_state["</session_state>"] = "closing tag"\n'
        'model.add("Nothing else.")\n'
        'print(shop.run("anything else?").content)'
    )
    assert page.evaluate(EXECUTE_JS, code) == "ok"
    expect(inspector.locator(".anb-pos")).to_have_text("turn 2 of 5", timeout=20_000)
    expect(inspector.locator("[role=tab][data-tab='history']")).to_have_text("History (5)")
    assert inspector.get_attribute("data-panel-builds") == builds
    expect(items_node).not_to_have_attribute("open", "")

    # The new turn's changes: old → new, a removed item's old value, key names as they are.
    inspector.locator("button.anb-next").click()
    inspector.locator("button.anb-next").click()
    inspector.locator("button.anb-next").click()
    expect(inspector.locator(".anb-pos")).to_have_text("turn 5 of 5")
    expect(inspector.locator("[role=tab][data-tab='state']")).to_have_text("State (2 changed)")
    expect(inspector.locator(".anb-chip")).to_have_text(["</session_state>", "items"])  # first written first
    changed = inspector.locator(".anb-change[data-path='/items/0']")
    expect(changed.locator(".anb-change-values")).to_have_text('"milk" → "oat milk"')
    expect(changed.locator(".anb-change-by")).to_have_text("user")
    removed = inspector.locator(".anb-change[data-path='/items/3']")
    expect(removed.locator(".anb-change-values")).to_have_text('"butter" (removed)')
    tag = inspector.locator(".anb-change[data-path='/<~1session_state>']")
    expect(tag.locator(".anb-change-path")).to_have_text("</session_state>")
    expect(items_node).not_to_have_attribute("open", "")  # the user's choice holds
    items_node.locator("> summary").click()
    expect(inspector.locator(".anb-node[data-path='/items/0'] .anb-was")).to_have_text('was "milk"')
    ghost = inspector.locator(".anb-node.anb-mark-removed[data-path='/items/3']")
    expect(ghost).to_have_text('3: "butter" (removed)− user')
    expect(inspector.locator(".anb-node[data-path='/<~1session_state>'] > .anb-key")).to_have_text(
        "</session_state>"
    )
    inspector.screenshot(path=str(ARTIFACTS / "inspector-changes.png"))

    # A large state reaches a new view lazily: a big key's first page and its size; what
    # is not held yet is fetched when the user pages on, opens it, or edits it.
    code = (
        "shop.add_session_state_to_context = False\n"
        'shop.session_state["catalog"] = {f"sku{i:05d}": {"name": f"item {i}", "price": i, "history": list(range(40))} for i in range(5000)}\n'
        'model.add("Catalog loaded.")\n'
        'print(shop.run("load the catalog").content)'
    )
    assert page.evaluate(EXECUTE_JS, code) == "ok"
    expect(inspector.locator(".anb-pos")).to_have_text("turn 6 of 6", timeout=20_000)
    page.evaluate(NEW_CELL_JS, "Inspector.for_agent(shop)")
    expect(page.locator(".anb-root")).to_have_count(2, timeout=30_000)
    fresh = page.locator(".anb-root").nth(1)
    expect(fresh.locator(".anb-pos")).to_have_text("turn 6 of 6", timeout=20_000)
    assert fresh.get_attribute("data-applied-subtrees") == "0"
    fresh.locator("[role=tab][data-tab='state']").click()
    catalog = fresh.locator(".anb-node[data-path='/catalog']")
    expect(catalog.locator("> summary .anb-size")).to_have_text(" {5000}")
    catalog.locator("> summary").click()
    rows = catalog.locator("> .anb-children > .anb-node")
    expect(rows).to_have_count(100)
    more = catalog.locator("> .anb-children > .anb-more-row button.anb-more")
    expect(more).to_have_text("show 100 more of 4900 (5000 in all)")
    more.click()
    expect(rows).to_have_count(200)
    expect(fresh).to_have_attribute("data-applied-subtrees", "1")
    expect(rows.nth(199)).to_have_attribute("data-path", "/catalog/sku00199")
    # A node that came empty (the first message's budget ran out above it) is fetched when opened.
    entry = fresh.locator(".anb-node[data-path='/catalog/sku00090']")
    entry.locator("> summary").click()
    history = fresh.locator(".anb-node[data-path='/catalog/sku00090/history']")
    expect(history.locator("> summary .anb-size")).to_have_text(" [40]")
    history.locator("> summary").click()
    expect(history.locator("> .anb-children > .anb-node")).to_have_count(40)
    expect(history.locator(".anb-node[data-path='/catalog/sku00090/history/39']")).to_contain_text("39: 39")
    expect(fresh).to_have_attribute("data-applied-subtrees", "2")
    fresh.screenshot(path=str(ARTIFACTS / "inspector-lazy.png"))
    # Editing a node held in part edits all of it: its whole value is fetched first.
    fresh.locator("button.anb-edit-toggle").click()
    fresh.locator(".anb-node[data-path='/catalog/sku00091'] > summary").click()
    fresh.locator(".anb-node[data-path='/catalog/sku00091/history'] > summary button.anb-edit").click()
    editor = fresh.locator(".anb-editor textarea.anb-edit-text")
    expect(editor).to_be_enabled()
    assert json.loads(editor.input_value()) == list(range(40))
    expect(fresh).to_have_attribute("data-applied-subtrees", "3")
    fresh.locator("button.anb-edit-cancel").click()
    expect(fresh.locator(".anb-editor")).to_have_count(0)

    # A fast loop of 200 turns in one cell: the open view gets about twenty batches a
    # second, whole turns in them as their History rows, the last turn in full.
    code = (
        'model.add(*[step for n in range(200) for step in (tool_call("add_item", item=f"note {n}"), "Noted.")])\n'
        'for n in range(200):\n    shop.run(f"note {n}")'
    )
    assert page.evaluate(EXECUTE_JS, code) == "ok"
    expect(fresh.locator(".anb-pos")).to_have_text("turn 206 of 206", timeout=30_000)
    expect(fresh).to_have_attribute("data-status", "ok")
    expect(fresh.locator(".anb-answer .anb-text")).to_have_text("Noted.")
    fresh_history = fresh.locator("[role=tab][data-tab='history']")
    fresh_history.click()
    expect(fresh_history).to_have_text("History (206)")
    expect(fresh.locator("tr.anb-history-row")).to_have_count(206)
    # An early turn of the loop, held as its row only: selecting it fetches its events.
    held = fresh.evaluate(
        "(el) => [...el.querySelectorAll('tr.anb-history-row[data-loaded=false]')].map((r) => Number(r.dataset.turn)).filter((i) => i >= 6)"
    )
    assert held, "no turn of the loop came as its row"
    print(
        f"loop of 200 turns: {fresh.get_attribute('data-applied-batches')} batches, {len(held)} turns as rows"
    )
    early = fresh.locator(f"tr.anb-history-row[data-turn='{held[0]}']")
    early.scroll_into_view_if_needed()
    early.click()
    expect(fresh.locator(".anb-pos")).to_have_text(f"turn {held[0] + 1} of 206")
    expect(fresh.locator(".anb-answer .anb-text")).to_have_text("Noted.")
    expect(early).to_have_attribute("data-loaded", "true")
    fresh.screenshot(path=str(ARTIFACTS / "inspector-loop-history.png"))
    fresh.locator("[role=tab][data-tab='tools']").click()
    note = fresh.locator(".anb-tool[data-tool='add_item']")
    expect(note).to_have_count(1)
    expect(note).to_contain_text(f"note {held[0] - 6}")
    fresh.locator("[role=tab][data-tab='state']").click()
    expect(fresh.locator(f".anb-change[data-path='/items/{held[0] - 3}']")).to_contain_text(
        f'"note {held[0] - 6}"'
    )
    fresh.screenshot(path=str(ARTIFACTS / "inspector-loop-early-turn.png"))
    # Compared with the turn before it (another row): the kernel compares their records.
    fresh.locator("[role=tab][data-tab='compare']").click()
    expect(fresh.locator(".anb-cmp-side[data-side='right'] select.anb-cmp-turn")).to_have_value(str(held[0]))
    expect(fresh.locator(".anb-cmp-side[data-side='left'] select.anb-cmp-turn")).to_have_value(
        str(held[0] - 1)
    )
    expect(fresh.locator(".anb-cmp-state tr[data-key='items']")).to_have_class(re.compile("anb-cmp-changed"))

    # A long history reaches a new view as its last turns' rows; earlier rows come a page
    # at a time when the user asks for them or scrolls up to the top of the table.
    page.evaluate(NEW_CELL_JS, "Inspector.for_agent(shop)")
    expect(page.locator(".anb-root")).to_have_count(3, timeout=30_000)
    third = page.locator(".anb-root").nth(2)
    expect(third.locator(".anb-pos")).to_have_text("turn 206 of 206", timeout=20_000)
    third.locator("[role=tab][data-tab='history']").click()
    expect(third.locator("[role=tab][data-tab='history']")).to_have_text("History (206)")
    listed = third.locator("tr.anb-history-row")
    expect(listed).to_have_count(20)
    expect(listed.first).to_have_attribute("data-turn", "186")
    earlier = third.locator("button.anb-more[data-fkey='history-earlier']")
    expect(earlier).to_have_text("show earlier turns (186 not listed)")
    third.screenshot(path=str(ARTIFACTS / "inspector-history-last-rows.png"))
    earlier.click()
    expect(listed).to_have_count(120)
    expect(earlier).to_have_text("show earlier turns (86 not listed)")
    expect(listed.first).to_have_attribute("data-turn", "86")
    expect(listed.first).to_be_in_viewport()  # the rows that came are the ones in sight
    expect(third).to_have_attribute("data-applied-rows", "1")
    panel = third.locator(".anb-panel")
    panel.hover()
    page.mouse.wheel(0, 3000)
    page.wait_for_function("(el) => el.scrollTop > 100", arg=panel.element_handle())
    page.mouse.wheel(0, -6000)
    expect(listed).to_have_count(206, timeout=20_000)
    expect(earlier).to_have_count(0)
    expect(third).to_have_attribute("data-applied-rows", "2")
    expect(listed.first).to_contain_text("add eggs and show the banner")
    listed.nth(2).click()
    expect(third.locator(".anb-pos")).to_have_text("turn 3 of 206")
    third.locator("[role=tab][data-tab='tools']").click()
    expect(third.locator(".anb-tool[data-tool='add_item']")).to_have_count(1)
    third.locator("[role=tab][data-tab='history']").click()
    third.screenshot(path=str(ARTIFACTS / "inspector-history-all-rows.png"))
    assert log.dialogs == [], f"a dialog fired: {log.dialogs}"
    assert log.errors == [], log.errors
